// The ggml tensor types (ids, block sizes, bytes per block) as llama.cpp and gguf-py define them
// (GGML_TYPE_COUNT = 43), and llama_ftype numbers for general.file_type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rebox {

enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39,
    NVFP4 = 40,
    Q1_0 = 41,
    Q2_0 = 42,
};

inline constexpr uint32_t kGgmlTypeCount = 43;

struct GgmlTypeTraits {
    std::string_view name;  // "Q4_1", as gguf-py names it
    uint32_t block_size;    // elements per block
    uint32_t type_size;     // bytes per block
};

// A GgmlType holds any id read from a file (static_cast<GgmlType>(id)); the enumerators name the
// ones rebox writes. Traits: nullopt for ids >= 43 and for removed ids (4, 5, 31-33, 36-38).
std::optional<GgmlTypeTraits> ggml_type_traits(GgmlType type);
std::string ggml_type_name(GgmlType type);  // "Q4_1", or "type#N" for unknown ids
inline uint32_t ggml_type_id(GgmlType type) { return static_cast<uint32_t>(type); }

// ggml_n_dims: the index of the last dim > 1, plus one (at least 1; 0 for no dims). gguf.cpp writes
// a tensor with this many dims, so trailing dims of 1 do not survive a write by ggml.
size_t ggml_n_dims(const std::vector<int64_t>& ne);

// Bytes of a contiguous tensor with dims ne (ggml order); nullopt when ne[0] is not a multiple
// of the block size, a dim is < 1, the type is unknown, or the size overflows.
std::optional<uint64_t> ggml_nbytes(GgmlType type, const std::vector<int64_t>& ne);

// llama_ftype values (include/llama.h) for general.file_type; not ggml type ids.
enum class LlamaFileType : uint32_t {
    ALL_F32 = 0,
    MOSTLY_F16 = 1,
    MOSTLY_Q4_0 = 2,
    MOSTLY_Q4_1 = 3,
    MOSTLY_Q8_0 = 7,
    MOSTLY_Q5_0 = 8,
    MOSTLY_Q5_1 = 9,
    MOSTLY_Q2_K = 10,
    MOSTLY_Q3_K_S = 11,
    MOSTLY_Q3_K_M = 12,
    MOSTLY_Q3_K_L = 13,
    MOSTLY_Q4_K_S = 14,
    MOSTLY_Q4_K_M = 15,
    MOSTLY_Q5_K_S = 16,
    MOSTLY_Q5_K_M = 17,
    MOSTLY_Q6_K = 18,
    MOSTLY_IQ2_XXS = 19,
    MOSTLY_IQ2_XS = 20,
    MOSTLY_Q2_K_S = 21,
    MOSTLY_IQ3_XS = 22,
    MOSTLY_IQ3_XXS = 23,
    MOSTLY_IQ1_S = 24,
    MOSTLY_IQ4_NL = 25,
    MOSTLY_IQ3_S = 26,
    MOSTLY_IQ3_M = 27,
    MOSTLY_IQ2_S = 28,
    MOSTLY_IQ2_M = 29,
    MOSTLY_IQ4_XS = 30,
    MOSTLY_IQ1_M = 31,
    MOSTLY_BF16 = 32,
    MOSTLY_TQ1_0 = 36,
    MOSTLY_TQ2_0 = 37,
    MOSTLY_MXFP4_MOE = 38,
    MOSTLY_NVFP4 = 39,
    MOSTLY_Q1_0 = 40,
    MOSTLY_Q2_0 = 41,
};

}  // namespace rebox
