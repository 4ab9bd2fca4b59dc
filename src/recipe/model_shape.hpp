// The hyper-parameters llama-quantize's type choice reads (llama_hparams after load_hparams):
// block count, heads and KV heads of layer 0 (n_gqa), expert count, and whether llama.cpp would
// call the model LLM_TYPE_70B. Read from a GGUF's KVs, for any architecture that has them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rebox/gguf_value.hpp"

namespace rebox {

struct QuantModelShape {
    std::string arch;        // general.architecture
    int n_layer = 0;         // {arch}.block_count (n_layer_all)
    uint32_t n_head = 0;     // {arch}.attention.head_count, layer 0 when an array
    uint32_t n_head_kv = 0;  // {arch}.attention.head_count_kv, layer 0; n_head when absent
    uint32_t n_expert = 0;   // {arch}.expert_count, 0 when absent
    bool type_70b = false;   // llama.cpp's LLM_TYPE_70B (the attn_v Q3_K/Q4_K -> Q5_K rule)
    // Throws for a clip (mmproj) file, which has no layers: llama.cpp's n_head(0) aborts there
    // (GGML_ABORT in llama_hparams::n_head), so llama-quantize dies on the types that read it.
    uint32_t n_gqa() const;
};

// Throws Error (input class) naming `file` and the key when general.architecture or
// {arch}.block_count is missing or not an integer in [1, 4096].
QuantModelShape quant_model_shape(const std::vector<GgufKV>& kvs, const std::string& file);

}  // namespace rebox
