// nemotron_h in the registry against hand-written tables from llama.cpp's nemotron_h loader
// (src/models/nemotron-h.cpp: a layer is recurrent when its head_count_kv and feed_forward_length
// are both 0, attention when only feed_forward_length is; d_in_proj = 2 * d_inner + 2 * n_group *
// d_state + n_heads, ssm_conv1d {d_conv, d_inner + 2 * n_group * d_state}, ssm_a / ssm_d
// {1, n_heads}, ssm_norm {d_inner / n_group, n_group}) and the converter (conversion/nemotron.py
// NemotronHModel and its chain, gguf-py's tensor_mapping for the names): names both ways under
// "backbone.", ne per layer kind from a hand-written config.json, the KVs in the converter's order
// with their per-layer arrays, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

// NVIDIA-Nemotron-Nano-9B-v2's config.json keys scaled down: hidden 64, pattern "M-M*-M", 4
// attention heads of 32 (2 kv heads), Mamba2 8 heads of 16 in 2 groups, state 16, kernel 4.
ModelConfig nh_config(const std::string& extra = "") {
    return parse_model_config(nlohmann::json::parse(
        R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
            "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 6,
            "hybrid_override_pattern": "M-M*-M", "num_attention_heads": 4, "head_dim": 32,
            "num_key_value_heads": 2, "mamba_num_heads": 8, "mamba_head_dim": 16, "n_groups": 2,
            "ssm_state_size": 16, "conv_kernel": 4, "expand": 2, "layer_norm_epsilon": 1e-05,
            "rms_norm_eps": 1e-05, "max_position_embeddings": 4096, "vocab_size": 100,
            "tie_word_embeddings": false)" +
        extra + "}"));
}

const Architecture& nh() { return *find_architecture("nemotron_h"); }

