// The architecture registry against hand-written tables from llama.cpp's loaders (docs/gguf.md
// §3.2, docs/architectures.md): accepted model_types, names both ways, ne from config.json
// (including head_dim != hidden/heads), required tensors, output order, KV lists, transforms and
// the rope_scaling policy.
#include <gtest/gtest.h>

#include "arch/architecture.hpp"

namespace rebox::arch {
namespace {

ModelConfig llama_config() {  // Mistral-Nemo-like shape: head_dim 32 != 64 / 4
    ModelConfig c;
    c.model_type = "mistral";
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 32;
    c.intermediate_size = 128;
    c.vocab_size = 100;
    c.max_position_embeddings = 1024;
    return c;
}

TEST(ArchRegistry, LookupByModelTypeAndGgufName) {
    ASSERT_NE(find_architecture("llama"), nullptr);
    EXPECT_EQ(find_architecture("llama")->gguf_arch, "llama");
    EXPECT_EQ(find_architecture("mistral"), find_architecture("llama"));
    EXPECT_EQ(find_architecture("qwen3")->gguf_arch, "qwen3");
    EXPECT_EQ(find_architecture("qwen2")->gguf_arch, "qwen2");
    EXPECT_EQ(find_architecture("gemma3")->gguf_arch, "gemma3");
    EXPECT_EQ(find_architecture("qwen3_moe")->gguf_arch, "qwen3moe");
    EXPECT_EQ(find_architecture("t5"), nullptr);
    EXPECT_EQ(find_architecture(""), nullptr);
    EXPECT_EQ(
        supported_model_types(),
        "qwen3, qwen2, llama, mistral, qwen3_moe, qwen2_moe, mixtral, phi3, gemma, gemma2, "
        "gemma3_text, gemma3, bert, xlm-roberta, nomic_bert, gpt_oss, modernbert, seed_oss, "
        "olmo2, olmo3, smollm3, ministral3, apertus, qwen3_5_text, qwen3_5, qwen3_5_moe_text, "
        "qwen3_5_moe, qwen3_next, glm4_moe, "
        "gemma4_text, gemma4, deepseek_v3, deepseek_v2, kimi_k2, glm4_moe_lite, qwen2_vl, "
        "qwen2_5_vl, qwen3_vl, qwen3_vl_moe, nemotron_h");
    // gemma-embedding accepts no model_type of its own (gemma3_text + Gemma3TextModel selects it),
    // nor does nemotron_h_moe (nemotron_h + num_experts_per_tok selects it).
    EXPECT_EQ(all_architectures().size(), 33u);
}

// bert: the names of docs/architectures.md (llama.cpp's tensor_mapping for MODEL_ARCH.BERT), with
// and without the task head's "bert." prefix; the pooler and the classifier are optional model_last
// rows.
TEST(ArchRegistry, BertNamesShapesAndKvs) {
    const Architecture& a = *find_architecture("bert");
    EXPECT_EQ(a.gguf_arch, "bert");
    EXPECT_TRUE(a.encoder);
    const std::pair<const char*, const char*> names[] = {
        {"embeddings.word_embeddings.weight", "token_embd.weight"},
        {"bert.embeddings.position_embeddings.weight", "position_embd.weight"},
        {"embeddings.token_type_embeddings.weight", "token_types.weight"},
        {"embeddings.LayerNorm.bias", "token_embd_norm.bias"},
        {"encoder.layer.3.attention.self.query.bias", "blk.3.attn_q.bias"},
        {"bert.encoder.layer.0.attention.self.value.weight", "blk.0.attn_v.weight"},
        {"encoder.layer.1.attention.output.dense.weight", "blk.1.attn_output.weight"},
        {"encoder.layer.1.attention.output.LayerNorm.weight", "blk.1.attn_output_norm.weight"},
        {"encoder.layer.1.intermediate.dense.weight", "blk.1.ffn_up.weight"},
        {"encoder.layer.1.output.dense.bias", "blk.1.ffn_down.bias"},
        {"encoder.layer.1.output.LayerNorm.weight", "blk.1.layer_output_norm.weight"},
        {"bert.pooler.dense.weight", "cls.weight"},
        {"classifier.bias", "cls.output.bias"},
    };
    for (const auto& [hf, gguf] : names) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf) << hf;
    }
    EXPECT_FALSE(resolve_hf(a, "layers.0.self_attn.q_proj.weight").has_value());
    EXPECT_TRUE(is_converter_buffer(a, "bert.embeddings.position_ids"));
    EXPECT_FALSE(is_left_out(a, "bert.embeddings.position_ids"));
    EXPECT_TRUE(is_left_out(a, "cls.predictions.transform.dense.weight"));
    EXPECT_EQ(resolve_hf(a, "pooler.dense.weight")->spec->role, SourceRole::reranker_pooler);
    EXPECT_EQ(resolve_gguf(a, "position_embd.weight")->spec->role, SourceRole::table_f32);
    ModelConfig c;
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 4;
    c.head_dim = 16;
    c.intermediate_size = 128;
    c.vocab_size = 30522;
    c.max_position_embeddings = 512;
    c.type_vocab_size = 2;
    c.num_labels = 1;
    EXPECT_EQ(*expected_ne(a, c, "position_embd.weight"), (std::vector<int64_t>{64, 512}));
    EXPECT_EQ(*expected_ne(a, c, "token_types.weight"), (std::vector<int64_t>{64, 2}));
    EXPECT_EQ(*expected_ne(a, c, "blk.1.ffn_down.weight"), (std::vector<int64_t>{128, 64}));
    EXPECT_EQ(*expected_ne(a, c, "cls.output.weight"), (std::vector<int64_t>{64, 1}));
    // 4 embedding tensors + 8 per layer; the pooler and classifier are optional.
    EXPECT_EQ(required_tensors(a, c).size(), 4u + 2u * 8u);
    const std::vector<ArchKv> kvs(a.kvs.begin(), a.kvs.end());
    EXPECT_EQ(kvs, (std::vector<ArchKv>{ArchKv::block_count, ArchKv::context_length,
                                        ArchKv::embedding_length, ArchKv::feed_forward_length,
                                        ArchKv::head_count, ArchKv::layer_norm_epsilon,
                                        ArchKv::causal_false}));
}

