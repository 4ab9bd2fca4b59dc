// llama.cpp's own quantizer as a test oracle: the prebuilt libggml-base.so from the npm package
// @node-llama-cpp/linux-x64 (installed by scripts/setup.sh), loaded with dlopen, never linked.
// Gives ggml_quantize_chunk and the dequantize_row_<type> functions by rebox GgmlType.
#pragma once

#include <dlfcn.h>

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string>

#include "rebox/ggml_type.hpp"
#include "test_paths.hpp"

namespace rebox::test {

class GgmlOracle {
  public:
    using QuantizeChunk = size_t (*)(int type, const float* src, void* dst, int64_t start,
                                     int64_t nrows, int64_t n_per_row, const float* imatrix);
    using DequantizeRow = void (*)(const void* src, float* dst, int64_t n);

    static std::filesystem::path library_path() {
        return source_dir() /
               "tests/clients/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/"
               "libggml-base.so";
    }

    // Loads the library once per process; available() is false when the file is absent (the
    // caller skips) and the load error is kept in error().
    static GgmlOracle& instance() {
        static GgmlOracle oracle;
        return oracle;
    }

    bool available() const { return quantize_chunk_ != nullptr; }
    const std::string& error() const { return error_; }

    size_t quantize(GgmlType type, const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                    const float* imatrix) const {
        return quantize_chunk_(static_cast<int>(ggml_type_id(type)), src, dst, 0, nrows, n_per_row,
                               imatrix);
    }

    // dequantize_row_<type>, ggml_fp16_to_fp32_row / ggml_bf16_to_fp32_row; null if missing.
    DequantizeRow dequantizer(GgmlType type) const {
        if (handle_ == nullptr) return nullptr;
        std::string name;
        switch (type) {
            case GgmlType::F16:
                name = "ggml_fp16_to_fp32_row";
                break;
            case GgmlType::BF16:
                name = "ggml_bf16_to_fp32_row";
                break;
            case GgmlType::Q2_K:
                name = "dequantize_row_q2_K";
                break;
            case GgmlType::Q3_K:
                name = "dequantize_row_q3_K";
                break;
            case GgmlType::Q4_K:
                name = "dequantize_row_q4_K";
                break;
            case GgmlType::Q5_K:
                name = "dequantize_row_q5_K";
                break;
            case GgmlType::Q6_K:
                name = "dequantize_row_q6_K";
                break;
            default: {
                name = ggml_type_name(type);  // "Q4_0" -> dequantize_row_q4_0
                for (char& c : name) c = static_cast<char>(std::tolower(c));
                name = "dequantize_row_" + name;
            }
        }
        return reinterpret_cast<DequantizeRow>(dlsym(handle_, name.c_str()));
    }

  private:
    GgmlOracle() {
        const std::filesystem::path path = library_path();
        if (!std::filesystem::exists(path)) {
            error_ = path.string() + " is absent (run scripts/setup.sh or npm ci in tests/clients)";
            return;
        }
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            error_ = dlerror();
            return;
        }
        quantize_chunk_ = reinterpret_cast<QuantizeChunk>(dlsym(handle_, "ggml_quantize_chunk"));
        if (quantize_chunk_ == nullptr) error_ = "ggml_quantize_chunk not exported";
    }

    void* handle_ = nullptr;
    QuantizeChunk quantize_chunk_ = nullptr;
    std::string error_;
};

}  // namespace rebox::test

// Skips the test when the npm tree is not installed; fails it when the library is there but
// does not load (that is a broken install, not an absent one).
#define REBOX_REQUIRE_GGML_ORACLE()                                                \
    do {                                                                           \
        if (!std::filesystem::exists(::rebox::test::GgmlOracle::library_path())) { \
            GTEST_SKIP() << ::rebox::test::GgmlOracle::instance().error();         \
        }                                                                          \
        ASSERT_TRUE(::rebox::test::GgmlOracle::instance().available())             \
            << ::rebox::test::GgmlOracle::instance().error();                      \
    } while (0)
