// nemotron_h (NVIDIA Nemotron-H, Nemotron Nano 2: NemotronHForCausalLM without
// num_experts_per_tok): llama.cpp's nemotron_h loader and graph (src/models/nemotron-h.cpp) as the
// converter's NemotronHModel -> GraniteHybridModel -> Mamba2Model -> GraniteMoeModel ->
// GraniteModel -> LlamaModel -> TextModel chain (conversion/nemotron.py, granite.py, mamba.py)
// writes it. The checkpoint names everything under "backbone." (embeddings, layers.N.norm,
// layers.N.mixer.*, norm_f) besides lm_head.
// Layers of three kinds, from hybrid_override_pattern ('M' Mamba2, '*' attention, '-' MLP) or
// layers_block_type: every layer has one norm and one mixer. Mamba2: in_proj, conv1d squeezed
// to [channels, kernel] (F32) with its bias, dt_bias as ssm_dt.bias, A_log as ssm_a =
// -exp(A_log) reshaped to [heads, 1], D reshaped to [heads, 1], the gated norm reshaped to
// [n_groups, d_inner / n_groups], out_proj. Attention: q/k/v/o, q and k rows permuted per head
// as LlamaModel.permute does (GraniteHybridModel keeps undo_permute; the graph has no rope, so
// the permutation changes no score). MLP: relu² up/down, no gate. The loader tells the kinds
// apart by the per-layer arrays: recurrent where head_count_kv and feed_forward_length are both
// 0, attention where only feed_forward_length is.
// nemotron_h_moe (Nemotron 3 Nano: the same class when config.json has num_experts_per_tok;
// src/models/nemotron-h-moe.cpp): 'E' layers in place of '-', each a sigmoid router
// (mixer.gate, exact F32) with its score-correction bias (exp_probs_b.bias), n_routed_experts
// relu² experts with only up/down, stacked, and a shared expert (up/down); the Mamba2 and
// attention layers as above. NVFP4 (ModelOpt): llama.cpp's graphs multiply in the .scale of
// ssm_in / ssm_out (mamba-base.cpp) and of the shared expert besides attention, FFN, experts and
// output. Nemotron 3 Super's LatentMoE (config.json moe_latent_size): each 'E' layer also has
// fc1_latent_proj [latent, hidden] -> ffn_latent_down and fc2_latent_proj [hidden, latent] ->
// ffn_latent_up, its experts work at the latent width, and moe_latent_size is written. Its MTP
// layers (num_nextn_predict_layers 1) are folded as NemotronHModel folds them: mtp.layers.0
// (attention with the NextN input fusion) and mtp.layers.1 (MoE with the head's final norm) become
// one block at num_hidden_layers (layer kind 3, counted as attention and MoE in the arrays), and
// nextn_predict_layers is written last. The v0.4.0 loader creates no latent projections on that
// block, so it refuses Super's (trunk_only): written as the converter writes it, with a note.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace nemotron_h_record {

using enum Presence;

// The layer kinds (ModelConfig::layer_kinds values) and their TensorSpec::kinds bits; the KV
// arrays (gguf_metadata.cpp) read kind 1 as attention and kind 2 as MLP.
// nemotron_h_moe's folded MTP block (kind 3) holds an attention and a MoE sub-layer: the KV arrays
// count it as both.
constexpr uint8_t kMamba = 0, kAttention = 1, kMlp = 2, kMtp = 3;
constexpr uint8_t kMambaBit = 1u << kMamba, kAttentionBit = 1u << kAttention, kMlpBit = 1u << kMlp,
                  kMtpBit = 1u << kMtp;

constexpr std::string_view kModelTypes[] = {"nemotron_h"};
constexpr std::string_view kHeadPrefixes[] = {"backbone."};

