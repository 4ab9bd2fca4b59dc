// qwen3 (Qwen3, Qwen3-Embedding): llama.cpp's qwen3 graph (docs/gguf.md §3.2): per-head q/k
// RMSNorms, no biases, NEOX rope (no row permutation).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace qwen3_record {

constexpr std::string_view kModelTypes[] = {"qwen3"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(kQwen3Attention, dense_ffn());
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// Qwen3's head_dim (128) differs from hidden/heads (1024/16): key/value length are explicit.
constexpr auto kKvs = kDecoderKvs;

constexpr Architecture kQwen3 = [] {
    Architecture a{"qwen3", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.nvfp4_scales = {.output = true, .dense_ffn = true};
    return a;
}();

}  // namespace qwen3_record

const Architecture& qwen3_architecture() { return qwen3_record::kQwen3; }

}  // namespace rebox::arch::detail
