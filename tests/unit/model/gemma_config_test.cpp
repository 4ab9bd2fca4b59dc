// config.json of the gemma family: a multimodal Gemma 3 config's text_config merged over the top
// level (as convert_hf_to_gguf's TextModel does), transformers-5 rope_parameters split into
// full_attention / sliding_attention, softcapping and sliding-window fields, and other families'
// sliding_window values (0, null) read as absent rather than refused.
#include <gtest/gtest.h>

#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

ModelConfig read_text(const std::string& text) {
    test::ScratchDir dir;
    return read_model_config(dir.write("config.json", text));
}

TEST(GemmaConfig, MultimodalTextConfigWins) {
    const ModelConfig c = read_text(R"({
      "model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
      "eos_token_id": 106, "hidden_size": 1152,
      "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
        "intermediate_size": 10240, "max_position_embeddings": 131072, "vocab_size": 262208,
        "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "sliding_window": 1024,
        "sliding_window_pattern": 6, "final_logit_softcapping": null,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"}},
      "vision_config": {"hidden_size": 1152}})");
    EXPECT_EQ(c.model_type, "gemma3_text");
    EXPECT_EQ(c.hidden_size, 2560u);  // text_config's, not the top level's
    EXPECT_EQ(c.num_hidden_layers, 34u);
    EXPECT_EQ(c.vocab_size, 262208u);
    EXPECT_EQ(c.eos_token_id, 106u);  // top level kept where text_config has none
    EXPECT_EQ(c.rope_theta, 1000000.0f);
    EXPECT_EQ(c.rope_local_theta, 10000.0f);
    EXPECT_EQ(c.sliding_window, 1024u);
    EXPECT_EQ(c.sliding_window_pattern, 6u);
    EXPECT_FALSE(c.final_logit_softcapping.has_value());
    ASSERT_TRUE(c.rope_scaling.has_value());
    EXPECT_EQ(c.rope_scaling->type, "linear");
    EXPECT_EQ(c.rope_scaling->factor, 8.0);
}

// gemma-3-4b-it's config.json as published: text_config gives only a few numbers; the rest are
// transformers' Gemma3TextConfig defaults (the registry's config_defaults for gemma3).
TEST(GemmaConfig, Gemma3DefaultsFillWhatTheConfigLeavesOut) {
    const ModelConfig c = read_text(R"({
      "architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
      "eoi_token_index": 256000, "eos_token_id": [1, 106], "image_token_index": 262144,
      "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
      "text_config": {"hidden_size": 2560, "intermediate_size": 10240,
        "model_type": "gemma3_text", "num_hidden_layers": 34,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
      "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
      "vision_config": {"hidden_size": 1152, "model_type": "siglip_vision_model"}})");
    EXPECT_EQ(c.hidden_size, 2560u);
    EXPECT_EQ(c.num_attention_heads, 8u);
    EXPECT_EQ(c.num_key_value_heads, 4u);
    EXPECT_EQ(c.head_dim, 256u);
    EXPECT_EQ(c.vocab_size, 262208u);
    EXPECT_EQ(c.max_position_embeddings, 131072u);
    EXPECT_EQ(c.rms_norm_eps, 1e-6f);
    EXPECT_EQ(c.rope_theta, 1000000.0f);
    EXPECT_EQ(c.rope_local_theta, 10000.0f);
    EXPECT_EQ(c.sliding_window, 1024u);  // the file's own value
    EXPECT_EQ(c.sliding_window_pattern, 6u);
    EXPECT_TRUE(c.tie_word_embeddings);
    // Other families get no gemma defaults.
    EXPECT_FALSE(read_text(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
        "max_position_embeddings": 64})")
                     .tie_word_embeddings);
}

TEST(GemmaConfig, RopeParametersFullAndSlidingAttention) {
    const ModelConfig c = read_text(R"({
      "model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "max_position_embeddings": 512,
      "vocab_size": 128, "rope_theta": 5.0,
      "rope_parameters": {
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})");
    EXPECT_EQ(c.rope_theta, 1000000.0f);
    EXPECT_EQ(c.rope_local_theta, 10000.0f);
    ASSERT_TRUE(c.rope_scaling.has_value());
    EXPECT_EQ(c.rope_scaling->type, "linear");
}

TEST(GemmaConfig, Gemma2SoftcappingAndOtherFamiliesWindows) {
    const ModelConfig g2 = read_text(R"({
      "model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "max_position_embeddings": 8192,
      "vocab_size": 128, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
      "sliding_window": 4096})");
    EXPECT_EQ(g2.attn_logit_softcapping, 50.0f);
    EXPECT_EQ(g2.final_logit_softcapping, 30.0f);
    EXPECT_EQ(g2.sliding_window, 4096u);
    EXPECT_FALSE(g2.sliding_window_pattern.has_value());
    const ModelConfig other = read_text(R"({
      "model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "max_position_embeddings": 8192,
      "vocab_size": 128, "sliding_window": 0, "attn_logit_softcapping": "off"})");
    EXPECT_FALSE(other.sliding_window.has_value());
    EXPECT_FALSE(other.attn_logit_softcapping.has_value());
}

}  // namespace
}  // namespace rebox