// A [columns, rows] matrix on the layers `kinds` say.
constexpr TensorSpec matrix(std::string_view hf, std::string_view gguf, Dim columns, Dim rows,
                            uint8_t kinds, RowTransform transform = RowTransform::none) {
    TensorSpec spec{hf, gguf, required, absent, 2, {columns, rows}, transform};
    spec.kinds = kinds;
    return spec;
}
// A Mamba2 per-head or per-channel vector the converter reshapes to the GGUF ne given.
constexpr TensorSpec reshaped(std::string_view hf, std::string_view gguf, Dim row, Dim rows,
                              bool bare, ValueTransform values = ValueTransform::none) {
    TensorSpec spec{hf, gguf, required, absent, 2, {row, rows}};
    spec.kinds = kMambaBit;
    spec.bare = bare;
    spec.reshape = true;
    spec.values = values;
    return spec;
}

constexpr TensorSpec kFirst[] = {
    {"embeddings", "token_embd", required, absent, 2, {Dim::hidden, Dim::vocab}}};
constexpr TensorSpec kLayer[] = {
    {"norm", "attn_norm", required, absent, 1, {Dim::hidden}},
    // Mamba2 mixer.
    matrix("mixer.in_proj", "ssm_in", Dim::hidden, Dim::ssm_in_width, kMambaBit),
    [] {
        TensorSpec spec = matrix("mixer.conv1d", "ssm_conv1d", Dim::ssm_conv_kernel,
                                 Dim::ssm_conv_channels, kMambaBit);
        spec.bias = optional;               // use_conv_bias
        spec.role = SourceRole::table_f32;  // the converter keeps SSM_CONV1D in F32
        spec.squeeze = true;
        return spec;
    }(),
    [] {
        TensorSpec spec{"mixer.dt_bias", "ssm_dt.bias", required, absent, 1, {Dim::ssm_heads}};
        spec.kinds = kMambaBit;
        spec.bare = true;
        return spec;
    }(),
    reshaped("mixer.A_log", "ssm_a", Dim::one, Dim::ssm_heads, true, ValueTransform::neg_exp),
    reshaped("mixer.D", "ssm_d", Dim::one, Dim::ssm_heads, true),
    reshaped("mixer.norm", "ssm_norm", Dim::ssm_group_width, Dim::ssm_groups, false),
    matrix("mixer.out_proj", "ssm_out", Dim::ssm_inner, Dim::hidden, kMambaBit),
    // Attention mixer.
    matrix("mixer.q_proj", "attn_q", Dim::hidden, Dim::q_width, kAttentionBit,
           RowTransform::rope_pairs_q_heads),
    matrix("mixer.k_proj", "attn_k", Dim::hidden, Dim::kv_width, kAttentionBit,
           RowTransform::rope_pairs_kv_heads),
    matrix("mixer.v_proj", "attn_v", Dim::hidden, Dim::kv_width, kAttentionBit),
    matrix("mixer.o_proj", "attn_output", Dim::q_width, Dim::hidden, kAttentionBit),
    // MLP mixer (relu², no gate).
    matrix("mixer.up_proj", "ffn_up", Dim::hidden, Dim::ffn, kMlpBit),
    matrix("mixer.down_proj", "ffn_down", Dim::ffn, Dim::hidden, kMlpBit),
};
// nemotron_h_moe: the Mamba2 and attention rows, then the MoE mixer on kind 2 ('E').
constexpr TensorSpec moe_row(TensorSpec spec) {
    spec.kinds = kMlpBit | kMtpBit;
    return spec;
}
// An attention row, also on the folded MTP block (its mtp.layers.0 sub-layer).
constexpr TensorSpec mtp_attention(TensorSpec spec) {
    spec.kinds |= kMtpBit;
    return spec;
}
// A row of the folded MTP block only (NemotronHModel's _MTP_SPECIAL_RENAMES: the NextN input
// fusion, the MoE sub-layer's norm, the head's final norm), under its name in the layer.
constexpr TensorSpec mtp_row(std::string_view hf, std::string_view gguf, Dim columns, Dim rows = {},
                             uint8_t rank = 1) {
    TensorSpec spec{hf, gguf, required, absent, rank, {columns, rows}};
    spec.kinds = kMtpBit;
    return spec;
}
constexpr TensorSpec latent_row(std::string_view hf, std::string_view gguf, Dim columns, Dim rows) {
    TensorSpec spec =
        moe_row({hf, gguf, Presence::required_with_moe_latent, absent, 2, {columns, rows}});
    spec.trunk_only = true;
    return spec;
}
constexpr TensorSpec kMoeLayer[] = {
    kLayer[0],
    kLayer[1],
    kLayer[2],
    kLayer[3],
    kLayer[4],
    kLayer[5],
    kLayer[6],
    kLayer[7],
    mtp_attention(kLayer[8]),
    mtp_attention(kLayer[9]),
    mtp_attention(kLayer[10]),
    mtp_attention(kLayer[11]),
    moe_row(router_row("mixer.gate", "ffn_gate_inp")),
    [] {  // the router's score correction, exact F32 like the router
        TensorSpec spec =
            moe_row(router_row("mixer.gate.e_score_correction_bias", "exp_probs_b.bias"));
        spec.rank = 1;
        spec.ne = {Dim::experts};
        spec.bare = true;
        return spec;
    }(),
    // LatentMoE (Nemotron 3 Super): fc1_latent_proj takes the hidden state down to
    // moe_latent_size before the experts, fc2_latent_proj lifts their sum back (nemotron-h.cpp's
    // ffn_latent_down / ffn_latent_up, plain ggml_mul_mat: no NVFP4 .scale applied). The converter
    // writes the MTP block's too; the v0.4.0 loader creates them on the trunk only (trunk_only).
    latent_row("mixer.fc1_latent_proj", "ffn_latent_down", Dim::hidden, Dim::moe_latent),
    latent_row("mixer.fc2_latent_proj", "ffn_latent_up", Dim::moe_latent, Dim::hidden),
    // The routed experts work at the latent width when there is one. mlx-lm's sanitize stores
    // them stacked: up_proj as mixer.switch_mlp.fc1, down_proj as fc2 ([E, rows, cols]).
    [] {
        TensorSpec spec = moe_row(
            experts_row("mixer.experts.{e}.up_proj", "ffn_up_exps", "mixer.switch_mlp.fc1", false));
        spec.ne = {Dim::expert_width, Dim::expert_ffn, Dim::experts};
        return spec;
    }(),
    [] {
        TensorSpec spec = moe_row(experts_row("mixer.experts.{e}.down_proj", "ffn_down_exps",
                                              "mixer.switch_mlp.fc2", true));
        spec.ne = {Dim::expert_ffn, Dim::expert_width, Dim::experts};
        return spec;
    }(),
    moe_row({"mixer.shared_experts.up_proj",
             "ffn_up_shexp",
             required,
             absent,
             2,
             {Dim::hidden, Dim::shared_ffn}}),
    moe_row({"mixer.shared_experts.down_proj",
             "ffn_down_shexp",
             required,
             absent,
             2,
             {Dim::shared_ffn, Dim::hidden}}),
    // The folded MTP block (Nemotron 3 Super's num_nextn_predict_layers, kept by default as the
    // converter keeps it): mtp.layers.0's enorm / hnorm / eh_proj (the NextN input fusion, one
    // [2 * hidden] row per output), mtp.layers.1's norm and final_layernorm.
    mtp_row("enorm", "nextn.enorm", Dim::hidden),
    mtp_row("hnorm", "nextn.hnorm", Dim::hidden),
    mtp_row("eh_proj", "nextn.eh_proj", Dim::hidden_x2, Dim::hidden, 2),
    mtp_row("post_attention_layernorm", "post_attention_norm", Dim::hidden),
    mtp_row("shared_head.norm", "nextn.shared_head_norm", Dim::hidden),
};

