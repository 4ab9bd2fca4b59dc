// A read-only memory-mapped file (zero-copy access for the safetensors and GGUF readers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace rebox {

class MappedFile {
  public:
    // Throws rebox::Error (input class) naming the path when it cannot be opened or mapped.
    explicit MappedFile(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    MappedFile(MappedFile&&) noexcept;
    MappedFile& operator=(MappedFile&&) noexcept;

    std::span<const uint8_t> bytes() const { return {data_, size_}; }
    size_t size() const { return size_; }
    const std::filesystem::path& path() const { return path_; }
    // Hints for streaming readers (madvise); errors are ignored.
    void advise_sequential() const;
    void release(size_t offset, size_t length) const;  // MADV_DONTNEED on whole pages inside

  private:
    std::filesystem::path path_;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

// The page-aligned byte range [begin, end) of whole pages inside [offset, offset+length) clipped
// to [0, size); begin == end when no whole page lies inside.
struct PageRange {
    size_t begin = 0, end = 0;
};
PageRange whole_pages_inside(size_t offset, size_t length, size_t size, size_t page_size);

// Releases (MappedFile::release) the whole pages of `bytes` when it lies inside one of `mappings`
// (null entries are skipped); bytes outside every mapping, e.g. in-memory images, are left alone.
void release_mapped(std::span<const MappedFile* const> mappings, std::span<const uint8_t> bytes);

}  // namespace rebox
