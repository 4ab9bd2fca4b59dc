// verify's own config.json reading (ref_config): the numbers of a Qwen3-0.6B config as Hugging Face
// publishes it, the documented defaults (num_key_value_heads = heads, head_dim = hidden / heads,
// Gemma3TextConfig's for a bare text_config), rope blocks of transformers 4 and 5, and every
// hostile count refused in one line naming the key before anything is sized from it.
#include "verify/sources/ref_config.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rebox/error.hpp"

namespace rebox::verify_ref {
namespace {

std::string refusal(const std::string& json_text) {
    try {
        parse_ref_config(json_text);
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        return e.what();
    }
    return "";
}

constexpr const char* kQwen3 = R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
  "hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16,
  "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "vocab_size": 151936, "rope_theta": 1000000,
  "rms_norm_eps": 1e-06, "rope_scaling": null, "tie_word_embeddings": true})";

TEST(RefConfig, Qwen3Numbers) {
    const RefConfig c = parse_ref_config(kQwen3);
    EXPECT_EQ(c.model_type, "qwen3");
    EXPECT_EQ(c.hidden_size, 1024u);
    EXPECT_EQ(c.num_hidden_layers, 28u);
    EXPECT_EQ(c.num_attention_heads, 16u);
    EXPECT_EQ(c.num_key_value_heads, 8u);
    EXPECT_EQ(c.head_dim, 128u);
    EXPECT_EQ(c.intermediate_size, 3072u);
    EXPECT_EQ(c.max_position_embeddings, 40960u);
    EXPECT_EQ(c.vocab_size, 151936u);
    EXPECT_EQ(c.rope_theta, 1000000.0f);
    EXPECT_EQ(c.rms_norm_eps, 1e-6f);
    EXPECT_FALSE(c.rope_scaling.has_value());
    EXPECT_EQ(c.num_experts, 0u);
}

TEST(RefConfig, DocumentedDefaults) {
    const RefConfig c = parse_ref_config(R"({"model_type": "llama", "hidden_size": 96,
      "num_hidden_layers": 2, "num_attention_heads": 3, "intermediate_size": 128,
      "vocab_size": 100, "n_positions": 512,
      "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "original_max_position_embeddings": 8192}})");
    EXPECT_EQ(c.num_key_value_heads, 3u);  // = num_attention_heads
    EXPECT_EQ(c.head_dim, 32u);            // = 96 / 3
    EXPECT_EQ(c.max_position_embeddings, 512u);
    EXPECT_EQ(c.rope_theta, 10000.0f);
    ASSERT_TRUE(c.rope_scaling.has_value());
    EXPECT_EQ(c.rope_scaling->type, "llama3");
    EXPECT_EQ(c.rope_scaling->factor, 32.0);
    EXPECT_EQ(c.rope_scaling->original_max_position_embeddings, 8192u);
    EXPECT_FALSE(c.rope_scaling->low_freq_factor.has_value());
}

TEST(RefConfig, Gemma3TextConfigAndRopeParameters) {
    // A multimodal config: text_config wins over the top level; Gemma3TextConfig's defaults fill
    // the rest; transformers 5 rope_parameters carry both thetas.
    const RefConfig c = parse_ref_config(R"({"model_type": "gemma3", "hidden_size": 7,
      "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34,
        "intermediate_size": 10240,
        "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0,
          "rope_theta": 1000000.0}, "sliding_attention": {"rope_type": "default",
          "rope_theta": 10000.0}}}})");
    EXPECT_EQ(c.model_type, "gemma3_text");
    EXPECT_EQ(c.hidden_size, 2560u);
    EXPECT_EQ(c.vocab_size, 262208u);
    EXPECT_EQ(c.num_attention_heads, 8u);
    EXPECT_EQ(c.num_key_value_heads, 4u);
    EXPECT_EQ(c.head_dim, 256u);
    EXPECT_EQ(c.max_position_embeddings, 131072u);
    EXPECT_EQ(c.sliding_window, 4096u);
    EXPECT_EQ(c.sliding_window_pattern, 6u);
    EXPECT_EQ(c.rope_theta, 1000000.0f);
    EXPECT_EQ(c.rope_local_theta, 10000.0f);
    ASSERT_TRUE(c.rope_scaling.has_value());
    EXPECT_EQ(c.rope_scaling->type, "linear");
    EXPECT_EQ(c.rope_scaling->factor, 8.0);
}

TEST(RefConfig, HostileCountsFailNamingTheKey) {
    const auto with = [](const std::string& key, const std::string& value) {
        nlohmann::json j = nlohmann::json::parse(kQwen3);
        j[key] = nlohmann::json::parse(value);
        return j.dump();
    };
    const struct {
        const char* key;
        const char* value;
    } cases[] = {
        {"num_hidden_layers", "1000000000"},
        {"num_attention_heads", "1000000"},
        {"num_key_value_heads", "5"},
        {"head_dim", "4294967295"},
        {"hidden_size", "0"},
        {"intermediate_size", "-3"},
        {"vocab_size", "100000000"},
        {"num_experts", "1000000"},
        {"num_local_experts", "65537"},
        {"vocab_size", "1024.0"},
        {"rope_theta", "\"big\""},
        {"rms_norm_eps", "-1"},
    };
    for (const auto& c : cases) {
        const std::string message = refusal(with(c.key, c.value));
        EXPECT_NE(message.find(std::string("config.json")), std::string::npos) << message;
        EXPECT_NE(message.find(c.key), std::string::npos) << c.key << ": " << message;
    }
    nlohmann::json experts = nlohmann::json::parse(kQwen3);
    experts["num_experts"] = 8;
    experts["num_experts_per_tok"] = 9;
    EXPECT_NE(refusal(experts.dump()).find("num_experts_per_tok"), std::string::npos);
    nlohmann::json factors = nlohmann::json::parse(kQwen3);
    factors["rope_scaling"] = {{"rope_type", "longrope"},
                               {"long_factor", std::vector<double>(70000, 1.0)}};
    EXPECT_NE(refusal(factors.dump()).find("long_factor"), std::string::npos);
    EXPECT_NE(refusal("[1, 2]").find("object"), std::string::npos);
    EXPECT_NE(refusal("{\"model_type\": \"qwen3\"").find("JSON"), std::string::npos);
}

}  // namespace
}  // namespace rebox::verify_ref
