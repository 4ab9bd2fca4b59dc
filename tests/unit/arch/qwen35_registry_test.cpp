// qwen35 in the registry against hand-written tables from llama.cpp's qwen35 loader
// (src/models/qwen35.cpp: layer i recurrent when (i + 1) % full_attention_interval != 0, MTP layers
// after the last full attention ones, the tensor sizes it creates) and converter
// (conversion/qwen.py Qwen3_5TextModel and its chain; gguf-py's tensor_mapping for the names):
// names both ways with the MTP renames and the suffix-less A_log / dt_bias, ne per layer kind from
// a hand-written config.json, the KVs in the converter's order, and the refusals.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

// Qwen3.5-0.8B's text_config keys scaled down: hidden 64, 4 layers with full attention every
// 2nd, 4 heads of 32 (2 kv heads), linear attention with 2 key / 4 value heads of 16, 1 MTP
// layer; as a multimodal config (the text model under text_config).
ModelConfig q35_config(const std::string& text_extra = "") {
    return parse_model_config(nlohmann::json::parse(
        R"({"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
            "text_config": {"model_type": "qwen3_5_text", "hidden_size": 64,
            "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 32, "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 2,
            "linear_num_value_heads": 4, "full_attention_interval": 2,
            "mtp_num_hidden_layers": 1, "max_position_embeddings": 4096, "rms_norm_eps": 1e-06,
            "vocab_size": 100, "tie_word_embeddings": false,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
            "partial_rotary_factor": 0.25, "mrope_section": [2, 1, 1],
            "mrope_interleaved": true})" +
        text_extra + "}}"));
}

const Architecture& q35() { return *find_architecture("qwen35"); }

