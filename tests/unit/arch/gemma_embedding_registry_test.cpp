// gemma-embedding (EmbeddingGemma) in the registry against llama.cpp's gemma-embedding loader
// (src/models/gemma-embedding.cpp) and the converter's EmbeddingGemma class: selected by
// architectures[0] Gemma3TextModel (not by model_type), the Dense modules' names and ne (dense_2
// {n_embd, dense_2_feat_out}, dense_3 {dense_3_feat_in, n_embd}), their KVs, the converter's
// sliding_window requirement and what the graph hard-codes refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch/architecture.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

nlohmann::json embedding_config() {
    return nlohmann::json::parse(R"({
        "model_type": "gemma3_text", "architectures": ["Gemma3TextModel"], "hidden_size": 32,
        "num_hidden_layers": 6, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
        "intermediate_size": 64, "vocab_size": 1000, "max_position_embeddings": 2048,
        "sliding_window": 8, "use_bidirectional_attention": true, "query_pre_attn_scalar": 16})");
}

TEST(GemmaEmbeddingRegistry, SelectedByArchitecture) {
    EXPECT_EQ(parse_model_config(embedding_config()).model_type, "gemma-embedding");
    nlohmann::json decoder = embedding_config();
    decoder["architectures"] = {"Gemma3ForCausalLM"};
    EXPECT_EQ(parse_model_config(decoder).model_type, "gemma3_text");
    const Architecture* a = find_architecture("gemma-embedding");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->gguf_arch, "gemma-embedding");
    EXPECT_TRUE(a->sentence_embedder);
    EXPECT_FALSE(a->encoder);  // no token types, no classifier head
    EXPECT_EQ(find_architecture("gemma3_text")->gguf_arch, "gemma3");
}

TEST(GemmaEmbeddingRegistry, DenseNamesAndShapes) {
    const Architecture& a = *find_architecture("gemma-embedding");
    ModelConfig c = parse_model_config(embedding_config());
    c.dense_2 = ModelConfig::DenseFeatures{32, 128, "2_Dense/config.json"};
    c.dense_3 = ModelConfig::DenseFeatures{128, 32, "3_Dense/config.json"};
    const auto d2 = resolve_hf(a, "2_Dense.linear.weight");
    ASSERT_TRUE(d2.has_value());
    EXPECT_EQ(d2->gguf_name, "dense_2.weight");
    EXPECT_EQ(resolve_hf(a, "3_Dense.linear.weight")->gguf_name, "dense_3.weight");
    EXPECT_FALSE(resolve_hf(a, "2_Dense.linear.bias").has_value());
    EXPECT_EQ(*expected_ne(a, c, "dense_2.weight"), (std::vector<int64_t>{32, 128}));
    EXPECT_EQ(*expected_ne(a, c, "dense_3.weight"), (std::vector<int64_t>{128, 32}));
    // Optional: a checkpoint without Dense modules is written without them, as the converter does.
    for (const std::string& name : required_tensors(a, c))
        EXPECT_NE(name.rfind("dense_", 0), 0u) << name;
    EXPECT_TRUE(config_problems(a, c).empty());
    c.dense_2->in = 16;
    c.dense_3->in = 64;
    EXPECT_EQ(config_problems(a, c).size(), 2u);
}

// mlx-embeddings' projections in the model's file have no config.json: a problem names the tensor
// the features were taken from.
TEST(GemmaEmbeddingRegistry, DenseProblemsNameTheirOrigin) {
    const Architecture& a = *find_architecture("gemma-embedding");
    ModelConfig c;
    c.hidden_size = 32;
    c.dense_2 =
        ModelConfig::DenseFeatures{128, 32, "dense.0.weight"};  // stored the other way round
    c.dense_3 = ModelConfig::DenseFeatures{32, 128, "dense.1.weight"};
    const std::vector<std::string> problems = config_problems(a, c);
    ASSERT_EQ(problems.size(), 2u);  // the two chain: dense.1 reads dense.0's 32 outputs
    EXPECT_EQ(problems[0].rfind("dense.0.weight in_features 128 is not hidden_size 32", 0), 0u)
        << problems[0];
    EXPECT_EQ(problems[1].rfind("dense.1.weight out_features 128 is not hidden_size 32", 0), 0u)
        << problems[1];
}

TEST(GemmaEmbeddingRegistry, KvList) {
    const Architecture& a = *find_architecture("gemma-embedding");
    bool window = false, dense = false, pattern_dependent = false;
    for (const ArchKv k : a.kvs) {
        window |= k == ArchKv::sliding_window_required;
        dense |= k == ArchKv::dense_2_feat_in;
        pattern_dependent |= k == ArchKv::sliding_window;
    }
    EXPECT_TRUE(window);
    EXPECT_TRUE(dense);
    EXPECT_FALSE(pattern_dependent);
}

TEST(GemmaEmbeddingRegistry, RefusesWhatTheGraphHardCodes) {
    const auto refused = [](const char* field, const nlohmann::json& value) {
        nlohmann::json cfg = embedding_config();
        if (value.is_null())
            cfg.erase(field);
        else
            cfg[field] = value;
        try {
            parse_model_config(cfg);
        } catch (const Error& e) {
            return std::string(e.what()).find(field) != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(refused("sliding_window", nullptr));
    EXPECT_TRUE(refused("use_bidirectional_attention", false));
    EXPECT_TRUE(refused("query_pre_attn_scalar", 256));
    EXPECT_TRUE(refused("sliding_window_pattern", 4));
    EXPECT_TRUE(refused("layer_types", nlohmann::json::array({"full_attention"})));
    EXPECT_FALSE(refused(
        "layer_types",
        nlohmann::json::array({"sliding_attention", "sliding_attention", "sliding_attention",
                               "sliding_attention", "sliding_attention", "full_attention"})));
}

}  // namespace
}  // namespace rebox::arch
