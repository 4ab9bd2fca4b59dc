// The Qwen3-Embedding-0.6B hyper-parameters as config.json gives them (docs/gguf.md §3.2: E=1024,
// H=16, Hkv=8, D=128, F=3072, 28 layers, vocab 151669), for tests that need a real-sized config.
#pragma once

#include "model/model_config.hpp"

namespace rebox::test {

// Config: ModelConfig (the writer's) or verify_ref::RefConfig (verify's own), same field names.
template <typename Config = ModelConfig>
inline Config qwen3_embedding_06b_config() {
    Config c;
    c.model_type = "qwen3";
    c.hidden_size = 1024;
    c.num_hidden_layers = 28;
    c.num_attention_heads = 16;
    c.num_key_value_heads = 8;
    c.head_dim = 128;
    c.intermediate_size = 3072;
    c.max_position_embeddings = 32768;
    c.vocab_size = 151669;
    c.rope_theta = 1000000.0f;
    c.rms_norm_eps = 1e-6f;
    return c;
}

}  // namespace rebox::test
