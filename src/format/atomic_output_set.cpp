// commit_all(): fsync every temporary, move each replaced target aside
// ("<target>.rebox-old-<pid>"), rename the temporaries into place (first output last), then remove
// the asides; roll back on any failure. Each step is registered with the signal-time cleanup
// registry before it is made.
#include "format/atomic_output_set.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

#include "format/pending_cleanup.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what, int error) {
    throw_input_error(file.string(), "",
                      what + ": " + std::generic_category().message(error) +
                          "; the previous files were put back");
}

// rename without replacing (the destination must not exist); -1 with errno EEXIST when it does.
int rename_noreplace(const std::filesystem::path& from, const std::filesystem::path& to) {
    int result = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
    if (result != 0 && (errno == EINVAL || errno == ENOSYS)) {  // filesystem without NOREPLACE
        struct stat existing {};
        if (::lstat(to.c_str(), &existing) == 0) {
            errno = EEXIST;
            return -1;
        }
        result = ::rename(from.c_str(), to.c_str());
    }
    return result;
}

void fsync_folder(const std::filesystem::path& file) {
    std::filesystem::path folder = file.parent_path();
    if (folder.empty()) folder = ".";
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;  // the renames have happened; durability of the folder is best effort here
    while (::fsync(fd) != 0 && errno == EINTR) {
    }
    ::close(fd);
}

struct Step {
    AtomicOutput* output = nullptr;
    std::filesystem::path aside;  // where the replaced file is, empty when none
    bool installed = false;
    pending::Entry* entry = nullptr;
};

// Undoes the steps made so far, newest first.
void roll_back(std::vector<Step>& steps) noexcept {
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
        if (it->installed) ::unlink(it->output->target().c_str());
        if (!it->aside.empty()) ::rename(it->aside.c_str(), it->output->target().c_str());
        pending::release(it->entry);
        it->entry = nullptr;
    }
}

}  // namespace

void commit_all(std::span<const std::unique_ptr<AtomicOutput>> outputs) {
    if (outputs.empty()) return;
    if (outputs.size() == 1) return outputs[0]->commit();
    for (const auto& out : outputs) out->finish_writing();  // every file durable before any rename
    // The order of the renames: the first output (shard 1, what a loader opens) last.
    std::vector<AtomicOutput*> order;
    for (size_t i = 1; i < outputs.size(); ++i) order.push_back(outputs[i].get());
    order.push_back(outputs[0].get());

    std::atomic<bool> complete{false};
    std::vector<Step> steps;
    steps.reserve(order.size());
    const std::string aside_suffix = ".rebox-old-" + std::to_string(::getpid());
    for (AtomicOutput* out : order) {
        Step& step = steps.emplace_back();
        step.output = out;
        struct stat existing {};
        const bool replaces = ::lstat(out->target().c_str(), &existing) == 0;
        if (replaces && !out->force()) {
            roll_back(steps);
            throw_input_error(out->target().string(), "", "exists (use --force to replace)");
        }
        std::filesystem::path aside;
        if (replaces) {
            aside = out->target();
            aside += aside_suffix;
        }
        step.entry = pending::add_install(out->target().string(), aside.string(), &complete);
        if (replaces) {
            if (rename_noreplace(out->target(), aside) != 0) {
                const int error = errno;
                roll_back(steps);
                fail(out->target(), "cannot move the file it replaces aside to " + aside.string(),
                     error);
            }
            step.aside = aside;
        }
        pending::set_phase(step.entry, pending::Phase::installing);
        if (rename_noreplace(out->temp_path(), out->target()) != 0) {
            const int error = errno;
            roll_back(steps);
            fail(out->target(), "cannot rename " + out->temp_path().string() + " into place",
                 error);
        }
        step.installed = true;
        out->mark_installed();
    }
    fsync_folder(order.back()->target());
    complete.store(true, std::memory_order_release);  // from here on the new set stays
    for (Step& step : steps) {
        if (!step.aside.empty()) ::unlink(step.aside.c_str());
        pending::release(step.entry);
    }
    fsync_folder(order.back()->target());
}

}  // namespace rebox
