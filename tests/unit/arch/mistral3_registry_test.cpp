// mistral3 in the registry against hand-written tables from llama.cpp's mistral3 loader
// (src/models/mistral3.cpp: llama's tensors, optional biases, rope_freqs) and converter
// (conversion/mistral3.py: Mistral3Model picked by architectures[0], its Ministral3Model a
// LlamaModel): names both ways with llama's q/k permutation under both multimodal layouts, the
// vision tower left out, the class chosen by architectures[0] whatever the text model_type
// (mistral4 excepted), the KVs in LlamaModel's order with Ministral3Model's two from the yarn
// block (mscale_all_dim as given, not x0.1), and the converter's asserts as refusals.
#include <gtest/gtest.h>

#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

// Devstral-Small-2-24B-Instruct-2512's config.json scaled down: hidden 64, 4 heads of 32 (not
// 64 / 4), 2 kv heads, 2 layers; its yarn rope_parameters as published.
std::string devstral_json(const std::string& rope = "",
                          const std::string& model_type = "ministral3",
                          const std::string& architecture = "Mistral3ForConditionalGeneration") {
    const std::string yarn =
        R"({"beta_fast": 32.0, "beta_slow": 1.0, "factor": 48.0, "llama_4_scaling_beta": 0.1,
            "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 8192,
            "rope_theta": 100000000.0, "rope_type": "yarn", "type": "yarn"})";
    return R"({"architectures": [")" + architecture +
           R"("], "model_type": "mistral3", "tie_word_embeddings": false,
        "text_config": {"head_dim": 32, "hidden_size": 64, "intermediate_size": 96,
          "max_position_embeddings": 393216, "model_type": ")" +
           model_type + R"(", "num_attention_heads": 4, "num_hidden_layers": 2,
          "num_key_value_heads": 2, "rms_norm_eps": 1e-05, "vocab_size": 100,
          "rope_parameters": )" +
           (rope.empty() ? yarn : rope) + R"(},
        "vision_config": {"model_type": "pixtral", "hidden_size": 32}})";
}

ModelConfig mistral3_config_from(const std::string& json) {
    return parse_model_config(nlohmann::json::parse(json));
}

// The mistral3.* KVs build_model_metadata writes, in order, with their values as text.
std::vector<std::pair<std::string, std::string>> mistral3_kvs(const ModelConfig& c) {
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::pair<std::string, std::string>> out;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("mistral3.")) continue;
        std::string value;
        if (const auto u = kv.value.as_u32())
            value = std::to_string(*u);
        else if (const auto* s = kv.value.as_string())
            value = *s;
        else if (const auto f = kv.value.as_f32())
            value = "f" + std::to_string(*f);
        out.emplace_back(kv.key.substr(9), value);
    }
    return out;
}

TEST(Mistral3Registry, NamesBothWaysWithLlamasPermutation) {
    const Architecture* found = find_architecture("mistral3");
    ASSERT_NE(found, nullptr);
    const Architecture& a = *found;
    EXPECT_EQ(a.gguf_arch, "mistral3");
    // transformers 5 (Ministral 3) and 4 (Mistral Small 3.1) layouts of the same names.
    const std::tuple<const char*, const char*, RowTransform> rows[] = {
        {"model.language_model.embed_tokens.weight", "token_embd.weight", RowTransform::none},
        {"language_model.model.layers.1.input_layernorm.weight", "blk.1.attn_norm.weight",
         RowTransform::none},
        {"model.language_model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight",
         RowTransform::rope_pairs_q_heads},
        {"language_model.model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight",
         RowTransform::rope_pairs_kv_heads},
        {"model.language_model.layers.1.self_attn.k_proj.bias", "blk.1.attn_k.bias",
         RowTransform::rope_pairs_kv_heads},
        {"model.language_model.layers.1.self_attn.v_proj.weight", "blk.1.attn_v.weight",
         RowTransform::none},
        {"model.language_model.layers.1.self_attn.o_proj.bias", "blk.1.attn_output.bias",
         RowTransform::none},
        {"model.language_model.layers.1.post_attention_layernorm.weight", "blk.1.ffn_norm.weight",
         RowTransform::none},
        {"model.language_model.layers.1.mlp.gate_proj.weight", "blk.1.ffn_gate.weight",
         RowTransform::none},
        {"model.language_model.layers.1.mlp.down_proj.bias", "blk.1.ffn_down.bias",
         RowTransform::none},
        {"model.language_model.norm.weight", "output_norm.weight", RowTransform::none},
        {"lm_head.weight", "output.weight", RowTransform::none},
        {"language_model.lm_head.weight", "output.weight", RowTransform::none},
    };
    for (const auto& [hf, gguf, transform] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, transform) << hf;
        ASSERT_TRUE(resolve_gguf(a, gguf).has_value()) << gguf;
    }
    // Pixtral's tower and the projector: left out, not refused; a q/k norm: the loader has none.
    for (const char* vision :
         {"model.vision_tower.transformer.layers.0.attention.q_proj.weight",
          "vision_tower.ln_pre.weight", "model.multi_modal_projector.linear_1.weight",
          "multi_modal_projector.patch_merger.merging_layer.weight"}) {
        EXPECT_FALSE(resolve_hf(a, vision).has_value()) << vision;
        EXPECT_TRUE(is_left_out(a, vision)) << vision;
    }
    EXPECT_FALSE(resolve_hf(a, "model.language_model.layers.0.self_attn.q_norm.weight"));
    EXPECT_FALSE(is_left_out(a, "model.language_model.layers.0.self_attn.q_norm.weight"));
    ASSERT_EQ(a.extras.size(), 1u);  // the loader takes rope_freqs (llama3 rope scaling)
    EXPECT_EQ(a.extras[0], ExtraTensor::rope_freqs_llama3);
}