TEST(NemotronHRegistry, NamesBothWays) {
    const std::tuple<const char*, const char*> rows[] = {
        {"backbone.embeddings.weight", "token_embd.weight"},
        {"backbone.layers.0.norm.weight", "blk.0.attn_norm.weight"},
        {"backbone.layers.0.mixer.in_proj.weight", "blk.0.ssm_in.weight"},
        {"backbone.layers.0.mixer.conv1d.weight", "blk.0.ssm_conv1d.weight"},
        {"backbone.layers.0.mixer.conv1d.bias", "blk.0.ssm_conv1d.bias"},
        {"backbone.layers.0.mixer.dt_bias", "blk.0.ssm_dt.bias"},
        {"backbone.layers.0.mixer.A_log", "blk.0.ssm_a"},
        {"backbone.layers.0.mixer.D", "blk.0.ssm_d"},
        {"backbone.layers.0.mixer.norm.weight", "blk.0.ssm_norm.weight"},
        {"backbone.layers.0.mixer.out_proj.weight", "blk.0.ssm_out.weight"},
        {"backbone.layers.1.mixer.up_proj.weight", "blk.1.ffn_up.weight"},
        {"backbone.layers.1.mixer.down_proj.weight", "blk.1.ffn_down.weight"},
        {"backbone.layers.3.mixer.q_proj.weight", "blk.3.attn_q.weight"},
        {"backbone.layers.3.mixer.k_proj.weight", "blk.3.attn_k.weight"},
        {"backbone.layers.3.mixer.v_proj.weight", "blk.3.attn_v.weight"},
        {"backbone.layers.3.mixer.o_proj.weight", "blk.3.attn_output.weight"},
        {"backbone.norm_f.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(nh(), hf, 6);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf) << hf;
        EXPECT_TRUE(resolve_gguf(nh(), gguf, 6).has_value()) << gguf;
    }
    // A gate the relu² MLP does not have.
    EXPECT_FALSE(resolve_hf(nh(), "backbone.layers.1.mixer.gate_proj.weight", 6).has_value());
}

TEST(NemotronHRegistry, ShapesPerLayerKind) {
    const ModelConfig c = nh_config();
    using Ne = std::optional<std::vector<int64_t>>;
    const std::pair<const char*, Ne> rows[] = {
        {"blk.0.ssm_in.weight", Ne{{64, 328}}},     // 2*128 + 2*2*16 + 8
        {"blk.0.ssm_conv1d.weight", Ne{{4, 192}}},  // 128 + 2*2*16
        {"blk.0.ssm_conv1d.bias", Ne{{192}}},
        {"blk.0.ssm_dt.bias", Ne{{8}}},
        {"blk.0.ssm_a", Ne{{1, 8}}},
        {"blk.0.ssm_d", Ne{{1, 8}}},
        {"blk.0.ssm_norm.weight", Ne{{64, 2}}},
        {"blk.0.ssm_out.weight", Ne{{128, 64}}},
        {"blk.1.ffn_up.weight", Ne{{64, 96}}},
        {"blk.1.ffn_down.weight", Ne{{96, 64}}},
        {"blk.3.attn_q.weight", Ne{{64, 128}}},
        {"blk.3.attn_k.weight", Ne{{64, 64}}},
        {"blk.3.attn_output.weight", Ne{{128, 64}}},
        // Another kind's tensor: the graph has none there.
        {"blk.1.ssm_in.weight", std::nullopt},
        {"blk.0.attn_q.weight", std::nullopt},
        {"blk.3.ffn_up.weight", std::nullopt},
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(nh(), c, name), ne) << name;
}

TEST(NemotronHRegistry, KvsInTheConvertersOrder) {
    const ModelConfig c = nh_config();
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    std::map<std::string, GgufValue> values;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("nemotron_h.")) continue;
        keys.push_back(kv.key.substr(11));
        values[kv.key.substr(11)] = kv.value;
    }
    // What NemotronHModel's chain wrote for this config.json, in its order (no rope_theta: no
    // rope.freq_base).
    const std::vector<std::string> want = {"block_count",
                                           "context_length",
                                           "embedding_length",
                                           "feed_forward_length",
                                           "attention.head_count",
                                           "attention.head_count_kv",
                                           "attention.layer_norm_rms_epsilon",
                                           "attention.layer_norm_epsilon",
                                           "vocab_size",
                                           "rope.dimension_count",
                                           "ssm.conv_kernel",
                                           "ssm.state_size",
                                           "ssm.group_count",
                                           "ssm.inner_size",
                                           "ssm.time_step_rank",
                                           "rope.scaling.finetuned",
                                           "attention.key_length",
                                           "attention.value_length"};
    EXPECT_EQ(keys, want);
    EXPECT_EQ(values["context_length"].as_u32(), 1u << 20);
    EXPECT_EQ(values["rope.dimension_count"].as_u32(), 16u);  // 64 // 4, not head_dim 32
    EXPECT_EQ(values["ssm.inner_size"].as_u32(), 128u);
    EXPECT_EQ(values["ssm.time_step_rank"].as_u32(), 8u);
    EXPECT_EQ(values["attention.key_length"].as_u32(), 32u);
    const auto ints = [](const GgufValue& v) {
        std::vector<int64_t> out;
        for (const auto& item : v.array) out.push_back(std::get<int64_t>(item));
        return out;
    };
    EXPECT_EQ(values["feed_forward_length"].elem_type, GgufType::INT32);
    EXPECT_EQ(ints(values["feed_forward_length"]), (std::vector<int64_t>{0, 96, 0, 0, 96, 0}));
    EXPECT_EQ(ints(values["attention.head_count_kv"]), (std::vector<int64_t>{0, 0, 0, 2, 0, 0}));
    // rope_theta given: rope.freq_base after head_count_kv.
    keys.clear();
    const ModelConfig with_theta = nh_config(R"(, "rope_theta": 10000)");
    input.config = &with_theta;
    for (const GgufKV& kv : build_model_metadata(input))
        if (kv.key.starts_with("nemotron_h.")) keys.push_back(kv.key.substr(11));
    ASSERT_GT(keys.size(), 6u);
    EXPECT_EQ(keys[6], "rope.freq_base");
}

