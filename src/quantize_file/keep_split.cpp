// --keep-split: input-order sorting, the per-input-shard layouts and llama-quantize's shard names.
#include "quantize_file/keep_split.hpp"

#include <algorithm>
#include <numeric>

#include "rebox/error.hpp"

namespace rebox {

void check_keep_split_options(const QuantizeOptions& options) {
    if (!options.keep_split) return;
    if (options.split.max_bytes > 0 || options.split.max_tensors > 0 ||
        options.split.no_tensor_first_split)
        throw_input_error("--keep-split", "",
                          "cannot be combined with --split-max-size (llama-quantize has no "
                          "such option; --keep-split keeps the input's shards)",
                          "one of the two");
}

void sort_by_input_place(std::vector<size_t>& order, std::vector<RecipeTensor>& renamed,
                         const std::vector<QuantizeInputTensor>& inputs) {
    std::vector<size_t> positions(order.size());
    std::iota(positions.begin(), positions.end(), size_t{0});
    std::stable_sort(positions.begin(), positions.end(), [&](size_t a, size_t b) {
        const QuantizeInputTensor& x = inputs[order[a]];
        const QuantizeInputTensor& y = inputs[order[b]];
        if (x.shard != y.shard) return x.shard < y.shard;
        return x.offset < y.offset;
    });
    std::vector<size_t> sorted_order;
    std::vector<RecipeTensor> sorted_renamed;
    for (size_t p : positions) {
        sorted_order.push_back(order[p]);
        sorted_renamed.push_back(std::move(renamed[p]));
    }
    order = std::move(sorted_order);
    renamed = std::move(sorted_renamed);
}

ShardedLayout keep_split_layout(const std::vector<GgufKV>& kvs,
                                const std::vector<GgufTensorInfo>& infos,
                                const std::vector<size_t>& order,
                                const std::vector<QuantizeInputTensor>& inputs, uint32_t alignment,
                                const std::string& file) {
    size_t count = 1;
    for (size_t index : order) count = std::max(count, inputs[index].shard + 1);
    std::vector<size_t> per_shard(count, 0);
    for (size_t index : order) ++per_shard[inputs[index].shard];
    for (size_t s = 0; s < count; ++s)
        if (per_shard[s] == 0)
            throw_input_error(file, "--keep-split",
                              "input shard " + std::to_string(s + 1) +
                                  " would be left without tensors (llama-quantize crashes)",
                              "other --prune-layers, or no --keep-split");
    const bool own_alignment = std::any_of(
        kvs.begin(), kvs.end(), [](const GgufKV& kv) { return kv.key == "general.alignment"; });
    if (own_alignment && count > 1)
        throw_input_error(file, "general.alignment",
                          "an input with its own alignment cannot be written as shards",
                          "no --keep-split (or `rebox split` of the result)");
    ShardedLayout result;
    for (size_t s = 0; s < count; ++s) {
        result.shards.emplace_back(s == 0 ? alignment : kGgufDefaultAlignment);
        GgufLayout& layout = result.shards[s];
        if (s == 0)
            for (const GgufKV& kv : kvs) layout.add_kv(kv.key, kv.value);
        if (count == 1) continue;
        layout.set_kv(std::string(kSplitNoKey), GgufValue::u16(static_cast<uint16_t>(s)));
        layout.set_kv(std::string(kSplitCountKey), GgufValue::u16(static_cast<uint16_t>(count)));
        layout.set_kv(std::string(kSplitTensorsCountKey),
                      GgufValue::i32(static_cast<int32_t>(infos.size())));
    }
    for (size_t i = 0; i < infos.size(); ++i) {
        const size_t s = inputs[order[i]].shard;
        result.places.push_back({s, result.shards[s].tensors().size()});
        result.shards[s].add_tensor(infos[i].name, infos[i].ne, infos[i].type);
    }
    return result;
}

std::vector<std::filesystem::path> keep_split_paths(const std::filesystem::path& output,
                                                    size_t shards) {
    std::string prefix = output.string();
    const bool ends_in_gguf =
        prefix.size() >= 5 && prefix.compare(prefix.size() - 5, 5, ".gguf") == 0;
    if (ends_in_gguf)
        prefix.resize(prefix.size() - 5);
    else if (prefix.find(".gguf") != std::string::npos)
        throw_input_error(prefix, "OUT",
                          "holds \".gguf\" but does not end in it, and llama-quantize "
                          "--keep-split would cut its last five characters",
                          "an OUT ending in .gguf, e.g. model-q4_k_m.gguf");
    std::vector<std::filesystem::path> paths;
    for (size_t i = 0; i < shards; ++i)
        paths.emplace_back(
            shard_path(prefix, static_cast<uint32_t>(i), static_cast<uint32_t>(shards)));
    return paths;
}

}  // namespace rebox
