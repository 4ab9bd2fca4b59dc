// qwen35moe in the registry against hand-written tables from llama.cpp's qwen35moe loader
// (src/models/qwen35moe.cpp: a router, experts and a shared expert in every layer, the MTP ones
// too) and converter (conversion/qwen.py Qwen3_5MoeTextModel and its chain; Qwen2MoeModel's split
// of transformers' fused mlp.experts.gate_up_proj and its stacking of per-expert tensors):
// names both ways for the fused, per-expert and MTP experts, expert ne, the KVs in the converter's
// order with and without intermediate_size, and the refusals.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"

namespace rebox::arch {
namespace {

// Qwen3.6-35B-A3B's text_config keys scaled down: hidden 64, 4 layers with full attention every
// 2nd, 4 heads of 32 (2 kv heads), linear attention with 2 key / 4 value heads of 16, 1 MTP
// layer, 4 experts of 32 (2 used) and a shared expert of 48; no intermediate_size.
ModelConfig q35moe_config(const std::string& text_extra = "") {
    return parse_model_config(nlohmann::json::parse(
        R"({"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
            "text_config": {"model_type": "qwen3_5_moe_text", "hidden_size": 64,
            "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 32, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 16,
            "linear_value_head_dim": 16, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
            "full_attention_interval": 2, "mtp_num_hidden_layers": 1, "num_experts": 4,
            "num_experts_per_tok": 2, "moe_intermediate_size": 32,
            "shared_expert_intermediate_size": 48, "max_position_embeddings": 4096,
            "rms_norm_eps": 1e-06, "vocab_size": 100, "tie_word_embeddings": false,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
            "partial_rotary_factor": 0.25, "mrope_section": [2, 1, 1],
            "mrope_interleaved": true})" +
        text_extra + "}}"));
}

const Architecture& q35moe() { return *find_architecture("qwen35moe"); }

TEST(Qwen35MoeRegistry, NamesBothWays) {
    ASSERT_NE(find_architecture("qwen3_5_moe"), nullptr);
    ASSERT_EQ(find_architecture("qwen3_5_moe_text"), &q35moe());
    ASSERT_NE(&q35moe(), find_architecture("qwen35"));
    const std::tuple<const char*, const char*, const char*> rows[] = {
        // HF name, GGUF name, the HF spelling resolve_gguf gives back
        {"model.language_model.layers.0.mlp.gate.weight", "blk.0.ffn_gate_inp.weight",
         "layers.0.mlp.gate.weight"},
        {"model.language_model.layers.0.mlp.experts.3.up_proj.weight", "blk.0.ffn_up_exps.weight",
         "layers.0.mlp.experts.{e}.up_proj.weight"},
        {"model.language_model.layers.1.mlp.shared_expert_gate.weight",
         "blk.1.ffn_gate_inp_shexp.weight", "layers.1.mlp.shared_expert_gate.weight"},
        {"model.language_model.layers.1.mlp.shared_expert.down_proj.weight",
         "blk.1.ffn_down_shexp.weight", "layers.1.mlp.shared_expert.down_proj.weight"},
        {"mtp.layers.0.mlp.experts.0.gate_proj.weight", "blk.4.ffn_gate_exps.weight",
         "mtp.layers.0.mlp.experts.{e}.gate_proj.weight"},
        {"mtp.layers.0.mlp.shared_expert.up_proj.weight", "blk.4.ffn_up_shexp.weight",
         "mtp.layers.0.mlp.shared_expert.up_proj.weight"},
        {"model.language_model.layers.2.linear_attn.A_log", "blk.2.ssm_a",
         "layers.2.linear_attn.A_log"},
    };
    for (const auto& [hf, gguf, back_hf] : rows) {
        const auto ref = resolve_hf(q35moe(), hf, 4);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        const auto back = resolve_gguf(q35moe(), gguf, 4);
        ASSERT_TRUE(back.has_value()) << gguf;
        EXPECT_EQ(back->hf_name, back_hf) << gguf;
    }
    // transformers' fused experts (no ".weight"): gate_up_proj is the gate half, its other part
    // the up half; down_proj as it is.
    const auto gate_up =
        resolve_hf(q35moe(), "model.language_model.layers.1.mlp.experts.gate_up_proj", 4);
    ASSERT_TRUE(gate_up.has_value());
    EXPECT_EQ(gate_up->gguf_name, "blk.1.ffn_gate_exps.weight");
    EXPECT_EQ(gate_up->spec->rows, RowTransform::first_half_rows);
    const std::vector<TensorRef> parts = split_parts(q35moe(), *gate_up);
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_EQ(parts[0].gguf_name, "blk.1.ffn_up_exps.weight");
    EXPECT_EQ(parts[0].spec->rows, RowTransform::second_half_rows);
    const auto down =
        resolve_hf(q35moe(), "model.language_model.layers.1.mlp.experts.down_proj", 4);
    ASSERT_TRUE(down.has_value());
    EXPECT_EQ(down->gguf_name, "blk.1.ffn_down_exps.weight");
    EXPECT_TRUE(split_parts(q35moe(), *down).empty());
    for (const char* refused :
         {"model.layers.0.mlp.experts.gate_up_proj.weight", "model.layers.0.mlp.gate_proj.weight",
          "model.layers.0.mlp.experts.gate_proj", "model.layers.0.mlp.shared_expert_gate"})
        EXPECT_FALSE(resolve_hf(q35moe(), refused, 4).has_value()) << refused;
    // The dense record knows no experts.
    EXPECT_FALSE(
        resolve_hf(*find_architecture("qwen35"), "model.layers.0.mlp.experts.gate_up_proj", 4)
            .has_value());
}

TEST(Qwen35MoeRegistry, ShapesAndRequiredTensors) {
    const ModelConfig c = q35moe_config();
    EXPECT_FALSE(c.intermediate_size_given);
    EXPECT_EQ(c.layer_kinds, (std::vector<uint8_t>{0, 1, 0, 1, 2}));
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, std::optional<Ne>> rows[] = {
        {"blk.0.ffn_gate_inp.weight", Ne{64, 4}},
        {"blk.0.ffn_gate_exps.weight", Ne{64, 32, 4}},
        {"blk.0.ffn_up_exps.weight", Ne{64, 32, 4}},
        {"blk.0.ffn_down_exps.weight", Ne{32, 64, 4}},
        {"blk.1.ffn_gate_inp_shexp.weight", Ne{64, 1}},
        {"blk.1.ffn_gate_shexp.weight", Ne{64, 48}},
        {"blk.1.ffn_down_shexp.weight", Ne{48, 64}},
        {"blk.4.ffn_up_exps.weight", Ne{64, 32, 4}},
        {"blk.0.ssm_out.weight", Ne{64, 64}},
        {"blk.1.attn_q.weight", Ne{64, 256}},
        {"blk.0.ffn_gate.weight", std::nullopt},  // no dense feed-forward
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(q35moe(), c, name), ne) << name;
    const std::vector<std::string> required = required_tensors(q35moe(), c);
    // token_embd, output_norm, output; per linear layer the two norms and 9 linear-attention
    // tensors, per full layer the two norms, q/k/v/o and q/k norms; every layer 8 MoE tensors
    // (router, 3 stacked experts, the shared expert's gate and 3 projections): once each, the
    // fused rows being the per-expert ones' alternative.
    EXPECT_EQ(required.size(), 3u + 2 * (11 + 8) + 2 * (8 + 8));
    EXPECT_EQ(std::count(required.begin(), required.end(), "blk.0.ffn_gate_exps.weight"), 1);
    EXPECT_TRUE(config_problems(q35moe(), c).empty());
}

// The {arch}.* keys as Qwen3_5MoeTextModel's chain writes them (TextModel, Qwen2MoeModel,
// _QwenMtpMixin, Qwen3NextModel, _Qwen35MRopeMixin), in order.
std::vector<std::string> q35moe_keys(const ModelConfig& c, std::map<std::string, uint32_t>* u32) {
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("qwen35moe.")) continue;
        keys.push_back(kv.key.substr(10));
        if (const auto v = kv.value.as_u32()) (*u32)[keys.back()] = *v;
    }
    return keys;
}

