// phi3 in the architecture registry against hand-written tables from llama.cpp's phi3 loader
// (src/models/phi3.cpp) and converter (conversion/phi.py, Phi3MiniModel): fused attn_qkv / ffn_up
// names and ne, the KV list in set_gguf_parameters' order, the rotary dimension count, and the
// long-rope policy (attention factor and factor tensors worked by hand, the converter's refusals).
#include <gtest/gtest.h>

#include <cstring>

#include "arch/architecture.hpp"
#include "arch/transforms.hpp"

namespace rebox::arch {
namespace {

uint32_t bits(float f) {
    uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    return u;
}

// Phi-3.5-mini's shape scaled down: hidden 64, 4 heads / 2 kv heads of 16, ffn 128, vocab 100.
ModelConfig phi3_config() {
    ModelConfig c;
    c.model_type = "phi3";
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 16;
    c.intermediate_size = 128;
    c.vocab_size = 100;
    c.max_position_embeddings = 131072;
    c.original_max_position_embeddings = 4096;
    return c;
}

RopeScalingConfig long_rope(size_t long_count, size_t short_count) {
    RopeScalingConfig s;
    s.type = "longrope";
    s.long_factor = std::vector<double>(long_count, 1.5);
    s.short_factor = std::vector<double>(short_count, 1.0);
    return s;
}

TEST(Phi3Registry, NamesAreTheFusedOnes) {
    const Architecture* found = find_architecture("phi3");
    ASSERT_NE(found, nullptr);
    const Architecture& a = *found;
    EXPECT_EQ(a.gguf_arch, "phi3");
    const std::pair<const char*, const char*> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.layers.3.input_layernorm.weight", "blk.3.attn_norm.weight"},
        {"model.layers.3.self_attn.qkv_proj.weight", "blk.3.attn_qkv.weight"},
        {"model.layers.3.self_attn.qkv_proj.bias", "blk.3.attn_qkv.bias"},
        {"model.layers.3.self_attn.o_proj.weight", "blk.3.attn_output.weight"},
        {"model.layers.3.post_attention_layernorm.weight", "blk.3.ffn_norm.weight"},
        {"model.layers.3.mlp.gate_up_proj.weight", "blk.3.ffn_up.weight"},
        {"model.layers.3.mlp.down_proj.weight", "blk.3.ffn_down.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, RowTransform::none) << hf;  // NeoX rope: nothing moves
        ASSERT_TRUE(resolve_gguf(a, gguf).has_value()) << gguf;
    }
    // The split forms llama's table has are not phi3's: no ffn_gate, no separate q/k/v.
    for (const char* refused :
         {"model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.up_proj.weight",
          "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.o_proj.bias",
          "model.layers.0.mlp.gate_up_proj.bias", "model.layers.0.self_attn.q_norm.weight"})
        EXPECT_FALSE(resolve_hf(a, refused).has_value()) << refused;
    EXPECT_FALSE(resolve_gguf(a, "blk.0.ffn_gate.weight").has_value());
}

TEST(Phi3Registry, FusedShapesFromConfig) {
    const Architecture& a = *find_architecture("phi3");
    const ModelConfig c = phi3_config();
    using Ne = std::vector<int64_t>;
    // llama.cpp: attn_qkv {n_embd, n_embd + 2 * n_embd_gqa} = {64, 64 + 2 * 32}.
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_qkv.weight"), (Ne{64, 128}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_qkv.bias"), (Ne{128}));
    // ffn_up {n_embd, 2 * n_ff}: gate rows, then up rows.
    EXPECT_EQ(expected_ne(a, c, "blk.1.ffn_up.weight"), (Ne{64, 256}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.ffn_down.weight"), (Ne{128, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_output.weight"), (Ne{64, 64}));
    EXPECT_EQ(expected_ne(a, c, "output.weight"), (Ne{64, 100}));
    EXPECT_FALSE(expected_ne(a, c, "rope_factors_long.weight").has_value());  // computed
    EXPECT_EQ(
        explain_dim(Dim::qkv_width, c),
        "num_attention_heads 4 * head_dim 16 + 2 * num_key_value_heads 2 * head_dim 16 = 128");
    EXPECT_EQ(explain_dim(Dim::ffn_x2, c), "2 * intermediate_size 128 = 256");
    const auto dims = tensor_dims(a, "blk.0.attn_qkv.weight");
    ASSERT_TRUE(dims.has_value());
    EXPECT_EQ((*dims)[1], Dim::qkv_width);
}

