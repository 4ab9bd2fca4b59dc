// The MoE tables of the registry (qwen3_moe, qwen2_moe, mixtral) against lists written by hand from
// llama.cpp's loaders (src/models/qwen3moe.cpp, qwen2moe.cpp, llama.cpp with n_expert > 0) and
// converter (Qwen2MoeModel / LlamaModel: expert names, set_gguf_parameters): names both ways
// (per-expert, MLX pre-stacked), 3-D ne from config.json, required tensors, KVs, roles, and the
// configs the tables cannot describe.
#include <gtest/gtest.h>

#include <algorithm>

#include "arch/architecture.hpp"

namespace rebox::arch {
namespace {

ModelConfig moe_config(const std::string& model_type) {
    ModelConfig c;
    c.model_type = model_type;
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 16;
    c.intermediate_size = 96;
    c.vocab_size = 100;
    c.max_position_embeddings = 1024;
    c.num_experts = 8;
    c.num_experts_per_tok = 2;
    if (model_type != "mixtral") c.moe_intermediate_size = 32;
    if (model_type == "qwen2_moe") c.shared_expert_intermediate_size = 160;
    return c;
}

TEST(MoeRegistry, ModelTypesAndGgufNames) {
    EXPECT_EQ(find_architecture("qwen3_moe")->gguf_arch, "qwen3moe");
    EXPECT_EQ(find_architecture("qwen2_moe")->gguf_arch, "qwen2moe");
    EXPECT_EQ(find_architecture("mixtral")->gguf_arch, "llama");
    // The GGUF name "llama" still finds llama's own (dense) table, not mixtral's.
    EXPECT_EQ(find_architecture("llama"), find_architecture("mistral"));
    EXPECT_NE(find_architecture("llama"), find_architecture("mixtral"));
    EXPECT_EQ(find_architecture("qwen3moe"), find_architecture("qwen3_moe"));
    EXPECT_TRUE(has_experts(*find_architecture("mixtral")));
    EXPECT_FALSE(has_experts(*find_architecture("llama")));
}

TEST(MoeRegistry, PerExpertAndStackedNamesResolveToTheStackedTensor) {
    const Architecture& q3 = *find_architecture("qwen3_moe");
    auto ref = resolve_hf(q3, "model.layers.3.mlp.experts.17.down_proj.weight");
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->gguf_name, "blk.3.ffn_down_exps.weight");
    EXPECT_EQ(ref->expert, 17u);
    EXPECT_EQ(ref->hf_name, "layers.3.mlp.experts.17.down_proj.weight");
    EXPECT_FALSE(ref->stacked_source);
    ref = resolve_hf(q3, "model.layers.3.mlp.switch_mlp.gate_proj.weight");
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->gguf_name, "blk.3.ffn_gate_exps.weight");
    EXPECT_TRUE(ref->stacked_source);
    EXPECT_FALSE(ref->expert);
    ref = resolve_hf(q3, "layers.0.mlp.gate.weight");
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->gguf_name, "blk.0.ffn_gate_inp.weight");
    EXPECT_EQ(ref->spec->role, SourceRole::router_f32);
    // Not expert indices: leading zeros, signs, empty, letters; no dense mlp in qwen3moe.
    for (const char* bad :
         {"layers.0.mlp.experts.01.up_proj.weight", "layers.0.mlp.experts.-1.up_proj.weight",
          "layers.0.mlp.experts..up_proj.weight", "layers.0.mlp.experts.x.up_proj.weight",
          "layers.0.mlp.experts.{e}.up_proj.weight", "layers.0.mlp.gate_proj.weight",
          "layers.0.mlp.experts.1.up_proj.bias"})
        EXPECT_FALSE(resolve_hf(q3, bad)) << bad;
    // From the GGUF side: the per-expert pattern.
    const auto back = resolve_gguf(q3, "blk.2.ffn_up_exps.weight");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->hf_name, "layers.2.mlp.experts.{e}.up_proj.weight");
    EXPECT_EQ(expert_name(back->hf_name, 12), "layers.2.mlp.experts.12.up_proj.weight");
    EXPECT_EQ(stacked_name(*back->spec, 2), "layers.2.mlp.switch_mlp.up_proj.weight");

    // Mixtral: w1/w2/w3 = gate/down/up (LlamaModel.modify_tensors, tensor_mapping.py).
    const Architecture& mx = *find_architecture("mixtral");
    const std::pair<const char*, const char*> mixtral[] = {
        {"model.layers.1.block_sparse_moe.experts.7.w1.weight", "blk.1.ffn_gate_exps.weight"},
        {"model.layers.1.block_sparse_moe.experts.7.w2.weight", "blk.1.ffn_down_exps.weight"},
        {"model.layers.1.block_sparse_moe.experts.7.w3.weight", "blk.1.ffn_up_exps.weight"},
        {"model.layers.1.block_sparse_moe.gate.weight", "blk.1.ffn_gate_inp.weight"},
        {"model.layers.1.block_sparse_moe.switch_mlp.gate_proj.weight",
         "blk.1.ffn_gate_exps.weight"},
        {"model.layers.1.block_sparse_moe.switch_mlp.down_proj.weight",
         "blk.1.ffn_down_exps.weight"},
        {"model.layers.1.block_sparse_moe.switch_mlp.up_proj.weight", "blk.1.ffn_up_exps.weight"},
    };
    for (const auto& [hf, gguf] : mixtral) {
        const auto r = resolve_hf(mx, hf);
        ASSERT_TRUE(r) << hf;
        EXPECT_EQ(r->gguf_name, gguf) << hf;
    }
    EXPECT_EQ(resolve_hf(mx, "model.layers.1.self_attn.q_proj.weight")->spec->rows,
              RowTransform::rope_pairs_q_heads);
    EXPECT_FALSE(resolve_hf(mx, "model.layers.1.mlp.gate_proj.weight"));

    // qwen2_moe's shared expert.
    const Architecture& q2 = *find_architecture("qwen2_moe");
    EXPECT_EQ(resolve_hf(q2, "model.layers.0.mlp.shared_expert.down_proj.weight")->gguf_name,
              "blk.0.ffn_down_shexp.weight");
    const auto shexp_gate = resolve_hf(q2, "model.layers.0.mlp.shared_expert_gate.weight");
    ASSERT_TRUE(shexp_gate);
    EXPECT_EQ(shexp_gate->gguf_name, "blk.0.ffn_gate_inp_shexp.weight");
    EXPECT_EQ(shexp_gate->spec->role, SourceRole::router_f32);
    EXPECT_TRUE(resolve_hf(q2, "model.layers.0.self_attn.q_proj.bias"));
}

