// config.json reading: the Qwen3-Embedding-0.6B numbers (docs/gguf.md §3.2), documented defaults,
// and one-line input errors naming the field for missing / ill-typed / out-of-range values.
#include "model/model_config.hpp"

#include <gtest/gtest.h>

#include "arch/read_config.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

constexpr const char* kQwen3EmbeddingConfig = R"({
  "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
  "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
  "intermediate_size": 3072, "max_position_embeddings": 32768, "vocab_size": 151669,
  "rope_theta": 1000000, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
  "bos_token_id": 151643, "eos_token_id": 151643, "_name_or_path": "Qwen/Qwen3-Embedding-0.6B",
  "torch_dtype": "float32", "rope_scaling": null })";

ModelConfig read_text(const std::string& text) {
    test::ScratchDir dir;
    return read_model_config(dir.write("config.json", text));
}

// The message of the input-class error read_model_config throws for text.
std::string input_error_of(const std::string& text) {
    try {
        read_text(text);
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        return e.what();
    }
    ADD_FAILURE() << "no error for " << text;
    return {};
}

TEST(ModelConfig, ReadsQwen3Embedding) {
    const ModelConfig c = read_text(kQwen3EmbeddingConfig);
    EXPECT_EQ(c.model_type, "qwen3");
    ASSERT_EQ(c.architectures.size(), 1u);
    EXPECT_EQ(c.architectures[0], "Qwen3ForCausalLM");
    EXPECT_EQ(c.hidden_size, 1024u);
    EXPECT_EQ(c.num_hidden_layers, 28u);
    EXPECT_EQ(c.num_attention_heads, 16u);
    EXPECT_EQ(c.num_key_value_heads, 8u);
    EXPECT_EQ(c.head_dim, 128u);
    EXPECT_EQ(c.intermediate_size, 3072u);
    EXPECT_EQ(c.max_position_embeddings, 32768u);
    EXPECT_EQ(c.vocab_size, 151669u);
    EXPECT_EQ(c.rope_theta, 1000000.0f);
    EXPECT_EQ(c.rms_norm_eps, 1e-6f);
    EXPECT_TRUE(c.tie_word_embeddings);
    EXPECT_EQ(c.bos_token_id, 151643u);
    EXPECT_EQ(c.eos_token_id, 151643u);
    EXPECT_EQ(c.name_or_path, "Qwen/Qwen3-Embedding-0.6B");
}

TEST(ModelConfig, DefaultsWhenOptionalFieldsAreAbsent) {
    const ModelConfig c =
        read_text(R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2,
        "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "n_positions": 2048,
        "eos_token_id": [1, 2]})");
    EXPECT_EQ(c.num_key_value_heads, 32u);
    EXPECT_EQ(c.head_dim, 128u);  // 4096 / 32
    EXPECT_EQ(c.max_position_embeddings, 2048u);
    EXPECT_EQ(c.rope_theta, 10000.0f);
    EXPECT_EQ(c.rms_norm_eps, 1e-6f);
    EXPECT_FALSE(c.tie_word_embeddings);
    EXPECT_FALSE(c.bos_token_id.has_value());
    EXPECT_FALSE(c.eos_token_id.has_value());  // a list is ignored, as gguf-py does
    EXPECT_TRUE(c.architectures.empty());
}

// rope_scaling as Llama 3.2's config.json writes it; "rope_parameters" (transformers 5) which also
// carries rope_theta; the older "type" key; "default" and null mean no scaling.
TEST(ModelConfig, RopeScaling) {
    const std::string base =
        R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
        "max_position_embeddings": 64, )";
    ModelConfig c = read_text(base + R"("rope_theta": 500000.0, "rope_scaling": {"factor": 32.0,
        "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192,
        "rope_type": "llama3"}})");
    ASSERT_TRUE(c.rope_scaling.has_value());
    EXPECT_EQ(c.rope_scaling->type, "llama3");
    EXPECT_EQ(c.rope_scaling->factor, 32.0);
    EXPECT_EQ(c.rope_scaling->low_freq_factor, 1.0);
    EXPECT_EQ(c.rope_scaling->high_freq_factor, 4.0);
    EXPECT_EQ(c.rope_scaling->original_max_position_embeddings, 8192u);
    EXPECT_EQ(c.rope_theta, 500000.0f);

    c = read_text(base + R"("rope_parameters": {"rope_type": "linear", "factor": 2.0,
        "rope_theta": 250000.0}})");
    ASSERT_TRUE(c.rope_scaling.has_value());
    EXPECT_EQ(c.rope_scaling->type, "linear");
    EXPECT_FALSE(c.rope_scaling->low_freq_factor.has_value());
    EXPECT_EQ(c.rope_theta, 250000.0f);

    c = read_text(base + R"("rope_scaling": {"type": "yarn", "factor": 4.0}})");
    EXPECT_EQ(c.rope_scaling->type, "yarn");
    for (const char* none :
         {R"("rope_scaling": null})", R"("rope_parameters": {"rope_type": "default",
          "rope_theta": 10000.0}})",
          R"("rope_scaling": {"factor": 2.0}})"})
        EXPECT_FALSE(read_text(base + none).rope_scaling.has_value()) << none;

    EXPECT_NE(input_error_of(base + R"("rope_scaling": "llama3"})").find("rope_scaling"),
              std::string::npos);
    EXPECT_NE(input_error_of(base + R"("rope_scaling": {"rope_type": "llama3", "factor": "8"}})")
                  .find("rope_scaling.factor"),
              std::string::npos);
}