constexpr TensorSpec kLast[] = {
    {"norm_f", "output_norm", required, absent, 1, {Dim::hidden}},
    output_row(),
};

// The converter's order: TextModel (block_count; context_length, rewritten in place to 2^20 by
// GraniteHybridModel; embedding_length; feed_forward_length, rewritten in place to the per-layer
// array by NemotronHModel; head_count; head_count_kv, rewritten to its array; rope.freq_base when
// given; the two epsilons), LlamaModel (vocab_size, rope.dimension_count after GraniteModel
// dropped head_dim), GraniteHybridModel (ssm.*, rope.scaling.finetuned), NemotronHModel
// (key_length / value_length = head_dim).
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,
    ArchKv::context_length_ssm,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length_mlp_layers,
    ArchKv::head_count,
    ArchKv::head_count_kv_attention_layers,
    ArchKv::rope_freq_base_given,
    ArchKv::rms_epsilon,
    ArchKv::layer_norm_epsilon,
    ArchKv::vocab_size,
    ArchKv::rope_dimension_count_hidden,
    ArchKv::ssm_conv_kernel,
    ArchKv::ssm_state_size,
    ArchKv::ssm_group_count,
    ArchKv::ssm_inner_size,
    ArchKv::ssm_time_step_rank,
    ArchKv::rope_scaling_finetuned_false,
    ArchKv::key_length,
    ArchKv::value_length,
};

