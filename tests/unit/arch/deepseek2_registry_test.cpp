// deepseek2 in the registry against hand-written tables from llama.cpp's deepseek2 loader
// (src/models/deepseek2.cpp: q_a / q_a_norm / q_b with a q_lora_rank, else q; kv_a_mqa, kv_a_norm,
// k_b [nope, kv_lora, heads], v_b [kv_lora, v, heads], wo [heads * v, hidden]; dense layers below
// leading_dense_block_count, the rest MoE with exp_probs_b and shared experts) and converter
// (conversion/deepseek.py DeepseekV2Model, base.py TextModel; gguf-py's tensor_mapping for the
// names): names both ways (kv_b_proj into two), ne from a hand-written config.json, the KVs in the
// converter's order with values worked by hand, the refusals, and the kv_b_proj split worked by
// hand on a tiny F32 kv_b.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "convert/chunk_encoder.hpp"
#include "model/model_config.hpp"
#include "plan/mla_split.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

// DeepSeek-V3's config.json keys scaled down: hidden 64, 4 heads, q_lora 48, kv_lora 32, nope 16,
// rope 8, v 24, 3 layers with the first dense (intermediate 96), 8 routed experts of 40 (2 per
// token), 2 shared experts, YaRN with mscale_all_dim 1.0, one MTP layer (dropped).
ModelConfig ds_config(const std::string& extra = "", const std::string& drop = "") {
    nlohmann::json root = nlohmann::json::parse(
        R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
            "first_k_dense_replace": 1, "hidden_size": 64, "intermediate_size": 96,
            "kv_lora_rank": 32, "max_position_embeddings": 4096, "moe_intermediate_size": 40,
            "n_group": 4, "n_routed_experts": 8, "n_shared_experts": 2, "norm_topk_prob": true,
            "num_attention_heads": 4, "num_experts_per_tok": 2, "num_hidden_layers": 3,
            "num_key_value_heads": 4, "num_nextn_predict_layers": 1, "q_lora_rank": 48,
            "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "rms_norm_eps": 1e-06,
            "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
                             "mscale_all_dim": 1.0, "original_max_position_embeddings": 256,
                             "type": "yarn"},
            "rope_theta": 10000, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid",
            "tie_word_embeddings": false, "topk_group": 2, "v_head_dim": 24,
            "vocab_size": 100})");
    if (!extra.empty()) root.update(nlohmann::json::parse(extra));
    if (!drop.empty()) root.erase(drop);
    return parse_model_config(root);
}

const Architecture& ds() { return *find_architecture("deepseek_v3"); }

// The deepseek2.* KVs build_model_metadata writes for `input`: their keys in order (without the
// prefix) and their values.
void ds_kvs(const ModelMetadataInput& input, std::vector<std::string>* keys,
            std::map<std::string, GgufValue>* kv) {
    keys->clear();
    kv->clear();
    for (const GgufKV& entry : build_model_metadata(input)) {
        if (!entry.key.starts_with("deepseek2.")) continue;
        keys->push_back(entry.key.substr(10));
        (*kv)[entry.key.substr(10)] = entry.value;
    }
}

