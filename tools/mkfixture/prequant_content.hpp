// The logical content of one integer zero-point quantized linear (GPTQ / AWQ / compressed-tensors
// fixtures): codes q[n, k], zero points z[g, n], scales s[g, n] (fp16 or bf16 bits) and g_idx[k],
// chosen so that the fixture hits every case of docs/formats.md §5.0's type rule. The file writers
// (prequant_files.cpp) only pack these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mkfixture {

struct PrequantOptions {
    std::string format;                        // gptq | awq | compressed-tensors
    int bits = 4;                              // as stored (and claimed, unless a defect lies)
    int group = 32;                            // -1: one group per row
    bool sym = true;                           // z = 2^(bits-1) everywhere
    std::string checkpoint_format = "gptq";    // gptq: "gptq" (stores z-1) | "gptq_v2"
    std::string desc_act = "none";             // gptq: none | trivial | blocks | actorder
    std::string scale_dtype = "f16";           // f16 | bf16 (compressed-tensors)
    std::string ct_format = "pack-quantized";  // compressed-tensors: | int-quantized
    std::string awq_version = "gemm";          // awq: gemm | gemv
    std::string defect;                        // "" or one of prequant_defect_names()
};

// One quantized linear W[out, in] (Hugging Face order). Indexing: q[n*in + k], z/scale[g*out + n].
struct LogicalQuant {
    int64_t out = 0, in = 0;
    int bits = 0;
    int64_t group = 0;   // effective group size (in for per-channel)
    int64_t groups = 0;  // ceil(in / group)
    std::vector<uint32_t> q;
    std::vector<int32_t> z;  // the real zero point (GPTQ v1 stores z-1)
    std::vector<uint16_t> scale_bits;
    std::vector<int32_t> g_idx;
};

// The module whose tensors the defects change.
inline const char* kPrequantDefectModule = "model.layers.0.self_attn.q_proj";

// Content of the linear `module` (path without ".weight"), seeded by its name. Profiles when
// asymmetric (see prequant_content.cpp): k_proj keeps every q - z in [-2^(b-1), 2^(b-1)), up_proj
// has zero points in {0,1,2,4,8} (and 16 at 5 bits; z*s exact: Q4_1 / Q5_1 possible at 4 / 5 bits)
// and one q - z of at least 2^bits - 2, the rest uniform codes and
// zero points with group 0 of row 0 forcing a q - z outside [-8, 7] and an inexact z*s.
LogicalQuant make_logical_quant(const std::string& module, int64_t out, int64_t in,
                                const PrequantOptions& options, uint64_t seed);

}  // namespace mkfixture