// nemotron_h_moe: TextModel adds the expert counts and groups (n_routed_experts, topk_group,
// n_group at its places); feed_forward_length's array holds moe_intermediate_size on the 'E'
// layers; NemotronHModel then adds the expert widths, the shared count and the routing's norm and
// scale (its rewrites of expert_used_count / expert_count / expert_group_count keep their places).
constexpr ArchKv kMoeKvs[] = {
    ArchKv::block_count,
    ArchKv::context_length_ssm,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length_mlp_layers,
    ArchKv::head_count,
    ArchKv::head_count_kv_attention_layers,
    ArchKv::rope_freq_base_given,
    ArchKv::rms_epsilon,
    ArchKv::layer_norm_epsilon,
    ArchKv::expert_count,
    ArchKv::expert_used_count,
    ArchKv::expert_group_count,
    ArchKv::expert_group_used_count,
    ArchKv::vocab_size,
    ArchKv::rope_dimension_count_hidden,
    ArchKv::ssm_conv_kernel,
    ArchKv::ssm_state_size,
    ArchKv::ssm_group_count,
    ArchKv::ssm_inner_size,
    ArchKv::ssm_time_step_rank,
    ArchKv::rope_scaling_finetuned_false,
    ArchKv::key_length,
    ArchKv::value_length,
    ArchKv::expert_feed_forward_length,
    ArchKv::expert_shared_feed_forward_length,
    ArchKv::expert_shared_count,
    ArchKv::expert_weights_norm,
    ArchKv::expert_weights_scale,
    ArchKv::moe_latent_size,
    ArchKv::nextn_predict_layers,
};

// transformers' NemotronHConfig defaults, under the names it saves them as.
constexpr ConfigDefault kDefaults[] = {
    {"conv_kernel", "4"},       {"ssm_state_size", "128"}, {"n_groups", "8"},
    {"mamba_num_heads", "128"}, {"mamba_head_dim", "64"},  {"layer_norm_epsilon", "1e-05"},
};

// The first of `fields` config.json has (find_hparam's rule), a whole number from 1 to 2^16.
uint32_t first_count(const nlohmann::json& root, std::initializer_list<const char*> fields) {
    for (const char* field : fields) {
        const auto it = root.find(field);
        if (it == root.end()) continue;
        if (!it->is_number_unsigned() || it->get<uint64_t>() == 0 ||
            it->get<uint64_t>() > (1u << 16))
            throw_input_error("config.json", field, "is " + it->dump(),
                              "a whole number from 1 to 65536");
        return static_cast<uint32_t>(it->get<uint64_t>());
    }
    throw_input_error("config.json", *fields.begin(), "is missing",
                      "the Mamba2 layers' size as NemotronHConfig saves it");
}

