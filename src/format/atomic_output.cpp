// AtomicOutput: write to "<target>.rebox-tmp-<pid>", fsync, rename into place, fsync the folder.
// Stale temporaries of the same target left by killed runs are removed first.
// Live temporary paths are kept in the signal-time cleanup registry (format/pending_cleanup).
#include "format/atomic_output.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "format/pending_cleanup.hpp"
#include "rebox/error.hpp"

namespace rebox {

namespace {

// ---- stale temporaries ----------------------------------------------------------------------
// A SIGKILLed run leaves "<target>.rebox-tmp-<pid>". It is stale when no process has that pid, or
// when the pid is ours but no live output of ours owns the file (pid reuse, e.g. the same small pid
// in every container run: without this, O_EXCL would refuse the next run's temporary forever).
// Temporaries of live processes are left alone, so two runs never delete each other's work.
void remove_stale_temporaries(const std::filesystem::path& target) {
    std::filesystem::path folder = target.parent_path();
    if (folder.empty()) folder = ".";
    const std::string prefix = target.filename().string() + ".rebox-tmp-";
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string digits = name.substr(prefix.size());
        if (digits.size() > 9 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            continue;
        const pid_t pid = static_cast<pid_t>(std::stol(digits));
        const bool stale = pid == ::getpid()
                               ? !pending::is_registered_temporary(it->path().string())
                               : (::kill(pid, 0) != 0 && errno == ESRCH);
        if (stale) ::unlink(it->path().c_str());
    }
}

// ---- errors ---------------------------------------------------------------------------------

// "no space left on device": strerror text with a lower-case first letter, for one-line messages.
std::string errno_text(int error) {
    std::string text = std::generic_category().message(error);
    if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z')
        text[0] = static_cast<char>(text[0] - 'A' + 'a');
    return text;
}

[[noreturn]] void throw_errno(const std::filesystem::path& file, const std::string& what,
                              int error) {
    throw_input_error(file.string(), "", what + ": " + errno_text(error));
}

void fsync_directory_of(const std::filesystem::path& file) {
    std::filesystem::path folder = file.parent_path();
    if (folder.empty()) folder = ".";
    const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) throw_errno(folder, "cannot open folder to sync it", errno);
    int result;
    do {
        result = ::fsync(dir_fd);
    } while (result != 0 && errno == EINTR);
    const int error = errno;
    ::close(dir_fd);
    // Some filesystems cannot fsync a directory (EINVAL); the rename itself has happened.
    if (result != 0 && error != EINVAL) throw_errno(folder, "cannot sync folder", error);
}

}  // namespace

AtomicOutput::AtomicOutput(std::filesystem::path target, bool force)
    : target_(std::move(target)), force_(force) {
    struct stat existing {};
    if (::lstat(target_.c_str(), &existing) == 0) {
        if (!force_) throw_input_error(target_.string(), "", "exists (use --force to replace)");
        if (S_ISDIR(existing.st_mode))
            throw_input_error(target_.string(), "", "is a directory", "a file path");
    }
    remove_stale_temporaries(target_);
    temp_ = target_;
    temp_ += ".rebox-tmp-" + std::to_string(::getpid());
    // Registered before the file exists, so no signal can leave an unregistered temporary behind.
    pending_ = pending::add_temporary(temp_.string());
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        const int error = errno;
        pending::release(pending_);
        pending_ = nullptr;
        throw_errno(temp_, "cannot create", error);
    }
    temp_live_ = true;
}

AtomicOutput::~AtomicOutput() { discard(); }

void AtomicOutput::resize(uint64_t size) {
    if (fd_ < 0) throw_input_error(temp_.string(), "", "output is already closed");
    if (size > static_cast<uint64_t>(INT64_MAX))
        throw_input_error(temp_.string(), "", "size too large");
    int result;
    do {
        result = ::ftruncate(fd_, static_cast<off_t>(size));
    } while (result != 0 && errno == EINTR);
    if (result != 0)
        throw_errno(temp_, "cannot resize to " + std::to_string(size) + " bytes", errno);
}

void AtomicOutput::pwrite(std::span<const uint8_t> bytes, uint64_t offset) {
    if (fd_ < 0) throw_input_error(temp_.string(), "", "output is already closed");
    constexpr size_t kMaxChunk = size_t{1} << 30;  // Linux writes at most ~2 GiB per call anyway
    size_t done = 0;
    while (done < bytes.size()) {
        const size_t chunk = std::min(bytes.size() - done, kMaxChunk);
        const uint64_t at = offset + done;
        if (at > static_cast<uint64_t>(INT64_MAX) - chunk)
            throw_input_error(temp_.string(), "", "write offset too large");
        const ssize_t written = ::pwrite(fd_, bytes.data() + done, chunk, static_cast<off_t>(at));
        if (written < 0) {
            if (errno == EINTR) continue;
            throw_errno(temp_,
                        "cannot write " + std::to_string(bytes.size() - done) +
                            " bytes at offset " + std::to_string(at),
                        errno);
        }
        if (written == 0)
            throw_input_error(temp_.string(), "",
                              "write made no progress at offset " + std::to_string(at));
        done += static_cast<size_t>(written);
    }
}

