// Read-only mmap of a whole file; empty files map to an empty span. Also the page-release helpers
// streaming readers use to keep their resident set small.
#include "format/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "rebox/error.hpp"

namespace rebox {

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw_input_error(path.string(), "", std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw_input_error(path.string(), "", std::string("cannot stat: ") + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw_input_error(path.string(), "", "not a regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw_input_error(path.string(), "", std::string("cannot map: ") + std::strerror(err));
        }
        data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
}

MappedFile::~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
        path_ = std::move(other.path_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void MappedFile::advise_sequential() const {
    if (data_ != nullptr) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_SEQUENTIAL);
}

PageRange whole_pages_inside(size_t offset, size_t length, size_t size, size_t page_size) {
    if (offset >= size || page_size == 0) return {};
    const size_t begin = (offset + page_size - 1) / page_size * page_size;
    const size_t end = (offset + std::min(length, size - offset)) / page_size * page_size;
    return end > begin ? PageRange{begin, end} : PageRange{};
}

// The mapping is read-only and private, never written: MADV_DONTNEED only drops this process's
// page-table entries (and so its RSS); the page cache keeps the data and a later access re-maps it.
void MappedFile::release(size_t offset, size_t length) const {
    if (data_ == nullptr) return;
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const PageRange range = whole_pages_inside(offset, length, size_, page);
    if (range.end > range.begin)
        ::madvise(const_cast<uint8_t*>(data_) + range.begin, range.end - range.begin,
                  MADV_DONTNEED);
}

void release_mapped(std::span<const MappedFile* const> mappings, std::span<const uint8_t> bytes) {
    if (bytes.empty()) return;
    const auto address = reinterpret_cast<uintptr_t>(bytes.data());
    for (const MappedFile* mapping : mappings) {
        if (mapping == nullptr || mapping->size() == 0) continue;
        const auto base = reinterpret_cast<uintptr_t>(mapping->bytes().data());
        if (address < base || address - base >= mapping->size()) continue;
        mapping->release(address - base, bytes.size());
        return;
    }
}

}  // namespace rebox