TEST(Mistral3Registry, ShapesFromTheTextConfig) {
    const Architecture& a = *find_architecture("mistral3");
    const ModelConfig c = mistral3_config_from(devstral_json());
    EXPECT_EQ(c.model_type, "mistral3");
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_q.weight"), (std::vector<int64_t>{64, 128}));  // 4*32
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_k.weight"), (std::vector<int64_t>{64, 64}));   // 2*32
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_output.weight"), (std::vector<int64_t>{128, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.1.ffn_down.weight"), (std::vector<int64_t>{96, 64}));
    EXPECT_EQ(expected_ne(a, c, "output.weight"), (std::vector<int64_t>{64, 100}));
    EXPECT_EQ(transform_heads(RowTransform::rope_pairs_q_heads, c), 4u);
    EXPECT_EQ(transform_heads(RowTransform::rope_pairs_kv_heads, c), 2u);
    const std::vector<std::string> required = required_tensors(a, c);
    EXPECT_EQ(required.size(), 1u + 2 * 9 + 2);  // untied: output.weight required
    EXPECT_EQ(required.back(), "output.weight");
}

// The converter picks Mistral3Model by architectures[0]: Mistral Small 3.x's text model_type
// "mistral" too (llama's model_type on its own), Ministral3ForCausalLM (Devstral 2 123B, text
// only), but not a mistral4 text model (Mistral4Model, MLA).
TEST(Mistral3Registry, ChosenByArchitecture) {
    const auto claimed = [](const std::string& json) {
        nlohmann::json root = nlohmann::json::parse(json);
        merge_text_config(root);
        const Architecture* a = claiming_architecture(root);
        return a == nullptr ? std::string() : std::string(a->gguf_arch);
    };
    EXPECT_EQ(claimed(devstral_json()), "mistral3");
    EXPECT_EQ(claimed(devstral_json("", "mistral")), "mistral3");
    EXPECT_EQ(claimed(devstral_json("", "ministral3", "Ministral3ForCausalLM")), "mistral3");
    EXPECT_EQ(claimed(devstral_json("", "mistral4")), "");
    EXPECT_EQ(claimed(R"({"model_type": "mistral", "architectures": ["MistralForCausalLM"]})"), "");
    EXPECT_EQ(find_architecture("ministral3")->gguf_arch, "mistral3");
    EXPECT_EQ(find_architecture("mistral")->gguf_arch, "llama");
}

