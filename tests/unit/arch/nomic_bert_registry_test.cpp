// nomic-bert in the registry against llama.cpp's tensor_mapping.py (MODEL_ARCH.NOMIC_BERT) and
// NomicBertModel (docs/architectures.md "nomic-bert"): names, the fused Wqkv's and the SwiGLU
// pair's shapes, the KV list; config.json's GPT-2 names read in the converter's search order, its
// context rewrite (8192 with 2048 trained -> 2048) and its asserts refused as input errors.
#include <gtest/gtest.h>

#include "arch/architecture.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox::arch {
namespace {

// nomic-embed-text-v1.5's config.json fields, with a small width.
constexpr const char* kNomicConfig = R"({"model_type": "nomic_bert",
  "activation_function": "swiglu", "causal": false, "layer_norm_epsilon": 1e-12,
  "max_trained_positions": 2048, "mlp_fc1_bias": false, "mlp_fc2_bias": false, "n_embd": 64,
  "n_head": 4, "n_inner": 128, "n_layer": 2, "n_positions": 8192, "prenorm": false,
  "qkv_proj_bias": false, "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0,
  "rotary_emb_interleaved": false, "rotary_emb_scale_base": null, "type_vocab_size": 2,
  "vocab_size": 30528})";

ModelConfig read_text(const std::string& text) {
    test::ScratchDir dir;
    return read_model_config(dir.write("config.json", text));
}

// The config with one field replaced (JSON text), or its error message.
std::string error_with(const std::string& field, const std::string& value) {
    nlohmann::json root = nlohmann::json::parse(kNomicConfig);
    root[field] = nlohmann::json::parse(value);
    try {
        read_text(root.dump());
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        return e.what();
    }
    return "no error";
}

TEST(NomicBertRegistry, NamesShapesAndKvs) {
    const Architecture& a = *find_architecture("nomic_bert");
    EXPECT_EQ(a.gguf_arch, "nomic-bert");
    EXPECT_TRUE(a.encoder);
    const std::pair<const char*, const char*> names[] = {
        {"embeddings.word_embeddings.weight", "token_embd.weight"},
        {"embeddings.token_type_embeddings.weight", "token_types.weight"},
        {"emb_ln.bias", "token_embd_norm.bias"},
        {"encoder.layers.1.attn.Wqkv.weight", "blk.1.attn_qkv.weight"},
        {"encoder.layers.0.attn.out_proj.weight", "blk.0.attn_output.weight"},
        {"encoder.layers.0.norm1.weight", "blk.0.attn_output_norm.weight"},
        {"encoder.layers.0.mlp.fc11.weight", "blk.0.ffn_up.weight"},
        {"encoder.layers.0.mlp.fc12.weight", "blk.0.ffn_gate.weight"},
        {"encoder.layers.0.mlp.fc2.weight", "blk.0.ffn_down.weight"},
        {"encoder.layers.1.norm2.bias", "blk.1.layer_output_norm.bias"},
    };
    for (const auto& [hf, gguf] : names) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf) << hf;
    }
    EXPECT_FALSE(resolve_hf(a, "encoder.layers.0.attn.Wqkv.bias").has_value());  // no biases
    EXPECT_EQ(resolve_gguf(a, "token_types.weight")->spec->role, SourceRole::table_f32);
    const ModelConfig c = read_text(kNomicConfig);
    EXPECT_EQ(*expected_ne(a, c, "blk.0.attn_qkv.weight"), (std::vector<int64_t>{64, 192}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_gate.weight"), (std::vector<int64_t>{64, 128}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_down.weight"), (std::vector<int64_t>{128, 64}));
    // 3 embedding tensors (+ the norm bias) and 7 weights per layer.
    EXPECT_EQ(required_tensors(a, c).size(), 3u + 2u * 7u);
    const std::vector<ArchKv> kvs(a.kvs.begin(), a.kvs.end());
    EXPECT_EQ(kvs, (std::vector<ArchKv>{ArchKv::block_count, ArchKv::context_length,
                                        ArchKv::embedding_length, ArchKv::feed_forward_length,
                                        ArchKv::head_count, ArchKv::rope_freq_base,
                                        ArchKv::layer_norm_epsilon, ArchKv::causal_false}));
}

TEST(NomicBertRegistry, ConfigGpt2NamesAndContextRewrite) {
    const ModelConfig c = read_text(kNomicConfig);
    EXPECT_EQ(c.hidden_size, 64u);
    EXPECT_EQ(c.num_hidden_layers, 2u);
    EXPECT_EQ(c.num_attention_heads, 4u);
    EXPECT_EQ(c.intermediate_size, 128u);
    EXPECT_EQ(c.rope_theta, 1000.0f);
    EXPECT_EQ(c.max_position_embeddings, 2048u);  // 8192 with 2048 trained -> 2048
    EXPECT_EQ(c.layer_norm_eps, 1e-12f);
    nlohmann::json moe_shape = nlohmann::json::parse(kNomicConfig);
    moe_shape["n_positions"] = 2048;
    EXPECT_EQ(read_text(moe_shape.dump()).max_position_embeddings, 512u);
}

TEST(NomicBertRegistry, ConverterAssertsAreRefusals) {
    const std::pair<const char*, const char*> cases[] = {
        {"activation_function", R"("gelu")"},
        {"causal", "true"},
        {"qkv_proj_bias", "true"},
        {"mlp_fc1_bias", "true"},
        {"mlp_fc2_bias", "true"},
        {"prenorm", "true"},
        {"rotary_emb_fraction", "0.5"},
        {"rotary_emb_interleaved", "true"},
        {"rotary_emb_scale_base", "512"},
        {"n_positions", "4096"},
        {"moe_every_n_layers", "2"},
    };
    for (const auto& [field, value] : cases) {
        const std::string message = error_with(field, value);
        EXPECT_NE(message.find(std::string("config.json: ") + field), std::string::npos)
            << field << ": " << message;
    }
}

}  // namespace
}  // namespace rebox::arch
