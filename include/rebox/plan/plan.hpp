// The plan: for every source tensor its GGUF name, type, shape (ne order) and byte size, or a BLOCKER
// with reason and fix; plus the whole KV set. Computed completely before any byte is written, so the
// dry run (`rebox plan`), sizes, offsets and the BLOCKER list all come from here.
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
    dequant_f32,  // code*scale+min evaluated in binary32 (--outtype f32)
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
};

struct TensorPlan {
    size_t source_index = 0;  // into SourceModel::tensors
    std::string gguf_name;
    uint32_t type = 0;        // ggml type id
    std::vector<int64_t> ne;  // ggml order
    uint64_t nbytes = 0;
    Encoding encoding = Encoding::copy_f32;
};

struct Plan {
    ModelConfig config;
    std::string arch;
    std::vector<TensorPlan> tensors;  // in output order
    std::vector<Blocker> blockers;    // non-empty: nothing may be written
    std::vector<GgufKV> kvs;
    uint64_t source_bytes = 0;        // total size of the input safetensors files
};

// Reads config.json, tokenizer files and pooling from source.dir. Never throws for what the user can
// fix per tensor: those become blockers. Throws rebox::Error for unreadable/malformed side files.
Plan make_plan(const SourceModel& source, const PlanOptions& options);

}  // namespace rebox
