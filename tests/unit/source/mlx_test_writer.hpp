// Test-local writer of small MLX checkpoints: config.json with a "quantization" block and one
// model.safetensors holding U32 weights (words given by the test, little-endian), scales/biases of
// a chosen dtype and plain tensors. Independent of rebox's reader (uses the mcq test writer's
// minimal safetensors encoder).
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "source/mcq_test_writer.hpp"

namespace rebox::test {

class MlxDir : public StTensorList {
  public:
    nlohmann::json config = {{"model_type", "qwen3"},
                             {"quantization", {{"group_size", 64}, {"bits", 4}}}};

    static std::vector<uint8_t> words_le(const std::vector<uint32_t>& words) {
        std::vector<uint8_t> bytes;
        for (uint32_t w : words)
            for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
        return bytes;
    }

    // P.weight U32 [rows, words_per_row] plus P.scales/P.biases [rows, groups] of `dtype`
    // (2-byte dtypes get the value bits 0x3c00 + k, F32 gets k as float bits; only sizes matter).
    void quant(const std::string& module, int64_t rows, const std::vector<uint32_t>& words,
               int64_t groups, const std::string& dtype = "BF16") {
        const int64_t per_row = static_cast<int64_t>(words.size()) / rows;
        tensors.push_back({module + ".weight", "U32", {rows, per_row}, words_le(words)});
        const size_t width = dtype == "F32" ? 4 : 2;
        for (const char* part : {".scales", ".biases"}) {
            std::vector<uint8_t> data(static_cast<size_t>(rows * groups) * width);
            for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(0x30 + i);
            tensors.push_back({module + part, dtype, {rows, groups}, std::move(data)});
        }
    }
    void plain(const std::string& name, const std::string& dtype, std::vector<int64_t> shape) {
        size_t count = 1;
        for (int64_t d : shape) count *= static_cast<size_t>(d);
        const size_t width = dtype == "F32" ? 4 : 2;
        tensors.push_back({name, dtype, std::move(shape), std::vector<uint8_t>(count * width, 0)});
    }
    void write(const std::filesystem::path& dir) const {
        std::ofstream(dir / "config.json") << config.dump(2);
        write_safetensors(dir / "model.safetensors", tensors, {});
    }
};

}  // namespace rebox::test
