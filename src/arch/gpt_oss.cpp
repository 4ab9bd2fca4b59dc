// gpt_oss (gpt-oss-20b, gpt-oss-120b): llama.cpp's gpt-oss graph (docs/architectures.md). Per
// layer: q/k/v/o with biases (NEOX rope, no permutation), one attention sink per head, a router
// with a bias, and experts stacked [E, rows, cols] with biases [E, rows]. The checkpoint's MXFP4
// experts are read by source/gpt_oss_reader, which names them as this table does: gate_up_proj
// becomes mlp.experts.gate_proj / up_proj (both the whole interleaved tensor; the even / odd rows
// kept here), down_proj becomes mlp.experts.down_proj, self_attn.sinks gets ".weight". KVs as
// GptOssModel.set_gguf_parameters writes them, yarn rope scaling included.
#include <cstdio>
#include <string>

#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace gpt_oss_record {

constexpr std::string_view kModelTypes[] = {"gpt_oss"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};

// One stacked-experts tensor as the reader presents it: a single [E, rows, cols] source with a
// [E, rows] bias (ne {rows, E}).
constexpr TensorSpec gpt_oss_experts(std::string_view hf, std::string_view gguf, bool down,
                                     RowTransform rows) {
    return {hf,
            gguf,
            Presence::required,
            Presence::required,
            3,
            down ? std::array{Dim::expert_ffn, Dim::hidden, Dim::experts}
                 : std::array{Dim::hidden, Dim::expert_ffn, Dim::experts},
            rows};
}

constexpr TensorSpec kLayer[] = {
    kAttnNorm,
    attn_q(Presence::required),
    attn_k(Presence::required),
    attn_v(Presence::required),
    attn_output(Presence::required),
    {"self_attn.sinks", "attn_sinks", Presence::required, Presence::absent, 1, {Dim::heads}},
    // HF post_attention_layernorm is the pre-FFN norm; llama.cpp names it post_attention_norm.
    {"post_attention_layernorm",
     "post_attention_norm",
     Presence::required,
     Presence::absent,
     1,
     {Dim::hidden}},
    {"mlp.router",
     "ffn_gate_inp",
     Presence::required,
     Presence::required,
     2,
     {Dim::hidden, Dim::experts},
     RowTransform::none,
     SourceRole::router_f32},
    gpt_oss_experts("mlp.experts.gate_proj", "ffn_gate_exps", false, RowTransform::even_rows),
    gpt_oss_experts("mlp.experts.up_proj", "ffn_up_exps", false, RowTransform::odd_rows),
    gpt_oss_experts("mlp.experts.down_proj", "ffn_down_exps", true, RowTransform::none),
};
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};

// TextModel.set_gguf_parameters (no rope.dimension_count; yarn from rope_scaling), then
// GptOssModel's sliding_window and expert_feed_forward_length (= intermediate_size).
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,      ArchKv::context_length,
    ArchKv::embedding_length, ArchKv::feed_forward_length,
    ArchKv::head_count,       ArchKv::head_count_kv,
    ArchKv::rope_freq_base,   ArchKv::rms_epsilon,
    ArchKv::expert_count,     ArchKv::expert_used_count,
    ArchKv::key_length,       ArchKv::value_length,
    ArchKv::sliding_window,   ArchKv::expert_feed_forward_length_ffn,
};

// What llama.cpp's gpt-oss graph hard-codes must be what config.json asks for: the SwiGLU clamp
// at 7 and sliding-window layers on even indices (transformers' GptOssConfig defaults
// swiglu_limit to 7 and layer_types to that alternation).
void hard_coded_problems(const Architecture&, const ModelConfig& config,
                         std::vector<std::string>& problems) {
    constexpr double kSwigluLimit = 7.0;
    if (config.swiglu_limit && *config.swiglu_limit != kSwigluLimit) {
        char limit[64];
        std::snprintf(limit, sizeof limit, "%g", *config.swiglu_limit);
        problems.push_back("swiglu_limit " + std::string(limit) +
                           ": llama.cpp's gpt-oss graph clamps the SwiGLU at 7 (hard-coded)");
    }
    if (config.layer_types.empty()) return;
    bool alternating = config.layer_types.size() == config.num_hidden_layers;
    for (size_t i = 0; alternating && i < config.layer_types.size(); ++i)
        alternating =
            config.layer_types[i] == (i % 2 == 0 ? "sliding_attention" : "full_attention");
    if (!alternating)
        problems.push_back(
            "layer_types do not alternate sliding_attention / full_attention "
            "starting with sliding_attention over num_hidden_layers " +
            std::to_string(config.num_hidden_layers) +
            ": llama.cpp's gpt-oss graph hard-codes that pattern");
}

constexpr Architecture kGptOss{.gguf_arch = "gpt-oss",
                               .model_types = kModelTypes,
                               .model_first = kFirst,
                               .layer = kLayer,
                               .model_last = kLast,
                               .kvs = kKvs,
                               .extras = {},
                               .rope_yarn = true,
                               .config_checks = hard_coded_problems};

}  // namespace gpt_oss_record

const Architecture& gpt_oss_architecture() { return gpt_oss_record::kGptOss; }

}  // namespace rebox::arch::detail
