// The gpt-oss table of the registry against lists written by hand from llama.cpp's converter
// (conversion/gpt_oss.py GptOssModel, TextModel.set_gguf_parameters) and loader
// (src/models/openai-moe.cpp): names, ne (stacked experts and their 2-D biases), the gate/up
// row transforms, KVs, yarn, and the configs llama.cpp's hard-coded graph cannot run.
#include <gtest/gtest.h>

#include "arch/architecture.hpp"

namespace rebox::arch {
namespace {

ModelConfig gpt_oss_config() {
    ModelConfig c;
    c.model_type = "gpt_oss";
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 32;
    c.intermediate_size = 96;
    c.vocab_size = 100;
    c.max_position_embeddings = 1024;
    c.num_experts = 4;
    c.num_experts_per_tok = 2;
    c.swiglu_limit = 7.0;
    c.layer_types = {"sliding_attention", "full_attention"};
    RopeScalingConfig yarn;
    yarn.type = "yarn";
    yarn.factor = 32.0;
    yarn.original_max_position_embeddings = 4096;
    yarn.beta_fast = 32.0;
    yarn.beta_slow = 1.0;
    c.rope_scaling = yarn;
    return c;
}

TEST(GptOssRegistry, NamesAsTheConverterWritesThem) {
    const Architecture& a = *find_architecture("gpt_oss");
    EXPECT_EQ(a.gguf_arch, "gpt-oss");
    const std::pair<const char*, const char*> names[] = {
        {"model.layers.1.self_attn.sinks.weight", "blk.1.attn_sinks.weight"},
        {"model.layers.1.self_attn.o_proj.bias", "blk.1.attn_output.bias"},
        {"model.layers.0.post_attention_layernorm.weight", "blk.0.post_attention_norm.weight"},
        {"model.layers.0.mlp.router.weight", "blk.0.ffn_gate_inp.weight"},
        {"model.layers.0.mlp.router.bias", "blk.0.ffn_gate_inp.bias"},
        {"model.layers.0.mlp.experts.gate_proj.weight", "blk.0.ffn_gate_exps.weight"},
        {"model.layers.0.mlp.experts.up_proj.bias", "blk.0.ffn_up_exps.bias"},
        {"model.layers.0.mlp.experts.down_proj.weight", "blk.0.ffn_down_exps.weight"},
    };
    for (const auto& [hf, gguf] : names) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
    }
    EXPECT_EQ(resolve_hf(a, "model.layers.0.mlp.experts.gate_proj.weight")->spec->rows,
              RowTransform::even_rows);
    EXPECT_EQ(resolve_hf(a, "model.layers.0.mlp.experts.up_proj.weight")->spec->rows,
              RowTransform::odd_rows);
    EXPECT_FALSE(resolve_hf(a, "model.layers.0.mlp.experts.gate_up_proj_blocks"));
}

TEST(GptOssRegistry, ShapesOfExpertsAndTheirBiases) {
    const Architecture& a = *find_architecture("gpt_oss");
    const ModelConfig c = gpt_oss_config();
    using Ne = std::vector<int64_t>;
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_gate_exps.weight"), (Ne{64, 96, 4}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_down_exps.weight"), (Ne{96, 64, 4}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_up_exps.bias"), (Ne{96, 4}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_down_exps.bias"), (Ne{64, 4}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.attn_sinks.weight"), (Ne{4}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.attn_q.bias"), (Ne{128}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_gate_inp.bias"), (Ne{4}));
    // Unchanged for the 2-D tables of the other architectures: a bias is {rows}.
    const Architecture& q2 = *find_architecture("qwen2");
    EXPECT_EQ(*expected_ne(q2, c, "blk.0.attn_k.bias"), (Ne{64}));
}

TEST(GptOssRegistry, YarnAndHardCodedGraph) {
    const Architecture& a = *find_architecture("gpt_oss");
    ModelConfig c = gpt_oss_config();
    EXPECT_TRUE(config_problems(a, c).empty());
    const RopeScalingPlan rope = plan_rope_scaling(a, c);
    EXPECT_FALSE(rope.blocker);
    EXPECT_EQ(rope.kv_type, "yarn");
    EXPECT_EQ(*rope.kv_factor, 32.0f);
    EXPECT_EQ(*rope.yarn_original_context, 4096u);
    EXPECT_EQ(*rope.yarn_beta_fast, 32.0f);
    EXPECT_EQ(*rope.yarn_beta_slow, 1.0f);
    // yarn stays refused where the converter's architecture does not run it (llama).
    EXPECT_TRUE(plan_rope_scaling(*find_architecture("llama"), c).blocker);
    c.swiglu_limit = 6.0;
    ASSERT_EQ(config_problems(a, c).size(), 1u);
    EXPECT_NE(config_problems(a, c)[0].find("swiglu_limit 6"), std::string::npos);
    c.swiglu_limit = 7.0;
    c.layer_types = {"full_attention", "sliding_attention"};
    ASSERT_EQ(config_problems(a, c).size(), 1u);
    EXPECT_NE(config_problems(a, c)[0].find("layer_types"), std::string::npos);
    c.layer_types = {"sliding_attention"};  // fewer than num_hidden_layers
    EXPECT_EQ(config_problems(a, c).size(), 1u);
}

}  // namespace
}  // namespace rebox::arch