TEST(Phi3Registry, RequiredTensorsTiedAndUntiedAndOrder) {
    const Architecture& a = *find_architecture("phi3");
    ModelConfig c = phi3_config();
    c.num_hidden_layers = 1;
    const std::vector<std::string> untied = {
        "token_embd.weight",        "blk.0.attn_norm.weight", "blk.0.attn_qkv.weight",
        "blk.0.attn_output.weight", "blk.0.ffn_norm.weight",  "blk.0.ffn_up.weight",
        "blk.0.ffn_down.weight",    "output_norm.weight",     "output.weight"};
    EXPECT_EQ(required_tensors(a, c), untied);
    c.tie_word_embeddings = true;  // Phi-4-mini
    EXPECT_EQ(required_tensors(a, c), std::vector<std::string>(untied.begin(), untied.end() - 1));
    // generate_extra_tensors yields long then short, before the model's tensors.
    const char* order[] = {"rope_factors_long.weight",
                           "rope_factors_short.weight",
                           "token_embd.weight",
                           "blk.0.attn_qkv.weight",
                           "blk.0.attn_qkv.bias",
                           "blk.0.ffn_up.weight",
                           "output.weight"};
    for (size_t i = 1; i < std::size(order); ++i)
        EXPECT_LT(output_rank(a, order[i - 1]), output_rank(a, order[i])) << order[i];
}

TEST(Phi3Registry, KvsInSetGgufParametersOrder) {
    const Architecture& a = *find_architecture("phi3");
    const std::vector<ArchKv> want = {ArchKv::context_length,
                                      ArchKv::rope_scaling_original_context_length,
                                      ArchKv::embedding_length,
                                      ArchKv::feed_forward_length,
                                      ArchKv::block_count,
                                      ArchKv::head_count,
                                      ArchKv::head_count_kv,
                                      ArchKv::rms_epsilon,
                                      ArchKv::rope_dimension_count_rotary,
                                      ArchKv::rope_freq_base,
                                      ArchKv::sliding_window_or_zero};
    EXPECT_EQ(std::vector<ArchKv>(a.kvs.begin(), a.kvs.end()), want);
}

TEST(Phi3Registry, RotaryDimensionCount) {
    ModelConfig c = phi3_config();
    EXPECT_EQ(rotary_dimension_count(c), 16u);  // int(1.0 * 64) // 4
    // Phi-4-mini: int(0.75 * 3072) // 24 = 96 (head_dim 128).
    c.hidden_size = 3072;
    c.num_attention_heads = 24;
    c.partial_rotary_factor = 0.75;
    EXPECT_EQ(rotary_dimension_count(c), 96u);
    // The product in binary64, truncated, then floor division: 0.57 * 100 is 56.99999999999999,
    // int() gives 56, 56 // 19 = 2 (57 // 19 would be 3).
    c.hidden_size = 100;
    c.num_attention_heads = 19;
    c.partial_rotary_factor = 0.57;
    EXPECT_EQ(rotary_dimension_count(c), 2u);
    // rope_scaling's own partial_rotary_factor wins over the top level (rope_parameters first).
    c.rope_scaling = long_rope(1, 1);
    c.rope_scaling->partial_rotary_factor = 0.5;
    c.num_attention_heads = 7;
    EXPECT_EQ(rotary_dimension_count(c), 7u);  // int(50) // 7
}

TEST(Phi3Registry, OriginalContextFromRopeScalingThenTopLevel) {
    ModelConfig c = phi3_config();
    EXPECT_EQ(original_context_length(c), 4096u);
    c.rope_scaling = long_rope(8, 8);
    c.rope_scaling->original_max_position_embeddings = 8192;
    EXPECT_EQ(original_context_length(c), 8192u);
    c.rope_scaling.reset();
    c.original_max_position_embeddings.reset();
    EXPECT_FALSE(original_context_length(c).has_value());
    const RopeScalingPlan p = plan_rope_scaling(*find_architecture("phi3"), c);
    ASSERT_TRUE(p.blocker.has_value());
    EXPECT_EQ(p.blocker_field, "config.json: original_max_position_embeddings");
    // llama does not need it.
    c.model_type = "llama";
    EXPECT_FALSE(plan_rope_scaling(*find_architecture("llama"), c).blocker.has_value());
}

