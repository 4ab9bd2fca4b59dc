/* LD_PRELOAD shim for the fault tests: makes pwrite() fail with EIO (REBOX_FAULT=eio) or slow
 * (REBOX_FAULT=slow, REBOX_FAULT_DELAY_MS per call) so a test can hit an I/O error or stop a
 * conversion mid-write on demand, without a special device or a model large enough to be slow. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);

static ssize_t faulty_pwrite(const char* symbol, int fd, const void* buf, size_t count,
                             off_t offset) {
    const char* fault = getenv("REBOX_FAULT");
    if (fault && strcmp(fault, "eio") == 0) {
        errno = EIO;
        return -1;
    }
    if (fault && strcmp(fault, "slow") == 0) {
        const char* ms_text = getenv("REBOX_FAULT_DELAY_MS");
        const long ms = ms_text ? atol(ms_text) : 200;
        struct timespec delay = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
        }
    }
    pwrite_fn real = (pwrite_fn)dlsym(RTLD_NEXT, symbol);
    return real(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
    return faulty_pwrite("pwrite", fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
    return faulty_pwrite("pwrite64", fd, buf, count, offset);
}
