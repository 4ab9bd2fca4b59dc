// llama.cpp's own quantizer as a test oracle: the prebuilt libggml-base.so from node-llama-cpp
// (tests/clients/node_modules, v0.4.0, x86-64 baseline build without FMA), opened with dlopen.
// Tests GTEST_SKIP when the npm tree is absent (CI installs it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rebox::test {

class VerifyGgmlOracle {
  public:
    // The process-wide instance; available() is false (and why() says why) when the library or
    // one of its symbols is missing.
    static const VerifyGgmlOracle& get();
    bool available() const { return handle_ != nullptr; }
    const std::string& why() const { return why_; }

    // ggml_quantize_chunk over `rows` rows of `n_per_row` values; importance: nullptr or
    // n_per_row floats used for every row. Returns the bytes.
    std::vector<uint8_t> quantize(uint32_t type, const float* values, int64_t rows,
                                  int64_t n_per_row, const float* importance) const;
    // dequantize_row_<type> over `values` values (a multiple of the block size); false when the
    // library has no dequantizer for the type.
    bool dequantize(uint32_t type, const uint8_t* blocks, float* out, int64_t values) const;
    // ggml_fp32_to_fp16_row.
    void fp32_to_fp16(const float* in, uint16_t* out, int64_t count) const;

  private:
    VerifyGgmlOracle();
    void* handle_ = nullptr;
    std::string why_;
    using QuantizeChunk = size_t (*)(int, const float*, void*, int64_t, int64_t, int64_t,
                                     const float*);
    using DequantizeRow = void (*)(const void*, float*, int64_t);
    using Fp32ToFp16Row = void (*)(const float*, uint16_t*, int64_t);
    using RowSize = size_t (*)(int, int64_t);
    QuantizeChunk quantize_chunk_ = nullptr;
    RowSize row_size_ = nullptr;
    Fp32ToFp16Row fp32_to_fp16_row_ = nullptr;
    std::vector<std::pair<uint32_t, DequantizeRow>> dequantizers_;
};

}  // namespace rebox::test
