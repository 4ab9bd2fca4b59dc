// gemma4 (Gemma 4 dense text: Gemma4ForCausalLM, and the text model of
// Gemma4ForConditionalGeneration; its vision and audio towers are left out, vision is issue 40):
// llama.cpp's gemma4 loader and graph (src/models/gemma4.cpp) as the converter's Gemma4Model ->
// Gemma3Model -> TextModel chain (conversion/gemma.py) writes it.
// Two layer kinds from layer_types: sliding-window layers with head_dim and num_key_value_heads,
// and full-attention layers with their own head size (global_head_dim) and key/value heads
// (num_global_key_value_heads), whose v_proj may be absent (attention_k_eq_v: the graph reuses k).
// Unlike gemma3, no norm is shifted (Gemma4Model.norm_shift is 0). token_embd keeps the first
// vocab_size rows; each layer's layer_scalar (a [1] buffer without ".weight") becomes
// layer_output_scale.weight; rope_freqs.weight is computed for the full layers' "proportional"
// rope. KVs: TextModel's and Gemma3Model's, rewritten in place by Gemma4Model's (head_count_kv as a
// per-layer array, key/value length of the full layers) and followed by its own.
// The tokenizer is Gemma4Model.set_vocab's "gemma4" one (Architecture::tokenizer_model).
// The MoE block (26B-A4B, enable_moe_block: every layer a MoE layer, its own layer kinds) beside
// the dense MLP, which stays as the shared expert: router.proj -> ffn_gate_inp (exact F32 like
// every router), the router's own scale and per-expert scale -> ffn_gate_inp.scale /
// ffn_down_exps.scale (Gemma4Model.modify_tensors), the fused experts.gate_up_proj [E, 2 * F_e,
// hidden] (gate rows, then up rows, per expert) kept fused as ffn_gate_up_exps and
// experts.down_proj as ffn_down_exps (both stored without ".weight", as filter_tensors appends it;
// the 3-D tensors are copied as they are), and the extra norms pre_ffw_norm_2 / post_ffw_norm_1 /
// post_ffw_norm_2. From MLX (mlx-lm's switch_glu, gate and up apart) the two halves are fused
// back, whole rows per expert. KVs: TextModel's expert_count (num_experts) and expert_used_count
// (top_k_experts), Gemma4Model's expert_feed_forward_length (moe_intermediate_size).
// E2B / E4B: the per-layer input embeddings (embed_tokens_per_layer -> per_layer_token_embd, kept
// whole in the embeddings' type, per_layer_model_projection -> per_layer_model_proj,
// per_layer_projection_norm -> per_layer_proj_norm, and per layer per_layer_input_gate ->
// inp_gate, per_layer_projection -> proj, post_per_layer_input_norm -> post_norm), the
// KV-shared last num_kv_shared_layers layers (their k_proj / v_proj / k_norm written when the
// checkpoint holds them, as the converter writes what it finds; the loader takes them as optional)
// and the double-wide MLP of those layers (use_double_wide_mlp: feed_forward_length becomes a
// per-layer array).
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace gemma4_record {

using enum Presence;

// The layer kinds (ModelConfig::layer_kinds values): sliding or full attention, each with or
// without the MoE block, or KV-shared (E2B / E4B: the last num_kv_shared_layers layers reuse an
// earlier layer's keys and values), with the double-wide MLP or not; and the TensorSpec::kinds
// bits of the rows each holds.
constexpr uint8_t kSliding = 0, kFull = 1, kSlidingMoe = 2, kFullMoe = 3, kSlidingShared = 4,
                  kFullShared = 5, kSlidingSharedWide = 6, kFullSharedWide = 7;
constexpr uint8_t bit(uint8_t kind) { return static_cast<uint8_t>(1u << kind); }
constexpr uint8_t kSlidingBit = bit(kSliding) | bit(kSlidingMoe) | bit(kSlidingShared) |
                                bit(kSlidingSharedWide),
                  kFullBit = bit(kFull) | bit(kFullMoe) | bit(kFullShared) | bit(kFullSharedWide),
                  kMoeBit = bit(kSlidingMoe) | bit(kFullMoe),
                  kSharedBit = bit(kSlidingShared) | bit(kFullShared) | bit(kSlidingSharedWide) |
                               bit(kFullSharedWide),
                  kWideBit = bit(kSlidingSharedWide) | bit(kFullSharedWide);
// The layers that compute their own keys and values, and those whose MLP is intermediate_size
// wide.
constexpr uint8_t kOwnKvBit = static_cast<uint8_t>(~kSharedBit),
                  kNarrowBit = static_cast<uint8_t>(~kWideBit);

constexpr std::string_view kModelTypes[] = {"gemma4_text", "gemma4"};
constexpr std::string_view kLeftOut[] = {"vision_tower.", "embed_vision.", "audio_tower.",
                                         "embed_audio."};

// An RMSNorm [width], written as it is (no + 1), on the layers `kinds` say.
constexpr TensorSpec norm(std::string_view hf, std::string_view gguf, Dim width = Dim::hidden,
                          uint8_t kinds = 0, Presence weight = required) {
    TensorSpec spec{hf, gguf, weight, absent, 1, {width}};
    spec.kinds = kinds;
    return spec;
}
// A [columns, rows] matrix on the layers `kinds` say.
constexpr TensorSpec matrix(std::string_view hf, std::string_view gguf, Dim columns, Dim rows,
                            uint8_t kinds, Presence weight = required) {
    TensorSpec spec{hf, gguf, weight, absent, 2, {columns, rows}};
    spec.kinds = kinds;
    return spec;
}

// A name without ".weight" on both sides (the router's scales), [width], on the MoE layers.
constexpr TensorSpec moe_bare(std::string_view hf, std::string_view gguf, Dim width,
                              Presence weight) {
    TensorSpec spec{hf, gguf, weight, absent, 1, {width}};
    spec.bare = true;
    spec.kinds = kMoeBit;
    return spec;
}
// A fused experts tensor, a [E, rows, cols] parameter without ".weight" (filter_tensors appends
// it), copied as it is: ne {cols, rows, E}.
constexpr TensorSpec moe_fused(std::string_view hf, std::string_view gguf, Dim columns, Dim rows) {
    TensorSpec spec{hf, gguf, required, absent, 3, {columns, rows, Dim::experts}};
    spec.hf_bare = true;
    spec.kinds = kMoeBit;
    return spec;
}
// mlx-lm's experts (gemma4_text.Model.sanitize: gate_up_proj split at dim -2 into
// experts.switch_glu.gate_proj / up_proj [E, F_e, hidden], down_proj renamed
// experts.switch_glu.down_proj [E, hidden, F_e], each quantized like any SwitchLinear): the
// halves fused back into ffn_gate_up_exps (`fuse`, plan/expert_fuse.hpp), down copied as it is.
constexpr TensorSpec moe_mlx(std::string_view hf, std::string_view gguf, Dim columns, Dim rows,
                             RowTransform fuse = RowTransform::none) {
    TensorSpec spec{hf, gguf, optional, absent, 3, {columns, rows, Dim::experts}, fuse};
    spec.kinds = kMoeBit;
    return spec;
}
// Per-expert modules stacked into one GGUF tensor each (experts_row), on the MoE layers; optional
// (the fused experts are the float layout).
constexpr TensorSpec moe_split(std::string_view hf, std::string_view gguf, bool down) {
    TensorSpec spec = experts_row(hf, gguf, {}, down);
    spec.weight = optional;
    spec.kinds = kMoeBit;
    return spec;
}
constexpr TensorSpec moe_router() {
    TensorSpec spec = router_row("router.proj", "ffn_gate_inp");
    spec.kinds = kMoeBit;
    return spec;
}

// token_embd cut to the vocabulary (Gemma3Model.modify_tensors), then the per-layer input
// embeddings of E2B / E4B: the table of every layer's slice (not cut: its name holds no
// "embed_tokens.weight"), the projection of the embeddings to it and its norm.
constexpr TensorSpec kFirst[] = {
    kGemma3First[0],
    {"embed_tokens_per_layer",
     "per_layer_token_embd",
     Presence::required_with_per_layer_input,
     absent,
     2,
     {Dim::per_layer_input_all, Dim::vocab}},
    {"per_layer_model_projection",
     "per_layer_model_proj",
     Presence::required_with_per_layer_input,
     absent,
     2,
     {Dim::hidden, Dim::per_layer_input_all}},
    {"per_layer_projection_norm",
     "per_layer_proj_norm",
     Presence::required_with_per_layer_input,
     absent,
     1,
     {Dim::per_layer_input}},
};
// The dense MLP's three matrices on the layers `kinds` say, `width` wide.
constexpr TensorSpec mlp(std::string_view hf, std::string_view gguf, bool down, Dim width,
                         uint8_t kinds) {
    return matrix(hf, gguf, down ? width : Dim::hidden, down ? Dim::hidden : width, kinds);
}
// A per-layer input row (E2B / E4B), on every layer of such a model.
constexpr TensorSpec per_layer(std::string_view hf, std::string_view gguf, uint8_t rank,
                               std::array<Dim, 3> ne) {
    return {hf, gguf, Presence::required_with_per_layer_input, absent, rank, ne};
}
// Each attention row twice: the sliding layers' widths, then the full layers'; k_proj and k_norm
// once more for the KV-shared layers, where the loader takes them when present (the converter
// writes what the checkpoint holds; transformers and the graph do not use them).
constexpr TensorSpec kLayer[] = {
    norm("input_layernorm", "attn_norm"),
    matrix("self_attn.q_proj", "attn_q", Dim::hidden, Dim::q_width, kSlidingBit),
    matrix("self_attn.q_proj", "attn_q", Dim::hidden, Dim::q_width_full, kFullBit),
    norm("self_attn.q_norm", "attn_q_norm", Dim::head_dim, kSlidingBit),
    norm("self_attn.q_norm", "attn_q_norm", Dim::head_dim_full, kFullBit),
    matrix("self_attn.k_proj", "attn_k", Dim::hidden, Dim::kv_width, kSlidingBit& kOwnKvBit),
    matrix("self_attn.k_proj", "attn_k", Dim::hidden, Dim::kv_width_full, kFullBit& kOwnKvBit),
    matrix("self_attn.k_proj", "attn_k", Dim::hidden, Dim::kv_width, kSlidingBit& kSharedBit,
           optional),
    matrix("self_attn.k_proj", "attn_k", Dim::hidden, Dim::kv_width_full, kFullBit& kSharedBit,
           optional),
    norm("self_attn.k_norm", "attn_k_norm", Dim::head_dim, kSlidingBit& kOwnKvBit),
    norm("self_attn.k_norm", "attn_k_norm", Dim::head_dim_full, kFullBit& kOwnKvBit),
    norm("self_attn.k_norm", "attn_k_norm", Dim::head_dim, kSlidingBit& kSharedBit, optional),
    norm("self_attn.k_norm", "attn_k_norm", Dim::head_dim_full, kFullBit& kSharedBit, optional),
    matrix("self_attn.v_proj", "attn_v", Dim::hidden, Dim::kv_width, kSlidingBit, optional),
    matrix("self_attn.v_proj", "attn_v", Dim::hidden, Dim::kv_width_full, kFullBit, optional),
    matrix("self_attn.o_proj", "attn_output", Dim::q_width, Dim::hidden, kSlidingBit),
    matrix("self_attn.o_proj", "attn_output", Dim::q_width_full, Dim::hidden, kFullBit),
    norm("post_attention_layernorm", "post_attention_norm"),
    norm("pre_feedforward_layernorm", "ffn_norm"),
    // The MLP, 2 * intermediate_size wide on the KV-shared layers of a use_double_wide_mlp model.
    mlp("mlp.gate_proj", "ffn_gate", false, Dim::ffn, kNarrowBit),
    mlp("mlp.gate_proj", "ffn_gate", false, Dim::ffn_x2, kWideBit),
    mlp("mlp.up_proj", "ffn_up", false, Dim::ffn, kNarrowBit),
    mlp("mlp.up_proj", "ffn_up", false, Dim::ffn_x2, kWideBit),
    mlp("mlp.down_proj", "ffn_down", true, Dim::ffn, kNarrowBit),
    mlp("mlp.down_proj", "ffn_down", true, Dim::ffn_x2, kWideBit),
    norm("post_feedforward_layernorm", "post_ffw_norm"),
    // The MoE block, in the loader's order (src/models/gemma4.cpp).
    moe_router(),
    moe_bare("router.scale", "ffn_gate_inp.scale", Dim::hidden, required),
    norm("pre_feedforward_layernorm_2", "pre_ffw_norm_2", Dim::hidden, kMoeBit),
    norm("post_feedforward_layernorm_1", "post_ffw_norm_1", Dim::hidden, kMoeBit),
    norm("post_feedforward_layernorm_2", "post_ffw_norm_2", Dim::hidden, kMoeBit),
    moe_fused("experts.gate_up_proj", "ffn_gate_up_exps", Dim::hidden, Dim::expert_ffn_x2),
    moe_fused("experts.down_proj", "ffn_down_exps", Dim::expert_ffn, Dim::hidden),
    moe_mlx("experts.switch_glu.gate_proj", "ffn_gate_up_exps", Dim::hidden, Dim::expert_ffn,
            RowTransform::fused_gate_rows),
    moe_mlx("experts.switch_glu.up_proj", "ffn_gate_up_exps", Dim::hidden, Dim::expert_ffn,
            RowTransform::fused_up_rows),
    moe_mlx("experts.switch_glu.down_proj", "ffn_down_exps", Dim::expert_ffn, Dim::hidden),
    // ModelOpt NVFP4 (its Gemma 4 MoE plugin unfuses the experts into per-expert Linear modules
    // experts.{e}.gate_proj / up_proj / down_proj): ModelBase._generate_nvfp4_tensors stacks each
    // into ffn_gate_exps / ffn_up_exps / ffn_down_exps, gate and up apart (the loader takes them
    // when ffn_gate_up_exps is absent).
    moe_split("experts.{e}.gate_proj", "ffn_gate_exps", false),
    moe_split("experts.{e}.up_proj", "ffn_up_exps", false),
    moe_split("experts.{e}.down_proj", "ffn_down_exps", true),
    // The loader's per-expert factor on the experts' output (optional there).
    moe_bare("router.per_expert_scale", "ffn_down_exps.scale", Dim::experts, optional),
    // The per-layer input (E2B / E4B), in the loader's order: gate, projection, norm.
    per_layer("per_layer_input_gate", "inp_gate", 2, {Dim::hidden, Dim::per_layer_input}),
    per_layer("per_layer_projection", "proj", 2, {Dim::per_layer_input, Dim::hidden}),
    per_layer("post_per_layer_input_norm", "post_norm", 1, {Dim::hidden}),
    [] {  // Gemma4Model.filter_tensors appends ".weight" to the layer_scalar buffer
        TensorSpec spec{"layer_scalar", "layer_output_scale", optional, absent, 1, {Dim::one}};
        spec.hf_bare = true;
        return spec;
    }(),
};
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};