TEST(MoeRegistry, ExpectedNeIsThreeDimensional) {
    using Ne = std::vector<int64_t>;
    const ModelConfig q3 = moe_config("qwen3_moe");
    const Architecture& a = *find_architecture("qwen3_moe");
    // qwen3moe.cpp: {n_embd, n_ff_exp, n_expert} for gate/up, {n_ff_exp, n_embd, n_expert} down.
    EXPECT_EQ(*expected_ne(a, q3, "blk.1.ffn_gate_exps.weight"), (Ne{64, 32, 8}));
    EXPECT_EQ(*expected_ne(a, q3, "blk.1.ffn_up_exps.weight"), (Ne{64, 32, 8}));
    EXPECT_EQ(*expected_ne(a, q3, "blk.1.ffn_down_exps.weight"), (Ne{32, 64, 8}));
    EXPECT_EQ(*expected_ne(a, q3, "blk.1.ffn_gate_inp.weight"), (Ne{64, 8}));
    // Mixtral: the experts' width is intermediate_size.
    const ModelConfig mx = moe_config("mixtral");
    EXPECT_EQ(*expected_ne(*find_architecture("mixtral"), mx, "blk.0.ffn_down_exps.weight"),
              (Ne{96, 64, 8}));
    const ModelConfig q2 = moe_config("qwen2_moe");
    const Architecture& b = *find_architecture("qwen2_moe");
    EXPECT_EQ(*expected_ne(b, q2, "blk.0.ffn_gate_shexp.weight"), (Ne{64, 160}));
    EXPECT_EQ(*expected_ne(b, q2, "blk.0.ffn_down_shexp.weight"), (Ne{160, 64}));
    EXPECT_EQ(*expected_ne(b, q2, "blk.0.ffn_gate_inp_shexp.weight"), (Ne{64, 1}));
}

