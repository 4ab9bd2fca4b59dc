// olmo2 in the registry against hand-written tables from llama.cpp's olmo2 loader
// (src/models/olmo2.cpp) and converter (conversion/olmo.py Olmo2Model, registered for
// Olmo2ForCausalLM and Olmo3ForCausalLM; gguf-py's OLMO2 tensor list): names both ways (no
// attn_norm / ffn_norm; post_attention_norm, post_ffw_norm), q/k norms as wide as their
// projections, output never tied, the KVs in the converter's order with key/value length only
// from a head_dim in config.json, Olmo 3's sliding window with its per-layer BOOL pattern (from
// layer_types, else every 4th layer full), and the refusals (layer_types of the wrong length,
// head_dim apart from hidden/heads).
#include <gtest/gtest.h>

#include <map>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"

namespace rebox::arch {
namespace {

// OLMo-2-1124-7B's keys scaled down: hidden 64, 4 heads / 2 kv heads (head_dim 16), ffn 96,
// vocab 100, 4 layers; `extra` adds Olmo 3's keys.
ModelConfig olmo_config(const std::string& extra = "") {
    return parse_model_config(nlohmann::json::parse(
        R"({"architectures": ["Olmo2ForCausalLM"], "hidden_size": 64, "intermediate_size": 96,
            "max_position_embeddings": 4096, "model_type": "olmo2", "num_attention_heads": 4,
            "num_hidden_layers": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
            "rope_theta": 500000.0, "tie_word_embeddings": false, "vocab_size": 100)" +
        extra + "}"));
}

// The olmo2.* KVs build_model_metadata writes, in order, with BOOL arrays as "1"/"0" strings.
std::vector<std::pair<std::string, std::string>> olmo_kvs(const ModelConfig& c) {
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::pair<std::string, std::string>> out;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("olmo2.")) continue;
        std::string value;
        if (kv.value.is_array())
            for (const GgufScalar& item : kv.value.array) value += std::get<bool>(item) ? '1' : '0';
        else if (const auto u = kv.value.as_u32())
            value = std::to_string(*u);
        out.emplace_back(kv.key.substr(6), value);
    }
    return out;
}

std::vector<std::string> problems_of(const ModelConfig& c) {
    return config_problems(*find_architecture(c.model_type), c);
}

TEST(Olmo2Registry, NamesBothWays) {
    const Architecture* found = find_architecture("olmo2");
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(find_architecture("olmo3"), found);  // Olmo3ForCausalLM: the same class
    const Architecture& a = *found;
    EXPECT_EQ(a.gguf_arch, "olmo2");
    const std::pair<const char*, const char*> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.layers.2.self_attn.q_proj.weight", "blk.2.attn_q.weight"},
        {"model.layers.2.self_attn.k_proj.weight", "blk.2.attn_k.weight"},
        {"model.layers.2.self_attn.v_proj.weight", "blk.2.attn_v.weight"},
        {"model.layers.2.self_attn.o_proj.weight", "blk.2.attn_output.weight"},
        {"model.layers.2.self_attn.q_norm.weight", "blk.2.attn_q_norm.weight"},
        {"model.layers.2.self_attn.k_norm.weight", "blk.2.attn_k_norm.weight"},
        {"model.layers.2.post_attention_layernorm.weight", "blk.2.post_attention_norm.weight"},
        {"model.layers.2.mlp.gate_proj.weight", "blk.2.ffn_gate.weight"},
        {"model.layers.2.mlp.up_proj.weight", "blk.2.ffn_up.weight"},
        {"model.layers.2.mlp.down_proj.weight", "blk.2.ffn_down.weight"},
        {"model.layers.2.post_feedforward_layernorm.weight", "blk.2.post_ffw_norm.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, RowTransform::none) << hf;  // NEOX rope
        const auto back = resolve_gguf(a, gguf);
        ASSERT_TRUE(back.has_value()) << gguf;
        EXPECT_EQ(back->hf_name, strip_model_prefix(hf));
    }
    // OLMo 2 has no norm before attention or the feed-forward.
    EXPECT_FALSE(resolve_hf(a, "model.layers.0.input_layernorm.weight").has_value());
    EXPECT_FALSE(resolve_hf(a, "model.layers.0.self_attn.o_proj.bias").has_value());
    EXPECT_FALSE(resolve_gguf(a, "blk.0.ffn_norm.weight").has_value());
    EXPECT_FALSE(resolve_gguf(a, "blk.0.attn_norm.weight").has_value());
}

TEST(Olmo2Registry, ShapesAndRequiredTensors) {
    const Architecture& a = *find_architecture("olmo2");
    ModelConfig c = olmo_config();
    using Ne = std::vector<int64_t>;
    // llama.cpp: attn_q_norm {n_embd} = 64; attn_k_norm {n_head_kv * n_embd_head} = 2 * 16.
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_q_norm.weight"), (Ne{64}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_k_norm.weight"), (Ne{32}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_k.weight"), (Ne{64, 32}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.post_ffw_norm.weight"), (Ne{64}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.ffn_up.weight"), (Ne{64, 96}));
    c.num_hidden_layers = 1;
    const std::vector<std::string> want = {
        "token_embd.weight",        "blk.0.attn_q.weight",
        "blk.0.attn_k.weight",      "blk.0.attn_v.weight",
        "blk.0.attn_output.weight", "blk.0.attn_q_norm.weight",
        "blk.0.attn_k_norm.weight", "blk.0.post_attention_norm.weight",
        "blk.0.ffn_gate.weight",    "blk.0.ffn_up.weight",
        "blk.0.ffn_down.weight",    "blk.0.post_ffw_norm.weight",
        "output_norm.weight",       "output.weight"};
    EXPECT_EQ(required_tensors(a, c), want);
    c.tie_word_embeddings = true;  // the loader creates output.weight without a fallback
    EXPECT_EQ(required_tensors(a, c), want);
}