// In the order the keys first appear: TextModel.set_gguf_parameters (block_count first;
// head_count_kv, key_length and value_length later rewritten in place by Gemma4Model; no
// rope.scaling KV for "proportional"), Gemma3Model's final_logit_softcapping and sliding_window,
// then Gemma4Model's own.
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,
    ArchKv::context_length,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length_double_wide,
    ArchKv::head_count,
    ArchKv::head_count_kv_layers,
    ArchKv::rope_freq_base,
    ArchKv::rope_freq_base_swa,
    ArchKv::rms_epsilon,
    ArchKv::expert_count,
    ArchKv::expert_used_count,
    ArchKv::key_length_full,
    ArchKv::value_length_full,
    ArchKv::final_logit_softcapping,
    ArchKv::sliding_window,
    ArchKv::shared_kv_layers,
    ArchKv::embedding_length_per_layer_input,
    ArchKv::sliding_window_layer_types,
    ArchKv::key_length_swa,
    ArchKv::value_length_swa,
    ArchKv::expert_feed_forward_length,
    ArchKv::rope_dimension_count_full,
    ArchKv::rope_dimension_count_swa,
};
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_freqs_proportional};

// transformers' Gemma4TextConfig defaults for the fields a config.json may leave out (the
// converter reads config.json through transformers).
constexpr ConfigDefault kDefaults[] = {
    {"vocab_size", "262144"},
    {"num_attention_heads", "8"},
    {"num_key_value_heads", "4"},
    {"head_dim", "256"},
    {"max_position_embeddings", "131072"},
    {"rms_norm_eps", "1e-06"},
    {"sliding_window", "512"},
    {"tie_word_embeddings", "true"},
    {"num_kv_shared_layers", "0"},
    {"rope_parameters",
     R"({"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
         "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                            "rope_theta": 1000000.0}})"},
};

