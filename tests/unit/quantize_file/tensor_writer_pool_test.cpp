// write_quantized_tensors: one pool of workers over the chunks of every tensor. Each tensor's bytes
// must be llama.cpp's own (ggml_quantize_chunk / ggml_fp32_to_fp16_row of libggml-base.so, per
// expert with that expert's imatrix slice) whatever the thread count, each tensor reported done
// exactly once, progress polled on the calling thread only, and the first bad value stops the
// run with its tensor and index named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "format/atomic_output.hpp"
#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "quantize_file/tensor_writer.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"

namespace rebox {
namespace {

using test::GgmlOracle;

struct PoolTensor {
    std::string name;
    std::vector<int64_t> ne;
    GgmlType target;
    std::vector<float> values;
    std::vector<float> imatrix;  // ne[0] per expert, or empty
    uint64_t offset = 0;         // in the output file
    uint64_t bytes = 0;
};

uint64_t element_count(const std::vector<int64_t>& ne) {
    uint64_t n = 1;
    for (int64_t d : ne) n *= static_cast<uint64_t>(d);
    return n;
}

// Sizes chosen to cross the writer's chunks (2^18 values): a tensor of three chunks with a short
// last one, a 3-expert tensor with an imatrix, small ones of one chunk, an empty one.
std::vector<PoolTensor> pool_tensors() {
    std::vector<PoolTensor> tensors = {
        {"blk.0.ffn_up_exps.weight", {256, 40, 3}, GgmlType::Q4_K, {}, {}, 0, 0},
        {"blk.0.ffn_down.weight", {1024, 600}, GgmlType::Q4_K, {}, {}, 0, 0},
        {"blk.0.attn_norm.weight", {256}, GgmlType::F16, {}, {}, 0, 0},
        {"blk.0.attn_v.weight", {512, 70}, GgmlType::Q6_K, {}, {}, 0, 0},
        {"blk.0.empty.weight", {256, 0}, GgmlType::Q8_0, {}, {}, 0, 0},
        {"blk.0.attn_q.weight", {768, 9}, GgmlType::Q8_0, {}, {}, 0, 0},
    };
    std::mt19937 rng(41);
    std::student_t_distribution<float> student(3.f);
    std::uniform_real_distribution<float> weight(0.f, 2.f);
    uint64_t offset = 0;
    for (PoolTensor& t : tensors) {
        t.values.resize(element_count(t.ne));
        for (float& v : t.values) v = student(rng) * 0.05f;
        if (t.ne.size() == 3) {
            t.imatrix.resize(static_cast<size_t>(t.ne[0] * t.ne[2]));
            for (float& w : t.imatrix) w = weight(rng);
            t.imatrix[5] = 0.f;  // a zero weight
        }
        // ggml_nbytes refuses a 0 dim: the empty tensor holds no bytes.
        const std::optional<uint64_t> nbytes = ggml_nbytes(t.target, t.ne);
        t.bytes = element_count(t.ne) == 0 ? 0 : nbytes.value();
        t.offset = offset;
        offset += (t.bytes + 31) / 32 * 32;
    }
    return tensors;
}

// What llama.cpp makes of the tensor: ggml_quantize_chunk per expert with its imatrix slice, or
// ggml_fp32_to_fp16_row.
std::vector<uint8_t> ggml_tensor_bytes(const PoolTensor& t) {
    const GgmlOracle& ggml = GgmlOracle::instance();
    std::vector<uint8_t> out(t.bytes);
    if (t.target == GgmlType::F16) {
        ggml.fp32_to_fp16(t.values.data(), reinterpret_cast<uint16_t*>(out.data()),
                          static_cast<int64_t>(t.values.size()));
        return out;
    }
    const int64_t n = t.ne[0];
    const int64_t rows = t.ne.size() > 1 ? t.ne[1] : 1;
    const int64_t experts = t.ne.size() > 2 ? t.ne[2] : 1;
    const uint64_t expert_bytes = t.bytes / static_cast<uint64_t>(experts);
    for (int64_t e = 0; e < experts; ++e) {
        if (rows == 0) break;
        const float* imatrix = t.imatrix.empty() ? nullptr : t.imatrix.data() + e * n;
        ggml.quantize(t.target, t.values.data() + e * rows * n, out.data() + e * expert_bytes, rows,
                      n, imatrix);
    }
    return out;
}

std::vector<TensorWrite> writes_of(const std::vector<PoolTensor>& tensors, AtomicOutput& out) {
    std::vector<TensorWrite> writes;
    for (const PoolTensor& t : tensors) {
        TensorWrite& w = writes.emplace_back();
        w.source.file = "pool.gguf";
        w.source.info = {t.name, t.ne, GgmlType::F32, 0, t.values.size() * 4};
        const uint8_t* data = reinterpret_cast<const uint8_t*>(t.values.data());
        const uint64_t row = static_cast<uint64_t>(t.ne[0]) * 4;
        w.source.read = [data, row](int64_t first, int64_t rows, std::vector<uint8_t>&) {
            return std::span<const uint8_t>(data + static_cast<uint64_t>(first) * row,
                                            static_cast<uint64_t>(rows) * row);
        };
        w.target = t.target;
        w.imatrix = t.imatrix.empty() ? nullptr : t.imatrix.data();
        w.out = &out;
        w.out_offset = t.offset;
    }
    return writes;
}

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class TensorWriterPool : public ::testing::Test {
  protected:
    void SetUp() override {
        const GgmlOracle& ggml = GgmlOracle::instance();
        if (ggml.absent()) REBOX_ORACLE_MISSING(GgmlOracle::library_path().string());
        ASSERT_TRUE(ggml.available()) << ggml.error();
        dir_ = std::filesystem::temp_directory_path() /
               ("rebox_writer_pool_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::filesystem::path dir_;
};

TEST_F(TensorWriterPool, EveryThreadCountWritesGgmlBytesAndFinishesEachTensorOnce) {
    const std::vector<PoolTensor> tensors = pool_tensors();
    const PoolTensor& last = tensors.back();
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        const std::filesystem::path path = dir_ / ("pool" + std::to_string(threads) + ".bin");
        {
            AtomicOutput out(path, true);
            out.resize(last.offset + last.bytes);
            const std::vector<TensorWrite> writes = writes_of(tensors, out);
            std::vector<std::atomic<int>> done(tensors.size());
            const std::thread::id caller = std::this_thread::get_id();
            bool poll_elsewhere = false;
            int polls = 0;
            write_quantized_tensors(
                writes, threads, [&](size_t i) { ++done[i]; },
                [&] {
                    ++polls;
                    if (std::this_thread::get_id() != caller) poll_elsewhere = true;
                });
            for (size_t i = 0; i < tensors.size(); ++i)
                EXPECT_EQ(done[i].load(), 1) << tensors[i].name;
            EXPECT_GE(polls, 1);
            EXPECT_FALSE(poll_elsewhere);
            out.commit();
        }
        const std::vector<uint8_t> file = read_file(path);
        ASSERT_EQ(file.size(), last.offset + last.bytes);
        for (const PoolTensor& t : tensors) {
            const std::vector<uint8_t> want = ggml_tensor_bytes(t);
            const std::vector<uint8_t> got(
                file.begin() + static_cast<std::ptrdiff_t>(t.offset),
                file.begin() + static_cast<std::ptrdiff_t>(t.offset + t.bytes));
            EXPECT_EQ(got, want) << t.name << " differs from ggml's bytes";
        }
    }
}

TEST_F(TensorWriterPool, ANonFiniteValueStopsTheRunNamingItsTensorAndIndex) {
    std::vector<PoolTensor> tensors = pool_tensors();
    tensors[3].values[700] = std::numeric_limits<float>::quiet_NaN();  // blk.0.attn_v.weight
    const PoolTensor& last = tensors.back();
    for (unsigned threads : {1u, 2u}) {
        AtomicOutput out(dir_ / "bad.bin", true);
        out.resize(last.offset + last.bytes);
        const std::vector<TensorWrite> writes = writes_of(tensors, out);
        std::atomic<bool> bad_done{false};
        try {
            write_quantized_tensors(writes, threads, [&](size_t i) {
                if (i == 3) bad_done = true;
            });
            ADD_FAILURE() << "no error with " << threads << " threads";
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::input);
            EXPECT_EQ(e.field(), "blk.0.attn_v.weight value 700") << e.what();
        }
        EXPECT_FALSE(bad_done.load());
        out.discard();
    }
}

TEST_F(TensorWriterPool, APollThatThrowsStopsEveryWorker) {
    const std::vector<PoolTensor> tensors = pool_tensors();
    const PoolTensor& last = tensors.back();
    AtomicOutput out(dir_ / "cancel.bin", true);
    out.resize(last.offset + last.bytes);
    const std::vector<TensorWrite> writes = writes_of(tensors, out);
    std::atomic<size_t> finished{0};
    EXPECT_THROW(write_quantized_tensors(
                     writes, 2, [&](size_t) { ++finished; },
                     [] { throw Error(ExitClass::cancelled, "cancelled"); }),
                 Error);
    EXPECT_LT(finished.load(), tensors.size());
    out.discard();
}

}  // namespace
}  // namespace rebox
