// dlopen of node-llama-cpp's prebuilt libggml-base.so and the few entry points the quantizer
// oracle tests call (ggml_quantize_chunk, dequantize_row_*, ggml_fp32_to_fp16_row).
#include "ggml_oracle.hpp"

#include <dlfcn.h>

#include <filesystem>

namespace rebox::test {

const VerifyGgmlOracle& VerifyGgmlOracle::get() {
    static const VerifyGgmlOracle oracle;
    return oracle;
}

VerifyGgmlOracle::VerifyGgmlOracle() {
    const std::filesystem::path library = REBOX_SOURCE_DIR
        "/tests/clients/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so";
    if (!std::filesystem::exists(library)) {
        why_ = library.string() + " is absent (run npm ci in tests/clients)";
        return;
    }
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        why_ = std::string("dlopen failed: ") + dlerror();
        return;
    }
    quantize_chunk_ = reinterpret_cast<QuantizeChunk>(dlsym(handle, "ggml_quantize_chunk"));
    row_size_ = reinterpret_cast<RowSize>(dlsym(handle, "ggml_row_size"));
    fp32_to_fp16_row_ = reinterpret_cast<Fp32ToFp16Row>(dlsym(handle, "ggml_fp32_to_fp16_row"));
    const std::pair<uint32_t, const char*> names[] = {
        {2, "dequantize_row_q4_0"},  {3, "dequantize_row_q4_1"},    {6, "dequantize_row_q5_0"},
        {7, "dequantize_row_q5_1"},  {8, "dequantize_row_q8_0"},    {10, "dequantize_row_q2_K"},
        {11, "dequantize_row_q3_K"}, {12, "dequantize_row_q4_K"},   {13, "dequantize_row_q5_K"},
        {14, "dequantize_row_q6_K"}, {20, "dequantize_row_iq4_nl"}, {23, "dequantize_row_iq4_xs"},
        {39, "dequantize_row_mxfp4"}};
    for (const auto& [type, name] : names) {
        if (void* symbol = dlsym(handle, name))
            dequantizers_.emplace_back(type, reinterpret_cast<DequantizeRow>(symbol));
    }
    if (!quantize_chunk_ || !row_size_ || !fp32_to_fp16_row_) {
        why_ =
            library.string() + " lacks ggml_quantize_chunk / ggml_row_size / ggml_fp32_to_fp16_row";
        return;
    }
    handle_ = handle;
}

std::vector<uint8_t> VerifyGgmlOracle::quantize(uint32_t type, const float* values, int64_t rows,
                                          int64_t n_per_row, const float* importance) const {
    std::vector<uint8_t> bytes(row_size_(static_cast<int>(type), n_per_row) *
                               static_cast<size_t>(rows));
    quantize_chunk_(static_cast<int>(type), values, bytes.data(), 0, rows, n_per_row, importance);
    return bytes;
}

bool VerifyGgmlOracle::dequantize(uint32_t type, const uint8_t* blocks, float* out,
                            int64_t values) const {
    for (const auto& [id, function] : dequantizers_) {
        if (id == type) {
            function(blocks, out, values);
            return true;
        }
    }
    return false;
}

void VerifyGgmlOracle::fp32_to_fp16(const float* in, uint16_t* out, int64_t count) const {
    fp32_to_fp16_row_(in, out, count);
}

}  // namespace rebox::test
