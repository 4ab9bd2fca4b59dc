// qwen2 (Qwen2, Qwen2.5): llama.cpp's qwen2 graph (docs/gguf.md §3.2): q/k/v biases, an optional
// output bias, no q/k norms, NEOX rope (no row permutation).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace qwen2_record {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"qwen2"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(kQwen2Attention, dense_ffn());
// qwen2.cpp loads an optional output.bias [V].
constexpr TensorSpec kLast[] = {kOutputNorm, output_row(required_unless_tied, optional)};
constexpr auto kKvs = kDecoderKvs;

constexpr Architecture kQwen2 = [] {
    Architecture a{"qwen2", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace qwen2_record

const Architecture& qwen2_architecture() { return qwen2_record::kQwen2; }

}  // namespace rebox::arch::detail
