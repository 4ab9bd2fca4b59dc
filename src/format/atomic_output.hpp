// Output that appears whole or not at all: data goes to a temporary file beside the target
// ("<target>.rebox-tmp-<pid>"), is fsynced, and is renamed into place by commit(). Destroying an
// uncommitted AtomicOutput removes the temporary file. Errors (ENOSPC, EIO) throw rebox::Error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

namespace rebox {

namespace pending {
struct Entry;
}

class AtomicOutput {
  public:
    // force=false: refuses (input-class error) when the target already exists.
    AtomicOutput(std::filesystem::path target, bool force);
    ~AtomicOutput();
    AtomicOutput(const AtomicOutput&) = delete;
    AtomicOutput& operator=(const AtomicOutput&) = delete;

    // Sets the final size up front (sparse; written ranges fill it).
    void resize(uint64_t size);
    // Writes all bytes at offset (retries short writes; thread-safe for disjoint ranges).
    void pwrite(std::span<const uint8_t> bytes, uint64_t offset);
    // Copies length bytes of the open file source_fd at source_offset to offset, inside the kernel
    // (copy_file_range; plain pread/pwrite where the file systems do not support it). Nothing of
    // the source is mapped or buffered in user space beyond 1 MiB.
    void copy_from(int source_fd, uint64_t source_offset, uint64_t length, uint64_t offset);
    // Starts writing [offset, offset+length) back to the disk without waiting (sync_file_range
    // SYNC_FILE_RANGE_WRITE), so the disk works while later bytes are produced and the fsync of
    // commit() has less left to wait for. Only a hint: errors are left to that fsync.
    void start_writeback(uint64_t offset, uint64_t length) noexcept;
    // fsync the data.
    void sync();
    // fsync (once: call sync() before only when the data must be durable earlier), rename over
    // the target, fsync the directory.
    void commit();
    // Removes the temporary file now (idempotent).
    void discard() noexcept;

    // For commit_all (format/atomic_output_set), which renames a set of outputs itself: fsync and
    // close the temporary file (idempotent), then, once it is renamed into place, drop it from the
    // cleanup registry and stop owning it.
    void finish_writing();
    void mark_installed() noexcept;
    bool force() const { return force_; }

    const std::filesystem::path& temp_path() const { return temp_; }
    const std::filesystem::path& target() const { return target_; }

  private:
    std::filesystem::path target_;
    std::filesystem::path temp_;
    int fd_ = -1;
    bool force_ = false;  // false: commit() refuses to replace a target that appeared meanwhile
    bool committed_ = false;
    bool temp_live_ = false;             // the temporary file exists and is ours to remove
    pending::Entry* pending_ = nullptr;  // in the signal-time cleanup registry while live
};

// Removes the temporary files of every live AtomicOutput and rolls back an output set caught
// between its renames (async-signal-safe; for SIGINT/SIGTERM handlers).
void remove_pending_outputs_from_signal() noexcept;

}  // namespace rebox