// A whole number of config.json in [0, cap]; `fallback` when absent or null.
uint32_t gemma4_count(const nlohmann::json& root, const char* field, uint32_t fallback,
                      uint32_t cap) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return fallback;
    if (!it->is_number_unsigned() || it->get<uint64_t>() > cap)
        throw_input_error("config.json", field, "is " + it->dump(),
                          "a whole number from 0 to " + std::to_string(cap));
    return static_cast<uint32_t>(it->get<uint64_t>());
}

bool gemma4_flag(const nlohmann::json& root, const char* field) {
    const auto it = root.find(field);
    return it != root.end() && it->is_boolean() && it->get<bool>();
}

// layer_types: sliding_attention layers are kind 0, full_attention layers kind 1; with experts
// (enable_moe_block, or a file's expert_count) every layer has the MoE block: 2 and 3. The last
// num_kv_shared_layers layers (E2B / E4B) are 4 and 5, or 6 and 7 with the double-wide MLP (the
// checks refuse KV sharing beside the MoE block).
void gemma4_layer_kinds(ModelConfig& config) {
    config.layer_kinds.clear();
    const bool moe = config.num_experts > 0;
    const int64_t first_shared = int64_t{config.num_hidden_layers} - config.kv_shared_layers;
    for (size_t i = 0; i < config.layer_types.size(); ++i) {
        const bool sliding = config.layer_types[i] == "sliding_attention";
        uint8_t kind = sliding ? kSliding : kFull;
        if (moe)
            kind = sliding ? kSlidingMoe : kFullMoe;
        else if (config.kv_shared_layers != 0 && int64_t(i) >= first_shared)
            kind = config.double_wide_mlp ? (sliding ? kSlidingSharedWide : kFullSharedWide)
                                          : (sliding ? kSlidingShared : kFullShared);
        config.layer_kinds.push_back(kind);
    }
}

