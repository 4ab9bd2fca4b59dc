// glm4moe (GLM-4.5 / 4.5-Air / 4.6 / 4.7: Glm4MoeForCausalLM): llama.cpp's glm4moe loader and
// graph (src/models/glm4-moe.cpp) as the converter's Glm4MoeModel -> TextModel chain
// (conversion/glm.py) writes it. Attention with optional q/k/v biases and optional per-head q/k
// norms (GLM-4.5 / 4.6 / 4.7 have them, 4.5-Air not), NEOX rope on head_dim *
// partial_rotary_factor dimensions, post_attention_norm; the first first_k_dense_replace layers
// have a dense feed-forward, the others a sigmoid-gated router with its score-correction bias
// (e_score_correction_bias -> exp_probs_b.bias), n_routed_experts experts stacked into 3-D tensors
// and n_shared_experts shared experts fused into one (ffn_*_shexp, moe_intermediate_size *
// n_shared_experts wide). The num_nextn_predict_layers multi-token-prediction layers follow as
// layers.N (N >= num_hidden_layers): a whole MoE decoder layer plus eh_proj, enorm, hnorm and
// shared_head / embed_tokens, written as blk.N.nextn.*; kept, as the converter keeps them by
// default: a trunk-only checkpoint loads (the loader probes nextn.eh_proj), a partial MTP layer
// does not (with the probe there, the MTP layers' rows are required: Architecture::mtp_probe).
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace glm4moe_record {

using enum Presence;

// The layer kinds (ModelConfig::layer_kinds values) and their TensorSpec::kinds bits.
constexpr uint8_t kDense = 0, kMoe = 1, kMtp = 2;
constexpr uint8_t kDenseBit = 1u << kDense, kMoeBits = (1u << kMoe) | (1u << kMtp),
                  kMtpBit = 1u << kMtp;

constexpr std::string_view kModelTypes[] = {"glm4_moe"};

// `spec` on the layers `kinds` say, with the weight's presence.
constexpr TensorSpec on(TensorSpec spec, uint8_t kinds, Presence weight = required) {
    spec.kinds = kinds;
    spec.weight = weight;
    return spec;
}
// A per-layer [columns, rows] matrix of the layers `kinds` say.
constexpr TensorSpec matrix(std::string_view hf, std::string_view gguf, Dim columns, Dim rows,
                            uint8_t kinds, Presence weight = required) {
    return on({hf, gguf, weight, absent, 2, {columns, rows}}, kinds, weight);
}

constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(
    std::array{
        kAttnNorm,
        attn_q(optional),
        attn_k(optional),
        attn_v(optional),
        attn_output(),
        on(attn_q_norm(), 0, optional),
        on(attn_k_norm(), 0, optional),
        kPostAttentionNorm,
        // The leading dense layers.
        matrix("mlp.gate_proj", "ffn_gate", Dim::hidden, Dim::ffn, kDenseBit),
        matrix("mlp.down_proj", "ffn_down", Dim::ffn, Dim::hidden, kDenseBit),
        matrix("mlp.up_proj", "ffn_up", Dim::hidden, Dim::ffn, kDenseBit),
    },
    deepseek_moe_ffn(kMoeBits, Presence::required),  // and the MTP layers
    nextn_head(kMtpBit));
// The loader falls back to token_embd when output.weight is absent.
constexpr TensorSpec kLast[] = {kOutputNorm, output_row(optional)};

// TextModel.set_gguf_parameters (block_count counting the MTP layers; the expert and group
// counts; the gating function where config.json names a score function; key/value length from
// head_dim), then Glm4MoeModel's own, in its order (expert_count again keeps its first place).
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,
    ArchKv::context_length,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length,
    ArchKv::head_count,
    ArchKv::head_count_kv,
    ArchKv::rope_freq_base,
    ArchKv::rms_epsilon,
    ArchKv::expert_count,
    ArchKv::expert_used_count,
    ArchKv::expert_group_count,
    ArchKv::expert_group_used_count,
    ArchKv::expert_gating_func_sigmoid_given,
    ArchKv::key_length_given,
    ArchKv::value_length_given,
    ArchKv::rope_dimension_count_partial_half,
    ArchKv::expert_feed_forward_length,
    ArchKv::expert_shared_count,
    ArchKv::leading_dense_block_count,
    ArchKv::expert_gating_func_sigmoid,
    ArchKv::expert_weights_scale,
    ArchKv::expert_weights_norm,
    ArchKv::nextn_predict_layers_given,
};

// Glm4MoeModel reads the routed expert count as n_routed_experts (it stacks that many experts
// and writes it as expert_count); the common reading takes it from num_experts.
void prepare_glm4moe(nlohmann::json& root) {
    take_routed_experts(root, "the routed expert count (Glm4MoeModel stacks that many experts)");
}

