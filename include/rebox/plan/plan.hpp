// The plan: for every source tensor its GGUF name, type, shape (ne order) and byte size, or a
// BLOCKER with reason and fix; plus the whole KV set. Computed completely before any byte is
// written, so the dry run (`rebox plan`), sizes, offsets and the BLOCKER list all come from here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rebox/format/gguf_value.hpp"
#include "rebox/model/model_config.hpp"
#include "rebox/source/source_model.hpp"

namespace rebox {

// How a tensor's GGUF bytes are produced from its source.
enum class Encoding {
    q4_1_repack,  // codes (bits <= 4) moved into Q4_1 nibbles, scale -> d, min -> m
    q5_1_repack,  // 5-bit codes into Q5_1
    dequant_f32,  // code*scale+min evaluated in binary32 (--outtype f32, or exact fallback)
    dequant_f16,  // code*scale+min in binary32, stored as fp16: the plan checked every value is
                  // exact
    copy_f32,     // F32 source, bytes copied
    copy_f16,     // F16 source, bytes copied
    copy_bf16,    // BF16 source, bytes copied
    widen_f32,    // F16/BF16 source widened to F32 exactly (norms and other 1-D tensors)
};
const char* encoding_name(Encoding encoding);

enum class OutType { q4_1, f32 };

struct PlanOptions {
    OutType outtype = OutType::q4_1;
    std::optional<std::string> tokenizer_pre;  // override for an unknown pre-tokenizer regex
    std::string name;                          // general.name; default: config or directory name
    // Quantized tensors no block type holds exactly (6/7/8 bits, group or cols not a multiple of
    // 32, scales not exact in fp16) become an exact F16 copy when every value fits fp16, else F32.
    // Without it they are BLOCKERs.
    bool allow_lossless_fallback = false;
};

struct TensorPlan {
    size_t source_index = 0;  // into SourceModel::tensors
    std::string gguf_name;
    uint32_t type = 0;        // ggml type id
    std::vector<int64_t> ne;  // ggml order
    uint64_t nbytes = 0;
    Encoding encoding = Encoding::copy_f32;
    // Q4_1/Q5_1 from BF16/F32 scales: a group whose codes are all 0 and whose scale is not exact in
    // fp16 gets d = +-0 (sign of the scale); its values 0*d+m stay bit-identical.
    bool zero_code_groups_get_zero_scale = false;
    std::string note;  // why this path was taken (e.g. "bits 6: ... -> F16, every value exact")
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
