// --keep-split, as llama-quantize v0.4.0 does it: the tensors in the input's order (input shard,
// then data offset), one output per input shard named "<OUT without .gguf>-%05d-of-%05d.gguf",
// the first with every KV and then split.no / split.count / split.tensors.count, the others with
// those three keys only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "format/gguf_shards.hpp"
#include "quantize_file/quantize_choices.hpp"
#include "recipe/type_choice.hpp"

namespace rebox {

// Throws Error (input class) when --keep-split is combined with split limits.
void check_keep_split_options(const QuantizeOptions& options);

// Reorders `order` (input indices) and `renamed` (their output tensors) together by input shard,
// then offset; the order llama-quantize's counters and writes follow with --keep-split.
void sort_by_input_place(std::vector<size_t>& order, std::vector<RecipeTensor>& renamed,
                         const std::vector<QuantizeInputTensor>& inputs);

// infos[i] goes into the output shard of its input tensor inputs[order[i]]. One input shard: one
// layout without split keys. Throws Error (input class) for an input shard left without tensors
// (--prune-layers) and for an input with its own general.alignment split over several shards.
ShardedLayout keep_split_layout(const std::vector<GgufKV>& kvs,
                                const std::vector<GgufTensorInfo>& infos,
                                const std::vector<size_t>& order,
                                const std::vector<QuantizeInputTensor>& inputs, uint32_t alignment,
                                const std::string& file);

// llama-quantize's names: ".gguf" dropped from the end of OUT, then "-%05d-of-%05d.gguf" (also for
// a single shard). Throws Error (input class) for an OUT holding ".gguf" elsewhere, whose last five
// characters llama-quantize would cut anyway.
std::vector<std::filesystem::path> keep_split_paths(const std::filesystem::path& output,
                                                    size_t shards);

}  // namespace rebox
