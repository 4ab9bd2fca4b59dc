// glm4moe in the registry against hand-written tables from llama.cpp's glm4moe loader
// (src/models/glm4-moe.cpp: layers below leading_dense_block_count dense, the rest MoE with
// exp_probs_b.bias and shared experts n_ff_exp * n_expert_shared wide, the MTP layers after
// n_layer with nextn.*) and converter (conversion/glm.py Glm4MoeModel, base.py TextModel and
// _set_vocab_glm; gguf-py's tensor_mapping for the names): names both ways, ne per layer kind from
// a hand-written config.json, the KVs in the converter's order with values worked by hand, the
// vocabulary rules, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

// GLM-4.5-Air's config.json keys scaled down: hidden 64, 4 heads of 32 (2 kv heads), 3 layers
// with the first dense (intermediate 128), 8 routed experts of 48 (2 per token), 2 shared
// experts, 1 MTP layer; partial_rotary_factor 0.5.
ModelConfig glm_config(const std::string& extra = "", const std::string& drop = "") {
    nlohmann::json root = nlohmann::json::parse(
        R"({"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe",
            "attention_bias": true, "first_k_dense_replace": 1, "head_dim": 32,
            "hidden_size": 64, "intermediate_size": 128, "max_position_embeddings": 131072,
            "moe_intermediate_size": 48, "n_group": 1, "n_routed_experts": 8,
            "n_shared_experts": 2, "norm_topk_prob": true, "num_attention_heads": 4,
            "num_experts_per_tok": 2, "num_hidden_layers": 3, "num_key_value_heads": 2,
            "num_nextn_predict_layers": 1, "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05,
            "rope_scaling": null, "rope_theta": 1000000, "routed_scaling_factor": 2.5,
            "tie_word_embeddings": false, "topk_group": 1, "use_qk_norm": true,
            "vocab_size": 100})");
    if (!extra.empty()) root.update(nlohmann::json::parse(extra));
    if (!drop.empty()) root.erase(drop);
    return parse_model_config(root);
}

const Architecture& glm() { return *find_architecture("glm4_moe"); }

