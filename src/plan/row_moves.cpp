// row_move_problem(): the block size of the output type against the row length and the group.
#include "plan/row_moves.hpp"

namespace rebox::plan_detail {

std::optional<std::string> row_move_problem(GgmlType out_type, uint64_t row_values,
                                            uint64_t source_group) {
    const auto traits = ggml_type_traits(out_type);
    const uint64_t block = traits ? traits->block_size : 1;
    if (block <= 1) return std::nullopt;  // F32/F16/BF16: every value moves on its own
    const std::string type(ggml_type_name(out_type));
    if (row_values == 0 || row_values % block != 0)
        return "a " + std::to_string(block) + "-value " + type + " block would mix two rows of " +
               std::to_string(row_values) + " values";
    // An NVFP4 block carries one scale per 16-value sub-block: groups of 16 fit it.
    const uint64_t scale_span = out_type == GgmlType::NVFP4 ? 16 : block;
    if (source_group != 0 && source_group % scale_span != 0)
        return "a " + std::to_string(scale_span) + "-value " + type +
               " block would mix two quantization groups of " + std::to_string(source_group) +
               " values";
    return std::nullopt;
}

}  // namespace rebox::plan_detail