// The loader's rule: layers below leading_dense_block_count are dense, the rest MoE; the
// nextn_layers after num_hidden_layers are MTP layers (MoE layers with the MTP head).
void glm4moe_layer_kinds(ModelConfig& config) {
    config.layer_kinds.clear();
    const uint32_t dense = config.leading_dense_blocks.value_or(0);
    for (uint32_t i = 0; i < config.num_hidden_layers; ++i)
        config.layer_kinds.push_back(i < dense ? kDense : kMoe);
    config.layer_kinds.resize(config.num_hidden_layers + config.nextn_layers, kMtp);
}

// The routing fields, the rope's partial factor and the MTP layer count, as the converter reads
// them from config.json; then each layer's kind.
void read_glm4moe(const nlohmann::json& root, ModelConfig& config) {
    constexpr uint32_t kCap = 1u << 16;
    config.score_function_given = !read_moe_routing(root, config).empty();
    const auto nextn = config_count(root, "num_nextn_predict_layers", 0, 64);
    config.nextn_layers = nextn.value_or(0);
    config.nextn_layers_given = nextn.has_value();
    // TextModel: the rope parameters' own partial factor, else the top-level one.
    for (const char* block : {"rope_parameters", "rope_scaling"}) {
        const nlohmann::json* params = config_field(root, block);
        if (params == nullptr || !params->is_object()) continue;
        if (const nlohmann::json* f = config_field(*params, "partial_rotary_factor")) {
            if (!f->is_number())
                throw_input_error("config.json", std::string(block) + ".partial_rotary_factor",
                                  "is " + f->dump(), "a number in (0, 1]");
            config.partial_rotary_factor = f->get<double>();
        }
        break;
    }
    if (config.partial_rotary_factor &&
        !(*config.partial_rotary_factor > 0.0 && *config.partial_rotary_factor <= 1.0))
        throw_input_error("config.json", "partial_rotary_factor",
                          "is " + std::to_string(*config.partial_rotary_factor),
                          "a number in (0, 1]");
    if (config.num_hidden_layers > kCap) return;  // refused by the caps after this hook
    glm4moe_layer_kinds(config);
}

// What llama.cpp's glm4moe loader cannot take, or the tables do not describe.
void glm4moe_checks(const Architecture&, const ModelConfig& config,
                    std::vector<std::string>& problems) {
    if (!config.n_shared_experts)
        problems.push_back(
            "n_shared_experts is missing: llama.cpp's glm4moe loader requires "
            "expert_shared_count");
    else if (*config.n_shared_experts == 0)
        problems.push_back(
            "n_shared_experts is 0: rebox supports GLM MoE layers with shared experts only");
    if (config.leading_dense_blocks.value_or(0) > config.num_hidden_layers)
        problems.push_back("first_k_dense_replace " + std::to_string(*config.leading_dense_blocks) +
                           " is more than num_hidden_layers " +
                           std::to_string(config.num_hidden_layers));
}

}  // namespace glm4moe_record

// _set_vocab_glm: a byte-level BPE vocabulary whose pre-tokenizer the converter names "glm4" by
// its hash (GLM's Split regex is llama-bpe's), and four special tokens looked up by their text
// among the added tokens (all four must exist) and set where gguf-py's SpecialVocab has none yet.
void glm_vocab(TokenizerVocab& vocab, bool pre_given) {
    const auto refuse = [](const std::string& field, const std::string& problem) {
        throw Error(
            ExitClass::blocker, "tokenizer.json", field, problem,
            "GLM's own tokenizer.json (llama.cpp's converter writes it with _set_vocab_glm)");
    };
    if (vocab.model != "gpt2") refuse("model", "is not a byte-level BPE vocabulary");
    if (!pre_given) {
        if (vocab.pre != "llama-bpe")
            refuse("pre_tokenizer", "the Split regex is " + vocab.pre + "'s, not GLM's");
        vocab.pre = "glm4";
    }
    const auto id_of = [&](const std::string& text) {
        for (size_t id = 0; id < vocab.tokens.size(); ++id)
            if (vocab.tokens[id] == text) return static_cast<uint32_t>(id);
        refuse("added_tokens", "has no '" + text + "' token");
        return uint32_t{0};
    };
    const uint32_t bos = id_of("[gMASK]"), eot = id_of("<|user|>"), unk = id_of("<|endoftext|>"),
                   eom = id_of("<|observation|>");
    if (!vocab.bos_id) vocab.bos_id = bos;
    if (!vocab.eot_id) vocab.eot_id = eot;
    if (!vocab.unk_id) vocab.unk_id = unk;
    if (!vocab.eom_id) vocab.eom_id = eom;
}

namespace glm4moe_record {

constexpr Architecture kGlm4Moe = [] {
    Architecture a{"glm4moe", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.prepare_config = prepare_glm4moe;
    a.finish_config = read_glm4moe;
    a.set_layer_kinds = glm4moe_layer_kinds;
    a.config_checks = glm4moe_checks;
    a.finish_vocab = glm_vocab;
    a.mtp_probe = "nextn.eh_proj";  // the loader's trunk-only probe
    a.supports_no_mtp = true;
    // glm4-moe.cpp applies the .scale of attention and the output only.
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace glm4moe_record

const Architecture& glm4moe_architecture() { return glm4moe_record::kGlm4Moe; }

}  // namespace rebox::arch::detail
