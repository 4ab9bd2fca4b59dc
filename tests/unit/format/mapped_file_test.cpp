// MappedFile page release: the whole-page arithmetic (hand-worked) and the effect on this process's
// resident set as the kernel reports it in /proc/self/smaps.
#include "format/mapped_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "resident_set.hpp"
#include "test_files.hpp"

namespace {

using rebox::MappedFile;
using rebox::PageRange;
using rebox::whole_pages_inside;
using rebox::test::resident_kib;

TEST(MappedFileRelease, WholePagesInsideRoundsInward) {
    // [100, 100+40960) of a 64-page file: page 0 is partial, pages 1..9 are whole, page 10 partial.
    PageRange r = whole_pages_inside(100, 40960, 65536 * 4, 4096);
    EXPECT_EQ(r.begin, 4096u);
    EXPECT_EQ(r.end, 40960u);
    // Page-aligned ranges are released entirely.
    r = whole_pages_inside(8192, 8192, 65536, 4096);
    EXPECT_EQ(r.begin, 8192u);
    EXPECT_EQ(r.end, 16384u);
    // A range inside one page releases nothing.
    r = whole_pages_inside(10, 4000, 65536, 4096);
    EXPECT_EQ(r.begin, r.end);
    // Clipped to the file: a length past the end stops at the last whole page.
    r = whole_pages_inside(4096, 1u << 30, 10000, 4096);
    EXPECT_EQ(r.begin, 4096u);
    EXPECT_EQ(r.end, 8192u);
    // An offset at or past the end releases nothing.
    r = whole_pages_inside(10000, 5, 10000, 4096);
    EXPECT_EQ(r.begin, r.end);
}

TEST(MappedFileRelease, ReleaseDropsOnlyWholePagesFromRss) {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const rebox::test::ScratchDir dir;
    const std::filesystem::path path = dir / "mapped";
    {
        std::ofstream out(path, std::ios::binary);
        const std::vector<char> bytes(64 * page, 7);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    {
        const MappedFile file(path);
        unsigned sum = 0;
        for (size_t i = 0; i < file.size(); i += page) sum += file.bytes()[i];
        EXPECT_EQ(sum, 64u * 7u);
        const long before = resident_kib(file.bytes().data());
        ASSERT_EQ(before, static_cast<long>(64 * page / 1024));
        file.release(100, 10 * page);  // whole pages 1..9
        EXPECT_EQ(resident_kib(file.bytes().data()), before - static_cast<long>(9 * page / 1024));
        // release_mapped finds the mapping from the span and does the same; unrelated spans and
        // null mappings are ignored.
        const MappedFile* mappings[] = {nullptr, &file};
        const std::vector<uint8_t> heap(4 * page, 1);
        rebox::release_mapped(mappings, heap);
        EXPECT_EQ(heap[page], 1);
        rebox::release_mapped(mappings, file.bytes().subspan(32 * page, 8 * page));
        EXPECT_EQ(resident_kib(file.bytes().data()), before - static_cast<long>(17 * page / 1024));
        // The data is still there: a released page is read back from the page cache.
        EXPECT_EQ(file.bytes()[5 * page], 7);
    }
}

}  // namespace
