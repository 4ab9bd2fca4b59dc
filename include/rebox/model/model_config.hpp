// config.json of a Hugging Face model directory: architecture and hyper-parameters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rebox {

struct ModelConfig {
    std::string model_type;                 // "qwen3", "qwen2", "llama"
    std::vector<std::string> architectures;  // e.g. ["Qwen3ForCausalLM"]
    uint32_t hidden_size = 0;
    uint32_t num_hidden_layers = 0;
    uint32_t num_attention_heads = 0;
    uint32_t num_key_value_heads = 0;  // defaults to num_attention_heads
    uint32_t head_dim = 0;             // defaults to hidden_size / num_attention_heads
    uint32_t intermediate_size = 0;
    uint32_t max_position_embeddings = 0;
    uint32_t vocab_size = 0;
    float rope_theta = 10000.0f;
    float rms_norm_eps = 1e-6f;
    bool tie_word_embeddings = false;
    std::optional<uint32_t> bos_token_id;
    std::optional<uint32_t> eos_token_id;
    std::string name_or_path;  // "_name_or_path" when present
};

// Throws rebox::Error (input class) naming config.json and the field for a missing/ill-typed field.
ModelConfig read_model_config(const std::filesystem::path& config_json);

}  // namespace rebox
