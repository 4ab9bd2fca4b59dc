// The signal-time cleanup registry: what a SIGINT/SIGTERM handler must undo for every output in
// flight, with no fixed limit (a lock-free list of reusable entries that the handler walks without
// locks or allocation). Two kinds: a temporary file to remove, and one file of an output set being
// renamed into place (remove the new file, put the replaced one back), unless its set completed.
#pragma once

#include <atomic>
#include <string>

namespace rebox::pending {

struct Entry;

// Registers a temporary file the handler removes. Never fails (allocates a new entry when every
// existing one is in use); returns the entry for release().
Entry* add_temporary(const std::string& path);

// Registers target (and aside: where the file it replaces was moved, "" when none) of an output
// set. While the phase is moving_aside the handler only moves aside back to target; once
// installing, it removes target first. When *set_complete is true it only removes aside.
Entry* add_install(const std::string& target, const std::string& aside,
                   const std::atomic<bool>* set_complete);
enum class Phase : int { moving_aside = 0, installing = 1 };
void set_phase(Entry* entry, Phase phase) noexcept;

// Frees the entry for reuse (nullptr: nothing).
void release(Entry* entry) noexcept;

// Whether path is a registered temporary of this process.
bool is_registered_temporary(const std::string& path);

// Undoes every registered entry (async-signal-safe: unlink and rename only).
void undo_all_from_signal() noexcept;

}  // namespace rebox::pending