TEST(Olmo2Registry, Olmo2KvsHaveNoHeadDimNorWindow) {
    const std::vector<std::pair<std::string, std::string>> want = {
        {"context_length", "4096"},    {"embedding_length", "64"},
        {"block_count", "4"},          {"feed_forward_length", "96"},
        {"attention.head_count", "4"}, {"attention.head_count_kv", "2"},
        {"rope.freq_base", ""},        {"attention.layer_norm_rms_epsilon", ""}};
    EXPECT_EQ(olmo_kvs(olmo_config()), want);
    // A head_dim in config.json: TextModel writes key/value length from it.
    auto with_head_dim = want;
    with_head_dim.emplace_back("attention.key_length", "16");
    with_head_dim.emplace_back("attention.value_length", "16");
    EXPECT_EQ(olmo_kvs(olmo_config(R"(, "head_dim": 16)")), with_head_dim);
}

TEST(Olmo2Registry, Olmo3WindowAndLayerPattern) {
    const std::string olmo3 = R"(, "sliding_window": 4096, "layer_types": ["sliding_attention",
        "sliding_attention", "full_attention", "sliding_attention"])";
    auto kvs = olmo_kvs(olmo_config(olmo3));
    ASSERT_EQ(kvs.size(), 10u);
    EXPECT_EQ(kvs[8], (std::pair<std::string, std::string>{"attention.sliding_window", "4096"}));
    EXPECT_EQ(kvs[9],
              (std::pair<std::string, std::string>{"attention.sliding_window_pattern", "1101"}));
    // No layer_types: Olmo2Model makes every 4th layer full.
    kvs = olmo_kvs(olmo_config(R"(, "sliding_window": 4096)"));
    ASSERT_EQ(kvs.size(), 10u);
    EXPECT_EQ(kvs[9].second, "1110");
    EXPECT_TRUE(problems_of(olmo_config(olmo3)).empty());
}

TEST(Olmo2Registry, Refusals) {
    const auto short_types = problems_of(olmo_config(
        R"(, "sliding_window": 4096, "layer_types": ["sliding_attention", "full_attention"])"));
    ASSERT_EQ(short_types.size(), 1u);
    EXPECT_NE(short_types[0].find("layer_types has 2 entries for 4 layers"), std::string::npos)
        << short_types[0];
    const auto head_dim = problems_of(olmo_config(R"(, "head_dim": 32)"));
    ASSERT_EQ(head_dim.size(), 1u);
    EXPECT_NE(head_dim[0].find("head_dim 32"), std::string::npos) << head_dim[0];
}

// Olmo-3-7B's yarn rope_scaling: TextModel.set_gguf_parameters writes the type, the factor, the
// original context, yarn_attn_factor (attention_factor; attn_factor is its other name) and the
// betas; extrapolation_factor would be yarn_ext_factor. rebox writes the rope-scaling keys after
// the family's own.
TEST(Olmo2Registry, Olmo3YarnRopeScaling) {
    const ModelConfig c = olmo_config(R"(, "sliding_window": 4096, "rope_scaling":
        {"attention_factor": 1.2079441541679836, "beta_fast": 32.0, "beta_slow": 1.0,
         "factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "yarn"})");
    EXPECT_TRUE(problems_of(c).empty());
    std::vector<std::string> keys;
    std::map<std::string, GgufValue> kv;
    const auto scaling_kvs = [&](const ModelConfig& config) {
        ModelMetadataInput input;
        input.config = &config;
        keys.clear();
        kv.clear();
        for (const GgufKV& entry : build_model_metadata(input))
            if (entry.key.starts_with("olmo2.rope.scaling.")) {
                keys.push_back(entry.key.substr(19));
                kv[entry.key.substr(19)] = entry.value;
            }
    };
    scaling_kvs(c);
    const std::vector<std::string> want = {
        "type",           "factor",        "original_context_length", "yarn_attn_factor",
        "yarn_beta_fast", "yarn_beta_slow"};
    EXPECT_EQ(keys, want);
    EXPECT_EQ(std::get<double>(kv["yarn_attn_factor"].scalar), double(float(1.2079441541679836)));
    EXPECT_EQ(kv["original_context_length"].as_u32(), 8192u);
    EXPECT_EQ(std::get<double>(kv["factor"].scalar), 8.0);
    // extrapolation_factor and the other name of the attention factor.
    const ModelConfig ext = olmo_config(R"(, "rope_scaling": {"attn_factor": 1.5,
        "extrapolation_factor": 0.5, "factor": 4.0, "original_max_position_embeddings": 1024,
        "rope_type": "yarn"})");
    scaling_kvs(ext);
    EXPECT_EQ(keys, (std::vector<std::string>{"type", "factor", "original_context_length",
                                              "yarn_ext_factor", "yarn_attn_factor"}));
    EXPECT_EQ(std::get<double>(kv["yarn_ext_factor"].scalar), 0.5);
    EXPECT_EQ(std::get<double>(kv["yarn_attn_factor"].scalar), 1.5);
}

}  // namespace
}  // namespace rebox::arch