TEST(ModelConfig, MissingRequiredFieldsAreNamed) {
    EXPECT_EQ(input_error_of(
                  R"({"model_type": "qwen3", "num_hidden_layers": 28, "num_attention_heads": 16,
        "intermediate_size": 3072, "vocab_size": 151669, "max_position_embeddings": 32768})"),
              "config.json: hidden_size: missing");
    EXPECT_EQ(
        input_error_of(R"({"hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16,
        "intermediate_size": 3072, "vocab_size": 151669, "max_position_embeddings": 32768})"),
        "config.json: model_type: missing");
    const std::string no_context = input_error_of(R"({"model_type": "qwen3", "hidden_size": 1024,
        "num_hidden_layers": 28, "num_attention_heads": 16, "intermediate_size": 3072, "vocab_size": 151669})");
    EXPECT_EQ(no_context.rfind("config.json: max_position_embeddings: missing", 0), 0u)
        << no_context;
}

TEST(ModelConfig, WrongTypesAndRangesAreNamed) {
    const std::string base =
        R"("model_type": "qwen3", "num_hidden_layers": 28, "num_attention_heads": 16,
        "intermediate_size": 3072, "vocab_size": 151669, "max_position_embeddings": 32768)";
    EXPECT_EQ(input_error_of("{" + base + R"(, "hidden_size": "1024"})"),
              "config.json: hidden_size: expected an unsigned integer");
    EXPECT_EQ(input_error_of("{" + base + R"(, "hidden_size": 1024.5})"),
              "config.json: hidden_size: expected an unsigned integer");
    EXPECT_EQ(input_error_of("{" + base + R"(, "hidden_size": 0})"),
              "config.json: hidden_size: is 0 (expected a value > 0)");
    EXPECT_EQ(input_error_of("{" + base + R"(, "hidden_size": -4})"),
              "config.json: hidden_size: value -4 is not positive (expected a value > 0)");
    EXPECT_EQ(
        input_error_of("{" + base + R"(, "hidden_size": 4294967296})"),
        "config.json: hidden_size: value 4294967296 is too large (expected a value <= 4294967295)");
    EXPECT_EQ(
        input_error_of("{" + base + R"(, "hidden_size": 1024, "tie_word_embeddings": "yes"})"),
        "config.json: tie_word_embeddings: expected a boolean");
    EXPECT_EQ(input_error_of("{" + base + R"(, "hidden_size": 1024, "rope_theta": "big"})"),
              "config.json: rope_theta: expected a number");
    EXPECT_EQ(input_error_of("{" + base + R"(, "hidden_size": 1024, "num_key_value_heads": 5})"),
              "config.json: num_key_value_heads: num_attention_heads 16 is not a multiple of 5");
}

TEST(ModelConfig, MalformedFilesAreInputErrors) {
    EXPECT_NE(input_error_of("{\"model_type\": ").find("not valid JSON"), std::string::npos);
    EXPECT_NE(input_error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
    // Over config.json's 1 MiB cap: refused from its size, before a byte is read (sparse file).
    test::ScratchDir big;
    const auto path = big.write("config.json", "{");
    std::filesystem::resize_file(path, (1ull << 20) + 1);
    try {
        read_model_config(path);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_EQ(std::string(e.what()),
                  path.string() +
                      ": is 1048577 bytes, over rebox's 1 MiB limit for this file (expected the "
                      "model's own config.json)");
    }
    try {
        read_model_config("/nonexistent/rebox/config.json");
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
    }
}

}  // namespace
}  // namespace rebox
