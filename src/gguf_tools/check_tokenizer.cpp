// rebox check, the vocabulary as llama-vocab.cpp loads it: a known tokenizer.ggml.model, merges
// for a BPE ("gpt2") vocabulary, scores and token types at least as long as the token list, a
// token_embd with one row per token, special token ids inside the vocabulary (out of range is a
// warning: llama.cpp falls back to a default id) and the Phi-3 name rule (a general.name with
// "phi3" / "phi-3" needs </s>, <unk>, <s> and <|endoftext|> in the vocabulary).
#include <algorithm>
#include <array>
#include <cctype>
#include <variant>

#include "gguf_tools/check_context.hpp"

namespace rebox::check_detail {
namespace {

constexpr std::array<std::string_view, 11> kTokenizerModels = {
    "no_vocab",   "none", "llama", "bert",   "gpt2",  "hybriddna",
    "whitespace", "t5",   "rwkv",  "plamo2", "gemma4"};

size_t array_size(const GgufValue* value) {
    return value != nullptr && value->is_array() ? value->array.size() : 0;
}

void check_lengths(CheckContext& ctx, size_t token_count) {
    for (const char* key : {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
        const GgufValue* value = ctx.find(key);
        if (value == nullptr || !value->is_array() || value->array.size() >= token_count) continue;
        ctx.finding(key, "has " + std::to_string(value->array.size()) + " entries for " +
                             std::to_string(token_count) +
                             " tokens; llama.cpp refuses it (\"Index out of array bounds\")");
    }
}

void check_embedding_rows(CheckContext& ctx, size_t token_count) {
    const CheckContext::Tensor* embd = ctx.find_tensor("token_embd.weight");
    if (embd == nullptr || embd->info->ne.size() < 2) return;
    for (const CheckFinding& f : ctx.report.findings)
        if (f.subject == "token_embd.weight") return;  // its shape is already reported
    const int64_t rows = embd->info->ne[1];
    if (rows < static_cast<int64_t>(token_count))
        ctx.finding("token_embd.weight",
                    "has " + std::to_string(rows) + " rows for " + std::to_string(token_count) +
                        " tokens in tokenizer.ggml.tokens; llama.cpp refuses the shape (one row "
                        "per token)",
                    embd->shard);
}

void check_special_ids(CheckContext& ctx, size_t token_count) {
    for (const GgufKV& kv : ctx.head().kvs()) {
        if (!kv.key.starts_with("tokenizer.ggml.") || !kv.key.ends_with("_token_id")) continue;
        const auto id = kv.value.as_u32();
        if (id && *id >= token_count)
            ctx.warning(kv.key, "is " + std::to_string(*id) + ", outside the " +
                                    std::to_string(token_count) +
                                    " tokens; llama.cpp warns \"bad special token\" and uses its "
                                    "default id");
    }
}

std::string lowercase(const GgufValue* value) {
    std::string text = value != nullptr && value->as_string() != nullptr ? *value->as_string() : "";
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// llama-vocab.cpp: unless a jina pre-tokenizer or a nomic-bert-moe / jina-bert-v3 architecture
// comes first, a general.name containing "phi-3" or "phi3" (any case) makes it set attributes on
// "</s>", "<unk>", "<s>" and "<|endoftext|>" with token_to_id.at(): one missing and the load fails.
void check_phi3_name(CheckContext& ctx, const GgufValue& tokens) {
    const std::string name = lowercase(ctx.find("general.name"));
    if (name.find("phi3") == std::string::npos && name.find("phi-3") == std::string::npos) return;
    const std::string pre = lowercase(ctx.find("tokenizer.ggml.pre"));
    const std::string arch = ctx.arch();
    if (pre.find("jina-v2-") != std::string::npos ||
        arch.find("nomic-bert-moe") != std::string::npos ||
        arch.find("jina-bert-v3") != std::string::npos)
        return;
    for (const char* wanted : {"</s>", "<unk>", "<s>", "<|endoftext|>"}) {
        const bool present =
            std::any_of(tokens.array.begin(), tokens.array.end(), [&](const GgufScalar& token) {
                const auto* text = std::get_if<std::string>(&token);
                return text != nullptr && *text == wanted;
            });
        if (!present)
            ctx.finding("general.name",
                        "contains \"phi3\"/\"phi-3\", so llama.cpp looks up the token " +
                            std::string(wanted) +
                            " (its Phi-3 rule), which tokenizer.ggml.tokens lacks: the load "
                            "fails (rename the model without phi3 / phi-3)");
    }
}

}  // namespace

void check_tokenizer(CheckContext& ctx) {
    const GgufValue* model = ctx.find("tokenizer.ggml.model");
    const std::string* model_name = model != nullptr ? model->as_string() : nullptr;
    if (model_name == nullptr) return;  // missing or mistyped: reported with the keys
    if (std::find(kTokenizerModels.begin(), kTokenizerModels.end(), *model_name) ==
        kTokenizerModels.end()) {
        ctx.finding("tokenizer.ggml.model", "is '" + *model_name +
                                                "'; llama.cpp knows no such tokenizer "
                                                "(\"unknown tokenizer\")");
        return;
    }
    const GgufValue* pre = ctx.find("tokenizer.ggml.pre");
    const bool kimi = pre != nullptr && pre->as_string() && *pre->as_string() == "kimi-k2";
    if ((*model_name == "gpt2" || *model_name == "hybriddna" || *model_name == "whitespace") &&
        ctx.find("tokenizer.ggml.merges") == nullptr && !kimi)
        ctx.finding("tokenizer.ggml.merges",
                    "is missing; llama.cpp cannot load a BPE (" + *model_name +
                        ") vocabulary without merges (\"cannot find tokenizer merges\"; "
                        "convert again with tokenizer.json)");
    const size_t token_count = array_size(ctx.find("tokenizer.ggml.tokens"));
    if (token_count == 0) return;
    check_lengths(ctx, token_count);
    check_embedding_rows(ctx, token_count);
    check_special_ids(ctx, token_count);
    check_phi3_name(ctx, *ctx.find("tokenizer.ggml.tokens"));
}

}  // namespace rebox::check_detail
