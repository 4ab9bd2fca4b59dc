// rebox check, tensors: for an architecture in rebox's registry (src/arch/), the hyper-parameters
// are read back from the file's own KVs and every tensor the graph requires must be present with
// the ne llama.cpp's create_tensor expects ("tensor 'X' has wrong shape", "missing tensor");
// a per-layer tensor of a layer past block_count, or one the table does not know, is what
// llama.cpp refuses as "wrong number of tensors" (the second is a warning: the table lists what
// rebox writes, llama.cpp may create a few more optional tensors). The per-tensor `.scale` /
// `.input_scale` factors (NVFP4) are checked as llama_model::load_tensors' generic pass creates
// them, for every architecture: beside a weight of its list, {1}, or {n_expert} for stacked
// experts.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <variant>

#include "arch/architecture.hpp"
#include "format/shape_text.hpp"
#include "gguf_tools/check_context.hpp"
#include "model/config_bounds.hpp"

namespace rebox::check_detail {
namespace {

uint32_t u32_or(const CheckContext& ctx, const std::string& key, uint32_t fallback) {
    const GgufValue* value = ctx.find(key);
    const auto typed = value != nullptr ? value->as_u32() : std::nullopt;
    return typed.value_or(fallback);
}

// Full-attention layers with their own head shape (key_length_swa present): key_length is theirs,
// key_length_swa the sliding layers'; a BOOL sliding_window_pattern array gives each layer's kind
// (as layer_types), a per-layer head_count_kv array each kind's kv heads.
void read_full_attention_kvs(const CheckContext& ctx, const std::string& a, ModelConfig& c) {
    const uint32_t sliding_head = u32_or(ctx, a + ".attention.key_length_swa", 0);
    if (sliding_head == 0) return;
    ModelConfig::FullAttention full;
    full.head_dim = c.head_dim;
    c.head_dim = sliding_head;
    const GgufValue* pattern = ctx.find(a + ".attention.sliding_window_pattern");
    if (pattern != nullptr && pattern->is_array() && pattern->elem_type == GgufType::BOOL)
        for (const GgufScalar& item : pattern->array) {
            const bool* sliding = std::get_if<bool>(&item);
            c.layer_types.push_back(sliding != nullptr && *sliding ? "sliding_attention"
                                                                   : "full_attention");
        }
    const GgufValue* heads = ctx.find(a + ".attention.head_count_kv");
    if (heads != nullptr && heads->is_array() && heads->elem_type == GgufType::INT32)
        for (size_t i = 0; i < heads->array.size() && i < c.layer_types.size(); ++i) {
            const int64_t* count = std::get_if<int64_t>(&heads->array[i]);
            if (count == nullptr || *count < 0 || *count > INT32_MAX) continue;
            const int64_t n = *count;
            if (c.layer_types[i] == "sliding_attention")
                c.num_key_value_heads = static_cast<uint32_t>(n);
            else
                full.kv_heads = static_cast<uint32_t>(n);
        }
    c.full_attention = full;
    // E2B / E4B: the KV-shared layers, the per-layer input width, and the double-wide MLP of the
    // KV-shared layers (a per-layer feed_forward_length, intermediate_size first).
    c.kv_shared_layers = u32_or(ctx, a + ".attention.shared_kv_layers", 0);
    c.per_layer_input_width = u32_or(ctx, a + ".embedding_length_per_layer_input", 0);
    const GgufValue* widths = ctx.find(a + ".feed_forward_length");
    if (widths != nullptr && widths->is_array() && !widths->array.empty())
        for (const GgufScalar& item : widths->array) {
            const int64_t* width = std::get_if<int64_t>(&item);
            if (width == nullptr || *width <= 0 || *width > INT32_MAX) continue;
            if (c.intermediate_size == 0) c.intermediate_size = static_cast<uint32_t>(*width);
            if (*width != c.intermediate_size) c.double_wide_mlp = true;
        }
}

// The registry entry for general.architecture: where several records share the GGUF name, the one
// with experts when the file has them (and the one without otherwise).
const arch::Architecture* registry_entry(const CheckContext& ctx, const std::string& name) {
    const bool moe = u32_or(ctx, name + ".expert_count", 0) > 0;
    const arch::Architecture* any = nullptr;
    for (const arch::Architecture* entry : arch::all_architectures()) {
        if (entry->gguf_arch != name) continue;
        if (arch::has_experts(*entry) == moe) return entry;
        if (any == nullptr) any = entry;
    }
    return any;
}

// config.json as the file's KVs describe it (the inverse of what convert writes).
ModelConfig config_from_kvs(const CheckContext& ctx, const std::string& a) {
    ModelConfig c;
    c.hidden_size = u32_or(ctx, a + ".embedding_length", 0);
    c.num_hidden_layers = u32_or(ctx, a + ".block_count", 0);
    c.num_attention_heads = u32_or(ctx, a + ".attention.head_count", 0);
    c.num_key_value_heads = u32_or(ctx, a + ".attention.head_count_kv", c.num_attention_heads);
    const uint32_t by_heads = c.num_attention_heads ? c.hidden_size / c.num_attention_heads : 0;
    c.head_dim = u32_or(ctx, a + ".attention.key_length", by_heads);
    c.intermediate_size = u32_or(ctx, a + ".feed_forward_length", 0);
    const GgufValue* tokens = ctx.find("tokenizer.ggml.tokens");
    const uint32_t token_count =
        tokens != nullptr && tokens->is_array() ? static_cast<uint32_t>(tokens->array.size()) : 0;
    c.vocab_size = u32_or(ctx, a + ".vocab_size", token_count);
    c.tie_word_embeddings = ctx.find_tensor("output.weight") == nullptr;
    c.num_experts = u32_or(ctx, a + ".expert_count", 0);
    c.num_experts_per_tok = u32_or(ctx, a + ".expert_used_count", 0);
    if (const uint32_t v = u32_or(ctx, a + ".expert_feed_forward_length", 0))
        c.moe_intermediate_size = v;
    if (const uint32_t v = u32_or(ctx, a + ".expert_shared_feed_forward_length", 0))
        c.shared_expert_intermediate_size = v;
    // DeepSeek-style routing: the shared experts' count and the leading dense layers.
    if (const uint32_t v = u32_or(ctx, a + ".expert_shared_count", 0)) c.n_shared_experts = v;
    // LatentMoE (nemotron_h_moe): the experts' width.
    if (const uint32_t v = u32_or(ctx, a + ".moe_latent_size", 0)) c.moe_latent_size = v;
    if (const uint32_t v = u32_or(ctx, a + ".leading_dense_block_count", 0))
        c.leading_dense_blocks = v;
    // gemma-embedding's Dense projections, as its loader sizes dense_2 / dense_3.
    if (ctx.find(a + ".dense_2_feat_out") != nullptr)
        c.dense_2 = ModelConfig::DenseFeatures{u32_or(ctx, a + ".dense_2_feat_in", 0),
                                               u32_or(ctx, a + ".dense_2_feat_out", 0), ""};
    if (ctx.find(a + ".dense_3_feat_in") != nullptr)
        c.dense_3 = ModelConfig::DenseFeatures{u32_or(ctx, a + ".dense_3_feat_in", 0),
                                               u32_or(ctx, a + ".dense_3_feat_out", 0), ""};
    // Multi-token-prediction layers after the last block (block_count counts them), and the
    // linear-attention sizes (the loader's ssm.* keys; value head dim = inner size / heads).
    c.nextn_layers = u32_or(ctx, a + ".nextn_predict_layers", 0);
    if (c.nextn_layers <= c.num_hidden_layers) c.num_hidden_layers -= c.nextn_layers;
    if (const uint32_t heads = u32_or(ctx, a + ".ssm.time_step_rank", 0)) {
        ModelConfig::LinearAttention l;
        l.conv_kernel = u32_or(ctx, a + ".ssm.conv_kernel", 0);
        l.key_head_dim = u32_or(ctx, a + ".ssm.state_size", 0);
        l.key_heads = u32_or(ctx, a + ".ssm.group_count", 0);
        l.value_heads = heads;
        l.value_head_dim = u32_or(ctx, a + ".ssm.inner_size", 0) / heads;
        c.linear_attention = l;
    }
    c.full_attention_interval = u32_or(ctx, a + ".full_attention_interval", 4);
    read_full_attention_kvs(ctx, a, c);
    // Multi-head latent attention: the ranks and the head sizes the loader reads.
    if (const uint32_t kv_lora = u32_or(ctx, a + ".attention.kv_lora_rank", 0)) {
        ModelConfig::Mla m;
        if (const uint32_t q_lora = u32_or(ctx, a + ".attention.q_lora_rank", 0))
            m.q_lora_rank = q_lora;
        m.kv_lora_rank = kv_lora;
        m.rope_head_dim = u32_or(ctx, a + ".rope.dimension_count", 0);
        const uint32_t k_mla = u32_or(ctx, a + ".attention.key_length_mla", 0);
        m.nope_head_dim = k_mla > m.rope_head_dim ? k_mla - m.rope_head_dim : 0;
        m.v_head_dim = u32_or(ctx, a + ".attention.value_length_mla", 0);
        c.mla = m;
    }
    // One feed-forward width and one kv-head count per layer (nemotron_h): the loader's rule, a
    // layer recurrent where both are 0, attention where only the width is, a feed-forward layer
    // otherwise (ModelConfig::layer_kinds 0, 1, 2), and both where both are set (nemotron_h_moe's
    // folded MTP block after the last layer: 3); the sizes from the non-zero entries.
    const GgufValue* widths = ctx.find(a + ".feed_forward_length");
    const GgufValue* kv_heads = ctx.find(a + ".attention.head_count_kv");
    if (!c.full_attention && widths != nullptr && kv_heads != nullptr && widths->is_array() &&
        kv_heads->is_array() && widths->array.size() == kv_heads->array.size() &&
        widths->array.size() <= kLlamaMaxLayers) {
        const auto entry = [](const GgufScalar& item) -> uint32_t {
            const int64_t* n = std::get_if<int64_t>(&item);
            return n != nullptr && *n > 0 && *n <= INT32_MAX ? static_cast<uint32_t>(*n) : 0;
        };
        for (size_t i = 0; i < widths->array.size(); ++i) {
            const uint32_t width = entry(widths->array[i]), heads = entry(kv_heads->array[i]);
            c.layer_kinds.push_back(width != 0 && heads != 0 ? 3
                                    : width != 0             ? 2
                                    : heads != 0             ? 1
                                                             : 0);
            if (width != 0) c.intermediate_size = width;
            if (heads != 0) c.num_key_value_heads = heads;
        }
    }
    // llama.cpp's n_cls_out: the classifier labels' count, 1 without the key (llama-hparams.h).
    const GgufValue* labels = ctx.find(a + ".classifier.output_labels");
    c.num_labels = labels != nullptr && labels->is_array() && !labels->array.empty()
                       ? static_cast<uint32_t>(labels->array.size())
                       : 1;
    return c;
}

// ne without trailing 1s: llama.cpp compares a tensor's ne with the expected one padded with 1s.
std::vector<int64_t> trimmed(std::vector<int64_t> ne) {
    while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
    return ne;
}

// llama_model::load_tensors (llama-model.cpp), after each architecture's own tensors: an optional
// `<role>.scale` for these roles when the layer has the role's weight (`output.scale` only when
// `output` is NVFP4), and an `.input_scale` beside each; the scale of stacked experts has one value
// per expert, the rest one value.
constexpr std::string_view kScaledLayerRoles[] = {
    "attn_q",         "attn_k",         "attn_v",
    "attn_output",    "attn_qkv",       "attn_gate",
    "ffn_gate",       "ffn_down",       "ffn_up",
    "ffn_gate_shexp", "ffn_down_shexp", "ffn_up_shexp",
    "ffn_gate_exps",  "ffn_down_exps",  "ffn_up_exps",
    "ssm_in",         "ssm_out",        "ssm_alpha",
    "ssm_beta",       "nextn.eh_proj",  "nextn.shared_head_head"};

// A factor tensor the loader's generic pass creates: its expected ne, or a finding's text when
// the weight it belongs to is absent (the loader then creates no factor and refuses the file);
// nullopt for any other name.
std::optional<std::variant<std::vector<int64_t>, std::string>> loader_scale(const CheckContext& ctx,
                                                                            std::string_view name,
                                                                            int64_t experts) {
    std::string_view base = name;
    if (base.ends_with(".input_scale"))
        base.remove_suffix(std::string_view(".input_scale").size());
    else if (base.ends_with(".scale"))
        base.remove_suffix(std::string_view(".scale").size());
    else
        return std::nullopt;
    std::string_view role = base;
    if (role.starts_with("blk.")) {
        const size_t dot = role.find('.', 4);
        if (dot == std::string_view::npos) return std::nullopt;
        role.remove_prefix(dot + 1);
        if (std::find(std::begin(kScaledLayerRoles), std::end(kScaledLayerRoles), role) ==
            std::end(kScaledLayerRoles))
            return std::nullopt;
    } else if (role != "output") {
        return std::nullopt;
    }
    const std::string weight = std::string(base) + ".weight";
    const CheckContext::Tensor* owner = ctx.find_tensor(weight);
    if (owner == nullptr)
        return std::string("has no " + weight +
                           " beside it; llama.cpp creates the factor only for a "
                           "weight it loads and refuses the file (\"wrong number of tensors\")");
    if (role == "output" && owner->info->type != GgmlType::NVFP4)
        return std::string(
            "belongs to an output that is not NVFP4; llama.cpp creates the factor "
            "only for an NVFP4 output and refuses the file (\"wrong number of "
            "tensors\")");
    return std::vector<int64_t>{role.ends_with("_exps") ? experts : 1};
}

bool is_extra_tensor(std::string_view name) {
    for (arch::ExtraTensor extra :
         {arch::ExtraTensor::rope_freqs_llama3, arch::ExtraTensor::rope_factors_long,
          arch::ExtraTensor::rope_factors_short, arch::ExtraTensor::rope_freqs_proportional})
        if (arch::extra_tensor_name(extra) == name) return true;
    return false;
}

}  // namespace

void check_tensor_set(CheckContext& ctx) {
    const std::string name = ctx.arch();
    if (name.empty()) return;
    const arch::Architecture* entry = registry_entry(ctx, name);
    if (entry == nullptr) {
        ctx.warning("general.architecture", "'" + name +
                                                "' is not in rebox's registry: its tensor set "
                                                "and shapes are not checked");
        return;
    }
    ModelConfig config = config_from_kvs(ctx, name);
    if (config.hidden_size == 0 || config.num_hidden_layers == 0) return;  // reported as keys
    if (entry->set_layer_kinds && config.num_hidden_layers <= kLlamaMaxLayers)
        entry->set_layer_kinds(config);
    if (config.num_hidden_layers > kLlamaMaxLayers || config.num_experts > kLlamaMaxExperts) {
        const bool layers = config.num_hidden_layers > kLlamaMaxLayers;
        ctx.finding(name + (layers ? ".block_count" : ".expert_count"),
                    "is " + std::to_string(layers ? config.num_hidden_layers : config.num_experts) +
                        "; llama.cpp asserts at most " +
                        std::to_string(layers ? kLlamaMaxLayers : kLlamaMaxExperts) +
                        " (LLAMA_MAX_LAYERS / LLAMA_MAX_EXPERTS) and aborts");
        return;
    }
    // gemma-embedding: llama.cpp asserts (and aborts) unless dense_2_feat_in and dense_3_feat_out
    // are 0 (no Dense module) or n_embd.
    for (const auto& [key, value] :
         {std::pair{".dense_2_feat_in", config.dense_2 ? config.dense_2->in : 0u},
          std::pair{".dense_3_feat_out", config.dense_3 ? config.dense_3->out : 0u}})
        if (value != 0 && value != config.hidden_size)
            ctx.finding(name + key, "is " + std::to_string(value) + ", not 0 or " + name +
                                        ".embedding_length " + std::to_string(config.hidden_size) +
                                        "; llama.cpp asserts it and aborts");
    const auto stood_in = [&](const std::string& required) {
        const std::vector<std::string> alternatives = arch::required_alternatives(required);
        return !alternatives.empty() &&
               std::all_of(alternatives.begin(), alternatives.end(),
                           [&](const std::string& a) { return ctx.find_tensor(a) != nullptr; });
    };
    for (const std::string& required : arch::required_tensors(*entry, config))
        if (!ctx.split_incomplete && ctx.find_tensor(required) == nullptr && !stood_in(required))
            ctx.finding(required, "is missing; llama.cpp's " + name +
                                      " graph requires it (\"missing tensor\")");
    for (const CheckContext::Tensor& tensor : ctx.tensors) {
        const std::string& tensor_name = tensor.info->name;
        if (is_extra_tensor(tensor_name)) continue;
        if (const auto layer = arch::layer_of(tensor_name);
            layer && *layer >= config.num_hidden_layers + config.nextn_layers) {
            ctx.finding(tensor_name,
                        "belongs to layer " + std::to_string(*layer) + " but " + name +
                            ".block_count is " +
                            std::to_string(config.num_hidden_layers + config.nextn_layers) +
                            "; llama.cpp refuses it (\"wrong number of tensors\")",
                        tensor.shard);
            continue;
        }
        const auto expected = arch::expected_ne(*entry, config, tensor_name);
        if (!expected) {
            if (const auto scale = loader_scale(ctx, tensor_name, config.num_experts)) {
                if (const std::string* problem = std::get_if<std::string>(&*scale))
                    ctx.finding(tensor_name, *problem, tensor.shard);
                else if (const auto& ne = std::get<std::vector<int64_t>>(*scale);
                         trimmed(ne) != trimmed(tensor.info->ne))
                    ctx.finding(tensor_name,
                                "has ne " + detail::shape_text(tensor.info->ne) +
                                    " but llama.cpp expects " + detail::shape_text(ne) +
                                    " (\"wrong shape\")",
                                tensor.shard);
                continue;
            }
            ctx.warning(tensor_name,
                        "is not in rebox's " + name +
                            " table; llama.cpp refuses a tensor its graph does not create "
                            "(\"wrong number of tensors\")",
                        tensor.shard);
            continue;
        }
        if (const auto layer = arch::layer_of(tensor_name);
            layer && *layer >= config.num_hidden_layers) {
            const auto ref = arch::resolve_gguf(*entry, tensor_name);
            if (ref && ref->spec->trunk_only) {
                ctx.finding(tensor_name,
                            "is on the MTP layer " + std::to_string(*layer) +
                                ", where llama.cpp's " + name +
                                " loader creates no such tensor; it refuses the file (\"wrong "
                                "number of tensors\")",
                            tensor.shard);
                continue;
            }
        }
        if (std::find(expected->begin(), expected->end(), 0) != expected->end()) continue;
        if (trimmed(*expected) != trimmed(tensor.info->ne))
            ctx.finding(tensor_name,
                        "has ne " + detail::shape_text(tensor.info->ne) +
                            " but the KVs make llama.cpp " + "expect " +
                            detail::shape_text(*expected) + " (\"wrong shape\")",
                        tensor.shard);
    }
}

}  // namespace rebox::check_detail
