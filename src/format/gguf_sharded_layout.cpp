// Distribution of tensors over shards (llama-gguf-split's rules, except that a tensor larger than
// the size limit gets a shard of its own instead of an error) and the split KVs of every shard.
#include "format/gguf_shards.hpp"
#include "rebox/error.hpp"

namespace rebox {

ShardedLayout make_sharded_layout(const std::vector<GgufKV>& kvs,
                                  const std::vector<GgufTensorInfo>& tensors,
                                  const SplitLimits& limits) {
    ShardedLayout result;
    const bool split =
        limits.max_bytes > 0 || limits.max_tensors > 0 || limits.no_tensor_first_split;
    // First pass: shard index of each tensor.
    std::vector<size_t> shard_of(tensors.size());
    size_t shard = limits.no_tensor_first_split ? 1 : 0;
    uint64_t shard_bytes = 0;
    uint32_t shard_tensors = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const uint64_t bytes = gguf_pad(tensors[i].nbytes, kGgufDefaultAlignment);
        const bool over_size = limits.max_bytes > 0 && shard_bytes + bytes > limits.max_bytes;
        const bool over_count = limits.max_tensors > 0 && shard_tensors >= limits.max_tensors;
        if (shard_tensors > 0 && (over_size || over_count)) {
            ++shard;
            shard_bytes = 0;
            shard_tensors = 0;
        }
        shard_of[i] = shard;
        shard_bytes += bytes;
        ++shard_tensors;
    }
    const size_t count = tensors.empty() ? 1 : std::max(shard_of.back() + 1, size_t{1});
    if (count > kMaxShards)
        throw_input_error("", "split", std::to_string(count) + " shards needed",
                          "at most 65535 (split.count is UINT16)");
    if (tensors.size() > static_cast<size_t>(INT32_MAX))
        throw_input_error("", "split", "too many tensors for split.tensors.count (INT32)");

    result.shards.resize(count);
    for (size_t s = 0; s < count; ++s) {
        GgufLayout& layout = result.shards[s];
        if (s == 0)
            for (const GgufKV& kv : kvs) layout.add_kv(kv.key, kv.value);
        if (split) {
            layout.set_kv(std::string(kSplitNoKey), GgufValue::u16(static_cast<uint16_t>(s)));
            layout.set_kv(std::string(kSplitCountKey),
                          GgufValue::u16(static_cast<uint16_t>(count)));
            layout.set_kv(std::string(kSplitTensorsCountKey),
                          GgufValue::i32(static_cast<int32_t>(tensors.size())));
        }
    }
    result.places.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        GgufLayout& layout = result.shards[shard_of[i]];
        result.places.push_back({shard_of[i], layout.tensors().size()});
        layout.add_tensor(tensors[i].name, tensors[i].ne, tensors[i].type);
    }
    return result;
}

}  // namespace rebox