// GraniteHybridModel / NemotronHModel's Mamba2 numbers (find_hparam with the "mamba_" prefix
// tried after the plain names), rope_theta's presence, and each layer's kind from the pattern.
void read_nemotron_h(const nlohmann::json& root, ModelConfig& config, bool moe) {
    ModelConfig::Mamba2 m;
    m.conv_kernel =
        first_count(root, {"conv_kernel", "d_conv", "mamba_conv_kernel", "mamba_d_conv"});
    m.state_size = first_count(
        root, {"state_size", "d_state", "state_dim", "ssm_state_size", "mamba_state_size",
               "mamba_d_state", "mamba_state_dim", "mamba_ssm_state_size"});
    m.groups = first_count(root, {"n_groups", "num_groups", "mamba_n_groups", "mamba_num_groups"});
    m.heads = first_count(root, {"n_heads", "num_heads", "mamba_n_heads", "mamba_num_heads"});
    m.head_dim = first_count(root, {"mamba_head_dim", "hidden_size"});
    config.mamba2 = m;
    const auto params =
        root.find(root.contains("rope_parameters") ? "rope_parameters" : "rope_scaling");
    config.rope_theta_given =
        root.contains("rope_theta") ||
        (params != root.end() && params->is_object() && params->contains("rope_theta"));
    config.layer_kinds.clear();
    if (const auto pattern = root.find("hybrid_override_pattern");
        pattern != root.end() && pattern->is_string() && !pattern->get<std::string>().empty()) {
        const std::string text = pattern->get<std::string>();
        for (size_t i = 0; i < text.size(); ++i) {
            const char c = text[i];
            const char ffn = moe ? 'E' : '-';
            if (c != 'M' && c != '*' && c != ffn)
                throw_input_error("config.json", "hybrid_override_pattern",
                                  "has '" + std::string(1, c) + "' at " + std::to_string(i),
                                  moe ? "'M' (Mamba2), '*' (attention) or 'E' (MoE) with "
                                        "num_experts_per_tok (nemotron_h_moe)"
                                      : "'M' (Mamba2), '*' (attention) or '-' (MLP) for a dense "
                                        "Nemotron-H; 'E' layers need num_experts_per_tok "
                                        "(nemotron_h_moe)");
            config.layer_kinds.push_back(c == 'M' ? kMamba : c == '*' ? kAttention : kMlp);
        }
    } else if (const auto types = root.find("layers_block_type");
               types != root.end() && types->is_array()) {
        for (size_t i = 0; i < types->size(); ++i) {
            const nlohmann::json& t = (*types)[i];
            const std::string type = t.is_string() ? t.get<std::string>() : t.dump();
            if (type == "mamba" || type == "linear_attention")
                config.layer_kinds.push_back(kMamba);
            else if (type == "attention" || type == "full_attention")
                config.layer_kinds.push_back(kAttention);
            else if (moe && type == "moe")
                config.layer_kinds.push_back(kMlp);
            else
                throw_input_error("config.json", "layers_block_type[" + std::to_string(i) + "]",
                                  "is '" + type + "'",
                                  moe ? "'mamba', 'attention' or 'moe'"
                                      : "'mamba' or 'attention': llama.cpp's converter counts "
                                        "only 'moe' entries as feed-forward layers, so an 'mlp' "
                                        "layer would load as a Mamba2 layer; give "
                                        "hybrid_override_pattern");
        }
    } else {
        throw_input_error("config.json", "hybrid_override_pattern", "is missing",
                          "the layer pattern ('M', '*', '-' per layer) or layers_block_type");
    }
    if (config.layer_kinds.size() != config.num_hidden_layers)
        throw_input_error("config.json", "hybrid_override_pattern",
                          "has " + std::to_string(config.layer_kinds.size()) +
                              " entries for num_hidden_layers " +
                              std::to_string(config.num_hidden_layers),
                          "one entry per layer (the converter asserts they match)");
}

