// smollm3 (SmolLM3-3B): llama.cpp's smollm3 graph (src/models/smollm3.cpp) as the converter's
// SmolLM3Model writes it: LlamaModel unchanged but for the GGUF name (conversion/llama.py), so
// llama's q/k row permutation, its KVs (vocab_size, rope.dimension_count) and its optional q/k/v
// biases; no o_proj or feed-forward bias (the loader has none) and no rope_freqs (the loader does
// not take it: llama3 rope scaling is refused). The no-rope layers are no tensor and no KV: the
// graph hard-codes rope off on every 4th layer, so config.json's no_rope_layers must say that.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace smollm3_record {

using enum Presence;

constexpr std::string_view kModelTypes[] = {"smollm3"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer =
    join(std::array{kAttnNorm, attn_q(optional, RowTransform::rope_pairs_q_heads),
                    attn_k(optional, RowTransform::rope_pairs_kv_heads), attn_v(optional),
                    attn_output(), kFfnNorm},
         dense_ffn());
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// TextModel.set_gguf_parameters (key/value length only from a head_dim in config.json), then
// LlamaModel's vocab_size and rope.dimension_count (head_dim, else hidden / heads).
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length, ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,       ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,      ArchKv::key_length_given,
    ArchKv::value_length_given,  ArchKv::vocab_size,       ArchKv::rope_dimension_count};

// SmolLM3Config: no_rope_layers[i] is 1 where layer i applies rope; when config.json has none,
// transformers makes every no_rope_layer_interval-th (default 4) layer go without.
void read_rope_layers(const nlohmann::json& root, ModelConfig& config) {
    config.rope_layers.clear();
    const auto listed = root.find("no_rope_layers");
    if (listed != root.end() && !listed->is_null()) {
        if (!listed->is_array())
            throw_input_error("config.json", "no_rope_layers", "not an array",
                              "one 0 or 1 per layer");
        for (const nlohmann::json& flag : *listed) {
            if (!flag.is_number_integer() || (flag != 0 && flag != 1))
                throw_input_error("config.json", "no_rope_layers",
                                  "holds " + flag.dump() + ", not 0 or 1", "one 0 or 1 per layer");
            config.rope_layers.push_back(flag == 1);
        }
        return;
    }
    const auto interval = root.find("no_rope_layer_interval");
    const int64_t every =
        interval != root.end() && interval->is_number_integer() ? interval->get<int64_t>() : 4;
    if (every <= 0)
        throw_input_error("config.json", "no_rope_layer_interval", "not positive",
                          "a positive layer count (SmolLM3: 4)");
    for (uint32_t i = 0; i < config.num_hidden_layers; ++i)
        config.rope_layers.push_back((i + 1) % every != 0);
}

void no_rope_problems(const Architecture&, const ModelConfig& config,
                      std::vector<std::string>& problems) {
    bool same = config.rope_layers.size() == config.num_hidden_layers;
    for (size_t i = 0; same && i < config.rope_layers.size(); ++i)
        same = config.rope_layers[i] == ((i + 1) % 4 != 0);
    if (!same)
        problems.push_back(
            "no_rope_layers: llama.cpp's smollm3 graph leaves rope out on every 4th layer "
            "(hard-coded) and on no other; config.json asks for another pattern over " +
            std::to_string(config.num_hidden_layers) + " layers");
}

constexpr Architecture kSmolLm3 = [] {
    Architecture a{"smollm3", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.finish_config = read_rope_layers;
    a.config_checks = no_rope_problems;
    // smollm3.cpp passes the output's .scale; build_ffn gets none.
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace smollm3_record

const Architecture& smollm3_architecture() { return smollm3_record::kSmolLm3; }

}  // namespace rebox::arch::detail