TEST(Deepseek2Registry, NamesBothWays) {
    ASSERT_NE(find_architecture("deepseek_v3"), nullptr);
    EXPECT_EQ(ds().gguf_arch, "deepseek2");
    EXPECT_EQ(find_architecture("kimi_k2"), &ds());      // Kimi-K2's config.json
    EXPECT_EQ(find_architecture("deepseek_v2"), &ds());  // the same converter class
    EXPECT_EQ(find_architecture("deepseek2"), &ds());
    const std::tuple<const char*, const char*> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
        {"model.layers.0.self_attn.q_a_proj.weight", "blk.0.attn_q_a.weight"},
        {"model.layers.0.self_attn.q_a_layernorm.weight", "blk.0.attn_q_a_norm.weight"},
        {"model.layers.0.self_attn.q_b_proj.weight", "blk.0.attn_q_b.weight"},
        {"model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
        {"model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "blk.0.attn_kv_a_mqa.weight"},
        {"model.layers.0.self_attn.kv_a_layernorm.weight", "blk.0.attn_kv_a_norm.weight"},
        {"model.layers.0.self_attn.kv_b_proj.weight", "blk.0.attn_k_b.weight"},
        {"model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight"},
        {"model.layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight"},
        {"model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight"},
        {"model.layers.1.mlp.gate.weight", "blk.1.ffn_gate_inp.weight"},
        {"model.layers.1.mlp.gate.e_score_correction_bias", "blk.1.exp_probs_b.bias"},
        {"model.layers.1.mlp.shared_experts.down_proj.weight", "blk.1.ffn_down_shexp.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(ds(), hf, 3);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        const auto back = resolve_gguf(ds(), gguf, 3);
        ASSERT_TRUE(back.has_value()) << gguf;
        EXPECT_EQ(back->hf_name, strip_model_prefix(hf)) << gguf;
    }
    // kv_b_proj is split: attn_k_b first, then attn_v_b from the same source.
    const auto kv_b = resolve_hf(ds(), "model.layers.2.self_attn.kv_b_proj.weight", 3);
    ASSERT_TRUE(kv_b.has_value());
    const std::vector<TensorRef> parts = split_parts(ds(), *kv_b);
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_EQ(parts[0].gguf_name, "blk.2.attn_v_b.weight");
    EXPECT_EQ(resolve_gguf(ds(), "blk.2.attn_v_b.weight")->hf_name,
              "layers.2.self_attn.kv_b_proj.weight");
    EXPECT_TRUE(split_parts(ds(), *resolve_hf(ds(), "model.layers.2.mlp.gate.weight")).empty());
    // mlx-lm's pre-split parts are read as they are (no split of their own).
    const auto embed_q = resolve_hf(ds(), "model.layers.1.self_attn.embed_q.weight", 3);
    ASSERT_TRUE(embed_q.has_value());
    EXPECT_EQ(embed_q->gguf_name, "blk.1.attn_k_b.weight");
    EXPECT_EQ(embed_q->spec->rows, RowTransform::none);
    EXPECT_TRUE(split_parts(ds(), *embed_q).empty());
    EXPECT_EQ(resolve_hf(ds(), "model.layers.1.self_attn.unembed_out.weight", 3)->gguf_name,
              "blk.1.attn_v_b.weight");
    EXPECT_EQ(resolve_hf(ds(), "model.layers.1.mlp.experts.7.down_proj.weight", 3)->gguf_name,
              "blk.1.ffn_down_exps.weight");
    // The plan drops the MTP layer (layers.3) whole; it has no layer kind, so no MTP head.
    EXPECT_TRUE(ds().drops_mtp_layers);
    EXPECT_EQ(expected_ne(ds(), ds_config(), "blk.3.nextn.eh_proj.weight"), std::nullopt);
    EXPECT_EQ(hf_layer_index(ds(), "model.layers.3.eh_proj.weight"), 3u);
    EXPECT_FALSE(hf_layer_index(ds(), "model.norm.weight").has_value());
    // The legacy un-split attn_kv_b is not written.
    EXPECT_FALSE(resolve_gguf(ds(), "blk.0.attn_kv_b.weight").has_value());
}

TEST(Deepseek2Registry, ShapesPerLayer) {
    const ModelConfig c = ds_config();
    EXPECT_EQ(c.num_experts, 8u);
    ASSERT_TRUE(c.mla.has_value());
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, std::optional<Ne>> rows[] = {
        {"blk.0.attn_q_a.weight", Ne{64, 48}},       {"blk.0.attn_q_a_norm.weight", Ne{48}},
        {"blk.0.attn_q_b.weight", Ne{48, 4 * 24}},  // heads * (nope 16 + rope 8)
        {"blk.0.attn_q.weight", std::nullopt},      // q_lora_rank set
        {"blk.0.attn_kv_a_mqa.weight", Ne{64, 40}},  {"blk.0.attn_kv_a_norm.weight", Ne{32}},
        {"blk.0.attn_k_b.weight", Ne{16, 32, 4}},    {"blk.0.attn_v_b.weight", Ne{32, 24, 4}},
        {"blk.0.attn_output.weight", Ne{96, 64}},  // heads * v 24
        {"blk.0.ffn_gate.weight", Ne{64, 96}},       {"blk.0.ffn_gate_inp.weight", std::nullopt},
        {"blk.1.ffn_gate.weight", std::nullopt},     {"blk.1.ffn_gate_inp.weight", Ne{64, 8}},
        {"blk.1.exp_probs_b.bias", Ne{8}},           {"blk.2.ffn_down_exps.weight", Ne{40, 64, 8}},
        {"blk.2.ffn_gate_shexp.weight", Ne{64, 80}},  // 40 * 2 shared
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(ds(), c, name), ne) << name;
    const ModelConfig plain = ds_config(R"({"q_lora_rank": null})");
    EXPECT_EQ(expected_ne(ds(), plain, "blk.1.attn_q.weight"), (Ne{64, 96}));
    EXPECT_EQ(expected_ne(ds(), plain, "blk.1.attn_q_a.weight"), std::nullopt);
    const std::vector<std::string> required = required_tensors(ds(), c);
    const auto has = [&](const char* name) {
        return std::find(required.begin(), required.end(), name) != required.end();
    };
    EXPECT_TRUE(has("blk.1.attn_k_b.weight"));
    EXPECT_TRUE(has("blk.1.attn_v_b.weight"));
    EXPECT_FALSE(has("blk.1.exp_probs_b.bias"));  // DeepSeek-V2 has none
    EXPECT_FALSE(has("output.weight"));           // the loader falls back to token_embd
    // token_embd, output_norm; per layer attn_norm, q_a, q_a_norm, q_b, kv_a_mqa, kv_a_norm, k_b,
    // v_b, output, ffn_norm (10); dense: 3; MoE: router, 3 experts, 3 shared.
    EXPECT_EQ(required.size(), 2u + 3 * 10 + 3 + 2 * 7);
}

TEST(Deepseek2Registry, KvsInTheConvertersOrder) {
    const ModelConfig c = ds_config();
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    std::map<std::string, GgufValue> kv;
    ds_kvs(input, &keys, &kv);
    // TextModel's, then DeepseekV2Model's (the YaRN keys after them: the rope scaling plan's).
    const std::vector<std::string> want = {"block_count",
                                           "context_length",
                                           "embedding_length",
                                           "feed_forward_length",
                                           "attention.head_count",
                                           "attention.head_count_kv",
                                           "rope.freq_base",
                                           "attention.layer_norm_rms_epsilon",
                                           "expert_count",
                                           "expert_used_count",
                                           "expert_group_count",
                                           "expert_group_used_count",
                                           "expert_gating_func",
                                           "leading_dense_block_count",
                                           "vocab_size",
                                           "attention.q_lora_rank",
                                           "attention.kv_lora_rank",
                                           "attention.key_length",
                                           "attention.value_length",
                                           "attention.key_length_mla",
                                           "attention.value_length_mla",
                                           "expert_feed_forward_length",
                                           "expert_shared_count",
                                           "expert_weights_scale",
                                           "expert_weights_norm",
                                           "rope.dimension_count",
                                           "rope.scaling.yarn_log_multiplier",
                                           "rope.scaling.type",
                                           "rope.scaling.factor",
                                           "rope.scaling.original_context_length",
                                           "rope.scaling.yarn_beta_fast",
                                           "rope.scaling.yarn_beta_slow"};
    EXPECT_EQ(keys, want);
    EXPECT_EQ(kv["block_count"].as_u32(), 3u);  // the MTP layer is not counted
    EXPECT_EQ(kv["attention.head_count_kv"].as_u32(), 1u);
    EXPECT_EQ(kv["expert_gating_func"].as_u32(), 2u);       // sigmoid
    EXPECT_EQ(kv["attention.key_length"].as_u32(), 40u);    // kv_lora 32 + rope 8
    EXPECT_EQ(kv["attention.value_length"].as_u32(), 32u);  // kv_lora
    EXPECT_EQ(kv["attention.key_length_mla"].as_u32(), 24u);
    EXPECT_EQ(kv["attention.value_length_mla"].as_u32(), 24u);
    EXPECT_EQ(kv["attention.q_lora_rank"].as_u32(), 48u);
    EXPECT_EQ(kv["leading_dense_block_count"].as_u32(), 1u);
    EXPECT_EQ(kv["expert_shared_count"].as_u32(), 2u);
    EXPECT_EQ(kv["rope.dimension_count"].as_u32(), 8u);
    // 0.1 * 1.0 in binary64, stored as FLOAT32.
    EXPECT_EQ(std::get<double>(kv["rope.scaling.yarn_log_multiplier"].scalar), double(float(0.1)));
    EXPECT_EQ(kv["vocab_size"].as_u32(), 100u);

    // softmax (DeepSeek-V2) is 1; no q_lora_rank, no shared count (0), norm_topk_prob false
    // (absent), a head_dim in config.json (key/value_length at TextModel's place).
    const ModelConfig v2 = ds_config(R"({"scoring_func": "softmax", "q_lora_rank": null,
        "norm_topk_prob": false, "head_dim": 8})",
                                     "n_shared_experts");
    input.config = &v2;
    ds_kvs(input, &keys, &kv);
    EXPECT_EQ(kv["expert_gating_func"].as_u32(), 1u);
    EXPECT_EQ(kv["expert_shared_count"].as_u32(), 0u);
    EXPECT_EQ(kv.count("attention.q_lora_rank"), 0u);
    EXPECT_EQ(kv.count("expert_weights_norm"), 0u);
    ASSERT_GT(keys.size(), 14u);
    EXPECT_EQ(keys[13], "attention.key_length");
    EXPECT_EQ(keys[14], "attention.value_length");
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "attention.key_length"), 1);
}