void read_dense(const nlohmann::json& root, ModelConfig& config) {
    read_nemotron_h(root, config, false);
}
void read_moe(const nlohmann::json& root, ModelConfig& config) {
    read_nemotron_h(root, config, true);
    read_moe_routing(root, config);  // the score function: nemotron-h-moe.cpp's sigmoid always
    // Nemotron 3 Super's LatentMoE width (NemotronHConfig's default: None).
    if (const auto latent = root.find("moe_latent_size");
        latent != root.end() && !latent->is_null()) {
        if (!latent->is_number_unsigned() || latent->get<uint64_t>() == 0 ||
            latent->get<uint64_t>() > (1u << 16))
            throw_input_error("config.json", "moe_latent_size", "is " + latent->dump(),
                              "a whole number from 1 to 65536 (the experts' latent width), or "
                              "null");
        config.moe_latent_size = static_cast<uint32_t>(latent->get<uint64_t>());
    }
    // The MTP layers (mtp.layers.0 attention, mtp.layers.1 MoE) NemotronHModel folds into one
    // trailing block at num_hidden_layers, registered as both an attention and a MoE layer.
    if (const auto nextn = root.find("num_nextn_predict_layers");
        nextn != root.end() && !nextn->is_null()) {
        if (!nextn->is_number_unsigned() || nextn->get<uint64_t>() > 64)
            throw_input_error("config.json", "num_nextn_predict_layers", "is " + nextn->dump(),
                              "a whole number (0 or 1)");
        if (nextn->get<uint64_t>() > 1)
            throw Error(ExitClass::blocker, "config.json", "num_nextn_predict_layers",
                        "is " + nextn->dump() +
                            ": NemotronHModel folds exactly one MTP block (it asserts "
                            "num_nextn_predict_layers == 1), and llama.cpp's nemotron_h_moe "
                            "graph runs one",
                        "leave the mtp.* tensors out (a trunk-only checkpoint converts, as "
                        "convert_hf_to_gguf.py --no-mtp writes it)");
        config.nextn_layers = static_cast<uint32_t>(nextn->get<uint64_t>());
        config.layer_kinds.resize(config.num_hidden_layers + config.nextn_layers, kMtp);
    }
}

// NemotronHModel picks nemotron_h_moe when config.json (or its llm_config) has
// num_experts_per_tok.
bool claims_moe(const nlohmann::json& root) {
    const auto type = root.find("model_type");
    if (type == root.end() || *type != "nemotron_h") return false;
    const auto llm = root.find("llm_config");
    return root.contains("num_experts_per_tok") ||
           (llm != root.end() && llm->is_object() && llm->contains("num_experts_per_tok"));
}

// TextModel writes attention.layer_norm_rms_epsilon from rms_norm_eps, else norm_eps (Nemotron 3
// Nano's config.json has only norm_eps), and nothing without either, which llama.cpp's loader
// then refuses.
void rms_eps_name(nlohmann::json& root) {
    const auto given = root.find("rms_norm_eps");  // find_hparam stops at a present key, null too
    if (given != root.end() && !given->is_null()) return;
    const auto norm_eps = given != root.end() ? root.end() : root.find("norm_eps");
    if (norm_eps == root.end() || norm_eps->is_null())
        throw Error(ExitClass::blocker, "config.json", "rms_norm_eps",
                    "is missing or null, with no norm_eps standing in: the converter writes no "
                    "attention.layer_norm_rms_epsilon, which llama.cpp's nemotron_h loader "
                    "requires",
                    "add rms_norm_eps (the RMSNorm epsilon, layer_norm_epsilon's value)");
    root["rms_norm_eps"] = *norm_eps;
}

// The converter's names for the common reading: n_routed_experts as num_experts,
// moe_shared_expert_intermediate_size as shared_expert_intermediate_size, the RMS epsilon.
void moe_names(nlohmann::json& root) {
    rms_eps_name(root);
    take_routed_experts(root, "the routed expert count NemotronHModel stacks");
    if (const auto shared = root.find("moe_shared_expert_intermediate_size"); shared != root.end())
        root["shared_expert_intermediate_size"] = *shared;
}