// Ministral 3 / Devstral 2: TextModel's keys (key/value length from head_dim 32), LlamaModel's
// vocab_size and rope.dimension_count, Ministral3Model's two, then the yarn block as TextModel
// writes it (type, factor, original context, betas).
TEST(Mistral3Registry, KvsOfAMinistral3TextModel) {
    const std::vector<std::pair<std::string, std::string>> want = {
        {"context_length", "393216"},
        {"embedding_length", "64"},
        {"block_count", "2"},
        {"feed_forward_length", "96"},
        {"attention.head_count", "4"},
        {"attention.head_count_kv", "2"},
        {"rope.freq_base", "f100000000.000000"},
        {"attention.layer_norm_rms_epsilon", "f0.000010"},
        {"attention.key_length", "32"},
        {"attention.value_length", "32"},
        {"vocab_size", "100"},
        {"rope.dimension_count", "32"},
        {"rope.scaling.yarn_log_multiplier", "f1.000000"},  // mscale_all_dim, not 0.1
        {"attention.temperature_scale", "f0.100000"},       // llama_4_scaling_beta
        {"rope.scaling.type", "yarn"},
        {"rope.scaling.factor", "f48.000000"},
        {"rope.scaling.original_context_length", "8192"},
        {"rope.scaling.yarn_beta_fast", "f32.000000"},
        {"rope.scaling.yarn_beta_slow", "f1.000000"},
    };
    EXPECT_EQ(mistral3_kvs(mistral3_config_from(devstral_json())), want);
    // A mscale_all_dim of 0.707 stays 0.707 (binary32 of the JSON double).
    const ModelConfig odd = mistral3_config_from(devstral_json(
        R"({"factor": 16.0, "llama_4_scaling_beta": 0.25, "mscale_all_dim": 0.707,
            "original_max_position_embeddings": 16384, "rope_type": "yarn"})"));
    EXPECT_EQ(odd.yarn_log_multiplier, 0.707f);
    EXPECT_EQ(odd.attn_temperature_scale, 0.25f);
    EXPECT_FLOAT_EQ(odd.rope_theta, 10000.0f);  // no rope_theta anywhere: transformers' default
}

// Mistral Small 3.2: text model_type "mistral", no rope scaling: LlamaModel's KVs only.
TEST(Mistral3Registry, KvsOfAMistralTextModel) {
    const ModelConfig c =
        mistral3_config_from(devstral_json(R"({"rope_theta": 1000000000.0})", "mistral"));
    EXPECT_FALSE(c.yarn_log_multiplier.has_value());
    std::vector<std::string> keys;
    for (const auto& [key, value] : mistral3_kvs(c)) keys.push_back(key);
    const std::vector<std::string> want = {
        "context_length",       "embedding_length",
        "block_count",          "feed_forward_length",
        "attention.head_count", "attention.head_count_kv",
        "rope.freq_base",       "attention.layer_norm_rms_epsilon",
        "attention.key_length", "attention.value_length",
        "vocab_size",           "rope.dimension_count"};
    EXPECT_EQ(keys, want);
}

// Ministral3Model.set_gguf_parameters' asserts and KeyErrors, each one input error naming the
// field; TextModel's yarn without original_max_position_embeddings, a BLOCKER.
TEST(Mistral3Registry, Refusals) {
    const std::pair<const char*, const char*> refused[] = {
        {R"({"rope_type": "default", "rope_theta": 1000000.0})", "rope_parameters"},
        {R"({"rope_type": "linear", "factor": 2.0})", "rope_parameters"},
        {R"({"rope_type": "yarn", "factor": 2.0, "llama_4_scaling_beta": 0.1,
             "original_max_position_embeddings": 4096})",
         "rope_parameters.mscale_all_dim"},
        {R"({"rope_type": "yarn", "factor": 2.0, "mscale_all_dim": 1,
             "original_max_position_embeddings": 4096})",
         "rope_parameters.llama_4_scaling_beta"},
    };
    for (const auto& [rope, field] : refused) {
        try {
            mistral3_config_from(devstral_json(rope));
            ADD_FAILURE() << rope;
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::input);
            EXPECT_EQ(e.field(), field) << e.what();
        }
    }
    const ModelConfig no_original = mistral3_config_from(devstral_json(
        R"({"rope_type": "yarn", "factor": 2.0, "mscale_all_dim": 1, "llama_4_scaling_beta": 0.1})"));
    const RopeScalingPlan plan = plan_rope_scaling(*find_architecture("mistral3"), no_original);
    ASSERT_TRUE(plan.blocker.has_value());
    EXPECT_NE(plan.blocker_field.find("original_max_position_embeddings"), std::string::npos);
    // A mistral text model needs no yarn block at all.
    EXPECT_NO_THROW(mistral3_config_from(devstral_json(R"({"rope_theta": 1e9})", "mistral")));
}

}  // namespace
}  // namespace rebox::arch