// Which NVFP4 .scale tensors llama.cpp's graphs multiply in: attention, the MLP and the output
// (nemotron-h.cpp), ssm_in / ssm_out (mamba-base.cpp's build_lora_mm with ssm_in_s / ssm_out_s);
// for the MoE model the experts and the shared expert instead of the MLP.
TEST(NemotronHRegistry, Nvfp4ScaleRoles) {
    for (const char* role :
         {"attn_q", "attn_output", "ssm_in", "ssm_out", "ffn_up", "ffn_down", "output"})
        EXPECT_TRUE(graph_applies_nvfp4_scale(nh(), role)) << role;
    const Architecture& moe = *find_architecture("nemotron_h_moe");
    for (const char* role :
         {"ssm_in", "ffn_up_exps", "ffn_down_exps", "ffn_up_shexp", "ffn_down_shexp", "output"})
        EXPECT_TRUE(graph_applies_nvfp4_scale(moe, role)) << role;
    EXPECT_FALSE(graph_applies_nvfp4_scale(nh(), "ffn_up_exps"));
    // Other families' graphs do not apply ssm_in's (qwen35 has no such tensor).
    EXPECT_FALSE(graph_applies_nvfp4_scale(*find_architecture("qwen35"), "ssm_in"));
}

TEST(NemotronHRegistry, Refusals) {
    // A pattern of the wrong length, a letter of the MoE model, an 'mlp' in layers_block_type.
    EXPECT_THROW(nh_config(R"(, "hybrid_override_pattern": "M-M*-")"), Error);
    EXPECT_THROW(nh_config(R"(, "hybrid_override_pattern": "M-E*-M")"), Error);
    // A config.json with num_experts_per_tok is nemotron_h_moe's, whose layers are 'M', '*', 'E'.
    EXPECT_THROW(nh_config(R"(, "num_experts_per_tok": 2, "n_routed_experts": 4)"), Error);
}

// Nemotron 3 Nano's config.json keys at the same scale: pattern "MEM*EM", 4 routed experts of 32
// (2 used), a shared expert of 48.
ModelConfig nh_moe_config(const std::string& extra = "") {
    return parse_model_config(nlohmann::json::parse(
        R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
            "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 6,
            "hybrid_override_pattern": "MEM*EM", "num_attention_heads": 4, "head_dim": 32,
            "num_key_value_heads": 2, "mamba_num_heads": 8, "mamba_head_dim": 16, "n_groups": 2,
            "ssm_state_size": 16, "conv_kernel": 4, "layer_norm_epsilon": 1e-05,
            "norm_eps": 1e-05, "max_position_embeddings": 4096, "vocab_size": 100,
            "tie_word_embeddings": false, "n_routed_experts": 4, "n_shared_experts": 1,
            "moe_intermediate_size": 32, "moe_shared_expert_intermediate_size": 48,
            "num_experts_per_tok": 2, "routed_scaling_factor": 2.5, "n_group": 1,
            "topk_group": 1, "norm_topk_prob": true)" +
        extra + "}"));
}