// What NemotronHModel.set_gguf_parameters reads without a default (a KeyError in the converter),
// and what rebox does not write yet.
void nemotron_h_moe_checks(const Architecture&, const ModelConfig& config,
                           std::vector<std::string>& problems) {
    const ModelConfig::Mamba2 m = config.mamba2.value_or(ModelConfig::Mamba2{});
    if (m.groups == 0 || (uint64_t{m.heads} * m.head_dim) % m.groups != 0)
        problems.push_back("mamba_num_heads * mamba_head_dim is not a multiple of n_groups " +
                           std::to_string(m.groups) + ": ssm_norm cannot be reshaped per group");
    if (!config.head_dim_given)
        problems.push_back(
            "config.json has no head_dim: NemotronHModel writes key_length / value_length "
            "from it");
    if (!config.intermediate_size_given)
        problems.push_back(
            "config.json has no intermediate_size: the converter then writes feed_forward_length "
            "at another place, which rebox does not follow yet");
    const std::pair<bool, const char*> needed[] = {
        {config.moe_intermediate_size.has_value(), "moe_intermediate_size"},
        {config.shared_expert_intermediate_size.has_value(), "moe_shared_expert_intermediate_size"},
        {config.n_shared_experts.has_value(), "n_shared_experts"},
        {config.expert_weights_norm.has_value(), "norm_topk_prob"},
        {config.expert_weights_scale.has_value(), "routed_scaling_factor"},
        {config.expert_group_count.has_value(), "n_group"},
    };
    for (const auto& [given, field] : needed)
        if (!given)
            problems.push_back(std::string("config.json has no ") + field +
                               ": NemotronHModel.set_gguf_parameters reads it");
}

// rebox check: the layer kinds come from the file's per-layer arrays (check_tensors.cpp), the
// Mamba2 sizes from its ssm.* keys, which the check reads as linear-attention sizes (state_size as
// the key head dim, group_count as the key heads, time_step_rank as the value heads, inner_size /
// time_step_rank as the value head dim).
void mamba2_from_ssm_kvs(ModelConfig& config) {
    if (config.mamba2 || !config.linear_attention) return;
    const ModelConfig::LinearAttention& l = *config.linear_attention;
    config.mamba2 = ModelConfig::Mamba2{l.conv_kernel, l.key_head_dim, l.key_heads, l.value_heads,
                                        l.value_head_dim};
}

// What the converter asserts or llama.cpp's nemotron_h loader cannot take.
void nemotron_h_checks(const Architecture&, const ModelConfig& config,
                       std::vector<std::string>& problems) {
    if (!config.head_dim_given)
        problems.push_back(
            "config.json has no head_dim: NemotronHModel writes key_length / value_length "
            "from it");
    if (config.num_experts_per_tok != 0)
        problems.push_back(
            "config.json has num_experts_per_tok: that is Nemotron 3's nemotron_h_moe, which "
            "rebox does not write yet");
    const ModelConfig::Mamba2 m = config.mamba2.value_or(ModelConfig::Mamba2{});
    if (m.groups == 0 || (uint64_t{m.heads} * m.head_dim) % m.groups != 0)
        problems.push_back("mamba_num_heads * mamba_head_dim is not a multiple of n_groups " +
                           std::to_string(m.groups) + ": ssm_norm cannot be reshaped per group");
}

// NemotronHModel.set_vocab: the vocabulary padded to a multiple of 8 with UNUSED "[PAD<id>]"
// tokens, and add_bos_token forced true for the dense model.
void nemotron_h_vocab(TokenizerVocab& vocab, bool) {
    constexpr int32_t kUnused = 5;  // gguf-py TokenType.UNUSED
    while (vocab.tokens.size() % 8 != 0) {
        vocab.tokens.push_back("[PAD" + std::to_string(vocab.tokens.size()) + "]");
        vocab.token_types.push_back(kUnused);
    }
    vocab.add_bos = true;
}

