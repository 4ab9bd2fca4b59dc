// verify's gemma4 (Gemma4ForCausalLM, Gemma4ForConditionalGeneration's text model), written from
// llama.cpp's Gemma4Model -> Gemma3Model -> TextModel chain (conversion/gemma.py) and its gemma4
// loader (src/models/gemma4.cpp), never from the writer's record: layer i is a sliding-window layer
// (head_dim, num_key_value_heads) or a full-attention one (global_head_dim, else per_layer_config's
// head_dim of the first full layer; num_global_key_value_heads, else num_key_value_heads) as
// layer_types says; q/k/v/o and the head norms take their layer's widths, layer_scalar is [1].
// No norm shift (Gemma4Model.norm_shift is 0), token_embd cut to vocab_size rows, rope_freqs
// computed for the proportional rope of the full layers, the per-layer KVs (check_gemma4_kvs),
// the "gemma4" vocabulary; an NVFP4 factor is applied on attention, the FFN, experts and output.
// The MoE block (26B-A4B: num_experts set): the dense MLP stays, and each layer adds the router
// (router.proj [E, hidden], router.scale [hidden], router.per_expert_scale [E]), the fused experts
// (experts.gate_up_proj [E, 2 * moe_intermediate_size, hidden], experts.down_proj
// [E, hidden, moe_intermediate_size], stored as they are; from MLX, mlx-lm's switch_glu gate and
// up halves [E, moe_intermediate_size, hidden] paired again, each expert's gate rows then its up
// rows, and switch_glu.down_proj) and three more norms; TextModel's
// find_hparam takes top_k_experts for the used-expert count (after num_experts_per_tok) and
// Gemma4Model expert_intermediate_size before moe_intermediate_size.
// E2B / E4B: the per-layer input embeddings (embed_tokens_per_layer [vocab_size,
// num_hidden_layers * hidden_size_per_layer_input], not cut; per_layer_model_projection, its norm;
// per layer per_layer_input_gate, per_layer_projection, post_per_layer_input_norm), the last
// num_kv_shared_layers layers' MLP 2 * intermediate_size wide with use_double_wide_mlp
// (transformers' Gemma4TextMLP), feed_forward_length then one INT32 per layer. Defaults:
// transformers' Gemma4TextConfig for what config.json may leave out.
#include <string>

#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace gemma4_ref {

constexpr RefKv kGemma4RefKvs[] = {RefKv::rope_freq_base, RefKv::rope_freq_base_swa,
                                   RefKv::rms_epsilon, RefKv::final_logit_softcapping,
                                   RefKv::sliding_window};

void gemma4_ref_defaults(nlohmann::json& root) {
    static const std::pair<const char*, const char*> kDefaults[] = {
        {"vocab_size", "262144"},
        {"num_attention_heads", "8"},
        {"num_key_value_heads", "4"},
        {"head_dim", "256"},
        {"max_position_embeddings", "131072"},
        {"rms_norm_eps", "1e-06"},
        {"sliding_window", "512"},
        {"num_kv_shared_layers", "0"},
        {"hidden_size_per_layer_input", "256"}};
    // An absent field takes transformers' default; a null hidden_size_per_layer_input is the
    // converter's `or 0`, any other null the default.
    for (const auto& [key, value] : kDefaults) {
        const bool keep_null = std::string_view(key) == "hidden_size_per_layer_input";
        if (!root.contains(key) || (root[key].is_null() && !keep_null))
            root[key] = nlohmann::json::parse(value);
    }
    if (!root.contains("num_experts_per_tok") && root.contains("top_k_experts"))
        root["num_experts_per_tok"] = root["top_k_experts"];
    if (root.contains("expert_intermediate_size"))
        root["moe_intermediate_size"] = root["expert_intermediate_size"];
}