// The full layers' head size (global_head_dim, else the head_dim of per_layer_config's first full
// layer, as Gemma4Model looks for it) and key/value heads, the KV-shared layer count, the
// per-layer input width; a final_logit_softcapping of 0 is not written (the converter tests it
// for truth).
void read_gemma4(const nlohmann::json& root, ModelConfig& config) {
    constexpr uint32_t kCap = 1u << 16;
    const auto types = root.find("layer_types");
    if (types == root.end() || types->is_null())
        throw_input_error("config.json", "layer_types", "is missing",
                          "one \"sliding_attention\" or \"full_attention\" per layer");
    for (const std::string& type : config.layer_types)
        if (type != "sliding_attention" && type != "full_attention")
            throw_input_error("config.json", "layer_types", "holds '" + type + "'",
                              "\"sliding_attention\" or \"full_attention\" per layer");
    ModelConfig::FullAttention full;
    full.head_dim = gemma4_count(root, "global_head_dim", 0, kCap);
    if (full.head_dim == 0)
        if (const auto per_layer = root.find("per_layer_config");
            per_layer != root.end() && per_layer->is_object())
            for (const auto& [index, layer] : per_layer->items()) {
                size_t i = 0;
                const auto [end, ec] =
                    std::from_chars(index.data(), index.data() + index.size(), i);
                if (ec != std::errc() || end != index.data() + index.size()) continue;
                if (i < config.layer_types.size() && config.layer_types[i] == "full_attention" &&
                    layer.is_object() && layer.contains("head_dim")) {
                    full.head_dim = gemma4_count(layer, "head_dim", 0, kCap);
                    break;
                }
            }
    if (full.head_dim == 0)
        throw_input_error("config.json", "global_head_dim", "is missing",
                          "the full-attention layers' head size (e.g. 512)");
    if (const uint32_t heads = gemma4_count(root, "num_global_key_value_heads", 0, kCap))
        full.kv_heads = heads;
    config.full_attention = full;
    config.kv_shared_layers = gemma4_count(root, "num_kv_shared_layers", 0, kCap);
    config.double_wide_mlp = gemma4_flag(root, "use_double_wide_mlp");
    // Absent: transformers' 256 (the converter reads config.json through it); null: the
    // converter's `or 0`.
    config.per_layer_input_width = root.contains("hidden_size_per_layer_input")
                                       ? gemma4_count(root, "hidden_size_per_layer_input", 0, kCap)
                                       : 256;
    if (config.final_logit_softcapping == 0.0f) config.final_logit_softcapping.reset();
    if (config.layer_types.size() <= kCap) gemma4_layer_kinds(config);
}

