// Qwen3-Next's fused linear-attention input projection as Qwen3NextModel.modify_tensors reads it:
// "<layer>.linear_attn.in_proj_qkvz.weight" [key heads * (2 * key head dim + 2 * r * value head
// dim), hidden] (r = value heads / key heads) holds, per key head, its q rows, its k rows, its r
// value heads' v rows and their z rows. verify's own reading: the entry becomes two,
// "...linear_attn.in_proj_qkv.weight" (every q row, then every k row, then every v row: attn_qkv)
// and "...linear_attn.in_proj_z.weight" (every z row: attn_gate), each gathering whole rows of the
// one source (SourceTensor::deinterleave 5 and 6).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "verify/sources/ref_config.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// Splits every in_proj_qkvz entry of `index` in place (entries and by_stripped_name). An entry
// whose rows are not the config's groups gets SourceTensor::problem.
void split_qkvz(SourceIndex& index, const RefConfig& config);

// The part entry a GGUF tensor reads when its HF name is an in_proj_qkvz: "...in_proj_qkv.weight"
// for attn_qkv, "...in_proj_z.weight" for attn_gate; nullopt for every other pair.
std::optional<std::string> qkvz_part_name(std::string_view hf_name, std::string_view gguf_name);

}  // namespace rebox::verify_ref
