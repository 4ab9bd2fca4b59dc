// transformers' fused expert tensors as Qwen2MoeModel.modify_tensors reads them (qwen35moe):
// "<layer>.mlp.experts.gate_up_proj" [E, 2F, hidden] (no ".weight") holds each expert's F gate
// rows, then its F up rows, and "<layer>.mlp.experts.down_proj" [E, hidden, F] the down
// projections. verify's own reading: the first becomes two entries, "...experts.gate_proj.weight"
// (each expert's first half of dim 1) and "...experts.up_proj.weight" (the second half), the
// other "...experts.down_proj.weight" — the names the converter stacks per-expert tensors into.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// Splits and renames the fused float expert entries of `index` in place (entries and
// by_stripped_name); quantized ones and every other entry stay as they are.
// `transposed` (Qwen3VLMoeTextModel.modify_tensors): the fused tensors are stored transposed,
// gate_up_proj [E, hidden, 2F] (gate columns, then up) and down_proj [E, F, hidden]; the entries
// become [E, F, hidden] / [E, hidden, F] read through SourceTensor::transposed_source_value.
void split_fused_experts(SourceIndex& index, bool transposed = false);

// mlx-lm's gemma4 experts (gemma4_text.Model.sanitize): transformers'
// "<layer>.experts.gate_up_proj" [E, 2F, cols] stored as its two halves of dim -2,
// "<layer>.experts.switch_glu.gate_proj.weight" and "...switch_glu.up_proj.weight" ([E, F, cols]
// each), and "<layer>.experts.down_proj" as
// "<layer>.experts.switch_glu.down_proj.weight" (`up` empty). nullopt for other names.
struct SwitchGluNames {
    std::string gate_or_down, up;
};
std::optional<SwitchGluNames> switch_glu_names(std::string_view fused);

// The name the converter gives the stacked tensor of a per-expert name pattern (one "{e}"):
// "layers.N.mlp.experts.{e}.gate_proj.weight" -> "layers.N.mlp.experts.gate_proj.weight".
std::string merged_experts_name(std::string_view pattern);

}  // namespace rebox::verify_ref
