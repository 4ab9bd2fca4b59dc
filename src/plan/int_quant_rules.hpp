// The block type of an integer-zero-point tensor (GPTQ, AWQ, compressed-tensors): the smallest of
// Q4_0 < Q4_1 < Q5_0 < Q5_1 < Q8_0 (bytes per value) that reproduces every (q - z) * s exactly, or
// the reasons none does (docs/formats.md §5.0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace rebox::plan_detail {

struct IntBlockChoice {
    std::optional<Encoding> encoding;  // set when a block type holds the tensor exactly
    GgmlType type = GgmlType::F32;     // its ggml type
    std::string note;                  // which type and why, e.g. "4-bit, q-z in [-9,6] -> Q5_0"
    bool zero_blocks_get_zero_scale = false;
    struct Refusal {
        std::string reason;
        std::string fix;
    };
    std::vector<Refusal> refusals;  // when !encoding: why, each with its fix
};

// q4_1_only: --outtype q4_1 (Q4_1 is the only block type allowed).
IntBlockChoice choose_int_block_type(const IntQuantView& v, bool q4_1_only);

}  // namespace rebox::plan_detail