TEST(Phi3Registry, LongRopePlanAndAttentionFactor) {
    const Architecture& a = *find_architecture("phi3");
    ModelConfig c = phi3_config();
    EXPECT_FALSE(plan_rope_scaling(a, c).rope_factors);  // no rope_scaling: nothing
    EXPECT_FALSE(plan_rope_scaling(a, c).attn_factor.has_value());
    c.rope_scaling = long_rope(8, 8);
    RopeScalingPlan p = plan_rope_scaling(a, c);
    ASSERT_FALSE(p.blocker.has_value()) << *p.blocker;
    EXPECT_TRUE(p.rope_factors);
    EXPECT_TRUE(p.kv_type.empty());  // Phi3MiniModel writes no rope.scaling.type
    // scale 131072 / 4096 = 32: sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12) = 1.19023807...
    // binary32 0x3F9859B9.
    ASSERT_TRUE(p.attn_factor.has_value());
    EXPECT_EQ(bits(*p.attn_factor), 0x3F9859B9u);
    c.rope_scaling->type = "SU";  // lower-cased by the converter; "su" is longrope's old name
    EXPECT_TRUE(plan_rope_scaling(a, c).rope_factors);
    c.max_position_embeddings = 4096;  // scale 1: factor 1.0
    EXPECT_EQ(*plan_rope_scaling(a, c).attn_factor, 1.0f);
}

TEST(Phi3Registry, LongRopeRefusals) {
    const Architecture& a = *find_architecture("phi3");
    ModelConfig c = phi3_config();
    c.rope_scaling = long_rope(7, 8);  // 16 rotary dims need 8
    RopeScalingPlan p = plan_rope_scaling(a, c);
    ASSERT_TRUE(p.blocker.has_value());
    EXPECT_FALSE(p.rope_factors);
    EXPECT_EQ(p.blocker_field, "config.json: rope_scaling.long_factor");
    EXPECT_NE(p.blocker->find("rope_factors_long.weight would get 7 values"), std::string::npos)
        << *p.blocker;
    EXPECT_NE(p.blocker->find("needs 8"), std::string::npos) << *p.blocker;
    c.rope_scaling = long_rope(8, 9);
    p = plan_rope_scaling(a, c);
    ASSERT_TRUE(p.blocker.has_value());
    EXPECT_EQ(p.blocker_field, "config.json: rope_scaling.short_factor");
    c.rope_scaling = long_rope(8, 8);
    c.rope_scaling->short_factor.reset();
    EXPECT_EQ(plan_rope_scaling(a, c).blocker_field, "config.json: rope_scaling.short_factor");
    c.rope_scaling = long_rope(0, 8);
    EXPECT_EQ(plan_rope_scaling(a, c).blocker_field, "config.json: rope_scaling.long_factor");
    for (const char* type : {"linear", "yarn", "llama3", "dynamic"}) {
        c.rope_scaling = long_rope(8, 8);
        c.rope_scaling->type = type;
        c.rope_scaling->factor = 2.0;
        p = plan_rope_scaling(a, c);
        ASSERT_TRUE(p.blocker.has_value()) << type;
        EXPECT_NE(p.blocker->find(std::string("'") + type + "'"), std::string::npos) << *p.blocker;
        EXPECT_TRUE(p.kv_type.empty()) << type;
    }
}

TEST(Phi3Registry, RopeFactorsRoundEachNumberOnceToBinary32) {
    ModelConfig c = phi3_config();
    c.rope_scaling = long_rope(0, 0);
    c.rope_scaling->long_factor = {1.0800000429153442, 1.01, 1.0 / 3.0 + 1.0, 1.0};
    c.rope_scaling->short_factor = {1.1, 0.9};
    const std::vector<float> longs = phi3_rope_factors(c, true);
    ASSERT_EQ(longs.size(), 4u);
    // Hand-worked binary32 roundings (nearest, ties to even).
    EXPECT_EQ(bits(longs[0]), 0x3F8A3D71u);  // already a binary32 value
    EXPECT_EQ(bits(longs[1]), 0x3F8147AEu);  // 1.01 -> 1.00999999046...
    EXPECT_EQ(bits(longs[2]), 0x3FAAAAABu);  // 4/3 -> 1.33333337306...
    EXPECT_EQ(bits(longs[3]), 0x3F800000u);
    const std::vector<float> shorts = phi3_rope_factors(c, false);
    ASSERT_EQ(shorts.size(), 2u);
    EXPECT_EQ(bits(shorts[0]), 0x3F8CCCCDu);
    EXPECT_EQ(bits(shorts[1]), 0x3F666666u);
    c.rope_scaling.reset();
    EXPECT_TRUE(phi3_rope_factors(c, true).empty());
}

}  // namespace
}  // namespace rebox::arch
