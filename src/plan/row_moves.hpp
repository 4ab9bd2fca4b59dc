// When whole rows of a tensor may move (llama's q/k permutation, gemma3's vocabulary cut, any row
// slice or permutation): exactly when every block of the output type lies inside one source row and
// one quantization group, because each 32-value Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 block carries its own
// scale (and min; NVFP4: one per 16-value sub-block) and float or dequantized outputs have no
// blocks. Groups that run across rows
// (group 64, rows of 96 values) do not matter: each block takes a copy of its own group's numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "rebox/ggml_type.hpp"

namespace rebox::plan_detail {

// nullopt when the rows of row_values values move exactly in out_type; otherwise why a block would
// mix two rows (or two groups of source_group values; 0: not quantized).
std::optional<std::string> row_move_problem(GgmlType out_type, uint64_t row_values,
                                            uint64_t source_group);

}  // namespace rebox::plan_detail