TEST(NemotronHMoeRegistry, ClaimedNamesShapesAndKvs) {
    const Architecture* moe = find_architecture("nemotron_h_moe");
    ASSERT_NE(moe, nullptr);
    const ModelConfig c = nh_moe_config();
    EXPECT_EQ(c.num_experts, 4u);
    EXPECT_EQ(c.rms_norm_eps, 1e-05f);  // Nemotron 3 Nano's norm_eps, as TextModel reads it
    const std::tuple<const char*, const char*, std::vector<int64_t>> rows[] = {
        {"backbone.layers.1.mixer.gate.weight", "blk.1.ffn_gate_inp.weight", {64, 4}},
        {"backbone.layers.1.mixer.gate.e_score_correction_bias", "blk.1.exp_probs_b.bias", {4}},
        {"backbone.layers.1.mixer.experts.3.up_proj.weight",
         "blk.1.ffn_up_exps.weight",
         {64, 32, 4}},
        {"backbone.layers.1.mixer.experts.0.down_proj.weight",
         "blk.1.ffn_down_exps.weight",
         {32, 64, 4}},
        {"backbone.layers.1.mixer.shared_experts.up_proj.weight",
         "blk.1.ffn_up_shexp.weight",
         {64, 48}},
        {"backbone.layers.1.mixer.shared_experts.down_proj.weight",
         "blk.1.ffn_down_shexp.weight",
         {48, 64}},
        {"backbone.layers.2.mixer.A_log", "blk.2.ssm_a", {1, 8}},
        // mlx-lm's sanitize: up_proj stacked as switch_mlp.fc1, down_proj as fc2.
        {"backbone.layers.4.mixer.switch_mlp.fc1.weight", "blk.4.ffn_up_exps.weight", {64, 32, 4}},
        {"backbone.layers.4.mixer.switch_mlp.fc2.weight",
         "blk.4.ffn_down_exps.weight",
         {32, 64, 4}},
    };
    for (const auto& [hf, gguf, ne] : rows) {
        const auto ref = resolve_hf(*moe, hf, 6);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(expected_ne(*moe, c, gguf), ne) << gguf;
    }
    EXPECT_FALSE(resolve_hf(*moe, "backbone.layers.1.mixer.experts.0.gate_proj.weight", 6));
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (kv.key == "nemotron_h_moe.feed_forward_length") {
            std::vector<int64_t> ffn;
            for (const auto& item : kv.value.array) ffn.push_back(std::get<int64_t>(item));
            EXPECT_EQ(ffn, (std::vector<int64_t>{0, 32, 0, 0, 32, 0}));  // moe_intermediate_size
        }
        if (kv.key.starts_with("nemotron_h_moe.")) keys.push_back(kv.key.substr(15));
    }
    // What NemotronHModel's chain wrote for this config.json, in its order.
    const std::vector<std::string> want = {"block_count",
                                           "context_length",
                                           "embedding_length",
                                           "feed_forward_length",
                                           "attention.head_count",
                                           "attention.head_count_kv",
                                           "attention.layer_norm_rms_epsilon",
                                           "attention.layer_norm_epsilon",
                                           "expert_count",
                                           "expert_used_count",
                                           "expert_group_count",
                                           "expert_group_used_count",
                                           "vocab_size",
                                           "rope.dimension_count",
                                           "ssm.conv_kernel",
                                           "ssm.state_size",
                                           "ssm.group_count",
                                           "ssm.inner_size",
                                           "ssm.time_step_rank",
                                           "rope.scaling.finetuned",
                                           "attention.key_length",
                                           "attention.value_length",
                                           "expert_feed_forward_length",
                                           "expert_shared_feed_forward_length",
                                           "expert_shared_count",
                                           "expert_weights_norm",
                                           "expert_weights_scale"};
    EXPECT_EQ(keys, want);
}