void AtomicOutput::copy_from(int source_fd, uint64_t source_offset, uint64_t length,
                             uint64_t offset) {
    if (fd_ < 0) throw_input_error(temp_.string(), "", "output is already closed");
    if (source_offset > static_cast<uint64_t>(INT64_MAX) - length ||
        offset > static_cast<uint64_t>(INT64_MAX) - length)
        throw_input_error(temp_.string(), "", "copy offset too large");
    uint64_t done = 0;
    bool in_kernel = true;
    std::vector<uint8_t> buffer;
    while (done < length) {
        const size_t chunk =
            static_cast<size_t>(std::min<uint64_t>(length - done, uint64_t{1} << 30));
        if (in_kernel) {
            loff_t in = static_cast<loff_t>(source_offset + done);
            loff_t out = static_cast<loff_t>(offset + done);
            const ssize_t copied = ::copy_file_range(source_fd, &in, fd_, &out, chunk, 0);
            if (copied > 0) {
                done += static_cast<uint64_t>(copied);
                continue;
            }
            if (copied < 0 && errno == EINTR) continue;
            if (copied < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
                errno != EOPNOTSUPP && errno != EBADF)
                throw_errno(temp_,
                            "cannot copy " + std::to_string(length - done) + " bytes to offset " +
                                std::to_string(offset + done),
                            errno);
            if (copied == 0)
                throw_input_error(temp_.string(), "",
                                  "source ended early while copying at offset " +
                                      std::to_string(source_offset + done));
            in_kernel = false;  // not supported here: copy through a small buffer
        }
        buffer.resize(std::min<size_t>(chunk, size_t{1} << 20));
        const ssize_t got = ::pread(source_fd, buffer.data(), buffer.size(),
                                    static_cast<off_t>(source_offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw_errno(temp_, "cannot read the copy source", errno);
        if (got == 0)
            throw_input_error(temp_.string(), "",
                              "source ended early while copying at offset " +
                                  std::to_string(source_offset + done));
        pwrite({buffer.data(), static_cast<size_t>(got)}, offset + done);
        done += static_cast<uint64_t>(got);
    }
}

void AtomicOutput::start_writeback(uint64_t offset, uint64_t length) noexcept {
    if (fd_ < 0 || length == 0) return;
    ::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(length),
                      SYNC_FILE_RANGE_WRITE);
}

void AtomicOutput::sync() {
    if (fd_ < 0) throw_input_error(temp_.string(), "", "output is already closed");
    int result;
    do {
        result = ::fsync(fd_);
    } while (result != 0 && errno == EINTR);
    if (result != 0) throw_errno(temp_, "cannot sync", errno);
}

void AtomicOutput::finish_writing() {
    if (!temp_live_) throw_input_error(temp_.string(), "", "output was discarded before commit");
    if (fd_ < 0) return;
    sync();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && errno != EINTR) throw_errno(temp_, "cannot close", errno);
}

void AtomicOutput::mark_installed() noexcept {
    committed_ = true;
    temp_live_ = false;
    pending::release(pending_);
    pending_ = nullptr;
}

void AtomicOutput::commit() {
    if (committed_) return;
    finish_writing();

    int result;
    if (force_) {
        result = ::rename(temp_.c_str(), target_.c_str());
    } else {
        // Refuse a target that appeared since the constructor checked.
        result = ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE);
        if (result != 0 && (errno == EINVAL || errno == ENOSYS)) {  // filesystem without NOREPLACE
            struct stat existing {};
            if (::lstat(target_.c_str(), &existing) == 0) {
                errno = EEXIST;
            } else {
                result = ::rename(temp_.c_str(), target_.c_str());
            }
        }
    }
    if (result != 0) {
        const int error = errno;
        if (error == EEXIST)
            throw_input_error(target_.string(), "", "exists (use --force to replace)");
        throw_errno(target_, "cannot rename " + temp_.string() + " into place", error);
    }
    mark_installed();
    fsync_directory_of(target_);
}

void AtomicOutput::discard() noexcept {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (temp_live_) {
        ::unlink(temp_.c_str());
        temp_live_ = false;
    }
    pending::release(pending_);
    pending_ = nullptr;
}

void remove_pending_outputs_from_signal() noexcept {
    const int saved_errno = errno;
    pending::undo_all_from_signal();
    errno = saved_errno;
}

}  // namespace rebox
