// The plan: for every source tensor its GGUF name, type, shape (ne order) and byte size, or a
// BLOCKER with reason and fix; plus the whole KV set. Computed completely before any byte is
// written, so the dry run (`rebox plan`), sizes, offsets and the BLOCKER list all come from here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "rebox/gguf_value.hpp"
#include "rebox/rebox.hpp"
#include "source/source_model.hpp"

namespace rebox {

// How a tensor's GGUF bytes are produced from its source.
enum class Encoding {
    q4_1_repack,   // codes (bits <= 4) moved into Q4_1 nibbles, scale -> d, min -> m
    q5_1_repack,   // 5-bit codes into Q5_1
    dequant_f32,   // code*scale+min evaluated in binary32 (--outtype f32, or exact fallback)
    dequant_f16,   // code*scale+min in binary32, stored as fp16: the plan checked every value is
                   // exact
    copy_f32,      // F32 source, bytes copied
    copy_f16,      // F16 source, bytes copied
    copy_bf16,     // BF16 source, bytes copied
    widen_f32,     // F16/BF16 source widened to F32 exactly (norms and other 1-D tensors)
    dequant_bf16,  // code*scale+min in binary32, stored as bf16 (--outtype bf16): the plan
                   // checked every value is exact
    recast_f16,    // F32/BF16 source stored as fp16 (--outtype f16): every value checked exact
    recast_bf16,   // F32/F16 source stored as bf16 (--outtype bf16): every value checked exact
    add_one_f32,   // gemma norms: float source value + 1 as llama.cpp's converter computes it (F16
                   // sources: the add rounds to fp16; BF16/F32: a binary32 add), stored as F32
    neg_exp_f32,   // Qwen3.5's A_log: -exp(value) as the converter computes it (F16 sources: exp
                   // rounded to fp16; BF16/F32: binary32), stored as F32
    // Integer-zero-point sources (GPTQ, AWQ, compressed-tensors): q' = q - z + off, d = scale.
    q4_0_shift,  // off 8, every q - z in [-8, 7]
    q5_0_shift,  // off 16, every q - z in [-16, 15]
    q8_0_shift,  // off 0, every q - z in [-128, 127]
    q4_1_int,    // codes q unchanged, d = s, m = -z*s (every s > 0 and z*s exact in fp16)
    q5_1_int,    // the same for codes up to 31 (5-bit)
    // FP4 sources (MLX mxfp4 / nvfp4): codes reordered into ggml's nibble order, scale bytes
    // copied.
    mxfp4_repack,
    nvfp4_repack,
};
const char* encoding_name(Encoding encoding);

struct TensorPlan {
    static constexpr size_t kComputed = SIZE_MAX;  // source_index of a tensor made from config.json
    size_t source_index = 0;                       // into SourceModel::tensors, or kComputed
    std::string gguf_name;
    GgmlType type = GgmlType::F32;
    std::vector<int64_t> ne;  // ggml order
    uint64_t nbytes = 0;
    Encoding encoding = Encoding::copy_f32;
    // Q4_1/Q5_1 from BF16/F32 scales: a group whose codes are all 0 and whose scale is not exact in
    // fp16 gets d = +-0 (sign of the scale); its values 0*d+m stay bit-identical. For the *_shift
    // encodings: a block whose q - z are all 0 (values 0*s).
    bool zero_code_groups_get_zero_scale = false;
    std::string note;  // why this path was taken (e.g. "bits 6: ... -> F16, every value exact")
    // Whole-row reordering (llama q/k): GGUF row r holds source row row_source[r], each row
    // row_values values long. Empty: rows in source order. Orthogonal to the encoding: each output
    // row is encoded from its source row by the same code as an unpermuted tensor.
    std::vector<uint32_t> row_source;
    uint64_t row_values = 0;
    // A per-head transpose (deepseek2's attn_k_b, plan/mla_split.hpp; Qwen3-VL-MoE's fused
    // experts, plan/expert_transpose.hpp): GGUF value (h*columns + c)*rows + j is source value
    // (h*head_rows + j)*source_columns + column_offset + c (source_columns 0: columns), each
    // value encoded on its own (the plan allows it for one-value encodings only). heads 0: none.
    struct HeadTranspose {
        uint64_t heads = 0, head_rows = 0, rows = 0, columns = 0;
        uint64_t source_columns = 0, column_offset = 0;
    };
    HeadTranspose transpose;
    // Stacked experts (docs/architectures.md): GGUF values [e*expert_values, (e+1)*expert_values)
    // are the values of source tensor expert_sources[e], in order (source_index is expert 0's).
    // Every expert has the same shape, bits, group and dtype, so one encoding serves all; chunks
    // never cross an expert (convert streams one expert at a time). Empty: one source tensor.
    std::vector<size_t> expert_sources;
    uint64_t expert_values = 0;
    // Pieces that start inside their source (plan/expert_fuse.hpp: gemma4's gate_up from mlx-lm's
    // gate and up, piece 2e + k is expert e of source k, at e * expert_values): GGUF values
    // [p*expert_values, (p+1)*expert_values) are source values [expert_firsts[p], + expert_values)
    // of expert_sources[p]. Empty: every piece starts at value 0.
    std::vector<uint64_t> expert_firsts;
    uint64_t expert_first(size_t piece) const {
        return expert_firsts.empty() ? 0 : expert_firsts[piece];
    }
    // source_index == kComputed: the tensor's F32 values (e.g. rope_freqs.weight).
    std::vector<float> computed;
    bool is_computed() const { return source_index == kComputed; }
};

struct Plan {
    ModelConfig config;
    std::string arch;
    std::vector<TensorPlan> tensors;  // in output order
    std::vector<Blocker> blockers;    // non-empty: nothing may be written
    // What is left out on purpose and does not block (e.g. tokenizer.json added tokens whose ids
    // lie beyond config.json vocab_size): one line each, shown by plan and convert.
    std::vector<std::string> notes;
    std::vector<GgufKV> kvs;
    uint64_t source_bytes = 0;  // total size of the input safetensors files
};

// The exact size of the single GGUF file the plan describes (header, KVs, tensor infos, padded
// tensor data). Throws rebox::Error when the plan's tensors cannot form a layout.
uint64_t plan_file_bytes(const Plan& plan);

// Reads config.json, tokenizer files and pooling from source.dir. Never throws for what the user
// can fix per tensor: those become blockers. Throws rebox::Error for unreadable/malformed side
// files.
Plan make_plan(const SourceModel& source, const PlanOptions& options);

}  // namespace rebox
