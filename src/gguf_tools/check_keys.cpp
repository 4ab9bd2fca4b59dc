// rebox check, metadata keys: every key llama.cpp reads with a strictly typed get_key must have
// that type (known_keys.hpp; head counts, feed_forward_length and expert_used_count may also be
// per-layer INT32/UINT32 arrays, get_key_or_arr), and the keys its loader cannot do without must
// be present: general.architecture, tokenizer.ggml.model and .tokens, <arch>.context_length,
// .embedding_length, .block_count and, for every registry architecture, the norm epsilon its
// loader reads: <arch>.attention.layer_norm_rms_epsilon for the RMSNorm decoders,
// <arch>.attention.layer_norm_epsilon for the LayerNorm encoders. A model-card key
// (general.sampling.*, general.tags, ...) of another type than the converter writes is a warning.
#include <array>
#include <string_view>

#include "arch/architecture.hpp"
#include "gguf_tools/check_context.hpp"
#include "gguf_tools/known_keys.hpp"
#include "gguf_tools/kv_text.hpp"

namespace rebox::check_detail {
namespace {

// <arch>.<suffix> keys llama.cpp reads as a UINT32 or a per-layer array (get_key_or_arr).
constexpr std::array<std::string_view, 4> kScalarOrArray = {
    "attention.head_count", "attention.head_count_kv", "feed_forward_length", "expert_used_count"};

std::string_view arch_suffix(const std::string& key, const std::string& arch) {
    if (arch.empty() || key.size() <= arch.size() + 1 || !key.starts_with(arch) ||
        key[arch.size()] != '.')
        return {};
    return std::string_view(key).substr(arch.size() + 1);
}

bool is_int_array(const GgufValue& value) {
    return value.is_array() &&
           (value.elem_type == GgufType::INT32 || value.elem_type == GgufType::UINT32);
}

}  // namespace

void check_key_types(CheckContext& ctx) {
    const std::string arch = ctx.arch();
    if (const GgufValue* value = ctx.find("general.architecture");
        value != nullptr && value->as_string() == nullptr)
        ctx.finding("general.architecture", "has type " + gguf_type_spec_name(*value) +
                                                "; llama.cpp reads it as a STRING (write it so)");
    for (const GgufKV& kv : ctx.head().kvs()) {
        if (kv.key == "general.architecture" || kv.key.starts_with("split.")) continue;
        const std::string actual = gguf_type_spec_name(kv.value);
        const std::string_view suffix = arch_suffix(kv.key, arch);
        bool scalar_or_array = false;
        for (std::string_view s : kScalarOrArray) scalar_or_array |= suffix == s;
        if (scalar_or_array) {
            if (!kv.value.as_u32() && !is_int_array(kv.value))
                ctx.finding(kv.key, "has type " + actual +
                                        "; llama.cpp reads it as a UINT32 (or a per-layer INT32 "
                                        "array) and refuses the file (write it as UINT32)");
            continue;
        }
        auto required = llama_required_type(kv.key, arch);
        if (!required && suffix == "expert_count") required = "UINT32";
        // llama-vocab.cpp also takes integer scores.
        if (kv.key == "tokenizer.ggml.scores" && actual == "ARRAY[INT32]") continue;
        if (required && *required != actual)
            ctx.finding(kv.key, "has type " + actual + "; llama.cpp reads it as " + *required +
                                    " and refuses the file (rebox meta --set " + kv.key + ":" +
                                    *required + "=VALUE)");
        if (const auto written = converter_model_card_type(kv.key); written && *written != actual)
            ctx.warning(kv.key, "has type " + actual + "; llama.cpp's converter writes it as " +
                                    *written + " (llama.cpp reads it as text or not at all)");
    }
}

void check_required_keys(CheckContext& ctx) {
    const std::string arch = ctx.arch();
    if (ctx.find("general.architecture") == nullptr) {
        ctx.finding("general.architecture",
                    "is missing; llama.cpp cannot tell the architecture (add it as a STRING)");
        return;
    }
    std::vector<std::string> required = {"tokenizer.ggml.model", "tokenizer.ggml.tokens",
                                         arch + ".context_length", arch + ".embedding_length",
                                         arch + ".block_count"};
    // The decoders' loaders read the RMSNorm epsilon unconditionally; the encoders' (bert,
    // nomic-bert: llama_model_bert::load_arch_hparams) the LayerNorm epsilon.
    if (const arch::Architecture* entry = arch::find_architecture(arch)) {
        required.push_back(arch + (entry->encoder ? ".attention.layer_norm_epsilon"
                                                  : ".attention.layer_norm_rms_epsilon"));
        // gemma-embedding's loader reads the sliding window unconditionally.
        for (const arch::ArchKv key : entry->kvs)
            if (key == arch::ArchKv::sliding_window_required)
                required.push_back(arch + ".attention.sliding_window");
    }
    for (const std::string& key : required) {
        if (ctx.find(key) != nullptr) continue;
        if (key == "tokenizer.ggml.tokens") {
            const GgufValue* model = ctx.find("tokenizer.ggml.model");
            const std::string* name = model != nullptr ? model->as_string() : nullptr;
            if (name != nullptr && *name == "none") continue;  // llama.cpp's "no vocab" model
        }
        ctx.finding(key, "is missing; llama.cpp cannot load a " + arch +
                             " model without it (convert again, or rebox meta --set it)");
    }
}

}  // namespace rebox::check_detail
