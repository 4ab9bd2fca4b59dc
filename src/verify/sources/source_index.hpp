// The source side's tensor list as verify sees it, built from SafetensorsModel and verify's own mcq
// metadata parse: every quantized triple <name>.qcodes/.scales/.mins (with its metadata entry) and
// every plain tensor, looked up by the name without a "model." prefix. Also verify's own shape text
// and float dtype mapping, used by all of verify/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/safetensors.hpp"
#include "verify/sources/fp8_source.hpp"
#include "verify/sources/mcq_metadata.hpp"
#include "verify/sources/prequant_expected.hpp"
#include "verify/values/ref_expected.hpp"
#include "verify/values/ref_fp4.hpp"

namespace rebox::verify_ref {

struct SourceTensor {
    std::string name;            // HF name as stored (for quantized: the base name without .qcodes)
    std::string file;            // display name of the file holding it
    std::vector<int64_t> shape;  // logical HF shape (metadata shape for quantized)
    uint64_t element_count = 0;
    bool quantized = false;
    QuantView quant;        // when quantized mcq-v1 / MLX (sizes already checked)
    bool prequant = false;  // quantized GPTQ / AWQ / compressed-tensors: values from `pq`
    PrequantSource pq;      // when prequant (shapes, dtypes and g_idx range already checked)
    bool fp4 = false;       // quantized MLX mxfp4 / nvfp4: values from `fp4_source`
    Fp4Source fp4_source;   // when fp4 (shapes and every scale byte already checked)
    bool fp8 = false;       // quantized FP8 with block scales: values from `fp8_source`
    Fp8Source fp8_source;   // when fp8 (dtypes, shapes and sizes already checked)
    // ModelOpt / compressed-tensors NVFP4: the per-tensor factor the GGUF's <tensor>.scale must
    // hold (weight_scale_2, or fl32(1/g)); scale2_error: |fl32(1/g) * g - 1| (0: exact).
    bool has_scale2 = false;
    float scale2 = 1.0f;
    double scale2_error = 0;
    // gpt-oss gate_up: the entry keeps the even (1) or odd (2) rows of the source's dim 1, whose
    // rows are `deinterleave_row_values` long: value i is source value (2r + parity) * R + c with
    // r = i / R, c = i % R. `shape` / `element_count` are the kept half; the data spans the whole.
    // transformers' fused experts (fused_experts_index.hpp): 3 keeps the first `half_rows` rows of
    // each expert's 2 * half_rows (gate), 4 the last ones (up): kept row r is source row
    // r / H * 2H + r % H (+ H), H = half_rows.
    // Qwen3-Next's in_proj_qkvz (qkvz_index.hpp): qkvz_heads groups of [q: K, k: K, v: V, z: V]
    // rows (K = qkvz_key_rows, V = qkvz_value_rows); 5 keeps every q, then every k, then every v
    // row (attn_qkv), 6 every z row (attn_gate).
    uint8_t deinterleave = 0;
    uint64_t deinterleave_row_values = 0;
    uint64_t half_rows = 0;
    uint64_t qkvz_heads = 0, qkvz_key_rows = 0, qkvz_value_rows = 0;
    // Qwen3-VL-MoE's transposed fused experts (fused_experts_index.hpp): the entry is [E, K, R],
    // each expert the transpose of the source's [R, C] columns [offset, offset + K) (gate: 0, up:
    // K = C / 2, down: all). 0: not transposed; else the source's R and C.
    uint64_t transposed_rows = 0, transposed_columns = 0, transposed_offset = 0;
    // The source value entry value `i` is (transposed_rows != 0).
    uint64_t transposed_source_value(uint64_t i) const {
        const uint64_t r = transposed_rows, kept = static_cast<uint64_t>(shape[1]);
        const uint64_t e = i / (kept * r), c = i / r % kept, j = i % r;
        return (e * r + j) * transposed_columns + transposed_offset + c;
    }
    // The source row kept row `row` is (deinterleave != 0).
    uint64_t deinterleaved_source_row(uint64_t row) const {
        if (deinterleave >= 5) {
            const uint64_t key = qkvz_key_rows, value = qkvz_value_rows;
            const uint64_t group = 2 * key + 2 * value, qk = qkvz_heads * key;
            if (deinterleave == 6) return row / value * group + 2 * key + value + row % value;
            if (row < qk) return row / key * group + row % key;
            if (row < 2 * qk) return (row - qk) / key * group + key + (row - qk) % key;
            return (row - 2 * qk) / value * group + 2 * key + (row - 2 * qk) % value;
        }
        const uint64_t second = (deinterleave - 1u) % 2;
        return deinterleave <= 2
                   ? 2 * row + second
                   : row / half_rows * 2 * half_rows + row % half_rows + second * half_rows;
    }
    // The values of the whole source the entry's values come from (deinterleave != 0 or
    // transposed_rows != 0).
    uint64_t whole_source_values() const {
        if (transposed_rows != 0)
            return static_cast<uint64_t>(shape[0]) * transposed_rows * transposed_columns;
        return deinterleave >= 5 ? qkvz_heads * (2 * qkvz_key_rows + 2 * qkvz_value_rows) *
                                       deinterleave_row_values
                                 : 2 * element_count;
    }
    SourceFloat float_dtype = SourceFloat::F32;
    std::span<const uint8_t> float_data;  // when plain (size already checked)
    std::string problem;  // non-empty: the entry cannot be used to compute expected values
};

struct SourceIndex {
    std::vector<SourceTensor> entries;
    std::map<std::string, size_t> by_stripped_name;  // strip_model_prefix(name) -> entry
    std::vector<std::string> problems;               // orphan parts, metadata without tensors, ...
};

// The model must stay alive while the index is used (spans point into its mappings).
SourceIndex index_source(const SafetensorsModel& model);

// "[2048, 1024]": verify's own shape text for its messages (one for all of verify/).
std::string shape_text(const std::vector<int64_t>& shape);

// F32/F16/BF16 as a SourceFloat; false for every other dtype (one for all of verify/).
bool source_float(StDtype dtype, SourceFloat* out);

// Fills entry.float_dtype/float_data of a plain F32/F16/BF16 tensor, or sets entry.problem.
void bind_plain(const SafetensorsFile& file, const StTensorInfo& info, SourceTensor& entry);

// The MTP layers a checkpoint holds under `prefix` ("mtp." -> "mtp.layers.K.*"): the largest K + 1,
// 0 for none (K of up to 3 digits).
uint32_t counted_mtp_layers(const SourceIndex& index, std::string_view prefix);

// Adds entry `i` of index.entries to by_stripped_name (a second spelling becomes a problem).
void add_by_stripped_name(SourceIndex& index, size_t i);

}  // namespace rebox::verify_ref
