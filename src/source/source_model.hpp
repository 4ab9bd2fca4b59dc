// What every input adapter (mcq-v1, MLX affine, GPTQ, AWQ, compressed-tensors) yields: tensors as
// float data, an affine quantized view (bit stream of codes + per-group scale and min) or an
// integer-zero-point view (codes, integer zero points, scales, in the checkpoint's own packing),
// plus the paths of the model's side files. Nothing downstream knows which adapter produced a
// SourceModel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rebox/error.hpp"

namespace rebox {

class SafetensorsFile;
class ModelDir;

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

// Where the codes of an IntQuantView sit (docs/formats.md §5). All words are little-endian int32.
enum class IntCodeLayout {
    // GPTQ qweight [cols*bits/32, rows]: row r's codes are one lsb0 stream along the input dim,
    // made of the words of column r (word w at byte (w*rows + r)*4); 3-bit codes cross words.
    input_packed_columns,
    // AWQ GEMM qweight [cols, rows/8] (4-bit): code (r, k) is nibble kAwqNibbleOf[r % 8] of word
    // (k, r/8), the nibble order AutoAWQ packs with ([0,2,4,6,1,3,5,7]).
    awq_output_packed,
    // compressed-tensors weight_packed [rows, ceil(cols/pf)], pf = 32/bits codes per word at bits
    // [j*bits, j*bits+bits) of word k/pf, j = k%pf (unused high bits when 32 % bits != 0).
    row_words,
    // compressed-tensors int-quantized weight: int8 [rows, cols], the codes are the signed bytes.
    row_int8,
};
// Where the zero points sit.
enum class IntZeroLayout {
    constant,  // every z is zero_constant (symmetric formats without a zero-point tensor)
    // GPTQ qzeros [n_groups, rows*bits/32]: group g's zero points are one lsb0 stream along the
    // output dim (3-bit across words); z = stored + zero_add (1 for checkpoint_format "gptq").
    output_packed_rows,
    awq_output_packed,  // AWQ qzeros [n_groups, rows/8], nibble order as the codes
    // compressed-tensors weight_zero_point packed along dim 0: [ceil(rows/pf), n_groups], zero of
    // row r at slot r%pf of word (r/pf, g), stored with the same +2^(bits-1) offset as the codes.
    column_words,
    // compressed-tensors int-quantized weight_zero_point: int8 [rows, n_groups], signed.
    row_int8,
};
inline constexpr int kAwqNibbleOf[8] = {0, 4, 1, 5, 2, 6, 3, 7};  // logical column -> nibble

// An integer-zero-point quantized 2-D tensor [rows = out, cols = in] (GPTQ, AWQ,
// compressed-tensors; docs/formats.md §5): value (r, k) = float(q - z) * float(s) in binary32, q
// the code, z = zero(r, g) and s = scale(r, g) of the group g that input column k belongs to
// (g = k / group, or g_idx[k] when g_idx is set). q - z is a small integer and s an fp16/bf16
// value, so the product is exact. Accessors: rebox/source/int_quant_view.hpp.
struct IntQuantView {
    int bits = 0;       // 2..8
    int64_t rows = 0;   // output features
    int64_t cols = 0;   // input features
    int64_t group = 0;  // values per group along the input dim (cols for one group per row)
    int64_t n_groups = 0;
    IntCodeLayout code_layout = IntCodeLayout::row_words;
    std::span<const uint8_t> codes;
    IntZeroLayout zero_layout = IntZeroLayout::constant;
    std::span<const uint8_t> zeros;
    int zero_constant = 0;  // IntZeroLayout::constant
    int zero_add = 0;       // added to each stored zero (GPTQ v1 stores z - 1)
    FloatDtype scale_dtype = FloatDtype::F16;
    bool scales_group_major = true;  // [n_groups, rows] (GPTQ, AWQ) or [rows, n_groups] (CT)
    std::span<const uint8_t> scales;
    // Optional int32 [cols]: the group of each input column (GPTQ act-order / CT weight_g_idx);
    // empty when the groups are k / group. The reader checked every value is < n_groups.
    std::span<const uint8_t> g_idx;
    std::string method;         // "gptq", "awq", "compressed-tensors" (for notes and messages)
    bool symmetric = false;     // as the checkpoint's config says (notes only; values decide)
    uint64_t packed_bytes = 0;  // codes + zeros + scales (+ g_idx) bytes of the source
};

// An FP4 tensor (MLX mode "mxfp4" / "nvfp4", docs/formats.md §2.1): E2M1 codes, two per byte,
// element 2i in the low nibble of byte i (MLX's little-endian uint32 words), one unsigned scale
// byte per group of `group` consecutive values along a row: E8M0 (value 2^(e-127)) for MXFP4,
// group 32; E4M3 for NVFP4, group 16. Value i = E2M1[code i] * scale(i / group); no bias, no
// global scale. The reader checked every scale byte is finite and non-negative.
enum class Fp4Kind { mxfp4, nvfp4 };
// ModelOpt / compressed-tensors checkpoints (docs/formats.md §2.2) give the same view, and NVFP4
// ones add a per-tensor factor that llama.cpp multiplies in after the matmul (<tensor>.scale).
struct Fp4View {
    Fp4Kind kind = Fp4Kind::mxfp4;
    int64_t group = 32;
    std::span<const uint8_t> codes;   // N/2 bytes
    std::span<const uint8_t> scales;  // N/group bytes
    const char* origin = "MLX";       // "MLX", "ModelOpt", "compressed-tensors" (notes, messages)
    // The per-tensor factor (ModelOpt weight_scale_2 verbatim; compressed-tensors fl32(1/g) of its
    // weight_global_scale g); none for MLX. The real value is E2M1 * scale * scale2.
    std::optional<float> scale2;
    // compressed-tensors: scale2 is only the nearest float to 1/g; |scale2 * g - 1| (0 when exact).
    bool scale2_inexact = false;
    double scale2_error = 0;
};

// An FP8 block-quantized 2-D tensor (config.json quant_method "fp8": DeepSeek-V3/R1, Kimi-K2,
// Qwen3 -FP8; docs/formats.md §6): codes are OCP E4M3 bytes [rows, cols] row-major, scales one
// per block of block_rows x block_cols (the edge blocks partial), [ceil(rows/block_rows),
// ceil(cols/block_cols)] row-major in scale_dtype (P.weight_scale_inv). Value (r, c) =
// e4m3(code) * scale(r / block_rows, c / block_cols), the exact product (source/fp8_values.hpp).
// The reader checked every shape and that no code is NaN.
struct Fp8View {
    int64_t rows = 0, cols = 0;
    int64_t block_rows = 128, block_cols = 128;
    std::span<const uint8_t> codes;  // rows * cols bytes
    FloatDtype scale_dtype = FloatDtype::F32;
    std::span<const uint8_t> scales;  // scale_rows() * scale_cols() values of scale_dtype
    int64_t scale_rows() const { return (rows + block_rows - 1) / block_rows; }
    int64_t scale_cols() const { return (cols + block_cols - 1) / block_cols; }
};

struct SourceTensor {
    std::string name;            // Hugging Face name, e.g. "layers.0.self_attn.q_proj.weight"
    std::vector<int64_t> shape;  // logical shape, Hugging Face (row-major) order
    std::string file;            // file it came from (for messages)
    // At most one of quant / int_quant / fp4 / fp8 is set; neither: float_data.
    std::optional<QuantView> quant;
    std::optional<IntQuantView> int_quant;
    std::optional<Fp4View> fp4;
    std::optional<Fp8View> fp8;
    FloatDtype float_dtype = FloatDtype::F32;
    std::span<const uint8_t> float_data;  // when !quant
    // The checkpoint's own name when the reader gave the tensor the one the registry knows
    // (mlx-embeddings' "dense.0.weight" read as "2_Dense.linear.weight"); empty otherwise.
    std::string renamed_from;

    bool is_quantized() const { return quant.has_value() || int_quant.has_value() || fp4 || fp8; }
    int quant_bits() const {
        return quant ? quant->bits : int_quant ? int_quant->bits : fp4 ? 4 : fp8 ? 8 : 0;
    }
    int64_t quant_group() const {
        return quant       ? quant->group
               : int_quant ? int_quant->group
               : fp4       ? fp4->group
               : fp8       ? fp8->block_rows * fp8->block_cols
                           : 0;
    }
    uint64_t element_count() const;
};

// A reason a tensor (or the model) cannot be carried over exactly, and what would fix it.

struct SourceModel {
    std::filesystem::path dir;
    std::string
        format;  // "mcq-v1", "mlx", "float", "gptq", "awq", "compressed-tensors", "fp8", ...
    std::vector<SourceTensor> tensors;  // in file order (shards in index order)
    std::vector<Blocker> blockers;      // problems the reader found (tensors affected are left out)
    std::vector<std::shared_ptr<const SafetensorsFile>> files;  // keeps the mappings alive
    // The folder as read (config.json, the opened safetensors files), shared read-only with the
    // plan and verify; null for a SourceModel assembled in memory (tests).
    std::shared_ptr<const ModelDir> model_dir;
};

}  // namespace rebox
