// A quantized SourceTensor built by hand for plan/convert tests: owns the packed code stream
// (lsb0, tests/unit/encode/bit_packer.hpp) and the scale/min bytes its QuantView points at.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "encode/bit_packer.hpp"
#include "quant_test_bytes.hpp"
#include "source/source_model.hpp"

namespace rebox::test {

struct HandTensor {
    std::vector<uint8_t> stream, scales, mins;
    SourceTensor tensor;

    HandTensor(int bits, int64_t group, int64_t rows, int64_t cols,
               const std::vector<uint8_t>& codes, FloatDtype dtype,
               std::vector<uint8_t> scale_bytes, std::vector<uint8_t> min_bytes,
               std::string name = "layers.0.mlp.up_proj.weight")
        : stream(pack_lsb0_bitwise(codes, bits)),
          scales(std::move(scale_bytes)),
          mins(std::move(min_bytes)) {
        tensor.name = std::move(name);
        tensor.shape = {rows, cols};
        tensor.quant = quant_view(bits, group, stream, dtype, scales, mins);
    }
    HandTensor(const HandTensor&) = delete;  // the view points into this object's vectors
    HandTensor& operator=(const HandTensor&) = delete;
};

}  // namespace rebox::test