// KV-shared layers (E2B / E4B): llama.cpp's loader lets layer il >= L - num_kv_shared_layers
// reuse the cache of layer L - num_kv_shared_layers - 2 when il is a sliding layer and of the
// layer after it otherwise (it asserts at least 2 layers of their own), while transformers reuses
// the last earlier layer of the same type: the two agree only when the last two layers with keys
// and values of their own are a sliding then a full one.
void gemma4_shared_checks(const ModelConfig& config, std::vector<std::string>& problems) {
    const uint32_t layers = config.num_hidden_layers, shared = config.kv_shared_layers;
    if (shared + 2 > layers) {
        problems.push_back("config.json num_kv_shared_layers " + std::to_string(shared) +
                           " leaves fewer than 2 of num_hidden_layers " + std::to_string(layers) +
                           " with keys and values of their own (llama.cpp's gemma4 loader "
                           "asserts at least 2)");
        return;
    }
    const uint32_t own = layers - shared;
    if (config.layer_types[own - 2] != "sliding_attention" ||
        config.layer_types[own - 1] != "full_attention")
        problems.push_back(
            "config.json layer_types: layers " + std::to_string(own - 2) + " and " +
            std::to_string(own - 1) + " (the last before the " + std::to_string(shared) +
            " KV-shared layers) are " + config.layer_types[own - 2] + " and " +
            config.layer_types[own - 1] +
            ": llama.cpp's gemma4 graph reuses them as the sliding and the full layers' keys and "
            "values, transformers the last earlier layer of each type");
    if (config.num_experts > 0)
        problems.push_back("config.json num_kv_shared_layers " + std::to_string(shared) +
                           " beside the MoE block (enable_moe_block): no Gemma 4 checkpoint has "
                           "both, and rebox does not write them together");
}