TEST(ArchRegistry, LlamaNamesAndTransforms) {
    const Architecture& a = *find_architecture("llama");
    struct Row {
        const char* hf;
        const char* gguf;
        RowTransform rows;
    };
    const Row rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight", RowTransform::none},
        {"model.norm.weight", "output_norm.weight", RowTransform::none},
        {"lm_head.weight", "output.weight", RowTransform::none},
        {"model.layers.5.input_layernorm.weight", "blk.5.attn_norm.weight", RowTransform::none},
        {"model.layers.5.self_attn.q_proj.weight", "blk.5.attn_q.weight",
         RowTransform::rope_pairs_q_heads},
        {"model.layers.5.self_attn.q_proj.bias", "blk.5.attn_q.bias",
         RowTransform::rope_pairs_q_heads},
        {"model.layers.5.self_attn.k_proj.weight", "blk.5.attn_k.weight",
         RowTransform::rope_pairs_kv_heads},
        {"model.layers.5.self_attn.k_proj.bias", "blk.5.attn_k.bias",
         RowTransform::rope_pairs_kv_heads},
        {"model.layers.5.self_attn.v_proj.weight", "blk.5.attn_v.weight", RowTransform::none},
        {"model.layers.5.self_attn.o_proj.weight", "blk.5.attn_output.weight", RowTransform::none},
        {"model.layers.5.post_attention_layernorm.weight", "blk.5.ffn_norm.weight",
         RowTransform::none},
        {"model.layers.5.mlp.gate_proj.weight", "blk.5.ffn_gate.weight", RowTransform::none},
        {"model.layers.5.mlp.up_proj.weight", "blk.5.ffn_up.weight", RowTransform::none},
        {"model.layers.5.mlp.down_proj.weight", "blk.5.ffn_down.weight", RowTransform::none},
    };
    for (const Row& r : rows) {
        const auto ref = resolve_hf(a, r.hf);
        ASSERT_TRUE(ref.has_value()) << r.hf;
        EXPECT_EQ(ref->gguf_name, r.gguf);
        EXPECT_EQ(ref->spec->rows, r.rows) << r.hf;
        const auto back = resolve_gguf(a, r.gguf);
        ASSERT_TRUE(back.has_value()) << r.gguf;
        EXPECT_EQ("model." + back->hf_name == r.hf || back->hf_name == r.hf, true) << r.gguf;
    }
    for (const char* refused :
         {"model.layers.0.self_attn.q_norm.weight", "model.layers.0.input_layernorm.bias",
          "lm_head.bias", "model.embed_tokens.bias",
          "model.layers.0.self_attn.rotary_emb.inv_freq"})
        EXPECT_FALSE(resolve_hf(a, refused).has_value()) << refused;
    EXPECT_EQ(transform_heads(RowTransform::rope_pairs_q_heads, llama_config()), 4u);
    EXPECT_EQ(transform_heads(RowTransform::rope_pairs_kv_heads, llama_config()), 2u);
    EXPECT_EQ(transform_heads(RowTransform::none, llama_config()), 0u);
}