TEST(Deepseek2Registry, Refusals) {
    const auto problems = [](const std::string& extra, const std::string& drop = "") {
        return config_problems(ds(), ds_config(extra, drop));
    };
    EXPECT_TRUE(problems("").empty());
    EXPECT_EQ(problems(R"({"num_key_value_heads": 1})").size(), 1u);
    EXPECT_EQ(problems(R"({"first_k_dense_replace": 4})").size(), 1u);
    EXPECT_THROW(ds_config("", "n_routed_experts"), Error);
    EXPECT_THROW(ds_config("", "qk_nope_head_dim"), Error);
    EXPECT_THROW(ds_config(R"({"v_head_dim": 0})"), Error);
    EXPECT_THROW(ds_config(R"({"scoring_func": "relu"})"), Error);
    EXPECT_THROW(ds_config(R"({"norm_topk_prob": 1})"), Error);
}

// kv_b_proj of 2 heads, nope 2, v 1, kv_lora 3: source rows h*3 + 0..1 are head h's nope rows,
// row h*3 + 2 its v row; source value (row, column) = 10 * row + column.
TEST(Deepseek2Registry, KvBSplitWorkedByHand) {
    ModelConfig c;
    c.num_attention_heads = 2;
    c.mla = ModelConfig::Mla{std::nullopt, 3, 2, 1, 1};
    std::vector<float> values;
    for (int row = 0; row < 6; ++row)
        for (int column = 0; column < 3; ++column) values.push_back(float(10 * row + column));
    SourceTensor source;
    source.name = "model.layers.0.self_attn.kv_b_proj.weight";
    source.shape = {6, 3};
    source.float_dtype = FloatDtype::F32;
    source.float_data = std::span(reinterpret_cast<const uint8_t*>(values.data()), 18 * 4);
    const auto part = [&](RowTransform transform) {
        TensorPlan plan;
        plan.type = GgmlType::F32;
        plan.encoding = Encoding::copy_f32;
        plan.ne = {3, 6};
        std::vector<Blocker> blockers;
        EXPECT_TRUE(
            plan_detail::attach_mla_split(transform, c, source, PlanOptions{}, &plan, &blockers));
        EXPECT_TRUE(blockers.empty());
        std::vector<float> out(plan.nbytes / 4);
        const auto bytes = std::span(reinterpret_cast<uint8_t*>(out.data()), plan.nbytes);
        convert_detail::encode_chunk(source, plan, {0, 0, out.size(), 0, plan.nbytes}, bytes);
        return std::pair{plan.ne, out};
    };
    // attn_k_b: ne {nope 2, kv_lora 3, heads 2}; value (h*3 + c)*2 + j = source (h*3 + j, c).
    const auto [k_ne, k_b] = part(RowTransform::mla_k_b);
    EXPECT_EQ(k_ne, (std::vector<int64_t>{2, 3, 2}));
    EXPECT_EQ(k_b, (std::vector<float>{0, 10, 1, 11, 2, 12, 30, 40, 31, 41, 32, 42}));
    // attn_v_b: ne {kv_lora 3, v 1, heads 2}; head h's row = source row h*3 + 2.
    const auto [v_ne, v_b] = part(RowTransform::mla_v_b);
    EXPECT_EQ(v_ne, (std::vector<int64_t>{3, 1, 2}));
    EXPECT_EQ(v_b, (std::vector<float>{20, 21, 22, 50, 51, 52}));
    // A kv_b of another height is refused, naming the tensor.
    source.shape = {5, 3};
    TensorPlan plan;
    plan.type = GgmlType::F32;
    std::vector<Blocker> blockers;
    EXPECT_FALSE(plan_detail::attach_mla_split(RowTransform::mla_v_b, c, source, PlanOptions{},
                                               &plan, &blockers));
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_EQ(blockers[0].tensor, source.name);
}