// What the converter or llama.cpp's gemma4 graph does that rebox does not write yet, and the
// configs on which converters differ.
void gemma4_checks(const Architecture&, const ModelConfig& config,
                   std::vector<std::string>& problems) {
    if (config.layer_types.size() != config.num_hidden_layers) {
        problems.push_back(
            "config.json layer_types has " + std::to_string(config.layer_types.size()) +
            " entries for num_hidden_layers " + std::to_string(config.num_hidden_layers) +
            ": llama.cpp's gemma4 loader reads one per layer");
        return;
    }
    if (!config.layer_types.empty() && config.layer_types.back() != "full_attention")
        problems.push_back(
            "config.json layer_types ends with a sliding_attention layer: transformers turns "
            "the last layer into full_attention, a converter without it does not");
    if (!config.rope_scaling || config.rope_scaling->type != "proportional" ||
        !config.rope_scaling->partial_rotary_factor)
        problems.push_back(
            "config.json rope_parameters.full_attention needs rope_type \"proportional\" and a "
            "partial_rotary_factor (Gemma4Model computes rope_freqs.weight from them)");
    else if (!(*config.rope_scaling->partial_rotary_factor > 0.0 &&
               *config.rope_scaling->partial_rotary_factor <= 1.0))
        problems.push_back("config.json rope_parameters.full_attention.partial_rotary_factor " +
                           std::to_string(*config.rope_scaling->partial_rotary_factor) +
                           " is not in (0, 1]");
    if (config.num_experts > 0 &&
        (config.num_experts_per_tok == 0 || config.num_experts_per_tok > config.num_experts))
        problems.push_back(
            "config.json top_k_experts " + std::to_string(config.num_experts_per_tok) +
            " must be between 1 and num_experts " + std::to_string(config.num_experts));
    if (config.num_experts > 0 && !config.moe_intermediate_size)
        problems.push_back("config.json moe_intermediate_size is missing (the experts' width)");
    if (config.kv_shared_layers != 0) gemma4_shared_checks(config, problems);
}