TEST(ArchRegistry, Qwen3AndQwen2KeepTheirTables) {
    const Architecture& q3 = *find_architecture("qwen3");
    const Architecture& q2 = *find_architecture("qwen2");
    EXPECT_EQ(resolve_hf(q3, "layers.1.self_attn.q_norm.weight")->gguf_name,
              "blk.1.attn_q_norm.weight");
    EXPECT_FALSE(resolve_hf(q3, "layers.1.self_attn.q_proj.bias").has_value());
    EXPECT_FALSE(resolve_hf(q2, "layers.1.self_attn.q_norm.weight").has_value());
    EXPECT_EQ(resolve_hf(q2, "layers.1.self_attn.v_proj.bias")->gguf_name, "blk.1.attn_v.bias");
    // No permutation in the NEOX-rope families.
    for (const Architecture* a : {&q3, &q2})
        for (const TensorSpec& spec : a->layer) EXPECT_EQ(spec.rows, RowTransform::none);
    EXPECT_TRUE(q3.extras.empty());
    EXPECT_TRUE(q2.extras.empty());
}

TEST(ArchRegistry, ShapesFollowHeadDimNotHiddenOverHeads) {
    const Architecture& a = *find_architecture("mistral");
    const ModelConfig c = llama_config();  // E 64, H 4, Hkv 2, D 32, F 128, V 100
    using Ne = std::vector<int64_t>;
    EXPECT_EQ(expected_ne(a, c, "token_embd.weight"), (Ne{64, 100}));
    EXPECT_EQ(expected_ne(a, c, "output.weight"), (Ne{64, 100}));
    EXPECT_EQ(expected_ne(a, c, "output_norm.weight"), (Ne{64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_q.weight"), (Ne{64, 128}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_q.bias"), (Ne{128}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_k.weight"), (Ne{64, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_k.bias"), (Ne{64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_v.weight"), (Ne{64, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_output.weight"), (Ne{128, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.ffn_gate.weight"), (Ne{64, 128}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.ffn_down.weight"), (Ne{128, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.attn_norm.weight"), (Ne{64}));
    EXPECT_FALSE(expected_ne(a, c, "blk.1.attn_q_norm.weight").has_value());
    EXPECT_FALSE(expected_ne(a, c, "rope_freqs.weight").has_value());  // computed, own rule
}

TEST(ArchRegistry, RequiredTensorsAndOutputOrder) {
    const Architecture& a = *find_architecture("llama");
    ModelConfig c = llama_config();
    c.num_hidden_layers = 1;
    const std::vector<std::string> untied = {
        "token_embd.weight",     "blk.0.attn_norm.weight", "blk.0.attn_q.weight",
        "blk.0.attn_k.weight",   "blk.0.attn_v.weight",    "blk.0.attn_output.weight",
        "blk.0.ffn_norm.weight", "blk.0.ffn_gate.weight",  "blk.0.ffn_up.weight",
        "blk.0.ffn_down.weight", "output_norm.weight",     "output.weight"};
    EXPECT_EQ(required_tensors(a, c), untied);
    c.tie_word_embeddings = true;
    std::vector<std::string> tied = untied;
    tied.pop_back();
    EXPECT_EQ(required_tensors(a, c), tied);
    // rope_freqs first, token_embd, layers in table order (a bias right after its weight), then
    // output_norm and output.
    const char* order[] = {"rope_freqs.weight",      "token_embd.weight",
                           "blk.0.attn_norm.weight", "blk.0.attn_q.weight",
                           "blk.0.attn_q.bias",      "blk.0.attn_k.weight",
                           "blk.0.ffn_down.weight",  "blk.1.attn_norm.weight",
                           "output_norm.weight",     "output.weight"};
    for (size_t i = 1; i < std::size(order); ++i)
        EXPECT_LT(output_rank(a, order[i - 1]), output_rank(a, order[i])) << order[i];
    EXPECT_EQ(layer_of("blk.12.attn_q.weight"), 12);
    EXPECT_FALSE(layer_of("token_embd.weight").has_value());
}

TEST(ArchRegistry, KvLists) {
    const Architecture& llama = *find_architecture("llama");
    const Architecture& qwen3 = *find_architecture("qwen3");
    ASSERT_EQ(llama.kvs.size(), 12u);
    EXPECT_EQ(llama.kvs.back(), ArchKv::vocab_size);  // LlamaModel.set_gguf_parameters
    ASSERT_EQ(qwen3.kvs.size(), 11u);
    for (const ArchKv kv : qwen3.kvs) EXPECT_NE(kv, ArchKv::vocab_size);
    bool has_rope_dim = false;
    for (const ArchKv kv : llama.kvs) has_rope_dim |= kv == ArchKv::rope_dimension_count;
    EXPECT_TRUE(has_rope_dim);
}

TEST(ArchRegistry, RopeScalingPolicy) {
    const Architecture& llama = *find_architecture("llama");
    const Architecture& qwen3 = *find_architecture("qwen3");
    ModelConfig c = llama_config();
    EXPECT_FALSE(plan_rope_scaling(llama, c).rope_freqs);  // none
    c.rope_scaling = RopeScalingConfig{"llama3", 32.0, 1.0, 4.0, 8192, {}, {}, {}, {}, {}, {}, {}};
    RopeScalingPlan p = plan_rope_scaling(llama, c);
    EXPECT_TRUE(p.rope_freqs);
    EXPECT_FALSE(p.blocker.has_value());
    EXPECT_TRUE(p.kv_type.empty());   // the converter writes no KV for llama3
    c.rope_scaling->type = "Llama3";  // generate_extra_tensors lower-cases it
    EXPECT_TRUE(plan_rope_scaling(llama, c).rope_freqs);
    EXPECT_TRUE(plan_rope_scaling(qwen3, c).blocker.has_value());  // only LlamaModel does llama3
    c.rope_scaling = RopeScalingConfig{"linear", 2.0, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    p = plan_rope_scaling(llama, c);
    EXPECT_EQ(p.kv_type, "linear");
    EXPECT_EQ(p.kv_factor, 2.0f);
    for (const char* type : {"yarn", "dynamic", "longrope", "su"}) {
        c.rope_scaling = RopeScalingConfig{type, 4.0, {}, {}, 4096, {}, {}, {}, {}, {}, {}, {}};
        p = plan_rope_scaling(llama, c);
        ASSERT_TRUE(p.blocker.has_value()) << type;
        EXPECT_NE(p.blocker->find(std::string("'") + type + "'"), std::string::npos) << *p.blocker;
    }
}

// The buffers llama.cpp v0.4.0's converter skips by name (conversion/base.py
// ModelBase.prepare_tensors for every class; conversion/bert.py BertModel.filter_tensors for the
// BERT family), and names it keeps or refuses, which are no buffers.
TEST(ArchRegistry, ConverterBuffers) {
    for (const Architecture* a : all_architectures()) {
        SCOPED_TRACE(std::string(a->gguf_arch));
        EXPECT_TRUE(is_converter_buffer(*a, "model.layers.0.self_attn.rotary_emb.inv_freq"));
        EXPECT_TRUE(is_converter_buffer(*a, "h.3.attention.masked_bias"));
        EXPECT_TRUE(is_converter_buffer(*a, "h.3.attention.bias"));
        EXPECT_FALSE(is_converter_buffer(*a, "h.3.attn.bias"));  // GPT2Model's own skip only
        EXPECT_FALSE(is_converter_buffer(*a, "encoder.layer.0.attention.self.query.bias"));
        EXPECT_FALSE(is_converter_buffer(*a, "model.layers.0.self_attn.q_proj.bias"));
        EXPECT_FALSE(is_converter_buffer(*a, "model.layers.0.self_attn.rotary_emb.inv_freq2"));
        const bool bert_family =
            a->gguf_arch == "bert" || a->gguf_arch == "nomic-bert" || a->gguf_arch == "modern-bert";
        EXPECT_EQ(is_converter_buffer(*a, "embeddings.position_ids"), bert_family);
    }
    EXPECT_TRUE(
        is_converter_buffer(*find_architecture("modernbert"), "model.embeddings.position_ids"));
    EXPECT_FALSE(is_converter_buffer(*find_architecture("bert"), "embeddings.position_ids_x"));
}

}  // namespace
}  // namespace rebox::arch

namespace rebox::arch {
namespace {

// Which tensors' NVFP4 .scale each graph multiplies in, read off llama.cpp's src/models/<arch>.cpp
// (the *_s arguments: build_qkv and wo_s everywhere; output_s, the dense FFN's and the experts'
// only where the graph passes them).
TEST(ArchRegistry, Nvfp4ScalesFollowEachGraph) {
    struct Row {
        std::string_view model_type;
        bool output, dense_ffn, experts;
    };
    const Row rows[] = {
        {"llama", true, true, true},         {"mixtral", true, true, true},
        {"qwen3", true, true, false},        {"qwen3_moe", true, false, true},
        {"qwen2", true, false, false},       {"qwen2_moe", true, false, false},
        {"phi3", true, false, false},        {"gemma", true, false, false},
        {"gemma2", true, false, false},      {"gemma3", true, false, false},
        {"bert", false, false, false},       {"xlm-roberta", false, false, false},
        {"nomic_bert", false, false, false}, {"gpt_oss", false, false, false},
        {"modernbert", false, false, false}, {"gemma-embedding", false, false, false},
        {"seed_oss", true, false, false},    {"olmo2", true, false, false},
        {"smollm3", true, false, false},     {"mistral3", true, true, true},
        {"apertus", true, false, false},     {"qwen3_5", true, true, false},
        {"glm4_moe", true, false, false},    {"gemma4", true, true, true},
    };
    for (const Row& row : rows) {
        SCOPED_TRACE(std::string(row.model_type));
        const Architecture* a = find_architecture(row.model_type);
        ASSERT_NE(a, nullptr);
        for (const char* role : {"attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output"})
            EXPECT_TRUE(graph_applies_nvfp4_scale(*a, role)) << role;
        EXPECT_EQ(graph_applies_nvfp4_scale(*a, "output"), row.output);
        for (const char* role : {"ffn_gate", "ffn_up", "ffn_down"})
            EXPECT_EQ(graph_applies_nvfp4_scale(*a, role), row.dense_ffn) << role;
        for (const char* role : {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"})
            EXPECT_EQ(graph_applies_nvfp4_scale(*a, role), row.experts) << role;
        for (const char* role : {"token_embd", "ffn_gate_inp", "attn_sinks", "cls.output"})
            EXPECT_FALSE(graph_applies_nvfp4_scale(*a, role)) << role;
    }
}

// deepseek2 (src/models/deepseek2.cpp): MLA's q (attn_q without q_lora_rank, attn_q_a / attn_q_b)
// and kv products (attn_kv_a_mqa, attn_k_b, attn_v_b) are plain ggml_mul_mat calls; only wo goes
// through build_attn with wo_s, and the head through build_lora_mm with output_s. The dense FFN,
// the experts and the shared experts take none.
TEST(ArchRegistry, Nvfp4ScalesOfDeepseek2) {
    for (const char* model_type : {"deepseek_v3", "kimi_k2", "glm4_moe_lite"}) {
        SCOPED_TRACE(model_type);
        const Architecture* a = find_architecture(model_type);
        ASSERT_NE(a, nullptr);
        EXPECT_TRUE(graph_applies_nvfp4_scale(*a, "attn_output"));
        EXPECT_TRUE(graph_applies_nvfp4_scale(*a, "output"));
        for (const char* role : {"attn_q", "attn_q_a", "attn_q_b", "attn_kv_a_mqa", "attn_k_b",
                                 "attn_v_b", "ffn_gate", "ffn_down_exps", "ffn_up_shexp"})
            EXPECT_FALSE(graph_applies_nvfp4_scale(*a, role)) << role;
    }
}

// EmbeddingGemma claims a config.json by something other than model_type, only a gemma3_text
// config whose architectures[0] is Gemma3TextModel (mistral3's claim: mistral3_registry_test).
TEST(ArchRegistry, ClaimingArchitecture) {
    const auto claimed = [](const char* json) {
        return claiming_architecture(nlohmann::json::parse(json));
    };
    const Architecture* embedding =
        claimed(R"({"model_type": "gemma3_text", "architectures": ["Gemma3TextModel"]})");
    ASSERT_NE(embedding, nullptr);
    EXPECT_EQ(embedding->gguf_arch, "gemma-embedding");
    EXPECT_EQ(claimed(R"({"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"]})"),
              nullptr);
    EXPECT_EQ(claimed(R"({"model_type": "gemma3", "architectures": ["Gemma3TextModel"]})"),
              nullptr);
    EXPECT_EQ(claimed(R"({"model_type": "gemma3_text"})"), nullptr);
    EXPECT_EQ(claimed(R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"]})"),
              nullptr);
}

}  // namespace
}  // namespace rebox::arch