// The MoE block's source shapes (REST after "layers.N."), HF order; nullopt for other names and
// for every name of a model without experts.
std::optional<std::vector<int64_t>> gemma4_ref_moe_shape(const RefConfig& c,
                                                         std::string_view rest) {
    using Shape = std::vector<int64_t>;
    if (c.num_experts == 0) return std::nullopt;
    const int64_t hidden = c.hidden_size, experts = c.num_experts;
    const int64_t expert_ffn = c.moe_intermediate_size.value_or(0);
    if (rest == "router.proj.weight") return Shape{experts, hidden};
    if (rest == "router.scale") return Shape{hidden};
    if (rest == "router.per_expert_scale") return Shape{experts};
    if (rest == "experts.gate_up_proj") return Shape{experts, 2 * expert_ffn, hidden};
    if (rest == "experts.down_proj") return Shape{experts, hidden, expert_ffn};
    // mlx-lm's split of them (gemma4_text.Model.sanitize), each a SwitchLinear.
    if (rest == "experts.switch_glu.gate_proj.weight" ||
        rest == "experts.switch_glu.up_proj.weight")
        return Shape{experts, expert_ffn, hidden};
    if (rest == "experts.switch_glu.down_proj.weight") return Shape{experts, hidden, expert_ffn};
    // ModelOpt NVFP4's per-expert modules: experts.E.gate_proj / up_proj [F, hidden], down_proj
    // [hidden, F] (transformers Linear layout).
    if (rest.starts_with("experts.")) {
        std::string_view tail = rest.substr(8);
        const size_t dot = tail.find('.');
        if (dot != std::string_view::npos && dot > 0 && dot < 7 &&
            tail.substr(0, dot).find_first_not_of("0123456789") == std::string_view::npos) {
            tail.remove_prefix(dot + 1);
            if (tail == "gate_proj.weight" || tail == "up_proj.weight")
                return Shape{expert_ffn, hidden};
            if (tail == "down_proj.weight") return Shape{hidden, expert_ffn};
        }
    }
    if (rest == "pre_feedforward_layernorm_2.weight" ||
        rest == "post_feedforward_layernorm_1.weight" ||
        rest == "post_feedforward_layernorm_2.weight")
        return Shape{hidden};
    return std::nullopt;
}

uint32_t gemma4_ref_count(const nlohmann::json& object, const char* key, uint32_t cap) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return 0;
    if (!it->is_number_unsigned() || it->get<uint64_t>() > cap)
        throw_input_error("config.json", key, "is " + it->dump(),
                          "a whole number up to " + std::to_string(cap));
    return static_cast<uint32_t>(it->get<uint64_t>());
}

void gemma4_ref_config(const nlohmann::json& root, RefConfig& c) {
    const auto types = root.find("layer_types");
    if (types == root.end() || !types->is_array() || types->size() != c.num_hidden_layers)
        throw_input_error("config.json", "layer_types", "is not one entry per layer",
                          std::to_string(c.num_hidden_layers) + " layer types");
    c.sliding_layers.clear();
    for (const nlohmann::json& type : *types) {
        if (type != "sliding_attention" && type != "full_attention")
            throw_input_error("config.json", "layer_types", "holds " + type.dump(),
                              "sliding_attention or full_attention");
        c.sliding_layers.push_back(type == "sliding_attention");
    }
    RefConfig::FullAttentionLayers full;
    full.head_dim = gemma4_ref_count(root, "global_head_dim", kMaxHeadDim);
    const auto per_layer = root.find("per_layer_config");
    if (full.head_dim == 0 && per_layer != root.end() && per_layer->is_object())
        for (const auto& [index, layer] : per_layer->items()) {
            const size_t i = index.find_first_not_of("0123456789") == std::string::npos &&
                                     !index.empty() && index.size() < 8
                                 ? std::stoul(index)
                                 : SIZE_MAX;
            if (i < c.sliding_layers.size() && !c.sliding_layers[i] && layer.is_object() &&
                layer.contains("head_dim")) {
                full.head_dim = gemma4_ref_count(layer, "head_dim", kMaxHeadDim);
                break;
            }
        }
    if (full.head_dim == 0)
        throw_input_error("config.json", "global_head_dim", "is missing",
                          "the full-attention layers' head size");
    if (const uint32_t heads = gemma4_ref_count(root, "num_global_key_value_heads", kMaxHeads))
        full.kv_heads = heads;
    if (c.rope_scaling && c.rope_scaling->partial_rotary_factor)
        full.partial_rotary_factor = *c.rope_scaling->partial_rotary_factor;
    c.full_layers = full;
    c.kv_shared_layers = gemma4_ref_count(root, "num_kv_shared_layers", kMaxLayers);
    c.per_layer_input_width = gemma4_ref_count(root, "hidden_size_per_layer_input", kMaxWidth);
    const auto wide = root.find("use_double_wide_mlp");
    c.double_wide_mlp = wide != root.end() && wide->is_boolean() && wide->get<bool>();
}