// A quantized kv_b_proj: attn_v_b moves whole rows, attn_k_b is a BLOCKER whose fix is
// --allow-lossless-fallback, which makes it exact F32.
TEST(Deepseek2Registry, QuantizedKbNeedsTheFallback) {
    ModelConfig c;
    c.num_attention_heads = 2;
    c.mla = ModelConfig::Mla{std::nullopt, 32, 2, 1, 1};
    SourceTensor source;
    source.name = "model.layers.1.self_attn.kv_b_proj.weight";
    source.shape = {6, 32};
    TensorPlan plan;
    plan.type = GgmlType::Q4_1;
    plan.encoding = Encoding::q4_1_repack;
    std::vector<Blocker> blockers;
    EXPECT_TRUE(plan_detail::attach_mla_split(RowTransform::mla_v_b, c, source, PlanOptions{},
                                              &plan, &blockers));
    EXPECT_EQ(plan.row_source, (std::vector<uint32_t>{2, 5}));
    TensorPlan k_b;
    k_b.type = GgmlType::Q4_1;
    k_b.encoding = Encoding::q4_1_repack;
    EXPECT_FALSE(plan_detail::attach_mla_split(RowTransform::mla_k_b, c, source, PlanOptions{},
                                               &k_b, &blockers));
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_EQ(blockers[0].tensor, source.name);
    EXPECT_NE(blockers[0].fix.find("--allow-lossless-fallback"), std::string::npos);
    PlanOptions fallback;
    fallback.allow_lossless_fallback = true;
    EXPECT_TRUE(
        plan_detail::attach_mla_split(RowTransform::mla_k_b, c, source, fallback, &k_b, &blockers));
    EXPECT_EQ(k_b.type, GgmlType::F32);
    EXPECT_EQ(k_b.encoding, Encoding::dequant_f32);
    EXPECT_EQ(k_b.ne, (std::vector<int64_t>{2, 32, 2}));
}