TEST(Qwen35MoeRegistry, KvsInTheConvertersOrder) {
    std::map<std::string, uint32_t> u32;
    std::vector<std::string> want = {"block_count",
                                     "context_length",
                                     "embedding_length",
                                     "attention.head_count",
                                     "attention.head_count_kv",
                                     "rope.dimension_sections",
                                     "rope.freq_base",
                                     "attention.layer_norm_rms_epsilon",
                                     "expert_count",
                                     "expert_used_count",
                                     "attention.key_length",
                                     "attention.value_length",
                                     "expert_feed_forward_length",
                                     "expert_shared_feed_forward_length",
                                     "nextn_predict_layers",
                                     "ssm.conv_kernel",
                                     "ssm.state_size",
                                     "ssm.group_count",
                                     "ssm.time_step_rank",
                                     "ssm.inner_size",
                                     "full_attention_interval",
                                     "rope.dimension_count"};
    EXPECT_EQ(q35moe_keys(q35moe_config(), &u32), want);
    EXPECT_EQ(u32["expert_count"], 4u);
    EXPECT_EQ(u32["expert_used_count"], 2u);
    EXPECT_EQ(u32["expert_feed_forward_length"], 32u);
    EXPECT_EQ(u32["expert_shared_feed_forward_length"], 48u);
    EXPECT_EQ(u32["block_count"], 5u);
    // A config.json with intermediate_size: TextModel writes it after embedding_length.
    want.insert(want.begin() + 3, "feed_forward_length");
    u32.clear();
    EXPECT_EQ(q35moe_keys(q35moe_config(R"(, "intermediate_size": 96)"), &u32), want);
    EXPECT_EQ(u32["feed_forward_length"], 96u);
}

TEST(Qwen35MoeRegistry, Refusals) {
    const auto problems = [](const std::string& extra) {
        return config_problems(q35moe(), q35moe_config(extra));
    };
    for (const char* extra :
         {R"(, "moe_intermediate_size": null)", R"(, "shared_expert_intermediate_size": null)",
          R"(, "num_experts_per_tok": 5)", R"(, "linear_num_value_heads": 3)"})
        EXPECT_EQ(problems(extra).size(), 1u) << extra;
}

}  // namespace
}  // namespace rebox::arch
