// modernbert in the registry against llama.cpp's tensor_mapping.py (MODEL_ARCH.MODERN_BERT) and
// ModernBertModel (docs/architectures.md "modernbert"): names, the fused Wqkv's and Wi's shapes,
// layer 0 without attn_norm, the masked-LM head left out; config.json's ModernBERT names read as
// the converter reads them (global_rope_theta, local_rope_theta, local_attention,
// global_attn_every_n_layers, norm_eps) and what llama.cpp's graph cannot compute refused.
#include <gtest/gtest.h>

#include "arch/architecture.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox::arch {
namespace {

// ModernBERT-base's config.json fields, with a small width.
constexpr const char* kModernBertConfig = R"({"model_type": "modernbert",
  "architectures": ["ModernBertModel"], "attention_bias": false, "global_attn_every_n_layers": 3,
  "global_rope_theta": 160000.0, "hidden_activation": "gelu", "hidden_size": 64,
  "intermediate_size": 96, "local_attention": 128, "local_rope_theta": 10000.0,
  "max_position_embeddings": 8192, "mlp_bias": false, "norm_bias": false, "norm_eps": 1e-05,
  "num_attention_heads": 4, "num_hidden_layers": 3, "vocab_size": 50368})";

ModelConfig read_text(const std::string& text) {
    test::ScratchDir dir;
    return read_model_config(dir.write("config.json", text));
}

// The config with one field replaced (JSON text), or its error message.
std::string error_with(const std::string& field, const std::string& value) {
    nlohmann::json root = nlohmann::json::parse(kModernBertConfig);
    root[field] = nlohmann::json::parse(value);
    try {
        read_text(root.dump());
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        return e.what();
    }
    return "no error";
}

TEST(ModernBertRegistry, NamesShapesAndKvs) {
    const Architecture& a = *find_architecture("modernbert");
    EXPECT_EQ(a.gguf_arch, "modern-bert");
    EXPECT_TRUE(a.encoder);
    EXPECT_EQ(a.byte_level_pre, "modern-bert");
    const std::pair<const char*, const char*> names[] = {
        {"embeddings.tok_embeddings.weight", "token_embd.weight"},
        {"embeddings.norm.weight", "token_embd_norm.weight"},
        {"layers.1.attn_norm.weight", "blk.1.attn_norm.weight"},
        {"layers.0.attn.Wqkv.weight", "blk.0.attn_qkv.weight"},
        {"layers.0.attn.Wo.weight", "blk.0.attn_output.weight"},
        {"layers.2.mlp_norm.weight", "blk.2.ffn_norm.weight"},
        {"layers.0.mlp.Wi.weight", "blk.0.ffn_up.weight"},
        {"layers.0.mlp.Wo.weight", "blk.0.ffn_down.weight"},
        {"final_norm.weight", "output_norm.weight"},
        {"model.layers.1.attn.Wqkv.weight", "blk.1.attn_qkv.weight"},  // ModernBertForMaskedLM
    };
    for (const auto& [hf, gguf] : names) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf) << hf;
    }
    EXPECT_FALSE(resolve_hf(a, "layers.0.attn.Wqkv.bias").has_value());  // no biases
    EXPECT_FALSE(resolve_hf(a, "final_norm.bias").has_value());
    EXPECT_TRUE(is_left_out(a, "decoder.bias"));  // the masked-LM decoder
    EXPECT_EQ(resolve_hf(a, "head.dense.weight")->spec->role, SourceRole::reranker_pooler);
    EXPECT_EQ(resolve_hf(a, "head.norm.weight")->gguf_name, "cls.norm.weight");
    EXPECT_EQ(resolve_hf(a, "classifier.bias")->gguf_name, "cls.output.bias");
    const ModelConfig c = read_text(kModernBertConfig);
    EXPECT_EQ(*expected_ne(a, c, "blk.0.attn_qkv.weight"), (std::vector<int64_t>{64, 192}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_up.weight"), (std::vector<int64_t>{64, 192}));
    EXPECT_EQ(*expected_ne(a, c, "blk.0.ffn_down.weight"), (std::vector<int64_t>{96, 64}));
    // token_embd, token_embd_norm, output_norm and 5 weights per layer (attn_norm is optional:
    // layer 0 has none).
    EXPECT_EQ(required_tensors(a, c).size(), 3u + 3u * 5u);
}

TEST(ModernBertRegistry, ConfigNamesAsTheConverterReadsThem) {
    const ModelConfig c = read_text(kModernBertConfig);
    EXPECT_EQ(c.rope_theta, 160000.0f);  // global_rope_theta, first in TextModel's search
    EXPECT_EQ(c.rope_local_theta, 10000.0f);
    EXPECT_EQ(c.sliding_window, 128u);
    EXPECT_EQ(c.sliding_window_pattern, 3u);
    EXPECT_EQ(c.rms_norm_eps, 1e-05f);    // TextModel writes norm_eps as the RMS epsilon
    EXPECT_EQ(c.layer_norm_eps, 1e-05f);  // llama.cpp's modern-bert loader reads this one
    EXPECT_EQ(c.hidden_activation, "gelu");
    EXPECT_EQ(c.type_vocab_size, 0u);  // no token types: the BPE vocabulary path
}

TEST(ModernBertRegistry, RefusesWhatTheGraphCannotCompute) {
    EXPECT_NE(error_with("attention_bias", "true").find("attention_bias"), std::string::npos);
    EXPECT_NE(error_with("norm_bias", "true").find("norm_bias"), std::string::npos);
    EXPECT_NE(error_with("hidden_activation", R"("relu")").find("hidden_activation"),
              std::string::npos);
    EXPECT_NE(error_with("local_attention", "null").find("local_attention"), std::string::npos);
    EXPECT_NE(error_with("norm_eps", "null").find("norm_eps"), std::string::npos);
    // A reranker (classifier_pooling defaults to "cls" in ModernBertConfig).
    EXPECT_NE(error_with("architectures", R"(["ModernBertForSequenceClassification"])")
                  .find("classifier_pooling"),
              std::string::npos);
    EXPECT_NE(error_with("rope_scaling", R"({"rope_type": "linear", "factor": 2.0})")
                  .find("rope_scaling"),
              std::string::npos);
    EXPECT_EQ(error_with("rope_scaling", R"({"rope_type": "default"})"), "no error");
    EXPECT_EQ(error_with("hidden_activation", R"("silu")"), "no error");
}

}  // namespace
}  // namespace rebox::arch