// Nemotron 3 Super's LatentMoE (config.json moe_latent_size): fc1_latent_proj / fc2_latent_proj
// (gguf-py's ffn_latent_down / ffn_latent_up) on the 'E' layers, with llama.cpp's nemotron_h
// loader's ne {n_embd, latent} / {latent, n_embd}, the experts {latent, n_ff_exp, E} /
// {n_ff_exp, latent, E}, and NemotronHModel's moe_latent_size after expert_weights_scale.
TEST(NemotronHMoeRegistry, LatentMoe) {
    const Architecture* moe = find_architecture("nemotron_h_moe");
    ASSERT_NE(moe, nullptr);
    const ModelConfig c = nh_moe_config(R"(, "moe_latent_size": 16)");
    ASSERT_TRUE(c.moe_latent_size.has_value());
    const std::tuple<const char*, const char*, std::vector<int64_t>> rows[] = {
        {"backbone.layers.4.mixer.fc1_latent_proj.weight",
         "blk.4.ffn_latent_down.weight",
         {64, 16}},
        {"backbone.layers.4.mixer.fc2_latent_proj.weight", "blk.4.ffn_latent_up.weight", {16, 64}},
        {"backbone.layers.4.mixer.experts.1.up_proj.weight",
         "blk.4.ffn_up_exps.weight",
         {16, 32, 4}},
        {"backbone.layers.4.mixer.experts.1.down_proj.weight",
         "blk.4.ffn_down_exps.weight",
         {32, 16, 4}},
        {"backbone.layers.4.mixer.shared_experts.up_proj.weight",  // the shared expert: hidden
         "blk.4.ffn_up_shexp.weight",
         {64, 48}},
    };
    for (const auto& [hf, gguf, ne] : rows) {
        const auto ref = resolve_hf(*moe, hf, 6);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(expected_ne(*moe, c, gguf), ne) << gguf;
    }
    // Required on every 'E' layer with a latent size, on none without.
    const auto required = required_tensors(*moe, c);
    EXPECT_EQ(std::count(required.begin(), required.end(), "blk.1.ffn_latent_up.weight"), 1);
    const auto plain = required_tensors(*moe, nh_moe_config());
    EXPECT_EQ(std::count(plain.begin(), plain.end(), "blk.1.ffn_latent_up.weight"), 0);
    ModelMetadataInput input;
    input.config = &c;
    std::string last;
    for (const GgufKV& kv : build_model_metadata(input))
        if (kv.key.starts_with("nemotron_h_moe.")) {
            last = kv.key;
            if (kv.key == "nemotron_h_moe.moe_latent_size") {
                EXPECT_EQ(kv.value.type, GgufType::UINT32);
            }
        }
    EXPECT_EQ(last, "nemotron_h_moe.moe_latent_size");
    EXPECT_THROW(nh_moe_config(R"(, "moe_latent_size": 0)"), Error);
    EXPECT_THROW(nh_moe_config(R"(, "moe_latent_size": "32")"), Error);
    EXPECT_FALSE(nh_moe_config(R"(, "moe_latent_size": null)").moe_latent_size.has_value());
}

