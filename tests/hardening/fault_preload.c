/* LD_PRELOAD shim for the fault tests: makes pwrite() fail with EIO (REBOX_FAULT=eio) or slow
 * (REBOX_FAULT=slow, REBOX_FAULT_DELAY_MS per call) so a test can hit an I/O error or stop a
 * conversion mid-write on demand, without a special device or a model large enough to be slow;
 * REBOX_FAULT=bigalloc makes C++ operator new throw std::bad_alloc for any request above
 * REBOX_FAULT_MAX_ALLOC bytes (the real operator new is asked for an impossible size), so a test can
 * reach the CLI's internal-error path. REBOX_FAULT=rename_fail with REBOX_FAULT_AT=N makes the Nth
 * rename()/renameat2() of the process fail with EIO; REBOX_FAULT=slow_rename sleeps
 * REBOX_FAULT_DELAY_MS before each one, so a signal can land between two renames of a set. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Sleeps REBOX_FAULT_DELAY_MS (default 200) milliseconds. */
static void sleep_fault_delay(void) {
    const char* ms_text = getenv("REBOX_FAULT_DELAY_MS");
    const long ms = ms_text ? atol(ms_text) : 200;
    struct timespec delay = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
    }
}

typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);

static ssize_t faulty_pwrite(const char* symbol, int fd, const void* buf, size_t count,
                             off_t offset) {
    const char* fault = getenv("REBOX_FAULT");
    if (fault && strcmp(fault, "eio") == 0) {
        errno = EIO;
        return -1;
    }
    if (fault && strcmp(fault, "slow") == 0) sleep_fault_delay();
    pwrite_fn real = (pwrite_fn)dlsym(RTLD_NEXT, symbol);
    return real(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
    return faulty_pwrite("pwrite", fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
    return faulty_pwrite("pwrite64", fd, buf, count, offset);
}

/* operator new(size_t) and operator new[](size_t), by their mangled names. */
typedef void* (*new_fn)(size_t);

static void* limited_new(const char* symbol, size_t count) {
    const char* fault = getenv("REBOX_FAULT");
    if (fault && strcmp(fault, "bigalloc") == 0) {
        const char* max_text = getenv("REBOX_FAULT_MAX_ALLOC");
        const size_t max = max_text ? (size_t)atoll(max_text) : (size_t)1 << 20;
        if (count > max) count = (size_t)-1 / 2; /* no allocator grants this: bad_alloc */
    }
    new_fn real = (new_fn)dlsym(RTLD_NEXT, symbol);
    return real(count);
}

void* _Znwm(size_t count) { return limited_new("_Znwm", count); }
void* _Znam(size_t count) { return limited_new("_Znam", count); }

/* rename() and renameat2(): fail the Nth call, or sleep before each. */
static atomic_int rename_calls;

static int rename_fault(void) {
    const char* fault = getenv("REBOX_FAULT");
    if (fault && strcmp(fault, "rename_fail") == 0) {
        const char* at_text = getenv("REBOX_FAULT_AT");
        const int at = at_text ? atoi(at_text) : 1;
        if (atomic_fetch_add(&rename_calls, 1) + 1 == at) {
            errno = EIO;
            return -1;
        }
    }
    if (fault && strcmp(fault, "slow_rename") == 0) sleep_fault_delay();
    return 0;
}

typedef int (*rename_fn)(const char*, const char*);
typedef int (*renameat2_fn)(int, const char*, int, const char*, unsigned int);

int rename(const char* from, const char* to) {
    if (rename_fault() != 0) return -1;
    rename_fn real = (rename_fn)dlsym(RTLD_NEXT, "rename");
    return real(from, to);
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned int flags) {
    if (rename_fault() != 0) return -1;
    renameat2_fn real = (renameat2_fn)dlsym(RTLD_NEXT, "renameat2");
    return real(from_dir, from, to_dir, to, flags);
}