// GLM-4.7-Flash (zai-org/GLM-4.7-Flash's config.json keys, scaled down as ds_config; no
// scoring_func, no rope scaling): Glm4MoeLiteModel (conversion/glm.py) keeps the MTP layer
// (layers.3: a MoE layer plus eh_proj / enorm / hnorm / embed_tokens / shared_head, written as
// blk.3.nextn.*), counts it in block_count and writes nextn_predict_layers after DeepseekV2Model's
// KVs; llama.cpp's deepseek2 loader probes blk.3.nextn.eh_proj and then requires the head.
TEST(Deepseek2Registry, Glm47FlashKeepsTheMtpLayer) {
    const Architecture* lite = find_architecture("glm4_moe_lite");
    ASSERT_NE(lite, nullptr);
    EXPECT_NE(lite, &ds());
    EXPECT_EQ(lite->gguf_arch, "deepseek2");
    EXPECT_FALSE(lite->drops_mtp_layers);
    EXPECT_EQ(lite->mtp_probe, "nextn.eh_proj");
    EXPECT_NE(lite->finish_vocab, nullptr);  // _set_vocab_glm
    nlohmann::json root = nlohmann::json::parse(
        R"({"architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite",
            "first_k_dense_replace": 1, "hidden_size": 64, "intermediate_size": 96,
            "kv_lora_rank": 32, "max_position_embeddings": 4096, "moe_intermediate_size": 40,
            "n_group": 1, "n_routed_experts": 8, "n_shared_experts": 1, "norm_topk_prob": true,
            "num_attention_heads": 4, "num_experts_per_tok": 2, "num_hidden_layers": 3,
            "num_key_value_heads": 4, "num_nextn_predict_layers": 1, "partial_rotary_factor": 1.0,
            "q_lora_rank": 48, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
            "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 1000000,
            "routed_scaling_factor": 1.8, "tie_word_embeddings": false, "topk_group": 1,
            "topk_method": "noaux_tc", "v_head_dim": 24, "vocab_size": 100})");
    const ModelConfig c = parse_model_config(root);
    EXPECT_EQ(c.nextn_layers, 1u);
    const std::tuple<const char*, const char*> rows[] = {
        {"model.layers.3.eh_proj.weight", "blk.3.nextn.eh_proj.weight"},
        {"model.layers.3.enorm.weight", "blk.3.nextn.enorm.weight"},
        {"model.layers.3.hnorm.weight", "blk.3.nextn.hnorm.weight"},
        {"model.layers.3.embed_tokens.weight", "blk.3.nextn.embed_tokens.weight"},
        {"model.layers.3.shared_head.head.weight", "blk.3.nextn.shared_head_head.weight"},
        {"model.layers.3.shared_head.norm.weight", "blk.3.nextn.shared_head_norm.weight"},
        {"model.layers.3.self_attn.kv_b_proj.weight", "blk.3.attn_k_b.weight"},
        {"model.layers.3.mlp.gate.weight", "blk.3.ffn_gate_inp.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(*lite, hf, 3);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
    }
    using Ne = std::vector<int64_t>;
    EXPECT_EQ(expected_ne(*lite, c, "blk.3.nextn.eh_proj.weight"), (Ne{128, 64}));
    EXPECT_EQ(expected_ne(*lite, c, "blk.3.nextn.embed_tokens.weight"), (Ne{64, 100}));
    EXPECT_EQ(expected_ne(*lite, c, "blk.3.ffn_down_exps.weight"), (Ne{40, 64, 8}));
    EXPECT_EQ(expected_ne(*lite, c, "blk.2.nextn.eh_proj.weight"), std::nullopt);
    EXPECT_EQ(expected_ne(*lite, c, "blk.3.ffn_gate.weight"), std::nullopt);  // MoE, not dense
    // A trunk-only file loads: the MTP layer is required only once its probe is there.
    const std::vector<std::string> required = required_tensors(*lite, c);
    EXPECT_EQ(std::count(required.begin(), required.end(), "blk.3.nextn.eh_proj.weight"), 0);
    const std::vector<std::string> mtp = required_mtp_tensors(*lite, c);
    for (const char* name : {"blk.3.nextn.eh_proj.weight", "blk.3.nextn.enorm.weight",
                             "blk.3.nextn.hnorm.weight", "blk.3.attn_k_b.weight"})
        EXPECT_EQ(std::count(mtp.begin(), mtp.end(), name), 1) << name;
    EXPECT_EQ(std::count(mtp.begin(), mtp.end(), "blk.3.nextn.shared_head_head.weight"), 0);

    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    std::map<std::string, GgufValue> kv;
    ds_kvs(input, &keys, &kv);
    ASSERT_FALSE(keys.empty());
    EXPECT_EQ(keys.back(), "nextn_predict_layers");
    EXPECT_EQ(kv["nextn_predict_layers"].as_u32(), 1u);
    EXPECT_EQ(kv["block_count"].as_u32(), 4u);      // 3 + the MTP layer
    EXPECT_EQ(kv.count("expert_gating_func"), 0u);  // no score function in config.json
    EXPECT_EQ(kv.count("rope.scaling.yarn_log_multiplier"), 0u);
    EXPECT_EQ(kv["rope.dimension_count"].as_u32(), 8u);

    // num_nextn_predict_layers 0: nothing kept, no nextn_predict_layers (skip_mtp).
    root["num_nextn_predict_layers"] = 0u;
    const ModelConfig none = parse_model_config(root);
    input.config = &none;
    for (const GgufKV& entry : build_model_metadata(input)) {
        EXPECT_NE(entry.key, "deepseek2.nextn_predict_layers");
        if (entry.key == "deepseek2.block_count") {
            EXPECT_EQ(entry.value.as_u32(), 3u);
        }
    }
    // DeepSeek-V3's own num_nextn_predict_layers is not read: its MTP layer is dropped.
    EXPECT_EQ(ds_config().nextn_layers, 0u);
}

}  // namespace
}  // namespace rebox::arch
