// seed_oss (Seed-OSS-36B): llama.cpp's seed_oss graph (src/models/seed-oss.cpp) as the converter's
// SeedOssModel (conversion/olmo.py, a plain TextModel) writes it: NEOX rope (no row permutation),
// optional q/k/v biases (attention_bias), no o_proj bias, and HF's post_attention_layernorm named
// post_attention_norm (gguf-py maps it to ATTN_POST_NORM, the seed_oss tensor list has no
// ffn_norm); head_dim (128) differs from hidden/heads.
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace seed_oss_record {

using enum Presence;

constexpr std::string_view kModelTypes[] = {"seed_oss"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(std::array{kAttnNorm, attn_q(optional), attn_k(optional),
                                        attn_v(optional), attn_output(), kPostAttentionNorm},
                             dense_ffn());
// The loader takes output.weight when present, else token_embd (tied).
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// TextModel.set_gguf_parameters as SeedOssModel inherits it: key/value length from head_dim
// (config.json always has one here: kDefaults), no rope.dimension_count (llama.cpp takes the
// rotary width from key_length).
constexpr ArchKv kKvs[] = {ArchKv::context_length, ArchKv::embedding_length,
                           ArchKv::block_count,    ArchKv::feed_forward_length,
                           ArchKv::head_count,     ArchKv::head_count_kv,
                           ArchKv::rope_freq_base, ArchKv::rms_epsilon,
                           ArchKv::key_length,     ArchKv::value_length};
// SeedOssConfig's head_dim when config.json leaves it out (the converter reads it through
// transformers).
constexpr ConfigDefault kDefaults[] = {{"head_dim", "128"}};

constexpr Architecture kSeedOss = [] {
    Architecture a{"seed_oss", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.config_defaults = kDefaults;
    // seed-oss.cpp passes the output's .scale; build_ffn gets none.
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace seed_oss_record

const Architecture& seed_oss_architecture() { return seed_oss_record::kSeedOss; }

}  // namespace rebox::arch::detail
