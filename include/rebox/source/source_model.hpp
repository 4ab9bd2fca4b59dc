// What every input adapter (mcq-v1, MLX affine) yields: tensors as either float data or a quantized
// view (bit stream of codes + per-group scale and min), plus the paths of the model's side files.
// Nothing downstream knows which adapter produced a SourceModel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rebox {

class SafetensorsFile;

enum class FloatDtype { F32, F16, BF16 };
size_t float_dtype_size(FloatDtype dtype);
const char* float_dtype_name(FloatDtype dtype);

// A quantized tensor: N = rows*cols codes, code i at stream bits [i*bits, i*bits+bits) (lsb0:
// stream bit k is bit k%8 of byte k/8, code LSB first); group g covers codes [g*group,
// g*group+group); value i = float(code) * float(scale[i/group]) + float(min[i/group]) in binary32.
struct QuantView {
    int bits = 0;
    int64_t group = 0;
    std::span<const uint8_t> codes;  // the packed bit stream, ceil(N*bits/8) bytes
    FloatDtype scale_dtype = FloatDtype::F16;
    std::span<const uint8_t> scales;  // N/group values of scale_dtype, little-endian
    std::span<const uint8_t> mins;    // N/group values of scale_dtype
};

struct SourceTensor {
    std::string name;            // Hugging Face name, e.g. "layers.0.self_attn.q_proj.weight"
    std::vector<int64_t> shape;  // logical shape, Hugging Face (row-major) order
    std::string file;            // file it came from (for messages)
    // Exactly one of these is set.
    std::optional<QuantView> quant;
    FloatDtype float_dtype = FloatDtype::F32;
    std::span<const uint8_t> float_data;  // when !quant

    bool is_quantized() const { return quant.has_value(); }
    uint64_t element_count() const;
};

// A reason a tensor (or the model) cannot be carried over exactly, and what would fix it.
struct Blocker {
    std::string tensor;  // tensor name, or a file/field for model-level blockers
    std::string reason;
    std::string fix;
    // > 0: --allow-lossless-fallback would carry the tensor as an exact F16/F32 copy this many
    // bytes larger than its packed source (the plan adds the whole file's growth to `fix`).
    uint64_t fallback_growth_bytes = 0;
};

struct SourceModel {
    std::filesystem::path dir;
    std::string format;                 // "mcq-v1", "mlx" or "float"
    std::vector<SourceTensor> tensors;  // in file order (shards in index order)
    std::vector<Blocker> blockers;      // problems the reader found (tensors affected are left out)
    std::vector<std::shared_ptr<const SafetensorsFile>> files;  // keeps the mappings alive
};

}  // namespace rebox
