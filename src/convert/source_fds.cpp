// SourceFds: the mapping that holds a byte range, and a descriptor of its file opened once.
#include "source_fds.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace rebox::convert_detail {

SourceFds::SourceFds(std::vector<const MappedFile*> mappings)
    : mappings_(std::move(mappings)), fds_(mappings_.size(), -1) {}

SourceFds::~SourceFds() { close_all(); }

std::optional<SourceFds::Place> SourceFds::locate(std::span<const uint8_t> bytes) {
    for (size_t i = 0; i < mappings_.size(); ++i) {
        if (mappings_[i] == nullptr) continue;
        const std::span<const uint8_t> whole = mappings_[i]->bytes();
        if (bytes.data() < whole.data() ||
            bytes.data() + bytes.size() > whole.data() + whole.size())
            continue;
        std::lock_guard lock(mutex_);
        if (fds_[i] == -1) {
            const int fd = ::open(mappings_[i]->path().c_str(), O_RDONLY | O_CLOEXEC);
            fds_[i] = fd >= 0 ? fd : -2;
        }
        if (fds_[i] < 0) return std::nullopt;
        return Place{fds_[i], static_cast<uint64_t>(bytes.data() - whole.data())};
    }
    return std::nullopt;
}

void SourceFds::close_all() noexcept {
    std::lock_guard lock(mutex_);
    for (int& fd : fds_) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
}

}  // namespace rebox::convert_detail