// The per-layer input tensors (E2B / E4B), HF order: the model's (NAME without "layers.") and
// each layer's (REST after "layers.N."); nullopt for other names.
std::optional<std::vector<int64_t>> gemma4_ref_per_layer_shape(const RefConfig& c,
                                                               std::string_view name) {
    using Shape = std::vector<int64_t>;
    const int64_t width = c.per_layer_input_width, hidden = c.hidden_size;
    const int64_t all = width * c.num_hidden_layers;
    if (name == "embed_tokens_per_layer.weight") return Shape{c.vocab_size, all};
    if (name == "per_layer_model_projection.weight") return Shape{all, hidden};
    if (name == "per_layer_projection_norm.weight") return Shape{width};
    return std::nullopt;
}

// Transformers' Gemma4TextMLP: intermediate_size, doubled on layer_idx >= first KV-shared layer
// > 0 when use_double_wide_mlp.
int64_t gemma4_ref_ffn(const RefConfig& c, uint64_t layer) {
    const int64_t first_shared = int64_t{c.num_hidden_layers} - c.kv_shared_layers;
    const bool wide = c.double_wide_mlp && first_shared > 0 && int64_t(layer) >= first_shared;
    return int64_t{c.intermediate_size} * (wide ? 2 : 1);
}

// "layers.N.REST": REST and whether layer N is a full-attention layer.
bool gemma4_ref_layer(const RefConfig& c, std::string_view name, std::string_view* rest,
                      bool* full) {
    if (!name.starts_with("layers.")) return false;
    name.remove_prefix(7);
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot > 6) return false;
    size_t layer = 0;
    for (size_t i = 0; i < dot; ++i) {
        if (name[i] < '0' || name[i] > '9') return false;
        layer = layer * 10 + size_t(name[i] - '0');
    }
    if (layer >= c.sliding_layers.size()) return false;
    *rest = name.substr(dot + 1);
    *full = !c.sliding_layers[layer];
    return true;
}

std::optional<std::vector<int64_t>> gemma4_ref_shape(const RefConfig& c, std::string_view name) {
    using Shape = std::vector<int64_t>;
    std::string_view rest;
    bool full = false;
    if (auto model = gemma4_ref_per_layer_shape(c, name)) return model;
    if (!gemma4_ref_layer(c, name, &rest, &full)) return std::nullopt;
    if (rest == "layer_scalar") return Shape{1};
    const int64_t hidden = c.hidden_size, width = c.per_layer_input_width;
    if (rest == "per_layer_input_gate.weight") return Shape{width, hidden};
    if (rest == "per_layer_projection.weight") return Shape{hidden, width};
    if (rest == "post_per_layer_input_norm.weight") return Shape{hidden};
    uint64_t layer = 0;
    std::string_view ignored;
    if (ref_layer(name, &layer, &ignored)) {
        const int64_t ffn = gemma4_ref_ffn(c, layer);
        if (rest == "mlp.gate_proj.weight" || rest == "mlp.up_proj.weight")
            return Shape{ffn, hidden};
        if (rest == "mlp.down_proj.weight") return Shape{hidden, ffn};
    }
    if (auto moe = gemma4_ref_moe_shape(c, rest)) return moe;
    const RefConfig::FullAttentionLayers f =
        c.full_layers.value_or(RefConfig::FullAttentionLayers{});
    const int64_t head = full ? f.head_dim : c.head_dim;
    const int64_t kv_heads =
        full ? f.kv_heads.value_or(c.num_key_value_heads) : c.num_key_value_heads;
    const int64_t q = int64_t{c.num_attention_heads} * head;
    if (rest == "self_attn.q_proj.weight") return Shape{q, hidden};
    if (rest == "self_attn.k_proj.weight" || rest == "self_attn.v_proj.weight")
        return Shape{kv_heads * head, hidden};
    if (rest == "self_attn.o_proj.weight") return Shape{hidden, q};
    if (rest == "self_attn.q_norm.weight" || rest == "self_attn.k_norm.weight") return Shape{head};
    return std::nullopt;
}

