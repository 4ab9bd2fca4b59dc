// Google Benchmark micro-benchmarks of the hot kernels, in values per second: lsb0 unpacking for
// every width, Q4_1/Q5_1 block encoding and binary32 dequantization on a 1M-value tensor.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "encode/block_encode.hpp"
#include "source/lsb0_unpack.hpp"
#include "source/source_values.hpp"

namespace {

constexpr uint64_t kValues = 1u << 20;

struct Tensor {
    std::vector<uint8_t> codes, scales, mins;
    rebox::QuantView view;
    Tensor(int bits, int64_t group) {
        uint64_t state = 0x9e3779b97f4a7c15ull;
        auto next = [&] {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            return state;
        };
        codes.resize((kValues * bits + 7) / 8);
        for (auto& b : codes) b = static_cast<uint8_t>(next());
        const uint64_t groups = kValues / group;
        scales.resize(groups * 2);
        mins.resize(groups * 2);
        for (uint64_t g = 0; g < groups; ++g) {
            scales[2 * g] = 0x00, scales[2 * g + 1] = 0x20;  // 0x2000 = 2^-7
            mins[2 * g] = 0x00, mins[2 * g + 1] = 0xa4;      // 0xa400 = -2^-6... a negative min
        }
        view = {bits, group, codes, rebox::FloatDtype::F16, scales, mins};
    }
};

void BM_Unpack(benchmark::State& state) {
    const int bits = static_cast<int>(state.range(0));
    Tensor t(bits, 64);
    std::vector<uint8_t> out(kValues);
    for (auto _ : state) {
        rebox::unpack_lsb0(t.codes, bits, 0, kValues, out.data());
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * kValues);
}
BENCHMARK(BM_Unpack)->DenseRange(1, 8);

void BM_EncodeQ4_1(benchmark::State& state) {
    Tensor t(static_cast<int>(state.range(0)), state.range(1));
    std::vector<uint8_t> out(kValues / 32 * rebox::kQ4_1BlockBytes);
    for (auto _ : state) {
        rebox::encode_q4_1(t.view, 0, kValues / 32, out.data());
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * kValues);
}
BENCHMARK(BM_EncodeQ4_1)->Args({3, 32})->Args({4, 64});

void BM_EncodeQ5_1(benchmark::State& state) {
    Tensor t(5, 64);
    std::vector<uint8_t> out(kValues / 32 * rebox::kQ5_1BlockBytes);
    for (auto _ : state) {
        rebox::encode_q5_1(t.view, 0, kValues / 32, out.data());
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * kValues);
}
BENCHMARK(BM_EncodeQ5_1);

void BM_DequantizeF32(benchmark::State& state) {
    Tensor t(static_cast<int>(state.range(0)), 64);
    std::vector<float> out(kValues);
    for (auto _ : state) {
        rebox::dequantize_f32(t.view, 0, kValues, out.data());
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * kValues);
}
BENCHMARK(BM_DequantizeF32)->Arg(3)->Arg(4);

}  // namespace

BENCHMARK_MAIN();
