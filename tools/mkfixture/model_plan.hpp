// What a fixture contains: the architecture numbers of a preset and the list of tensors (with
// their quantization as written and as claimed by the metadata), after defects are applied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mkfixture {

struct Dims {
    int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
    int64_t vocab = 0;
    // Mixture of experts (0 for a dense model): experts per layer, used per token, one expert's
    // width (moe_intermediate_size), the qwen2_moe shared expert's width.
    int64_t experts = 0, experts_used = 0, moe_ffn = 0, shared_ffn = 0;
    int64_t embedding_rows = 0;  // rows of embed_tokens: vocab, or more (gemma3 fixtures)
};

// A quantized weight: the codes/scales/mins are generated for (rows, cols, bits, group); the
// metadata entry claims meta_* (equal unless a defect lies).
struct QuantTensor {
    std::string name;
    int64_t rows = 0, cols = 0;
    int bits = 0, group = 0;
    int64_t meta_rows = 0, meta_cols = 0;
    int meta_bits = 0, meta_group = 0;
    bool drop_last_byte = false;  // defect bytecount
    bool dirty_padding = false;   // defect padding: set every bit after the last code
    bool corners = false;         // exactness corner cases in the first groups
    bool mlx_float = false;       // MLX recipes: the module stays unquantized (a BF16 weight)
    double gain = 1.0;  // the values' magnitude times this (reranker heads: logits away from 0)
    // MLX stacked experts (switch_mlp): `experts` > 0 experts of rows/experts rows each, written
    // as [experts, rows/experts, ...]; the codes are those of the rows in order.
    int64_t experts = 0;
    int64_t code_count() const { return rows * cols; }
    uint64_t packed_bytes() const { return (static_cast<uint64_t>(code_count()) * bits + 7) / 8; }
    int64_t group_count() const { return code_count() / group; }
};

// A float vector of `length` values center +- spread: norm weights (near 1) or, for qwen2, the
// q/k/v projection biases (near 0). F32 in mcq fixtures, BF16 in MLX ones.
struct NormTensor {
    std::string name;
    int64_t length = 0;
    double center = 1.0, spread = 0.05;
    bool scalar = false;  // one value stored with shape [] (apertus' xIELU beta / eps)
    // A float tensor of more dims (a vision tower's weights, qwen35's conv1d [channels, 1,
    // kernel]): its shape; `length` is their product.
    std::vector<int64_t> dims{};
    std::vector<int64_t> shape() const {
        if (!dims.empty()) return dims;
        return scalar ? std::vector<int64_t>{} : std::vector<int64_t>{length};
    }
};

// One unit of storage: a quantized triple or a norm (a triple is never split across shards).
struct PlanUnit {
    bool quantized = false;
    QuantTensor quant;
    NormTensor norm;
    uint64_t byte_count() const;
};

struct PlanOptions {
    std::string preset;  // "tiny" | "qwen3-0.6b" | "qwen3-8b"
    // "qwen3" | "qwen2" (no q/k norms, q/k/v biases) | "llama" | "mistral" (no q/k norms, no
    // biases; mistral with head_dim 32 != hidden/heads) | "phi3" (fused qkv_proj and gate_up_proj);
    // all but qwen3 for tiny only.
    // "gemma" | "gemma2" | "gemma3" (tiny only): tied, norms stored as HF stores them (around 0:
    // the model uses 1 + weight); gemma2/3 add pre/post feed-forward and post-attention norms,
    // gemma3 q/k norms and an embedding with 32 rows past vocab_size.
    std::string arch = "qwen3";
    // gemma3: a Gemma3ForConditionalGeneration layout: the text model under
    // "language_model.model.", plus a whole tiny SigLIP tower and the projector (float).
    bool multimodal = false;
    // qwen2_vl / qwen2_5_vl (qwen2's text model plus the vision tower, qwen2vl_files.hpp):
    // transformers >= 4.52's model.language_model.* / model.visual.* names, and the Conv3D patch
    // embedding's temporal size.
    bool vl_split = false;
    int64_t vl_temporal = 2;
    int64_t vl_merger_width = 0;  // the merger's output; 0: the text model's width
    int64_t vocab = 0;            // for tiny: the tokenizer's token count
    // tiny: hidden_size other than 64 (a multiple of 32; 96 with mistral's head_dim 32 makes layer
    // 0's groups of 64 run across its rows of 96 values). The embedding (and lm_head) then use
    // groups of 32 when 64 does not divide rows x hidden.
    int64_t hidden = 0;
    bool attention_bias = false;  // llama/mistral: q/k/v projection biases
    bool prefix_model = false;
    bool untied = false;
    bool corners = false;
    std::string defect;  // "" or a defect name
    // MoE archs ("qwen3_moe" | "qwen2_moe" | "mixtral"): experts per layer, used per token, one
    // expert's width; stacked_experts: MLX switch_mlp tensors instead of one tensor per expert.
    int64_t experts = 4, experts_used = 2, moe_ffn = 64;
    bool stacked_experts = false;
    // "" | "expert-missing" (the last expert of layer 0's up projection left out) |
    // "expert-bits" (expert 1 of layer 0's gate projection at 5 bits, the others at 4 or 3) |
    // "experts-count" (config.json num_experts one less than the tensors hold)
    std::string moe_defect;
};

struct ModelPlan {
    Dims dims;
    std::vector<PlanUnit> units;
};

// Throws std::runtime_error for an unknown preset or defect.
ModelPlan make_plan(const PlanOptions& options);

// Names of the MoE defects (PlanOptions::moe_defect).
const std::vector<std::string>& moe_defect_names();

// Names of the defects this generator knows (those that change tensors or tokenizer files).
const std::vector<std::string>& defect_names();

// Splits units into `shard_count` contiguous runs of about equal bytes (each non-empty).
std::vector<std::vector<PlanUnit>> split_into_shards(const std::vector<PlanUnit>& units,
                                                     int shard_count);

// A quantized weight unit of `rows` x `cols` at `bits` in groups of `group` (metadata equal to
// the stored shape).
struct LayerQuant {
    int bits, group;
};
PlanUnit quant_unit(const std::string& name, int64_t rows, int64_t cols, LayerQuant q);
// A float vector unit (NormTensor): `length` values center +- spread.
PlanUnit vector_unit(const std::string& name, int64_t length, double center, double spread);

}  // namespace mkfixture
