// The converter's input-release bookkeeping: the source bytes a slice reads (hand-worked from the
// mcq-v1 layout: code i at bits [i*bits, (i+1)*bits), one scale/min per group) and the per-tensor
// countdown that must fire exactly once, also under concurrent finishes; the pages tensors share,
// measured in this process's resident set.
#include "convert/source_release.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "format/mapped_file.hpp"
#include "resident_set.hpp"
#include "test_files.hpp"

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

TEST(ConvertSourceRelease, SharedPagesLeaveWhenTheLastTensorTouchingThemIsDone) {
    // Four pages of F16 data: tensor 0 = bytes [0, 1.5 pages), tensor 1 = [1.5, 2.5) pages,
    // tensor 2 = [2.5, 4) pages. Page 0 is tensor 0's alone, page 3 tensor 2's; page 1 is shared
    // by tensors 0 and 1, page 2 by tensors 1 and 2.
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const rebox::test::ScratchDir dir;
    const std::filesystem::path path = dir / "shared";
    {
        std::ofstream out(path, std::ios::binary);
        const std::vector<char> bytes(4 * page, 3);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const rebox::MappedFile file(path);
    const std::span<const uint8_t> all = file.bytes();
    const size_t cuts[] = {0, page * 3 / 2, page * 5 / 2, 4 * page};
    rebox::SourceModel source;
    rebox::Plan plan;
    for (size_t t = 0; t < 3; ++t) {
        rebox::SourceTensor tensor;
        tensor.float_dtype = rebox::FloatDtype::F16;
        tensor.float_data = all.subspan(cuts[t], cuts[t + 1] - cuts[t]);
        tensor.shape = {static_cast<int64_t>(tensor.float_data.size() / 2)};
        source.tensors.push_back(tensor);
        rebox::TensorPlan tp;
        tp.source_index = t;
        plan.tensors.push_back(tp);
    }
    const std::vector<const rebox::MappedFile*> mappings = {&file};
    rebox::convert_detail::SharedPages shared(source, plan);
    unsigned sum = 0;
    for (size_t i = 0; i < all.size(); i += page) sum += all[i];
    ASSERT_EQ(sum, 4u * 3u);
    const long kib = static_cast<long>(page / 1024);
    const long before = rebox::test::resident_kib(all.data());
    ASSERT_EQ(before, 4 * kib);
    shared.release_tensor(mappings, source, plan.tensors[1]);  // only shared pages: none leaves
    EXPECT_EQ(rebox::test::resident_kib(all.data()), before);
    shared.release_tensor(mappings, source, plan.tensors[0]);  // page 0 (whole), page 1 (shared)
    EXPECT_EQ(rebox::test::resident_kib(all.data()), before - 2 * kib);
    shared.release_tensor(mappings, source, plan.tensors[2]);  // page 3 (whole), page 2 (shared)
    EXPECT_EQ(rebox::test::resident_kib(all.data()), before - 4 * kib);
    EXPECT_EQ(all[page * 2], 3);  // still readable: back from the page cache
}

}  // namespace
