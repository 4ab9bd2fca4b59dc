// llama.cpp's own quantizer and dequantizers as a test oracle, the one loader of the tests and
// benchmarks: the prebuilt libggml-base.so of the npm package @node-llama-cpp/linux-x64 (v0.4.0,
// an x86-64 baseline build without FMA; installed by scripts/setup.sh), opened once per process
// with dlopen, never linked into rebox. Gives ggml_quantize_chunk, ggml_row_size,
// dequantize_row_<type> (ggml_fp16_to_fp32_row / ggml_bf16_to_fp32_row for F16 / BF16) and
// ggml_fp32_to_fp16_row by ggml type id.
#pragma once

#include <dlfcn.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "rebox/ggml_type.hpp"

namespace rebox::test {

class GgmlOracle {
  public:
    using QuantizeChunk = size_t (*)(int type, const float* src, void* dst, int64_t start,
                                     int64_t nrows, int64_t n_per_row, const float* imatrix);
    using DequantizeRow = void (*)(const void* src, float* dst, int64_t n);
    using Fp32ToFp16Row = void (*)(const float* src, uint16_t* dst, int64_t n);
    using RowSize = size_t (*)(int type, int64_t n);

    static std::filesystem::path library_path() {
        return std::filesystem::path(REBOX_SOURCE_DIR) /
               "tests/clients/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/"
               "libggml-base.so";
    }

    static const GgmlOracle& instance() {
        static const GgmlOracle oracle;
        return oracle;
    }

    // absent(): the npm tree is not installed (the caller skips, or fails in CI:
    // REBOX_REQUIRE_GGML_ORACLE); !available() otherwise: a broken install, always a failure.
    bool absent() const { return absent_; }
    bool available() const { return quantize_chunk_ && row_size_ && fp32_to_fp16_row_; }
    const std::string& error() const { return error_; }

    // ggml_quantize_chunk over `nrows` rows from row 0; returns the bytes written.
    size_t quantize(uint32_t type, const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                    const float* imatrix) const {
        return quantize_chunk_(static_cast<int>(type), src, dst, 0, nrows, n_per_row, imatrix);
    }
    size_t quantize(GgmlType type, const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                    const float* imatrix) const {
        return quantize(ggml_type_id(type), src, dst, nrows, n_per_row, imatrix);
    }
    // The same into a buffer of ggml_row_size(type, n_per_row) * rows bytes.
    std::vector<uint8_t> quantize_rows(uint32_t type, const float* values, int64_t rows,
                                       int64_t n_per_row, const float* importance) const {
        std::vector<uint8_t> bytes(row_size_(static_cast<int>(type), n_per_row) *
                                   static_cast<size_t>(rows));
        quantize(type, values, bytes.data(), rows, n_per_row, importance);
        return bytes;
    }

    // The library's dequantizer of a type; null when it exports none.
    DequantizeRow dequantizer(GgmlType type) const {
        if (handle_ == nullptr) return nullptr;
        std::string name;
        if (type == GgmlType::F16) {
            name = "ggml_fp16_to_fp32_row";
        } else if (type == GgmlType::BF16) {
            name = "ggml_bf16_to_fp32_row";
        } else {
            name = ggml_type_name(type);  // "Q4_0" -> dequantize_row_q4_0, "Q4_K" -> ..._q4_K
            for (size_t i = 0; i < name.size(); ++i)
                if (!(i + 1 == name.size() && name[i] == 'K'))
                    name[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
            name = "dequantize_row_" + name;
        }
        return reinterpret_cast<DequantizeRow>(dlsym(handle_, name.c_str()));
    }
    DequantizeRow dequantizer(uint32_t type) const {
        return dequantizer(static_cast<GgmlType>(type));
    }
    // dequantize_row_<type> over `values` values; false when the library has no dequantizer.
    bool dequantize(uint32_t type, const uint8_t* blocks, float* out, int64_t values) const {
        const DequantizeRow row = dequantizer(type);
        if (row == nullptr) return false;
        row(blocks, out, values);
        return true;
    }

    void fp32_to_fp16(const float* in, uint16_t* out, int64_t count) const {
        fp32_to_fp16_row_(in, out, count);
    }

    GgmlOracle(const GgmlOracle&) = delete;
    GgmlOracle& operator=(const GgmlOracle&) = delete;

  private:
    GgmlOracle() {
        const std::filesystem::path path = library_path();
        if (!std::filesystem::exists(path)) {
            absent_ = true;
            error_ =
                path.string() + " is absent (run scripts/setup.sh, or npm ci in tests/clients)";
            return;
        }
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            error_ = std::string("dlopen failed: ") + dlerror();
            return;
        }
        quantize_chunk_ = reinterpret_cast<QuantizeChunk>(dlsym(handle_, "ggml_quantize_chunk"));
        row_size_ = reinterpret_cast<RowSize>(dlsym(handle_, "ggml_row_size"));
        fp32_to_fp16_row_ =
            reinterpret_cast<Fp32ToFp16Row>(dlsym(handle_, "ggml_fp32_to_fp16_row"));
        if (!available())
            error_ = path.string() +
                     " lacks ggml_quantize_chunk / ggml_row_size / ggml_fp32_to_fp16_row";
    }

    void* handle_ = nullptr;  // kept open for the process
    bool absent_ = false;
    QuantizeChunk quantize_chunk_ = nullptr;
    RowSize row_size_ = nullptr;
    Fp32ToFp16Row fp32_to_fp16_row_ = nullptr;
    std::string error_;
};

}  // namespace rebox::test

// Use inside a TEST body. Without the npm tree: skipped, or failed in CI (oracle_required.hpp);
// a library that is there but does not load is always a failure (a broken install).
#define REBOX_REQUIRE_GGML_ORACLE()                                              \
    do {                                                                         \
        if (::rebox::test::GgmlOracle::instance().absent())                      \
            REBOX_ORACLE_MISSING(::rebox::test::GgmlOracle::instance().error()); \
        ASSERT_TRUE(::rebox::test::GgmlOracle::instance().available())           \
            << ::rebox::test::GgmlOracle::instance().error();                    \
    } while (0)
