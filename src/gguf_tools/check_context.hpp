// What the rule groups of `rebox check` share: the opened shards (first shard's KVs), the merged
// tensor list and the report the rules append to.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf_file.hpp"
#include "gguf_tools/gguf_check.hpp"

namespace rebox::check_detail {

struct CheckContext {
    CheckTarget target = CheckTarget::llama_cpp;
    std::vector<std::unique_ptr<GgufFile>> shards;  // shards[0] holds the model's KVs
    struct Tensor {
        const GgufTensorInfo* info;
        size_t shard;
    };
    std::vector<Tensor> tensors;  // every shard's, in shard order
    CheckReport report;
    bool split_incomplete = false;  // a shard could not be found: its tensors are not "missing"

    const GgufFile& head() const { return *shards.front(); }
    const GgufValue* find(std::string_view key) const { return head().find(key); }
    std::string arch() const;  // general.architecture when it is a STRING, else ""
    const Tensor* find_tensor(std::string_view name) const;

    void finding(const std::string& subject, const std::string& message, size_t shard = 0);
    void warning(const std::string& subject, const std::string& message, size_t shard = 0);
};

// The rule groups, in the order check_gguf runs them.
void check_split(CheckContext& ctx, const std::filesystem::path& first);  // opens the shards
void check_key_types(CheckContext& ctx);
void check_required_keys(CheckContext& ctx);
void check_tensor_set(CheckContext& ctx);
void check_tokenizer(CheckContext& ctx);
void check_ollama(CheckContext& ctx, const std::filesystem::path& first);
// An mmproj file (general.architecture clip) instead of the text rules, and a pair's widths.
void check_mmproj(CheckContext& ctx);
void check_pair_width(CheckContext& text, const CheckContext& mmproj);

}  // namespace rebox::check_detail
