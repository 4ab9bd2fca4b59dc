// The cleanup registry: a singly linked list that only grows (entries are reused, never freed), so
// a signal handler can walk it at any moment; each entry's state says whether the handler may read
// it.
#include "format/pending_cleanup.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace rebox::pending {

// free (0) -> busy (1, its owner fills or empties it; the handler skips it) -> armed (2).
enum State : int { kFree = 0, kBusy = 1, kArmed = 2 };
enum Kind : int { kTemporary = 0, kInstall = 1 };

struct Entry {
    std::atomic<int> state{kBusy};
    int kind = kTemporary;
    std::atomic<int> phase{0};
    const std::atomic<bool>* set_complete = nullptr;
    // Path buffers grow when a longer path comes; a replaced buffer is left allocated, because a
    // handler on another thread might still be reading it.
    char* first = nullptr;  // the temporary, or the target
    size_t first_capacity = 0;
    char* second = nullptr;  // the aside file ("" when none)
    size_t second_capacity = 0;
    Entry* next = nullptr;
};

namespace {

static_assert(std::atomic<int>::is_always_lock_free, "signal handler needs lock-free atomics");
static_assert(std::atomic<Entry*>::is_always_lock_free, "signal handler needs lock-free atomics");

std::atomic<Entry*> g_head{nullptr};

// Buffers replaced by longer ones, kept (reachable) for the reason above.
std::mutex g_retired_mutex;
std::vector<std::unique_ptr<char[]>> g_retired;

void store_path(char*& buffer, size_t& capacity, const std::string& path) {
    if (capacity < path.size() + 1) {
        const size_t size = std::max<size_t>(path.size() + 1, 256);
        char* bigger = new char[size];
        if (buffer != nullptr) {
            std::lock_guard lock(g_retired_mutex);
            g_retired.emplace_back(buffer);
        }
        buffer = bigger;
        capacity = size;
    }
    std::memcpy(buffer, path.c_str(), path.size() + 1);
}

// A free entry, made busy; a new one pushed onto the list when none is free.
Entry* acquire() {
    for (Entry* e = g_head.load(std::memory_order_acquire); e != nullptr; e = e->next) {
        int expected = kFree;
        if (e->state.compare_exchange_strong(expected, kBusy, std::memory_order_acq_rel)) return e;
    }
    Entry* e = new Entry();  // busy from the start
    Entry* head = g_head.load(std::memory_order_acquire);
    do {
        e->next = head;
    } while (!g_head.compare_exchange_weak(head, e, std::memory_order_acq_rel));
    return e;
}

}  // namespace

Entry* add_temporary(const std::string& path) {
    Entry* e = acquire();
    e->kind = kTemporary;
    e->set_complete = nullptr;
    store_path(e->first, e->first_capacity, path);
    store_path(e->second, e->second_capacity, "");
    e->state.store(kArmed, std::memory_order_release);
    return e;
}

Entry* add_install(const std::string& target, const std::string& aside,
                   const std::atomic<bool>* set_complete) {
    Entry* e = acquire();
    e->kind = kInstall;
    e->phase.store(static_cast<int>(Phase::moving_aside), std::memory_order_relaxed);
    e->set_complete = set_complete;
    store_path(e->first, e->first_capacity, target);
    store_path(e->second, e->second_capacity, aside);
    e->state.store(kArmed, std::memory_order_release);
    return e;
}

void set_phase(Entry* entry, Phase phase) noexcept {
    entry->phase.store(static_cast<int>(phase), std::memory_order_release);
}

void release(Entry* entry) noexcept {
    if (entry != nullptr) entry->state.store(kFree, std::memory_order_release);
}

bool is_registered_temporary(const std::string& path) {
    for (Entry* e = g_head.load(std::memory_order_acquire); e != nullptr; e = e->next)
        if (e->state.load(std::memory_order_acquire) == kArmed && e->kind == kTemporary &&
            path == e->first)
            return true;
    return false;
}

void undo_all_from_signal() noexcept {
    for (Entry* e = g_head.load(std::memory_order_acquire); e != nullptr; e = e->next) {
        if (e->state.load(std::memory_order_acquire) != kArmed) continue;
        if (e->kind == kTemporary) {
            ::unlink(e->first);
            continue;
        }
        const bool has_aside = e->second[0] != '\0';
        if (e->set_complete != nullptr && e->set_complete->load(std::memory_order_acquire)) {
            if (has_aside) ::unlink(e->second);  // the new set is whole: the old file goes
            continue;
        }
        if (e->phase.load(std::memory_order_acquire) == static_cast<int>(Phase::installing))
            ::unlink(e->first);  // the new file, or nothing yet (the old one was moved aside)
        if (has_aside) ::rename(e->second, e->first);  // fails harmlessly if not moved yet
    }
}

}  // namespace rebox::pending