TEST(Glm4MoeRegistry, NamesBothWays) {
    ASSERT_NE(find_architecture("glm4_moe"), nullptr);
    EXPECT_EQ(glm().gguf_arch, "glm4moe");
    EXPECT_EQ(find_architecture("glm4moe"), &glm());
    const std::tuple<const char*, const char*> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
        {"model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
        {"model.layers.0.self_attn.q_proj.bias", "blk.0.attn_q.bias"},
        {"model.layers.0.self_attn.k_proj.bias", "blk.0.attn_k.bias"},
        {"model.layers.0.self_attn.v_proj.bias", "blk.0.attn_v.bias"},
        {"model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight"},
        {"model.layers.0.self_attn.q_norm.weight", "blk.0.attn_q_norm.weight"},
        {"model.layers.0.self_attn.k_norm.weight", "blk.0.attn_k_norm.weight"},
        // gguf-py's GLM4_MOE list has ATTN_POST_NORM and no FFN_NORM.
        {"model.layers.0.post_attention_layernorm.weight", "blk.0.post_attention_norm.weight"},
        {"model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight"},
        {"model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight"},
        {"model.layers.1.mlp.gate.weight", "blk.1.ffn_gate_inp.weight"},
        {"model.layers.1.mlp.gate.e_score_correction_bias", "blk.1.exp_probs_b.bias"},
        {"model.layers.1.mlp.shared_experts.gate_proj.weight", "blk.1.ffn_gate_shexp.weight"},
        {"model.layers.1.mlp.shared_experts.down_proj.weight", "blk.1.ffn_down_shexp.weight"},
        {"model.layers.1.mlp.shared_experts.up_proj.weight", "blk.1.ffn_up_shexp.weight"},
        // The MTP layer is layers.3 in the checkpoint.
        {"model.layers.3.eh_proj.weight", "blk.3.nextn.eh_proj.weight"},
        {"model.layers.3.embed_tokens.weight", "blk.3.nextn.embed_tokens.weight"},
        {"model.layers.3.enorm.weight", "blk.3.nextn.enorm.weight"},
        {"model.layers.3.hnorm.weight", "blk.3.nextn.hnorm.weight"},
        {"model.layers.3.shared_head.head.weight", "blk.3.nextn.shared_head_head.weight"},
        {"model.layers.3.shared_head.norm.weight", "blk.3.nextn.shared_head_norm.weight"},
        {"model.layers.3.self_attn.q_proj.weight", "blk.3.attn_q.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(glm(), hf, 3);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        const auto back = resolve_gguf(glm(), gguf, 3);
        ASSERT_TRUE(back.has_value()) << gguf;
        EXPECT_EQ(back->hf_name, strip_model_prefix(hf)) << gguf;
    }
    // Experts, per expert or stacked (MLX's switch_mlp).
    EXPECT_EQ(resolve_hf(glm(), "model.layers.1.mlp.experts.7.down_proj.weight", 3)->gguf_name,
              "blk.1.ffn_down_exps.weight");
    EXPECT_EQ(resolve_hf(glm(), "model.layers.2.mlp.switch_mlp.up_proj.weight", 3)->gguf_name,
              "blk.2.ffn_up_exps.weight");
    // No output bias, no e_score_correction weight.
    for (const char* refused :
         {"model.layers.0.self_attn.o_proj.bias",
          "model.layers.1.mlp.gate.e_score_correction.weight", "model.layers.1.mlp.gate.bias"})
        EXPECT_FALSE(resolve_hf(glm(), refused, 3).has_value()) << refused;
}

TEST(Glm4MoeRegistry, ShapesPerLayerKind) {
    const ModelConfig c = glm_config();
    EXPECT_EQ(c.num_experts, 8u);                                  // n_routed_experts
    EXPECT_EQ(c.layer_kinds, (std::vector<uint8_t>{0, 1, 1, 2}));  // dense, MoE, MoE, MTP
    EXPECT_EQ(c.nextn_layers, 1u);
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, std::optional<Ne>> rows[] = {
        {"blk.0.attn_q.weight", Ne{64, 128}},
        {"blk.0.attn_q.bias", Ne{128}},
        {"blk.0.attn_k.weight", Ne{64, 64}},
        {"blk.0.attn_output.weight", Ne{128, 64}},
        {"blk.0.attn_k_norm.weight", Ne{32}},
        {"blk.0.ffn_gate.weight", Ne{64, 128}},
        {"blk.0.ffn_down.weight", Ne{128, 64}},
        {"blk.0.ffn_gate_inp.weight", std::nullopt},  // a dense layer
        {"blk.0.exp_probs_b.bias", std::nullopt},
        {"blk.1.ffn_gate.weight", std::nullopt},  // an MoE layer
        {"blk.1.ffn_gate_inp.weight", Ne{64, 8}},
        {"blk.1.exp_probs_b.bias", Ne{8}},
        {"blk.1.ffn_gate_exps.weight", Ne{64, 48, 8}},
        {"blk.1.ffn_down_exps.weight", Ne{48, 64, 8}},
        // 48 * 2 shared experts.
        {"blk.2.ffn_gate_shexp.weight", Ne{64, 96}},
        {"blk.2.ffn_down_shexp.weight", Ne{96, 64}},
        {"blk.2.nextn.eh_proj.weight", std::nullopt},  // not an MTP layer
        {"blk.3.ffn_up_exps.weight", Ne{64, 48, 8}},
        {"blk.3.nextn.eh_proj.weight", Ne{128, 64}},
        {"blk.3.nextn.embed_tokens.weight", Ne{64, 100}},
        {"blk.3.nextn.shared_head_head.weight", Ne{64, 100}},
        {"blk.3.nextn.enorm.weight", Ne{64}},
        {"blk.4.nextn.eh_proj.weight", std::nullopt},  // past the MTP layer
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(glm(), c, name), ne) << name;
    const std::vector<std::string> required = required_tensors(glm(), c);
    const auto has = [&](const char* name) {
        return std::find(required.begin(), required.end(), name) != required.end();
    };
    EXPECT_TRUE(has("blk.1.exp_probs_b.bias"));
    EXPECT_TRUE(has("blk.2.ffn_up_shexp.weight"));
    EXPECT_TRUE(has("blk.0.ffn_up.weight"));
    EXPECT_FALSE(has("blk.0.attn_q.bias"));         // the loader takes them when present
    EXPECT_FALSE(has("blk.0.attn_q_norm.weight"));  // GLM-4.5-Air has none
    EXPECT_FALSE(has("blk.3.attn_q.weight"));       // a trunk-only checkpoint loads
    EXPECT_FALSE(has("output.weight"));             // the loader falls back to token_embd
    // token_embd, output_norm; per layer attn_norm, q/k/v/o, post_attention_norm (6); dense: 3;
    // MoE: router, exp_probs_b, 3 experts, 3 shared.
    EXPECT_EQ(required.size(), 2u + 3 * 6 + 3 + 2 * 8);
    // Once blk.3.nextn.eh_proj is there, the loader requires the whole MTP layer: its attention,
    // MoE block and head, not embed_tokens / shared_head.
    EXPECT_EQ(glm().mtp_probe, "nextn.eh_proj");
    const std::vector<std::string> mtp = required_mtp_tensors(glm(), c);
    EXPECT_EQ(mtp.size(), 6u + 8 + 3);
    for (const char* name :
         {"blk.3.attn_q.weight", "blk.3.exp_probs_b.bias", "blk.3.ffn_up_shexp.weight",
          "blk.3.nextn.eh_proj.weight", "blk.3.nextn.hnorm.weight"})
        EXPECT_NE(std::find(mtp.begin(), mtp.end(), name), mtp.end()) << name;
    for (const char* name :
         {"blk.3.nextn.embed_tokens.weight", "blk.3.nextn.shared_head_head.weight",
          "blk.3.nextn.shared_head_norm.weight", "blk.2.attn_q.weight"})
        EXPECT_EQ(std::find(mtp.begin(), mtp.end(), name), mtp.end()) << name;
}

TEST(Glm4MoeRegistry, KvsInTheConvertersOrder) {
    const ModelConfig c = glm_config();
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    std::map<std::string, GgufValue> kv;
    for (const GgufKV& entry : build_model_metadata(input)) {
        if (!entry.key.starts_with("glm4moe.")) continue;
        keys.push_back(entry.key.substr(8));
        kv[entry.key.substr(8)] = entry.value;
    }
    const std::vector<std::string> want = {
        "block_count",          "context_length",
        "embedding_length",     "feed_forward_length",
        "attention.head_count", "attention.head_count_kv",
        "rope.freq_base",       "attention.layer_norm_rms_epsilon",
        "expert_count",         "expert_used_count",
        "expert_group_count",   "expert_group_used_count",
        "attention.key_length", "attention.value_length",
        "rope.dimension_count", "expert_feed_forward_length",
        "expert_shared_count",  "leading_dense_block_count",
        "expert_gating_func",   "expert_weights_scale",
        "expert_weights_norm",  "nextn_predict_layers"};
    EXPECT_EQ(keys, want);
    EXPECT_EQ(kv["block_count"].as_u32(), 4u);            // 3 + 1 MTP
    EXPECT_EQ(kv["expert_count"].as_u32(), 8u);           // n_routed_experts
    EXPECT_EQ(kv["rope.dimension_count"].as_u32(), 16u);  // int(32 * 0.5)
    EXPECT_EQ(kv["expert_feed_forward_length"].as_u32(), 48u);
    EXPECT_EQ(kv["expert_shared_count"].as_u32(), 2u);
    EXPECT_EQ(kv["leading_dense_block_count"].as_u32(), 1u);
    EXPECT_EQ(kv["expert_gating_func"].as_u32(), 2u);  // ExpertGatingFuncType.SIGMOID
    EXPECT_EQ(kv["expert_weights_scale"].type, GgufType::FLOAT32);
    EXPECT_EQ(std::get<double>(kv["expert_weights_scale"].scalar), 2.5);
    EXPECT_EQ(kv["expert_weights_norm"].as_bool(), true);
    EXPECT_EQ(kv["nextn_predict_layers"].as_u32(), 1u);

    // A score function in config.json moves the gating function to TextModel's place (still
    // SIGMOID); without partial_rotary_factor the factor is 0.5; without the optional fields
    // their keys are absent, and num_nextn_predict_layers 0 is written as 0.
    const ModelConfig other = glm_config(
        R"({"scoring_func": "softmax", "num_nextn_predict_layers": 0})", "partial_rotary_factor");
    const ModelConfig sparse = glm_config(R"({"n_group": null, "topk_group": null,
        "routed_scaling_factor": null, "norm_topk_prob": null})");
    input.config = &other;
    keys.clear();
    for (const GgufKV& entry : build_model_metadata(input)) {
        if (!entry.key.starts_with("glm4moe.")) continue;
        keys.push_back(entry.key.substr(8));
        if (entry.key == "glm4moe.rope.dimension_count") {
            EXPECT_EQ(entry.value.as_u32(), 16u);
        }
        if (entry.key == "glm4moe.block_count") {
            EXPECT_EQ(entry.value.as_u32(), 3u);
        }
        if (entry.key == "glm4moe.nextn_predict_layers") {
            EXPECT_EQ(entry.value.as_u32(), 0u);
        }
        if (entry.key == "glm4moe.expert_gating_func") {
            EXPECT_EQ(entry.value.as_u32(), 2u);
        }
    }
    ASSERT_EQ(keys.size(), want.size());
    EXPECT_EQ(keys[12], "expert_gating_func");
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "expert_gating_func"), 1);
    input.config = &sparse;
    for (const GgufKV& entry : build_model_metadata(input))
        for (const char* absent : {"expert_group_count", "expert_group_used_count",
                                   "expert_weights_scale", "expert_weights_norm"})
            EXPECT_NE(entry.key, std::string("glm4moe.") + absent);
}

