// Read-only file descriptors of the mapped source files, so bytes that are copied unchanged can go
// file to file (copy_file_range) instead of through the mapping and a buffer.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "format/mapped_file.hpp"

namespace rebox::convert_detail {

class SourceFds {
  public:
    explicit SourceFds(std::vector<const MappedFile*> mappings);
    ~SourceFds();
    SourceFds(const SourceFds&) = delete;
    SourceFds& operator=(const SourceFds&) = delete;

    struct Place {
        int fd;
        uint64_t offset;  // of the bytes' first byte in that file
    };
    // Where `bytes` lie in one of the mapped files (opened on first use; thread-safe); nullopt
    // when they lie in none or the file cannot be opened (the caller then copies from memory).
    std::optional<Place> locate(std::span<const uint8_t> bytes);
    void close_all() noexcept;

  private:
    std::vector<const MappedFile*> mappings_;
    std::vector<int> fds_;  // -1: not opened yet, -2: cannot be opened
    std::mutex mutex_;
};

}  // namespace rebox::convert_detail