bool gemma4_given(const nlohmann::json& root, const char* field) {
    const auto it = root.find(field);
    return it != root.end() && !it->is_null();
}

// The MoE fields as the converter finds them: TextModel's find_hparam takes the first of its names
// config.json has (num_experts_per_tok before top_k_experts; Gemma4Model's expert_intermediate_size
// before moe_intermediate_size), and the common reading knows the first of each. The block must
// be enabled with its experts, and experts without the block are refused: TextModel would write
// their KVs while transformers builds no experts.
void prepare_gemma4_moe(nlohmann::json& root) {
    if (!root.contains("num_experts_per_tok") && root.contains("top_k_experts"))
        root["num_experts_per_tok"] = root["top_k_experts"];
    if (root.contains("expert_intermediate_size"))
        root["moe_intermediate_size"] = root["expert_intermediate_size"];
    const bool moe = gemma4_flag(root, "enable_moe_block");
    if (moe && !gemma4_given(root, "num_experts"))
        throw_input_error("config.json", "num_experts", "is missing",
                          "the expert count of the MoE block (enable_moe_block is true)");
    // Every checkpoint format is read as the dense model's: mlx-lm's (its split experts fused
    // back), ModelOpt NVFP4's per-expert modules (stacked, router.per_expert_scale folded into each
    // down_proj factor as Gemma4Model does), and GPTQ / AWQ / compressed-tensors ones, whose tools
    // quantize Linear modules only: transformers' fused experts (parameters, not Linear modules)
    // stay float there, and are carried as the float MoE's are.
    if (!moe && gemma4_given(root, "num_experts"))
        throw Error(ExitClass::blocker, "config.json", "num_experts",
                    "is set while enable_moe_block is not: the converter writes expert_count "
                    "but transformers builds no experts",
                    "set num_experts to null, or enable_moe_block as the checkpoint was trained");
}

// Fields only the config.json object shows (before read_model_config's common reading).
void prepare_gemma4(nlohmann::json& root) {
    prepare_gemma4_moe(root);
    const auto global = root.find("num_global_key_value_heads");
    if (global != root.end() && !global->is_null() && !gemma4_flag(root, "attention_k_eq_v"))
        throw Error(ExitClass::blocker, "config.json", "num_global_key_value_heads",
                    "is set while attention_k_eq_v is not: Gemma4Model writes it as the full "
                    "layers' kv heads from config.json, but transformers ignores it then",
                    "set num_global_key_value_heads to null, or attention_k_eq_v as the "
                    "checkpoint was trained");
}

constexpr Architecture kGemma4 = [] {
    Architecture a{"gemma4", kModelTypes, kFirst,   kLayer,   kLast,
                   kKvs,     kExtras,     kLeftOut, kDefaults};
    a.prepare_config = prepare_gemma4;
    a.finish_config = read_gemma4;
    a.set_layer_kinds = gemma4_layer_kinds;
    a.config_checks = gemma4_checks;
    a.tokenizer_model = "gemma4";  // Gemma4Model.set_vocab (model/tokenizer_gemma4.hpp)
    // gemma4.cpp passes the .scale of the FFN, the experts and the output besides attention.
    a.nvfp4_scales = {.output = true, .dense_ffn = true, .experts = true};
    a.nvfp4_down_exps_factor = "router.per_expert_scale";
    return a;
}();

}  // namespace gemma4_record

const Architecture& gemma4_architecture() { return gemma4_record::kGemma4; }

}  // namespace rebox::arch::detail
