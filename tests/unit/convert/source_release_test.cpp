// The converter's input-release bookkeeping: the source bytes a slice reads (hand-worked from the
// mcq-v1 layout: code i at bits [i*bits, (i+1)*bits), one scale/min per group) and the per-tensor
// countdown that must fire exactly once, also under concurrent finishes.
#include "convert/source_release.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using rebox::convert_detail::PendingParts;
using rebox::convert_detail::source_bytes;

struct Arrays {
    std::vector<uint8_t> codes = std::vector<uint8_t>(384), scales = std::vector<uint8_t>(64),
                         mins = std::vector<uint8_t>(64);
};

rebox::SourceTensor quantized_3bit_g32(const Arrays& a) {
    rebox::SourceTensor t;
    t.shape = {32, 32};  // 1024 codes: 384 bytes of 3-bit codes, 32 groups of 2-byte f16
    t.quant = rebox::QuantView{3, 32, a.codes, rebox::FloatDtype::F16, a.scales, a.mins};
    return t;
}

// Offset and size of `part` inside `whole`.
std::pair<size_t, size_t> where(std::span<const uint8_t> part, const std::vector<uint8_t>& whole) {
    return {static_cast<size_t>(part.data() - whole.data()), part.size()};
}

TEST(ConvertSourceRelease, AlignedSliceOfQuantizedTensor) {
    const Arrays a;
    const auto parts = source_bytes(quantized_3bit_g32(a), 64, 64);
    EXPECT_EQ(where(parts[0], a.codes), std::make_pair(size_t{24}, size_t{24}));  // bits 192..384
    EXPECT_EQ(where(parts[1], a.scales), std::make_pair(size_t{4}, size_t{4}));   // groups 2, 3
    EXPECT_EQ(where(parts[2], a.mins), std::make_pair(size_t{4}, size_t{4}));
}

TEST(ConvertSourceRelease, UnalignedSliceCoversPartialBytesAndGroups) {
    const Arrays a;
    // Codes 40..49: bits 120..149 -> bytes 15..18; group 1 only.
    const auto parts = source_bytes(quantized_3bit_g32(a), 40, 10);
    EXPECT_EQ(where(parts[0], a.codes), std::make_pair(size_t{15}, size_t{4}));
    EXPECT_EQ(where(parts[1], a.scales), std::make_pair(size_t{2}, size_t{2}));
}

TEST(ConvertSourceRelease, WholeTensorAndClipping) {
    const Arrays a;
    const auto whole = source_bytes(quantized_3bit_g32(a), 0, 1024);
    EXPECT_EQ(where(whole[0], a.codes), std::make_pair(size_t{0}, size_t{384}));
    EXPECT_EQ(where(whole[1], a.scales), std::make_pair(size_t{0}, size_t{64}));
    // A count past the end is clipped to the arrays.
    const auto past = source_bytes(quantized_3bit_g32(a), 1000, 100);
    EXPECT_EQ(where(past[0], a.codes), std::make_pair(size_t{375}, size_t{9}));
    EXPECT_EQ(where(past[1], a.scales), std::make_pair(size_t{62}, size_t{2}));
}

TEST(ConvertSourceRelease, FloatSliceUsesTheElementWidth) {
    const std::vector<uint8_t> data(40);
    rebox::SourceTensor t;
    t.shape = {20};
    t.float_dtype = rebox::FloatDtype::F16;
    t.float_data = data;
    const auto parts = source_bytes(t, 3, 5);
    EXPECT_EQ(where(parts[0], data), std::make_pair(size_t{6}, size_t{10}));
    EXPECT_TRUE(parts[1].empty());
    EXPECT_TRUE(parts[2].empty());
}

TEST(ConvertSourceRelease, PendingPartsFiresOnTheLastFinishOnly) {
    PendingParts pending({3, 1});
    EXPECT_FALSE(pending.finish(0));
    EXPECT_TRUE(pending.finish(1));
    EXPECT_FALSE(pending.finish(0));
    EXPECT_TRUE(pending.finish(0));
}

TEST(ConvertSourceRelease, PendingPartsFiresOnceUnderConcurrentFinishes) {
    constexpr uint32_t kParts = 20000;
    PendingParts pending({kParts});
    std::atomic<int> fired{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (uint32_t i = 0; i < kParts / 4; ++i)
                if (pending.finish(0)) ++fired;
        });
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(fired.load(), 1);
}

}  // namespace