TEST(Glm4MoeRegistry, GlmVocabulary) {
    ASSERT_NE(glm().finish_vocab, nullptr);
    TokenizerVocab vocab;
    vocab.pre = "llama-bpe";
    vocab.tokens = {"a", "b", "<|endoftext|>", "[gMASK]", "<sop>", "<|user|>", "<|observation|>"};
    vocab.eos_id = 2;
    vocab.unk_id = 0;  // set already: SpecialVocab keeps it
    glm().finish_vocab(vocab, false);
    EXPECT_EQ(vocab.pre, "glm4");
    EXPECT_EQ(vocab.bos_id, 3u);
    EXPECT_EQ(vocab.eot_id, 5u);
    EXPECT_EQ(vocab.unk_id, 0u);
    EXPECT_EQ(vocab.eom_id, 6u);
    EXPECT_EQ(vocab.eos_id, 2u);
    // --tokenizer-pre wins; a regex other than GLM's, or a missing special token, is refused.
    TokenizerVocab named = vocab;
    named.pre = "qwen2";
    glm().finish_vocab(named, true);
    EXPECT_EQ(named.pre, "qwen2");
    EXPECT_THROW(glm().finish_vocab(named, false), Error);
    TokenizerVocab missing = vocab;
    missing.pre = "llama-bpe";
    missing.tokens.pop_back();
    try {
        glm().finish_vocab(missing, false);
        ADD_FAILURE() << "no <|observation|>";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::blocker);
        EXPECT_NE(std::string(e.what()).find("<|observation|>"), std::string::npos);
    }
}

TEST(Glm4MoeRegistry, Refusals) {
    const auto problems = [](const std::string& extra, const std::string& drop = "") {
        return config_problems(glm(), glm_config(extra, drop));
    };
    EXPECT_TRUE(problems("").empty());
    EXPECT_EQ(problems("", "n_shared_experts").size(), 1u);  // the loader requires the key
    EXPECT_EQ(problems(R"({"n_shared_experts": 0})").size(), 1u);
    EXPECT_EQ(problems(R"({"first_k_dense_replace": 4})").size(), 1u);
    EXPECT_EQ(problems("", "moe_intermediate_size").size(), 1u);
    EXPECT_THROW(glm_config("", "n_routed_experts"), Error);
    EXPECT_THROW(glm_config(R"({"n_shared_experts": -1})"), Error);
    EXPECT_THROW(glm_config(R"({"num_nextn_predict_layers": 65})"), Error);
    EXPECT_THROW(glm_config(R"({"scoring_func": "relu"})"), Error);
    EXPECT_THROW(glm_config(R"({"partial_rotary_factor": 1.5})"), Error);
    EXPECT_THROW(glm_config(R"({"norm_topk_prob": 1})"), Error);
}

}  // namespace
}  // namespace rebox::arch