TEST(Qwen35Registry, NamesBothWays) {
    ASSERT_NE(find_architecture("qwen3_5"), nullptr);
    ASSERT_EQ(find_architecture("qwen3_5_text"), &q35());
    const std::tuple<const char*, const char*> rows[] = {
        {"model.language_model.embed_tokens.weight", "token_embd.weight"},
        {"model.language_model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
        {"model.language_model.layers.0.linear_attn.in_proj_qkv.weight", "blk.0.attn_qkv.weight"},
        {"model.language_model.layers.0.linear_attn.in_proj_z.weight", "blk.0.attn_gate.weight"},
        {"model.language_model.layers.0.linear_attn.in_proj_b.weight", "blk.0.ssm_beta.weight"},
        {"model.language_model.layers.0.linear_attn.in_proj_a.weight", "blk.0.ssm_alpha.weight"},
        {"model.language_model.layers.0.linear_attn.conv1d.weight", "blk.0.ssm_conv1d.weight"},
        {"model.language_model.layers.0.linear_attn.A_log", "blk.0.ssm_a"},
        {"model.language_model.layers.0.linear_attn.dt_bias", "blk.0.ssm_dt.bias"},
        {"model.language_model.layers.0.linear_attn.norm.weight", "blk.0.ssm_norm.weight"},
        {"model.language_model.layers.0.linear_attn.out_proj.weight", "blk.0.ssm_out.weight"},
        {"model.language_model.layers.0.post_attention_layernorm.weight",
         "blk.0.post_attention_norm.weight"},
        {"model.language_model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
        {"model.language_model.layers.1.self_attn.k_norm.weight", "blk.1.attn_k_norm.weight"},
        {"model.language_model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight"},
        {"model.language_model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
        // _QwenMtpMixin: after the 4 layers.
        {"mtp.fc.weight", "blk.4.nextn.eh_proj.weight"},
        {"mtp.pre_fc_norm_embedding.weight", "blk.4.nextn.enorm.weight"},
        {"mtp.pre_fc_norm_hidden.weight", "blk.4.nextn.hnorm.weight"},
        {"mtp.norm.weight", "blk.4.nextn.shared_head_norm.weight"},
        {"mtp.layers.0.self_attn.q_proj.weight", "blk.4.attn_q.weight"},
        {"mtp.layers.0.mlp.up_proj.weight", "blk.4.ffn_up.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(q35(), hf, 4);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        const auto back = resolve_gguf(q35(), gguf, 4);
        ASSERT_TRUE(back.has_value()) << gguf;
        // The checkpoint's spelling without "model." / "language_model.".
        const std::string want = strip_model_prefix(hf);
        EXPECT_EQ(back->hf_name, want) << gguf;
    }
    // The MTP names need the layer count; a second MTP layer's head does not exist.
    EXPECT_FALSE(resolve_hf(q35(), "mtp.fc.weight").has_value());
    EXPECT_EQ(resolve_hf(q35(), "mtp.layers.1.input_layernorm.weight", 4)->gguf_name,
              "blk.5.attn_norm.weight");
    EXPECT_EQ(resolve_gguf(q35(), "blk.5.nextn.eh_proj.weight", 4)->hf_name, "");
    for (const char* refused :
         {"model.layers.0.linear_attn.A_log.weight", "model.layers.0.linear_attn.ssm_a",
          "model.layers.0.self_attn.q_proj.bias", "mtp.fc.bias.weight"})
        EXPECT_FALSE(resolve_hf(q35(), refused, 4).has_value()) << refused;
    EXPECT_TRUE(is_left_out(q35(), "model.visual.blocks.0.attn.qkv.weight"));
}

TEST(Qwen35Registry, ShapesPerLayerKind) {
    const ModelConfig c = q35_config();
    ASSERT_TRUE(c.linear_attention.has_value());
    EXPECT_EQ(c.layer_kinds, (std::vector<uint8_t>{0, 1, 0, 1, 2}));  // linear, full, ..., MTP
    EXPECT_EQ(c.nextn_layers, 1u);
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, std::optional<Ne>> rows[] = {
        // 2 * 2 key heads * 16 + 4 value heads * 16 = 128 rows of in_proj_qkv and conv1d.
        {"blk.0.attn_qkv.weight", Ne{64, 128}},
        {"blk.0.attn_gate.weight", Ne{64, 64}},
        {"blk.0.ssm_conv1d.weight", Ne{4, 128}},
        {"blk.0.ssm_a", Ne{4}},
        {"blk.0.ssm_dt.bias", Ne{4}},
        {"blk.0.ssm_beta.weight", Ne{64, 4}},
        {"blk.0.ssm_norm.weight", Ne{16}},
        {"blk.0.ssm_out.weight", Ne{64, 64}},
        {"blk.0.ffn_gate.weight", Ne{64, 128}},
        {"blk.0.attn_q.weight", std::nullopt},  // a linear-attention layer
        // q_proj: 2 * 4 heads * 32 (query and gate).
        {"blk.1.attn_q.weight", Ne{64, 256}},
        {"blk.1.attn_output.weight", Ne{128, 64}},
        {"blk.1.attn_q_norm.weight", Ne{32}},
        {"blk.1.ssm_a", std::nullopt},
        {"blk.4.attn_q.weight", Ne{64, 256}},
        {"blk.4.nextn.eh_proj.weight", Ne{128, 64}},
        {"blk.4.nextn.enorm.weight", Ne{64}},
        {"blk.4.ssm_out.weight", std::nullopt},
        {"blk.3.nextn.eh_proj.weight", std::nullopt},  // not an MTP layer
        {"blk.5.attn_q.weight", std::nullopt},         // past the MTP layer
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(q35(), c, name), ne) << name;
    const std::vector<std::string> required = required_tensors(q35(), c);
    const auto has = [&](const char* name) {
        return std::find(required.begin(), required.end(), name) != required.end();
    };
    EXPECT_TRUE(has("blk.0.ssm_a"));
    EXPECT_TRUE(has("blk.2.ssm_dt.bias"));
    EXPECT_FALSE(has("blk.0.attn_q.weight"));
    EXPECT_TRUE(has("blk.3.attn_q.weight"));
    EXPECT_FALSE(has("blk.3.ssm_a"));
    EXPECT_FALSE(has("blk.4.attn_q.weight"));  // the converter keeps what the checkpoint has
    EXPECT_TRUE(has("output.weight"));
    // token_embd, output_norm, output; per linear layer the two norms, 9 linear-attention
    // tensors and 3 feed-forward ones; per full layer the two norms, q/k/v/o, q/k norms, 3.
    EXPECT_EQ(required.size(), 3u + 2 * 14 + 2 * 11);
}

TEST(Qwen35Registry, TransformsOnTheRightTensors) {
    const auto spec = [](const char* hf) { return resolve_hf(q35(), hf, 4)->spec; };
    EXPECT_EQ(spec("model.layers.0.linear_attn.in_proj_qkv.weight")->rows,
              RowTransform::v_heads_after_qk);
    EXPECT_EQ(spec("model.layers.0.linear_attn.conv1d.weight")->rows,
              RowTransform::v_heads_after_qk);
    EXPECT_TRUE(spec("model.layers.0.linear_attn.conv1d.weight")->squeeze);
    EXPECT_EQ(spec("model.layers.0.linear_attn.in_proj_z.weight")->rows,
              RowTransform::v_heads_rows);
    EXPECT_EQ(spec("model.layers.0.linear_attn.A_log")->rows, RowTransform::v_heads_single);
    EXPECT_EQ(spec("model.layers.0.linear_attn.A_log")->values, ValueTransform::neg_exp);
    EXPECT_EQ(spec("model.layers.0.linear_attn.out_proj.weight")->rows,
              RowTransform::v_heads_columns);
    // + 1 on every norm but linear_attn.norm; q_proj moves nothing.
    for (const char* plus_one :
         {"model.layers.0.input_layernorm.weight", "model.layers.1.self_attn.q_norm.weight",
          "model.norm.weight", "mtp.pre_fc_norm_hidden.weight", "mtp.norm.weight",
          "mtp.layers.0.post_attention_layernorm.weight"})
        EXPECT_EQ(spec(plus_one)->values, ValueTransform::add_one) << plus_one;
    EXPECT_EQ(spec("model.layers.0.linear_attn.norm.weight")->values, ValueTransform::none);
    EXPECT_EQ(spec("model.layers.1.self_attn.q_proj.weight")->rows, RowTransform::none);
    EXPECT_EQ(spec("mtp.fc.weight")->values, ValueTransform::none);
}

TEST(Qwen35Registry, KvsInTheConvertersOrder) {
    const ModelConfig c = q35_config();
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    std::map<std::string, std::optional<uint32_t>> u32;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("qwen35.")) continue;
        keys.push_back(kv.key.substr(7));
        u32[kv.key.substr(7)] = kv.value.as_u32();
        if (kv.key == "qwen35.rope.dimension_sections") {
            ASSERT_EQ(kv.value.array.size(), 4u);
            EXPECT_EQ(kv.value.elem_type, GgufType::INT32);
            EXPECT_EQ(std::get<int64_t>(kv.value.array[0]), 2);
            EXPECT_EQ(std::get<int64_t>(kv.value.array[3]), 0);  // padded to 4
        }
    }
    EXPECT_EQ(u32["block_count"], 5u);           // 4 + 1 MTP
    EXPECT_EQ(u32["rope.dimension_count"], 8u);  // int(32 * 0.25)
    EXPECT_EQ(u32["ssm.inner_size"], 64u);       // 16 * 4
    EXPECT_EQ(u32["ssm.group_count"], 2u);
    EXPECT_EQ(u32["ssm.time_step_rank"], 4u);
    EXPECT_EQ(u32["ssm.state_size"], 16u);
    EXPECT_EQ(u32["ssm.conv_kernel"], 4u);
    EXPECT_EQ(u32["full_attention_interval"], 2u);
    EXPECT_EQ(u32["nextn_predict_layers"], 1u);
    const std::vector<std::string> want = {"block_count",
                                           "context_length",
                                           "embedding_length",
                                           "feed_forward_length",
                                           "attention.head_count",
                                           "attention.head_count_kv",
                                           "rope.dimension_sections",
                                           "rope.freq_base",
                                           "attention.layer_norm_rms_epsilon",
                                           "attention.key_length",
                                           "attention.value_length",
                                           "nextn_predict_layers",
                                           "ssm.conv_kernel",
                                           "ssm.state_size",
                                           "ssm.group_count",
                                           "ssm.time_step_rank",
                                           "ssm.inner_size",
                                           "full_attention_interval",
                                           "rope.dimension_count"};
    EXPECT_EQ(keys, want);
    // Without mrope_section: _Qwen35MRopeMixin's [11, 11, 10, 0], last; without MTP layers no
    // nextn_predict_layers and block_count 4.
    ModelConfig plain = q35_config(R"(, "mtp_num_hidden_layers": 0)");
    plain.rope_sections.clear();
    input.config = &plain;
    std::vector<std::string> last;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (kv.key == "qwen35.nextn_predict_layers") ADD_FAILURE() << "no MTP layers";
        if (kv.key == "qwen35.block_count") {
            EXPECT_EQ(kv.value.as_u32(), 4u);
        }
        if (kv.key.starts_with("qwen35.")) last.push_back(kv.key);
    }
    ASSERT_FALSE(last.empty());
    EXPECT_EQ(last.back(), "qwen35.rope.dimension_sections");
}

TEST(Qwen35Registry, Refusals) {
    const auto problems = [](const std::string& extra) {
        return config_problems(q35(), q35_config(extra));
    };
    EXPECT_TRUE(problems("").empty());
    // layer_types as Qwen3.5 lists them: consistent with the interval.
    EXPECT_TRUE(problems(R"(, "layer_types": ["linear_attention", "full_attention",
        "linear_attention", "full_attention"])")
                    .empty());
    for (const char* extra :
         {R"(, "layer_types": ["full_attention", "full_attention", "linear_attention",
             "full_attention"])",
          R"(, "layer_types": ["linear_attention", "full_attention"])",
          R"(, "linear_num_value_heads": 3)", R"(, "linear_value_head_dim": 32)"}) {
        const auto found = problems(extra);
        ASSERT_EQ(found.size(), 1u) << extra;
    }
    EXPECT_THROW(q35_config(R"(, "linear_num_key_heads": 0)"), Error);
    EXPECT_THROW(q35_config(R"(, "full_attention_interval": -2)"), Error);
    EXPECT_THROW(q35_config(R"(, "rope_parameters": {"mrope_section": [1, 2, 3, 4, 5]})"), Error);
}

}  // namespace
}  // namespace rebox::arch