constexpr Architecture kNemotronH = [] {
    Architecture a{"nemotron_h", kModelTypes, kFirst, kLayer, kLast, kKvs, {}, {}, kDefaults};
    a.hf_head_prefixes = kHeadPrefixes;
    a.prepare_config = rms_eps_name;
    a.finish_config = read_dense;
    a.set_layer_kinds = mamba2_from_ssm_kvs;
    a.supports_no_mtp = true;  // NemotronHModel takes it for both of its architectures
    a.config_checks = nemotron_h_checks;
    a.finish_vocab = nemotron_h_vocab;
    // nemotron-h.cpp applies the .scale of attention, the MLP's up/down and the output, and the
    // Mamba2 layers (mamba-base.cpp) those of ssm_in and ssm_out.
    a.nvfp4_scales = {.output = true, .dense_ffn = true, .ssm = true};
    return a;
}();

// NemotronHModel.set_vocab forces add_bos_token for the dense model only.
void nemotron_h_moe_vocab(TokenizerVocab& vocab, bool given) {
    const bool add_bos = vocab.add_bos;
    nemotron_h_vocab(vocab, given);
    vocab.add_bos = add_bos;
}

// NemotronHModel._MTP_SPECIAL_RENAMES: the MTP tensors that are not named like a layer's.
constexpr std::pair<std::string_view, std::string_view> kMtpRenames[] = {
    {"mtp.layers.0.enorm", "enorm"},
    {"mtp.layers.0.hnorm", "hnorm"},
    {"mtp.layers.0.eh_proj", "eh_proj"},
    {"mtp.layers.1.norm", "post_attention_layernorm"},
    {"mtp.layers.1.final_layernorm", "shared_head.norm"},
};

// The layer kinds follow the MTP layer count as the plan settles it (none when the checkpoint
// holds no mtp.* tensor: written as the converter's --no-mtp writes it); rebox check reads the
// folded block back from the arrays (kind 3: both values set).
void moe_layer_kinds(ModelConfig& config) {
    mamba2_from_ssm_kvs(config);
    if (config.layer_kinds.size() >= config.num_hidden_layers)
        config.layer_kinds.resize(config.num_hidden_layers + config.nextn_layers, kMtp);
}

constexpr Architecture kNemotronHMoe = [] {
    Architecture a{"nemotron_h_moe", {}, kFirst, kMoeLayer, kLast, kMoeKvs, {}, {}, kDefaults};
    a.hf_head_prefixes = kHeadPrefixes;
    a.mtp_layer_prefix = "mtp.layers.";
    a.mtp_renames = kMtpRenames;
    a.mtp_fold = true;
    a.mtp_fold_second_kinds = kMlpBit;  // the MoE sub-layer's rows are mtp.layers.1's
    // The loader creates every MTP row (skipped unless asked for) once the block is there: all
    // or none, eh_proj standing for it.
    a.mtp_probe = "nextn.eh_proj";
    a.supports_no_mtp = true;
    a.claims_config = claims_moe;
    a.prepare_config = moe_names;
    a.finish_config = read_moe;
    a.set_layer_kinds = moe_layer_kinds;
    a.config_checks = nemotron_h_moe_checks;
    a.finish_vocab = nemotron_h_moe_vocab;
    // nemotron-h-moe's graph applies the .scale of attention, the experts, the shared expert and
    // the output.
    a.nvfp4_scales = {
        .output = true, .experts = true, .ssm = true, .shared_experts = true, .nextn = true};
    return a;
}();

}  // namespace nemotron_h_record

const Architecture& nemotron_h_architecture() { return nemotron_h_record::kNemotronH; }
const Architecture& nemotron_h_moe_architecture() { return nemotron_h_record::kNemotronHMoe; }

}  // namespace rebox::arch::detail
