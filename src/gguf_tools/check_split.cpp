// rebox check, split sets: llama.cpp reads split.count (UINT16) from the file it is given, which
// must be shard 1 (split.no 0), derives the other names from "-%05d-of-%05d.gguf", reads split.no
// from each and compares split.tensors.count (INT32) with the tensors found; a tensor name may
// appear once in the whole set (llama-model-loader.cpp).
#include <filesystem>
#include <unordered_set>

#include "format/gguf_shards.hpp"
#include "gguf_tools/check_context.hpp"
#include "gguf_tools/kv_text.hpp"

namespace rebox::check_detail {
namespace {

// The UINT16 value of a split key, or nullopt (absent, or of another type: reported).
std::optional<uint16_t> split_u16(CheckContext& ctx, size_t shard, std::string_view key) {
    const GgufValue* value = ctx.shards[shard]->find(key);
    if (value == nullptr) return std::nullopt;
    const auto typed = value->as_u16();
    if (!typed)
        ctx.finding(std::string(key),
                    "has type " + gguf_type_spec_name(*value) +
                        "; llama.cpp reads it as UINT16 and refuses the file (write it as UINT16)",
                    shard);
    return typed;
}

// "name-00001-of-00003.gguf" -> 3; nullopt when the name has no shard suffix.
std::optional<uint32_t> count_in_name(const std::filesystem::path& file) {
    const std::string name = file.filename().string();
    constexpr std::string_view tail = ".gguf";
    if (name.size() < 20 || !name.ends_with(tail)) return std::nullopt;
    const std::string digits = name.substr(name.size() - tail.size() - 5, 5);
    for (char c : digits)
        if (c < '0' || c > '9') return std::nullopt;
    const uint32_t count = static_cast<uint32_t>(std::stoul(digits));
    if (count == 0 || !shard_prefix(file.string(), 0, count)) return std::nullopt;
    return count;
}

void index_tensors(CheckContext& ctx, size_t shard, std::unordered_set<std::string>& seen) {
    for (const GgufTensorInfo& info : ctx.shards[shard]->tensors()) {
        if (!seen.insert(info.name).second)
            ctx.finding(info.name,
                        "is in more than one shard; llama.cpp refuses a duplicated tensor "
                        "(keep it in one shard)",
                        shard);
        else
            ctx.tensors.push_back({&info, shard});
    }
}

}  // namespace

void check_split(CheckContext& ctx, const std::filesystem::path& first) {
    ctx.shards.push_back(GgufFile::open(first));
    std::unordered_set<std::string> seen;
    index_tensors(ctx, 0, seen);
    const uint16_t count = split_u16(ctx, 0, kSplitCountKey).value_or(0);
    if (count <= 1) {
        if (const auto named = count_in_name(first); named && *named > 1)
            ctx.finding(std::string(kSplitCountKey),
                        "is " + std::to_string(count) + " but the file name says shard 1 of " +
                            std::to_string(*named) +
                            "; llama.cpp loads this file alone and misses the other shards' "
                            "tensors (set split.count to " +
                            std::to_string(*named) + " in shard 1)");
        return;
    }
    const auto first_no = split_u16(ctx, 0, kSplitNoKey);
    if (!first_no || *first_no != 0) {
        ctx.split_incomplete = true;
        ctx.finding(std::string(kSplitNoKey),
                    (first_no ? "is " + std::to_string(*first_no) : std::string("is missing")) +
                        "; llama.cpp loads a split set only from its first shard (split.no 0)");
        return;
    }
    const auto prefix = shard_prefix(first.string(), 0, count);
    if (!prefix) {
        ctx.split_incomplete = true;
        ctx.finding("file name",
                    "does not end in " + shard_path("", 0, count) + " although split.count is " +
                        std::to_string(count) +
                        "; llama.cpp derives the other shards' names from it (rename the "
                        "shards as llama-gguf-split names them)");
        return;
    }
    uint32_t missing = 0;
    std::string first_missing;
    for (uint32_t i = 1; i < count; ++i) {
        const std::string path = shard_path(*prefix, i, count);
        if (!std::filesystem::exists(path)) {
            ctx.split_incomplete = true;
            if (missing++ == 0) first_missing = std::filesystem::path(path).filename().string();
            continue;
        }
        ctx.shards.push_back(GgufFile::open(path));
        const size_t shard = ctx.shards.size() - 1;
        const auto no = split_u16(ctx, shard, kSplitNoKey);
        if (!no || *no != i)
            ctx.finding(std::string(kSplitNoKey),
                        (no ? "is " + std::to_string(*no) : std::string("is missing")) +
                            "; llama.cpp expects " + std::to_string(i) + " in shard " +
                            std::to_string(i + 1) + " of " + std::to_string(count),
                        shard);
        index_tensors(ctx, shard, seen);
    }
    if (missing > 0) {
        ctx.finding(first_missing,
                    "is missing" +
                        (missing > 1 ? " (with " + std::to_string(missing - 1) + " more shards)"
                                     : std::string()) +
                        "; split.count in shard 1 is " + std::to_string(count) +
                        " and llama.cpp fails to load the set (fix split.count in shard 1 or add "
                        "the shards)");
        return;
    }
    const GgufValue* total = ctx.find(kSplitTensorsCountKey);
    if (total == nullptr || !total->as_i32())
        ctx.finding(std::string(kSplitTensorsCountKey),
                    (total == nullptr ? std::string("is missing")
                                      : "has type " + gguf_type_spec_name(*total)) +
                        "; llama.cpp requires it as an INT32 in shard 1 of a split set");
    else if (static_cast<size_t>(*total->as_i32()) != seen.size())
        ctx.finding(std::string(kSplitTensorsCountKey),
                    "is " + std::to_string(*total->as_i32()) + " but the shards hold " +
                        std::to_string(seen.size()) +
                        " tensors; llama.cpp refuses the set (\"corrupted model\")");
}

}  // namespace rebox::check_detail
