// unpack_lsb0 against the spec's hand-worked vector and against a bit-by-bit test-local packer, for
// every width 1..8 at random offsets, with the stream ending right before an unreadable page so any
// read past stream.size() crashes the test.
#include "source/lsb0_unpack.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <vector>

#include "encode/bit_packer.hpp"

namespace rebox {
namespace {

// Holds a copy of `bytes` that ends exactly where a PROT_NONE page begins.
class GuardedStream {
  public:
    explicit GuardedStream(const std::vector<uint8_t>& bytes) {
        page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        data_pages_ = (bytes.size() + page_ - 1) / page_ + 1;
        base_ =
            static_cast<uint8_t*>(mmap(nullptr, (data_pages_ + 1) * page_, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        EXPECT_NE(base_, MAP_FAILED);
        EXPECT_EQ(mprotect(base_ + data_pages_ * page_, page_, PROT_NONE), 0);
        begin_ = base_ + data_pages_ * page_ - bytes.size();
        if (!bytes.empty()) std::memcpy(begin_, bytes.data(), bytes.size());
        size_ = bytes.size();
    }
    ~GuardedStream() { munmap(base_, (data_pages_ + 1) * page_); }
    std::span<const uint8_t> span() const { return {begin_, size_}; }

  private:
    size_t page_ = 0, data_pages_ = 0, size_ = 0;
    uint8_t* base_ = nullptr;
    uint8_t* begin_ = nullptr;
};

TEST(Lsb0Unpack, SpecHandWorkedVector) {
    // mcq-v1.md: bits 3, codes 5, 2, 7 -> bytes 0xD5, 0x01.
    const std::vector<uint8_t> spec_bytes = {0xD5, 0x01};
    EXPECT_EQ(test::pack_lsb0_bitwise({5, 2, 7}, 3),
              spec_bytes);  // the test packer agrees with the spec
    GuardedStream stream(spec_bytes);
    uint8_t out[3] = {};
    unpack_lsb0(stream.span(), 3, 0, 3, out);
    EXPECT_EQ(out[0], 5);
    EXPECT_EQ(out[1], 2);
    EXPECT_EQ(out[2], 7);
    unpack_lsb0(stream.span(), 3, 2, 1, out);  // the code straddling the byte boundary alone
    EXPECT_EQ(out[0], 7);
}

TEST(Lsb0Unpack, EveryWidthRandomOffsetsAgainstBitwisePacker) {
    std::mt19937_64 rng(12345);
    for (int bits = 1; bits <= 8; ++bits) {
        for (size_t n : {1u, 7u, 8u, 21u, 64u, 65u, 1000u, 4099u}) {
            std::vector<uint8_t> codes(n);
            for (auto& c : codes) c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
            GuardedStream stream(test::pack_lsb0_bitwise(codes, bits));
            // The whole stream, every tail (ends at the stream end), and random windows.
            std::vector<std::pair<size_t, size_t>> ranges = {{0, n}};
            for (size_t first = n > 80 ? n - 80 : 0; first < n; ++first)
                ranges.push_back({first, n - first});
            for (int r = 0; r < 200; ++r) {
                const size_t first = rng() % n;
                ranges.push_back({first, 1 + rng() % (n - first)});
            }
            for (auto [first, count] : ranges) {
                std::vector<uint8_t> out(count + 1, 0xAA);
                unpack_lsb0(stream.span(), bits, first, count, out.data());
                for (size_t i = 0; i < count; ++i)
                    ASSERT_EQ(out[i], codes[first + i])
                        << "bits " << bits << " n " << n << " first " << first << " i " << i;
                EXPECT_EQ(out[count], 0xAA) << "wrote past count";
            }
        }
    }
}

TEST(Lsb0Unpack, CodesStraddlingWindowBoundaries) {
    // bits 7: code 9 spans stream bits 63..69, across the first 64-bit word; all-ones codes make
    // any lost or extra bit visible.
    for (int bits : {5, 6, 7}) {
        std::vector<uint8_t> codes(40);
        for (size_t i = 0; i < codes.size(); ++i)
            codes[i] =
                static_cast<uint8_t>(i % 2 ? (1u << bits) - 1 : (i * 37) & ((1u << bits) - 1));
        GuardedStream stream(test::pack_lsb0_bitwise(codes, bits));
        for (size_t first = 0; first < codes.size(); ++first) {
            uint8_t out = 0xFF;
            unpack_lsb0(stream.span(), bits, first, 1, &out);
            ASSERT_EQ(out, codes[first]) << "bits " << bits << " code " << first;
        }
    }
}

}  // namespace
}  // namespace rebox