// NemotronHModel's MTP fold (num_nextn_predict_layers 1): mtp.layers.0 (attention, with the NextN
// input fusion) and mtp.layers.1 (MoE, with the head's final norm) become one block at
// num_hidden_layers, _MTP_SPECIAL_RENAMES naming five of them, registered as both an attention
// and a MoE layer in the per-layer arrays; block_count counts it and nextn_predict_layers comes
// last. The v0.4.0 loader creates no latent projections on it (trunk_only).
TEST(NemotronHMoeRegistry, MtpFold) {
    const Architecture* moe = find_architecture("nemotron_h_moe");
    ASSERT_NE(moe, nullptr);
    const ModelConfig c =
        nh_moe_config(R"(, "num_nextn_predict_layers": 1, "moe_latent_size": 16)");
    EXPECT_EQ(c.nextn_layers, 1u);
    const std::tuple<const char*, const char*, std::vector<int64_t>> rows[] = {
        {"mtp.layers.0.enorm.weight", "blk.6.nextn.enorm.weight", {64}},
        {"mtp.layers.0.hnorm.weight", "blk.6.nextn.hnorm.weight", {64}},
        {"mtp.layers.0.eh_proj.weight", "blk.6.nextn.eh_proj.weight", {128, 64}},
        {"mtp.layers.0.norm.weight", "blk.6.attn_norm.weight", {64}},
        {"mtp.layers.0.mixer.q_proj.weight", "blk.6.attn_q.weight", {64, 128}},
        {"mtp.layers.0.mixer.o_proj.weight", "blk.6.attn_output.weight", {128, 64}},
        {"mtp.layers.1.norm.weight", "blk.6.post_attention_norm.weight", {64}},
        {"mtp.layers.1.mixer.gate.weight", "blk.6.ffn_gate_inp.weight", {64, 4}},
        {"mtp.layers.1.mixer.experts.2.up_proj.weight", "blk.6.ffn_up_exps.weight", {16, 32, 4}},
        {"mtp.layers.1.mixer.fc1_latent_proj.weight", "blk.6.ffn_latent_down.weight", {64, 16}},
        {"mtp.layers.1.mixer.shared_experts.down_proj.weight",
         "blk.6.ffn_down_shexp.weight",
         {48, 64}},
        {"mtp.layers.1.final_layernorm.weight", "blk.6.nextn.shared_head_norm.weight", {64}},
    };
    for (const auto& [hf, gguf, ne] : rows) {
        const auto ref = resolve_hf(*moe, hf, 6);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(expected_ne(*moe, c, gguf), ne) << gguf;
        // Back from GGUF: the checkpoint's own spelling (the experts as their pattern).
        const auto back = resolve_gguf(*moe, gguf, 6);
        ASSERT_TRUE(back.has_value()) << gguf;
        if (back->spec->hf.find("{e}") == std::string_view::npos) {
            EXPECT_EQ(back->hf_name, hf);
        }
    }
    EXPECT_EQ(resolve_gguf(*moe, "blk.6.ffn_up_exps.weight", 6)->hf_name,
              "mtp.layers.1.mixer.experts.{e}.up_proj.weight");
    // Mamba2 rows are no MTP rows.
    EXPECT_EQ(expected_ne(*moe, c, "blk.6.ssm_in.weight"), std::nullopt);
    const auto mtp_required = required_mtp_tensors(*moe, c);
    EXPECT_EQ(std::count(mtp_required.begin(), mtp_required.end(), "blk.6.nextn.eh_proj.weight"),
              1);
    EXPECT_EQ(std::count(mtp_required.begin(), mtp_required.end(), "blk.6.ffn_latent_down.weight"),
              0);
    ModelMetadataInput input;
    input.config = &c;
    std::string last;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("nemotron_h_moe.")) continue;
        last = kv.key;
        std::vector<int64_t> values;
        for (const auto& item : kv.value.array) values.push_back(std::get<int64_t>(item));
        if (kv.key == "nemotron_h_moe.feed_forward_length") {
            EXPECT_EQ(values, (std::vector<int64_t>{0, 32, 0, 0, 32, 0, 32}));
        }
        if (kv.key == "nemotron_h_moe.attention.head_count_kv") {
            EXPECT_EQ(values, (std::vector<int64_t>{0, 0, 0, 2, 0, 0, 2}));
        }
        if (kv.key == "nemotron_h_moe.block_count") {
            EXPECT_EQ(std::get<uint64_t>(kv.value.scalar), 7u);
        }
    }
    EXPECT_EQ(last, "nemotron_h_moe.nextn_predict_layers");
}

TEST(NemotronHMoeRegistry, Refusals) {
    // More than the one MTP block NemotronHModel folds: a BLOCKER naming the field.
    EXPECT_THROW(nh_moe_config(R"(, "num_nextn_predict_layers": 2)"), Error);
    // No RMS epsilon under either name: the converter writes none, the loader needs one.
    EXPECT_THROW((void)nh_config(R"(, "rms_norm_eps": null)"), Error);
    // A '-' layer in a MoE pattern.
    EXPECT_THROW(nh_moe_config(R"(, "hybrid_override_pattern": "M-M*EM")"), Error);
    // A field NemotronHModel reads without a default.
    ModelConfig c = nh_moe_config();
    c.expert_group_count.reset();
    bool named = false;
    for (const std::string& p : config_problems(*find_architecture("nemotron_h_moe"), c))
        named |= p.find("n_group") != std::string::npos;
    EXPECT_TRUE(named);
}

}  // namespace
}  // namespace rebox::arch
