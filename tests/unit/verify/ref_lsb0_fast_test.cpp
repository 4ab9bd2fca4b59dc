// verify's grouped lsb0 extraction against a bit-by-bit reader kept here, for every width 1..8, at
// random starts and counts including runs that end on the last stream byte, with the stream placed
// so that its end touches a PROT_NONE page (any read past the span faults).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <vector>

#include "verify/values/ref_lsb0.hpp"

namespace rebox::verify_ref {
namespace {

// A copy of some bytes whose last byte sits right before an unreadable page.
class PageEndBytes {
  public:
    explicit PageEndBytes(const std::vector<uint8_t>& bytes) : size_(bytes.size()) {
        page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        readable_ = (size_ + page_ - 1) / page_ + 1;
        void* mapped = mmap(nullptr, (readable_ + 1) * page_, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(mapped, MAP_FAILED);
        mapping_ = static_cast<uint8_t*>(mapped);
        EXPECT_EQ(mprotect(mapping_ + readable_ * page_, page_, PROT_NONE), 0);
        data_ = mapping_ + readable_ * page_ - size_;
        if (size_ > 0) std::memcpy(data_, bytes.data(), size_);
    }
    ~PageEndBytes() { munmap(mapping_, (readable_ + 1) * page_); }
    std::span<const uint8_t> span() const { return {data_, size_}; }

  private:
    size_t size_, page_ = 0, readable_ = 0;
    uint8_t* mapping_ = nullptr;
    uint8_t* data_ = nullptr;
};

// Trivially correct reader straight from the spec: code i bit b is stream bit i*bits+b, which is
// bit (k % 8) of byte k / 8.
uint8_t code_bit_by_bit(const std::vector<uint8_t>& stream, unsigned bits, uint64_t index) {
    unsigned code = 0;
    for (unsigned b = 0; b < bits; ++b) {
        const uint64_t k = index * bits + b;
        code |= ((stream[k / 8] >> (k % 8)) & 1u) << b;
    }
    return static_cast<uint8_t>(code);
}

TEST(VerifyLsb0Fast, MatchesBitByBitForEveryWidthAtRandomRangesUpToTheStreamEnd) {
    std::mt19937_64 random(20240611);
    for (unsigned bits = 1; bits <= 8; ++bits) {
        for (uint64_t total : {1u, 7u, 8u, 9u, 15u, 16u, 63u, 64u, 65u, 200u, 1031u}) {
            std::vector<uint8_t> stream((total * bits + 7) / 8);
            for (uint8_t& byte : stream) byte = static_cast<uint8_t>(random());
            const PageEndBytes guarded(stream);
            for (int trial = 0; trial < 40; ++trial) {
                uint64_t first = random() % total;
                uint64_t count = 1 + random() % (total - first);
                if (trial % 3 == 0) count = total - first;  // runs to the last code
                if (trial == 1) first = 0, count = total;
                std::vector<uint8_t> got(count, 0xEE);
                extract_lsb0_codes(guarded.span(), bits, first, got);
                for (uint64_t i = 0; i < count; ++i) {
                    ASSERT_EQ(got[i], code_bit_by_bit(stream, bits, first + i))
                        << "bits " << bits << " total " << total << " first " << first << " count "
                        << count << " i " << i;
                }
            }
        }
    }
}

TEST(VerifyLsb0Fast, AllOnesAndSingleBitStreams) {
    // A single set bit must show up in exactly one code at the right place, for every width.
    for (unsigned bits = 1; bits <= 8; ++bits) {
        const uint64_t total = 64;
        for (uint64_t k = 0; k < total * bits; k += 5) {
            std::vector<uint8_t> stream(total * bits / 8, 0);
            stream[k / 8] = static_cast<uint8_t>(1u << (k % 8));
            const PageEndBytes guarded(stream);
            std::vector<uint8_t> got(total);
            extract_lsb0_codes(guarded.span(), bits, 0, got);
            for (uint64_t i = 0; i < total; ++i) {
                const uint8_t want = (i == k / bits) ? static_cast<uint8_t>(1u << (k % bits)) : 0;
                ASSERT_EQ(got[i], want) << "bits " << bits << " k " << k << " i " << i;
            }
        }
        std::vector<uint8_t> ones(total * bits / 8, 0xFF);
        const PageEndBytes guarded(ones);
        std::vector<uint8_t> got(total);
        extract_lsb0_codes(guarded.span(), bits, 0, got);
        for (uint8_t code : got) ASSERT_EQ(code, (1u << bits) - 1u) << "bits " << bits;
    }
}

}  // namespace
}  // namespace rebox::verify_ref