// "blk.N.ffn_{gate,up,down}_exps.weight" -> "layers.N.experts.{e}.{gate,up,down}_proj.weight":
// ModelOpt's per-expert modules, which ModelBase._generate_nvfp4_tensors stacks.
std::optional<std::string> gemma4_split_experts(std::string_view gguf) {
    if (!gguf.starts_with("blk.")) return std::nullopt;
    gguf.remove_prefix(4);
    const size_t dot = gguf.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    const std::string_view layer = gguf.substr(0, dot), rest = gguf.substr(dot + 1);
    if (layer.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    for (const std::string_view part : {"gate", "up", "down"})
        if (rest == "ffn_" + std::string(part) + "_exps.weight")
            return "layers." + std::string(layer) + ".experts.{e}." + std::string(part) +
                   "_proj.weight";
    return std::nullopt;
}

// gemma4: Gemma4Model's per-layer and per-kind KVs (TextModel's head_count_kv rewritten as an
// INT32 array when the full layers' kv heads are named).
void check_gemma4_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    const RefConfig::FullAttentionLayers full =
        config.full_layers.value_or(RefConfig::FullAttentionLayers{});
    if (full.kv_heads) {
        std::vector<int64_t> heads;
        for (const bool sliding : config.sliding_layers)
            heads.push_back(sliding ? config.num_key_value_heads : *full.kv_heads);
        check_numbers(kv, arch + ".attention.head_count_kv", GgufType::INT32, heads);
    } else {
        kv.expect_u32(arch + ".attention.head_count_kv", config.num_key_value_heads);
    }
    kv.expect_u32(arch + ".attention.key_length", full.head_dim);
    kv.expect_u32(arch + ".attention.value_length", full.head_dim);
    kv.expect_u32(arch + ".attention.key_length_swa", config.head_dim);
    kv.expect_u32(arch + ".attention.value_length_swa", config.head_dim);
    kv.expect_u32(arch + ".rope.dimension_count", full.head_dim);
    kv.expect_u32(arch + ".rope.dimension_count_swa", config.head_dim);
    // TextModel's context_length; feed_forward_length, rewritten per layer with the double-wide
    // MLP (Gemma4Model: il < block_count - num_kv_shared_layers keeps intermediate_size).
    kv.expect_u32(arch + ".context_length", config.max_position_embeddings);
    if (config.double_wide_mlp) {
        std::vector<int64_t> widths;
        for (uint64_t il = 0; il < config.num_hidden_layers; ++il)
            widths.push_back(il + config.kv_shared_layers < config.num_hidden_layers
                                 ? int64_t{config.intermediate_size}
                                 : 2 * int64_t{config.intermediate_size});
        check_numbers(kv, arch + ".feed_forward_length", GgufType::INT32, widths);
    } else {
        kv.expect_u32(arch + ".feed_forward_length", config.intermediate_size);
    }
    kv.expect_u32(arch + ".attention.shared_kv_layers", config.kv_shared_layers);
    kv.expect_u32(arch + ".embedding_length_per_layer_input", config.per_layer_input_width);
    kv.expect_bools(arch + ".attention.sliding_window_pattern", config.sliding_layers);
}

}  // namespace gemma4_ref

const RefArch& ref_gemma4() {
    using namespace gemma4_ref;
    static constexpr std::string_view kModelTypes[] = {"gemma4_text", "gemma4"};
    static const RefArch kArch{
        .gguf_arch = "gemma4",
        .model_types = kModelTypes,
        .prepare_config = gemma4_ref_defaults,
        .finish_config = gemma4_ref_config,
        .shape = gemma4_ref_shape,
        .kvs = kGemma4RefKvs,
        .check_kvs = check_gemma4_kvs,
        .own_head_count_kv = true,
        .vocab_rows_cut = true,
        .proportional_rope_freqs = true,
        .scale_roles = kScaleAttention | kScaleFfn | kScaleExperts | kScaleOutput,
        .gemma4_vocab = true,
        .own_context_and_ffn = true,
        .mlx_switch_glu = true,
        .split_experts = gemma4_split_experts,
        .nvfp4_down_exps_factor = "router.per_expert_scale"};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