TEST(MoeRegistry, RequiredTensorsPerLayer) {
    // qwen2moe.cpp: every create_tensor of a layer without TENSOR_NOT_REQUIRED, and output.weight
    // (flag 0: required even when embeddings are tied).
    ModelConfig c = moe_config("qwen2_moe");
    c.num_hidden_layers = 1;
    c.tie_word_embeddings = true;
    const std::vector<std::string> expected = {"token_embd.weight",
                                               "blk.0.attn_norm.weight",
                                               "blk.0.attn_q.weight",
                                               "blk.0.attn_k.weight",
                                               "blk.0.attn_v.weight",
                                               "blk.0.attn_output.weight",
                                               "blk.0.ffn_norm.weight",
                                               "blk.0.ffn_gate_inp.weight",
                                               "blk.0.ffn_gate_exps.weight",
                                               "blk.0.ffn_down_exps.weight",
                                               "blk.0.ffn_up_exps.weight",
                                               "blk.0.ffn_gate_inp_shexp.weight",
                                               "blk.0.ffn_gate_shexp.weight",
                                               "blk.0.ffn_down_shexp.weight",
                                               "blk.0.ffn_up_shexp.weight",
                                               "output_norm.weight",
                                               "output.weight"};
    EXPECT_EQ(required_tensors(*find_architecture("qwen2_moe"), c), expected);
}

TEST(MoeRegistry, KvLists) {
    const auto has = [](const char* type, ArchKv key) {
        const auto kvs = find_architecture(type)->kvs;
        return std::find(kvs.begin(), kvs.end(), key) != kvs.end();
    };
    for (const char* type : {"qwen3_moe", "qwen2_moe", "mixtral"}) {
        EXPECT_TRUE(has(type, ArchKv::expert_count)) << type;
        EXPECT_TRUE(has(type, ArchKv::expert_used_count)) << type;
        EXPECT_TRUE(has(type, ArchKv::feed_forward_length)) << type;
    }
    EXPECT_TRUE(has("qwen3_moe", ArchKv::expert_feed_forward_length));
    EXPECT_FALSE(has("qwen3_moe", ArchKv::expert_shared_feed_forward_length));
    EXPECT_TRUE(has("qwen2_moe", ArchKv::expert_shared_feed_forward_length));
    // LlamaModel writes no expert_feed_forward_length (n_ff is the experts' width).
    EXPECT_FALSE(has("mixtral", ArchKv::expert_feed_forward_length));
    EXPECT_TRUE(has("mixtral", ArchKv::vocab_size));
    EXPECT_FALSE(has("llama", ArchKv::expert_count));
}

TEST(MoeRegistry, ConfigsTheTablesCannotDescribe) {
    const Architecture& a = *find_architecture("qwen2_moe");
    EXPECT_TRUE(config_problems(a, moe_config("qwen2_moe")).empty());
    ModelConfig c = moe_config("qwen2_moe");
    c.decoder_sparse_step = 2;
    c.mlp_only_layers = {0};
    c.shared_expert_intermediate_size.reset();
    const auto problems = config_problems(a, c);
    ASSERT_EQ(problems.size(), 3u);
    EXPECT_NE(problems[0].find("shared_expert_intermediate_size"), std::string::npos);
    EXPECT_NE(problems[1].find("decoder_sparse_step 2"), std::string::npos);
    EXPECT_NE(problems[2].find("mlp_only_layers"), std::string::npos);
    c = moe_config("qwen3_moe");
    c.decoder_sparse_step = 1;  // every layer MoE: fine
    c.num_experts_per_tok = 9;  // more than the 8 experts
    const auto used = config_problems(*find_architecture("qwen3_moe"), c);
    ASSERT_EQ(used.size(), 1u);
    EXPECT_NE(used[0].find("num_experts_per_tok 9"), std::string::npos);
    c.num_experts = 0;
    c.num_experts_per_tok = 2;
    EXPECT_NE(config_problems(*find_architecture("qwen3_moe"), c)[0].find("num_experts"),
              std::string::npos);
    EXPECT_TRUE(config_problems(*find_architecture("qwen3"), c).empty());  // dense: not asked
}

}  // namespace
}  // namespace rebox::arch
