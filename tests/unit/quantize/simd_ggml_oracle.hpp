// The outside oracle of the quantization tests and benchmarks: llama.cpp's own ggml_quantize_chunk,
// dlopen'ed from the prebuilt libggml-base.so that node-llama-cpp ships (never linked into rebox).
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace rebox::test {

class GgmlQuantizeOracle {
  public:
    using QuantizeChunk = size_t (*)(int type, const float* src, void* dst, int64_t start,
                                     int64_t nrows, int64_t n_per_row, const float* imatrix);

    // <source>/tests/clients/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so
    static std::filesystem::path library_path(const std::filesystem::path& source_dir) {
        return source_dir /
               "tests/clients/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/"
               "libggml-base.so";
    }

    explicit GgmlQuantizeOracle(const std::filesystem::path& library) {
        if (!std::filesystem::exists(library)) {
            error_ =
                "absent: " + library.string() + " (install the npm test clients: scripts/setup.sh)";
            return;
        }
        handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle_) {
            error_ = std::string("dlopen failed: ") + dlerror();
            return;
        }
        quantize_chunk_ = reinterpret_cast<QuantizeChunk>(dlsym(handle_, "ggml_quantize_chunk"));
        if (!quantize_chunk_) error_ = library.string() + " has no ggml_quantize_chunk";
    }
    ~GgmlQuantizeOracle() {
        if (handle_) dlclose(handle_);
    }
    GgmlQuantizeOracle(const GgmlQuantizeOracle&) = delete;
    GgmlQuantizeOracle& operator=(const GgmlQuantizeOracle&) = delete;

    bool absent() const { return !handle_ && error_.rfind("absent", 0) == 0; }
    bool ok() const { return quantize_chunk_ != nullptr; }
    const std::string& error() const { return error_; }

    size_t quantize(uint32_t type, const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                    const float* imatrix) const {
        return quantize_chunk_(static_cast<int>(type), src, dst, 0, nrows, n_per_row, imatrix);
    }

  private:
    void* handle_ = nullptr;
    QuantizeChunk quantize_chunk_ = nullptr;
    std::string error_;
};

}  // namespace rebox::test
