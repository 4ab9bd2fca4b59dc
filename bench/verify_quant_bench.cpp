// What verify's quantized-tensor check costs (docs/design.md, "Verifying quantized tensors"):
// per type and mode, thread CPU time per value of verify's scalar re-quantizer against llama.cpp's
// ggml_quantize_chunk (the prebuilt libggml-base.so from the npm test clients, when present), and
// of a whole sampled check_quantized_tensor (sample re-quantized + every block dequantized for the
// errors) as a share of ggml's quantization of the same tensor.
//   rebox_verify_quant_bench [rows] [width]     (default 512 x 4096: a 2M-value tensor)
#include <dlfcn.h>
#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "verify/quantized/quant_check.hpp"
#include "verify/quantized/ref_quantize.hpp"

namespace {

using rebox::verify_ref::QuantTensorInput;

double thread_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

using QuantizeChunk = size_t (*)(int, const float*, void*, int64_t, int64_t, int64_t, const float*);

QuantizeChunk load_ggml() {
    const char* path = REBOX_SOURCE_DIR
        "/tests/clients/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so";
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    return handle ? reinterpret_cast<QuantizeChunk>(dlsym(handle, "ggml_quantize_chunk")) : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 512;
    const int64_t width = argc > 2 ? std::atoll(argv[2]) : 4096;
    if (rows < 1 || width < 256 || width % 256 != 0) {
        std::fprintf(stderr,
                     "usage: rebox_verify_quant_bench [rows >= 1] [width, a multiple of 256]\n");
        return 1;
    }
    std::mt19937_64 rng(1);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> values(static_cast<size_t>(rows * width)), importance(width);
    for (auto& v : values) {  // student-t(3) * 0.02, like checkpoint weights
        const float a = normal(rng), b = normal(rng), c = normal(rng);
        v = 0.02f * normal(rng) / std::sqrt((a * a + b * b + c * c) / 3.f);
    }
    for (auto& w : importance) w = std::exp(normal(rng));
    const QuantizeChunk ggml = load_ggml();
    std::printf("%lld x %lld values; ns per value (thread CPU time)%s\n",
                static_cast<long long>(rows), static_cast<long long>(width),
                ggml ? "" : "; ggml absent (npm ci in tests/clients)");
    std::printf("%-7s %-10s %9s %9s %7s %14s %14s\n", "type", "mode", "ggml", "verify", "ratio",
                "sampled check", "% of ggml");
    const struct {
        uint32_t id;
        const char* name;
    } types[] = {{2, "Q4_0"},    {3, "Q4_1"},    {6, "Q5_0"},  {7, "Q5_1"},  {8, "Q8_0"},
                 {10, "Q2_K"},   {11, "Q3_K"},   {12, "Q4_K"}, {13, "Q5_K"}, {14, "Q6_K"},
                 {20, "IQ4_NL"}, {23, "IQ4_XS"}, {39, "MXFP4"}};
    const double count = static_cast<double>(values.size());
    for (const auto& type : types) {
        rebox::verify_ref::RefQuantLayout layout{};
        rebox::verify_ref::ref_quant_layout(type.id, &layout);
        const uint64_t blocks_per_row = static_cast<uint64_t>(width) / layout.block_values;
        std::vector<uint8_t> bytes(static_cast<size_t>(rows) * blocks_per_row * layout.block_bytes);
        std::vector<uint8_t> block(layout.block_bytes);
        for (const bool with_importance : {false, true}) {
            const float* w = with_importance ? importance.data() : nullptr;
            double ggml_ns = NAN;
            if (ggml) {
                const double start = thread_seconds();
                ggml(static_cast<int>(type.id), values.data(), bytes.data(), 0, rows, width, w);
                ggml_ns = (thread_seconds() - start) * 1e9 / count;
            }
            double start = thread_seconds();
            for (int64_t r = 0; r < rows; ++r) {
                const auto row = rebox::verify_ref::make_quant_row(
                    type.id, std::span<const float>(values).subspan(r * width, width),
                    with_importance ? std::span<const float>(importance)
                                    : std::span<const float>());
                for (uint64_t b = 0; b < blocks_per_row; ++b) {
                    rebox::verify_ref::ref_quantize_block(type.id, row, b, block);
                    if (!ggml)
                        std::copy(block.begin(), block.end(),
                                  bytes.begin() + (r * blocks_per_row + b) * layout.block_bytes);
                }
            }
            const double verify_ns = (thread_seconds() - start) * 1e9 / count;
            QuantTensorInput input{
                "blk.0.ffn_up.weight",
                type.id,
                values,
                static_cast<uint64_t>(width),
                with_importance ? std::span<const float>(importance) : std::span<const float>(),
                bytes,
                false};
            start = thread_seconds();
            const auto check = rebox::verify_ref::check_quantized_tensor(input);
            const double check_ns = (thread_seconds() - start) * 1e9 / count;
            if (!check.bytes_match()) {
                std::fprintf(stderr, "%s\n", rebox::verify_ref::describe(input, check).c_str());
                return 2;
            }
            std::printf("%-7s %-10s %9.1f %9.1f %7.2f %14.2f %13.1f%%\n", type.name,
                        with_importance ? "importance" : "plain", ggml_ns, verify_ns,
                        verify_ns / ggml_ns, check_ns, 100.0 * check_ns / ggml_ns);
        }
    }
    return 0;
}
