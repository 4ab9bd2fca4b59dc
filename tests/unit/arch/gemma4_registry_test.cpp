// gemma4 in the registry against hand-written tables from llama.cpp's gemma4 loader
// (src/models/gemma4.cpp: per layer the head size and kv heads of its kind, v optional,
// layer_output_scale {1}, rope_freqs {head_dim/2} for the full layers) and converter
// (conversion/gemma.py Gemma4Model -> Gemma3Model -> TextModel; gguf-py's tensor_mapping for the
// names): names both ways with the suffix-less layer_scalar, ne per layer kind from a hand-written
// config.json, no norm shift, the KVs in the converter's order with the per-layer arrays, the
// proportional rope_freqs worked by hand, the gemma4 tokenizer model, and the refusals.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <span>
#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "arch/transforms.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

// gemma-4-31B-it's text_config keys scaled down: hidden 64, 4 layers (3 sliding, then full), 4
// heads of 16 with 2 kv heads on the sliding layers, global_head_dim 32 with 1 kv head and
// attention_k_eq_v on the full one; as a multimodal config (the text model under text_config).
// `text_extra` is appended inside text_config ("," first).
std::string g4_json(const std::string& text_extra = "",
                    const std::string& layer_types = R"(["sliding_attention",
        "sliding_attention", "sliding_attention", "full_attention"])") {
    return R"({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
        "text_config": {"model_type": "gemma4_text", "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 32,
        "num_global_key_value_heads": 1, "attention_k_eq_v": true, "layer_types": )" +
           layer_types + R"(, "hidden_size_per_layer_input": 0, "num_kv_shared_layers": 0,
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-06, "vocab_size": 100,
        "sliding_window": 32, "final_logit_softcapping": 30.0, "tie_word_embeddings": true,
        "enable_moe_block": false, "use_double_wide_mlp": false, "moe_intermediate_size": null,
        "rope_parameters": {
          "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                             "rope_type": "proportional"},
          "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}})" +
           text_extra + "}}";
}

ModelConfig g4_config(const std::string& text_extra = "") {
    return parse_model_config(nlohmann::json::parse(g4_json(text_extra)));
}

const Architecture& g4() { return *find_architecture("gemma4"); }

// Each HF name resolves to its GGUF name, and back to the HF name without "model." prefixes.
void g4_expect_names_both_ways(std::span<const std::tuple<const char*, const char*>> rows) {
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(g4(), hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        const auto back = resolve_gguf(g4(), gguf);
        ASSERT_TRUE(back.has_value()) << gguf;
        EXPECT_EQ(back->hf_name, strip_model_prefix(hf)) << gguf;
    }
}

TEST(Gemma4Registry, NamesBothWays) {
    ASSERT_NE(find_architecture("gemma4"), nullptr);
    ASSERT_EQ(find_architecture("gemma4_text"), &g4());
    EXPECT_EQ(g4().gguf_arch, "gemma4");
    const std::tuple<const char*, const char*> rows[] = {
        {"model.language_model.embed_tokens.weight", "token_embd.weight"},
        {"model.language_model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
        {"model.language_model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
        {"model.language_model.layers.3.self_attn.q_proj.weight", "blk.3.attn_q.weight"},
        {"model.language_model.layers.0.self_attn.q_norm.weight", "blk.0.attn_q_norm.weight"},
        {"model.language_model.layers.3.self_attn.k_proj.weight", "blk.3.attn_k.weight"},
        {"model.language_model.layers.3.self_attn.k_norm.weight", "blk.3.attn_k_norm.weight"},
        {"model.language_model.layers.0.self_attn.v_proj.weight", "blk.0.attn_v.weight"},
        {"model.language_model.layers.3.self_attn.o_proj.weight", "blk.3.attn_output.weight"},
        {"model.language_model.layers.0.post_attention_layernorm.weight",
         "blk.0.post_attention_norm.weight"},
        {"model.language_model.layers.0.pre_feedforward_layernorm.weight", "blk.0.ffn_norm.weight"},
        {"model.language_model.layers.1.mlp.gate_proj.weight", "blk.1.ffn_gate.weight"},
        {"model.language_model.layers.1.mlp.up_proj.weight", "blk.1.ffn_up.weight"},
        {"model.language_model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight"},
        {"model.language_model.layers.1.post_feedforward_layernorm.weight",
         "blk.1.post_ffw_norm.weight"},
        // Gemma4Model.filter_tensors: "layer_scalar" + ".weight"; MODEL_TENSOR.LAYER_OUT_SCALE.
        {"model.language_model.layers.2.layer_scalar", "blk.2.layer_output_scale.weight"},
        {"model.language_model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    g4_expect_names_both_ways(rows);
    for (const char* refused : {"model.language_model.layers.0.layer_scalar.weight",
                                "model.language_model.layers.0.layer_output_scale.weight",
                                "model.language_model.layers.0.self_attn.q_proj.bias",
                                "model.language_model.layers.0.self_attn.v_norm.weight",
                                "model.language_model.layers.0.router.scale.weight",
                                "model.language_model.layers.0.experts.gate_up_proj.weight",
                                "model.language_model.layers.0.per_layer_input_gate.bias",
                                "model.language_model.altup_projections.0.weight"})
        EXPECT_FALSE(resolve_hf(g4(), refused).has_value()) << refused;
    EXPECT_FALSE(resolve_gguf(g4(), "blk.0.layer_output_scale").has_value());
    for (const char* left_out :
         {"model.vision_tower.encoder.layers.0.mlp.up_proj.weight",
          "model.embed_vision.embedding_projection.weight",
          "model.audio_tower.layers.0.attn.q.weight", "model.embed_audio.embedding.weight"})
        EXPECT_TRUE(is_left_out(g4(), left_out)) << left_out;
    EXPECT_FALSE(is_left_out(g4(), "model.language_model.layers.0.mlp.up_proj.weight"));
}

TEST(Gemma4Registry, ShapesPerLayerKind) {
    const ModelConfig c = g4_config();
    EXPECT_EQ(c.layer_kinds, (std::vector<uint8_t>{0, 0, 0, 1}));
    ASSERT_TRUE(c.full_attention.has_value());
    EXPECT_EQ(c.full_attention->head_dim, 32u);
    EXPECT_EQ(c.full_attention->kv_heads, std::optional<uint32_t>(1));
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, std::optional<Ne>> rows[] = {
        {"token_embd.weight", Ne{64, 100}},
        {"blk.0.attn_norm.weight", Ne{64}},
        // Sliding: 4 heads * 16, 2 kv heads * 16.
        {"blk.0.attn_q.weight", Ne{64, 64}},
        {"blk.0.attn_k.weight", Ne{64, 32}},
        {"blk.0.attn_v.weight", Ne{64, 32}},
        {"blk.0.attn_output.weight", Ne{64, 64}},
        {"blk.0.attn_q_norm.weight", Ne{16}},
        {"blk.2.attn_k_norm.weight", Ne{16}},
        // Full: 4 heads * 32, 1 kv head * 32.
        {"blk.3.attn_q.weight", Ne{64, 128}},
        {"blk.3.attn_k.weight", Ne{64, 32}},
        {"blk.3.attn_v.weight", Ne{64, 32}},
        {"blk.3.attn_output.weight", Ne{128, 64}},
        {"blk.3.attn_q_norm.weight", Ne{32}},
        {"blk.3.attn_k_norm.weight", Ne{32}},
        {"blk.1.ffn_gate.weight", Ne{64, 128}},
        {"blk.1.ffn_down.weight", Ne{128, 64}},
        {"blk.1.post_ffw_norm.weight", Ne{64}},
        {"blk.2.layer_output_scale.weight", Ne{1}},
        {"output_norm.weight", Ne{64}},
        {"output.weight", Ne{64, 100}},
        {"blk.4.attn_q.weight", std::nullopt},  // past the last layer
        {"blk.0.ffn_gate_inp.weight", std::nullopt},
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(g4(), c, name), ne) << name;
    // What a shape message names: the full layer's own dims with the config, the first row's
    // without.
    EXPECT_EQ(tensor_dims(g4(), "blk.3.attn_k.weight", &c),
              (std::array<Dim, 3>{Dim::hidden, Dim::kv_width_full, Dim::hidden}));
    EXPECT_EQ(tensor_dims(g4(), "blk.0.attn_k.weight", &c),
              (std::array<Dim, 3>{Dim::hidden, Dim::kv_width, Dim::hidden}));
    EXPECT_EQ(explain_dim(Dim::kv_width_full, c).substr(0, 28), "the full-attention layers' k");
    // 31B's own numbers: 32 heads of 256 / 512, 16 and 4 kv heads, hidden 5376.
    ModelConfig big = c;
    big.hidden_size = 5376;
    big.num_attention_heads = 32;
    big.num_key_value_heads = 16;
    big.head_dim = 256;
    big.full_attention = ModelConfig::FullAttention{512, 4};
    EXPECT_EQ(expected_ne(g4(), big, "blk.3.attn_q.weight"), (Ne{5376, 16384}));
    EXPECT_EQ(expected_ne(g4(), big, "blk.3.attn_k.weight"), (Ne{5376, 2048}));
    EXPECT_EQ(expected_ne(g4(), big, "blk.0.attn_k.weight"), (Ne{5376, 4096}));
    EXPECT_EQ(expected_ne(g4(), big, "blk.0.attn_output.weight"), (Ne{8192, 5376}));
    // No num_global_key_value_heads: the full layers keep num_key_value_heads.
    big.full_attention->kv_heads.reset();
    EXPECT_EQ(expected_ne(g4(), big, "blk.3.attn_k.weight"), (Ne{5376, 8192}));

    const std::vector<std::string> required = required_tensors(g4(), c);
    const auto has = [&](const char* name) {
        return std::find(required.begin(), required.end(), name) != required.end();
    };
    EXPECT_TRUE(has("blk.3.attn_q.weight"));
    EXPECT_TRUE(has("blk.3.attn_k_norm.weight"));
    EXPECT_FALSE(has("blk.3.attn_v.weight"));  // attention_k_eq_v: the loader reuses k
    EXPECT_FALSE(has("blk.0.attn_v.weight"));  // the loader marks v optional on every layer
    EXPECT_FALSE(has("blk.0.layer_output_scale.weight"));
    EXPECT_FALSE(has("output.weight"));  // tied
    // token_embd, output_norm; per layer attn_norm, q, q_norm, k, k_norm, o, the two attention /
    // feed-forward norms, gate, up, down, post_ffw_norm; each name once.
    EXPECT_EQ(required.size(), 2u + 4 * 12);
    EXPECT_EQ(std::count(required.begin(), required.end(), "blk.3.attn_q.weight"), 1);
}

TEST(Gemma4Registry, NoNormShiftAndTheEmbeddingCut) {
    for (const char* norm : {"model.language_model.layers.0.input_layernorm.weight",
                             "model.language_model.layers.3.self_attn.q_norm.weight",
                             "model.language_model.layers.3.self_attn.k_norm.weight",
                             "model.language_model.layers.0.post_attention_layernorm.weight",
                             "model.language_model.layers.0.pre_feedforward_layernorm.weight",
                             "model.language_model.layers.0.post_feedforward_layernorm.weight",
                             "model.language_model.norm.weight"})
        EXPECT_EQ(resolve_hf(g4(), norm)->spec->values, ValueTransform::none) << norm;
    EXPECT_EQ(resolve_hf(g4(), "model.language_model.embed_tokens.weight")->spec->rows,
              RowTransform::first_vocab_rows);
    EXPECT_EQ(resolve_hf(g4(), "model.language_model.layers.0.self_attn.q_proj.weight")->spec->rows,
              RowTransform::none);
}

// TextModel's keys, with head_count_kv / key_length / value_length rewritten in place by
// Gemma4Model (gguf-py keeps a rewritten key where it was first added), Gemma3Model's two, then
// Gemma4Model's own: the dense model's gemma4.* keys in the converter's order.
constexpr const char* kG4DenseKeys[] = {
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "rope.freq_base",
    "rope.freq_base_swa",
    "attention.layer_norm_rms_epsilon",
    "attention.key_length",
    "attention.value_length",
    "final_logit_softcapping",
    "attention.sliding_window",
    "attention.shared_kv_layers",
    "embedding_length_per_layer_input",
    "attention.sliding_window_pattern",
    "attention.key_length_swa",
    "attention.value_length_swa",
    "rope.dimension_count",
    "rope.dimension_count_swa",
};

// The gemma4.* KVs the writer builds for `c`: their keys without "gemma4." in order, and values.
struct G4Kvs {
    std::vector<std::string> keys;
    std::map<std::string, GgufValue> values;
};
G4Kvs g4_kvs(const ModelConfig& c) {
    ModelMetadataInput input;
    input.config = &c;
    G4Kvs out;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("gemma4.")) continue;
        out.keys.push_back(kv.key.substr(7));
        out.values[kv.key.substr(7)] = kv.value;
    }
    return out;
}

TEST(Gemma4Registry, KvsInTheConvertersOrder) {
    const ModelConfig c = g4_config();
    ModelMetadataInput input;
    input.config = &c;
    G4Kvs kvs = g4_kvs(c);  // named members: clang 14 cannot capture a structured binding
    auto& keys = kvs.keys;
    auto& values = kvs.values;
    const std::vector<std::string> want(std::begin(kG4DenseKeys), std::end(kG4DenseKeys));
    EXPECT_EQ(keys, want);
    const auto u32 = [&](const char* key) { return values[key].as_u32(); };
    EXPECT_EQ(u32("block_count"), 4u);
    EXPECT_EQ(u32("attention.key_length"), 32u);  // global_head_dim
    EXPECT_EQ(u32("attention.value_length"), 32u);
    EXPECT_EQ(u32("attention.key_length_swa"), 16u);  // head_dim
    EXPECT_EQ(u32("attention.value_length_swa"), 16u);
    EXPECT_EQ(u32("rope.dimension_count"), 32u);      // int(global_head_dim)
    EXPECT_EQ(u32("rope.dimension_count_swa"), 16u);  // int(head_dim * 1.0)
    EXPECT_EQ(u32("attention.sliding_window"), 32u);
    EXPECT_EQ(u32("attention.shared_kv_layers"), 0u);
    EXPECT_EQ(u32("embedding_length_per_layer_input"), 0u);
    EXPECT_EQ(values["rope.freq_base"].type, GgufType::FLOAT32);
    EXPECT_EQ(std::get<double>(values["rope.freq_base"].scalar), 1000000.0);
    EXPECT_EQ(std::get<double>(values["rope.freq_base_swa"].scalar), 10000.0);
    EXPECT_EQ(std::get<double>(values["final_logit_softcapping"].scalar), 30.0);
    // head_count_kv: INT32 per layer (gguf-py types a Python int list INT32): 2, 2, 2, then 1.
    const GgufValue& kv_heads = values["attention.head_count_kv"];
    ASSERT_EQ(kv_heads.type, GgufType::ARRAY);
    EXPECT_EQ(kv_heads.elem_type, GgufType::INT32);
    ASSERT_EQ(kv_heads.array.size(), 4u);
    for (size_t i = 0; i < 4; ++i)
        EXPECT_EQ(std::get<int64_t>(kv_heads.array[i]), i == 3 ? 1 : 2) << i;
    const GgufValue& pattern = values["attention.sliding_window_pattern"];
    ASSERT_EQ(pattern.type, GgufType::ARRAY);
    EXPECT_EQ(pattern.elem_type, GgufType::BOOL);
    ASSERT_EQ(pattern.array.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(std::get<bool>(pattern.array[i]), i != 3) << i;

    // Without num_global_key_value_heads the converter writes head_count_kv once (UINT32); a
    // final_logit_softcapping of 0 (falsy) is not written.
    const ModelConfig plain = parse_model_config(nlohmann::json::parse(g4_json(
        R"(, "num_global_key_value_heads": null, "attention_k_eq_v": false,
             "final_logit_softcapping": 0.0)")));
    input.config = &plain;
    bool saw_kv_heads = false;
    for (const GgufKV& kv : build_model_metadata(input)) {
        EXPECT_NE(kv.key, "gemma4.final_logit_softcapping");
        if (kv.key != "gemma4.attention.head_count_kv") continue;
        saw_kv_heads = true;
        EXPECT_EQ(kv.value.type, GgufType::UINT32);
        EXPECT_EQ(kv.value.as_u32(), 2u);
    }
    EXPECT_TRUE(saw_kv_heads);
}

// Gemma4Model.generate_extra_tensors, by hand: head_dim_full D, factor p: int(D * p / 2) ones, then
// 1e30 up to D / 2 values; no rope.scaling KV, and the tensor is the extra written first.
TEST(Gemma4Registry, ProportionalRopeFreqs) {
    const ModelConfig c = g4_config();
    const RopeScalingPlan plan = plan_rope_scaling(g4(), c);
    EXPECT_FALSE(plan.blocker.has_value());
    EXPECT_TRUE(plan.rope_freqs);
    EXPECT_EQ(plan.rope_freqs_kind, ExtraTensor::rope_freqs_proportional);
    EXPECT_TRUE(plan.kv_type.empty());
    EXPECT_EQ(extra_tensor_name(ExtraTensor::rope_freqs_proportional), "rope_freqs.weight");
    // D 32, p 0.25: int(4.0) = 4 ones, 12 values of 1e30.
    std::vector<float> want(16, 1e30f);
    std::fill(want.begin(), want.begin() + 4, 1.0f);
    EXPECT_EQ(proportional_rope_freqs(c), want);
    // 31B: D 512, p 0.25 -> 64 ones, 192 of 1e30; p 0.3 with D 32 -> int(4.8) = 4 ones.
    ModelConfig big = c;
    big.full_attention->head_dim = 512;
    const std::vector<float> freqs = proportional_rope_freqs(big);
    ASSERT_EQ(freqs.size(), 256u);
    EXPECT_EQ(std::count(freqs.begin(), freqs.end(), 1.0f), 64);
    EXPECT_EQ(freqs[63], 1.0f);
    EXPECT_EQ(freqs[64], 1e30f);
    ModelConfig odd = c;
    odd.rope_scaling->partial_rotary_factor = 0.3;
    const std::vector<float> odd_freqs = proportional_rope_freqs(odd);
    EXPECT_EQ(std::count(odd_freqs.begin(), odd_freqs.end(), 1.0f), 4);
    EXPECT_EQ(output_rank(g4(), "rope_freqs.weight").first, -2);
}

bool lists(const std::vector<std::string>& problems, const std::string& part) {
    for (const std::string& problem : problems)
        if (problem.find(part) != std::string::npos) return true;
    return false;
}

TEST(Gemma4Registry, Refusals) {
    // A good config has no problem; the tokenizer is Gemma4Model.set_vocab's own.
    EXPECT_EQ(config_problems(g4(), g4_config()), std::vector<std::string>{});
    EXPECT_TRUE(g4().tokenizer_blocker.empty());
    EXPECT_EQ(g4().tokenizer_model, "gemma4");
    // layer_types of the wrong length.
    const ModelConfig short_types = parse_model_config(nlohmann::json::parse(
        g4_json("", R"(["sliding_attention", "sliding_attention", "full_attention"])")));
    EXPECT_TRUE(lists(config_problems(g4(), short_types),
                      "layer_types has 3 entries for num_hidden_layers 4"));
    // The last layer sliding: transformers and a plain converter disagree.
    const ModelConfig last_sliding = parse_model_config(nlohmann::json::parse(
        g4_json("", R"(["sliding_attention", "sliding_attention", "full_attention",
                        "sliding_attention"])")));
    EXPECT_TRUE(lists(config_problems(g4(), last_sliding), "ends with a sliding_attention"));
    // null is the converter's `or 0` (31B); left out, transformers' default 256 (E2B's).
    EXPECT_EQ(g4_config(R"(, "hidden_size_per_layer_input": null)").per_layer_input_width, 0u);
    nlohmann::json no_width = nlohmann::json::parse(g4_json());
    no_width["text_config"].erase("hidden_size_per_layer_input");
    EXPECT_EQ(parse_model_config(no_width).per_layer_input_width, 256u);
    // No proportional rope for the full layers.
    const ModelConfig no_rope = parse_model_config(nlohmann::json::parse(g4_json(
        R"(, "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
             "sliding_attention": {"rope_theta": 1e4}})")));
    EXPECT_TRUE(lists(config_problems(g4(), no_rope), "rope_type \"proportional\""));
    // num_global_key_value_heads without attention_k_eq_v: converters differ.
    try {
        g4_config(R"(, "attention_k_eq_v": false)");
        ADD_FAILURE() << "num_global_key_value_heads without attention_k_eq_v";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "num_global_key_value_heads");
    }
    // Input errors: no layer_types, no head size for the full layers, an unknown layer type.
    for (const auto& [extra, field] :
         {std::pair{R"(, "layer_types": null)", "layer_types"},
          std::pair{R"(, "global_head_dim": null)", "global_head_dim"},
          std::pair{R"(, "global_head_dim": -3)", "global_head_dim"}}) {
        try {
            g4_config(extra);
            ADD_FAILURE() << extra;
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::input) << extra;
            EXPECT_EQ(e.field(), field) << extra;
        }
    }
    try {
        parse_model_config(nlohmann::json::parse(
            g4_json("", R"(["sliding_attention", "sliding_attention", "linear_attention",
                            "full_attention"])")));
        ADD_FAILURE() << "linear_attention";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "layer_types");
    }
    // per_layer_config instead of global_head_dim (transformers' newer to_dict): the first full
    // layer's head_dim.
    const ModelConfig per_layer =
        g4_config(R"(, "global_head_dim": null, "per_layer_config": {"3": {"head_dim": 48}})");
    EXPECT_EQ(per_layer.full_attention->head_dim, 48u);
}

// The 26B-A4B layout (google/gemma-4-26B-A4B-it's text_config keys, scaled down): the MoE block
// on every layer, 2 experts of 32, both used.
constexpr const char* kMoe =
    R"(, "enable_moe_block": true, "num_experts": 2, "top_k_experts": 2,
        "moe_intermediate_size": 32)";

TEST(Gemma4Registry, MoeNamesBothWays) {
    // tensor_mapping.py (router.proj -> FFN_GATE_INP, experts.gate_up_proj -> FFN_GATE_UP_EXP,
    // experts.down_proj -> FFN_DOWN_EXP, the three norms -> FFN_PRE_NORM_2 / FFN_POST_NORM_1 / _2:
    // constants.py's pre_ffw_norm_2 / post_ffw_norm_1 / post_ffw_norm_2); Gemma4Model: the fused
    // parameters get ".weight" (filter_tensors), router.scale -> ffn_gate_inp.scale and
    // router.per_expert_scale -> ffn_down_exps.scale (modify_tensors, format_tensor_name).
    const std::tuple<const char*, const char*> rows[] = {
        {"model.language_model.layers.0.router.proj.weight", "blk.0.ffn_gate_inp.weight"},
        {"model.language_model.layers.3.router.scale", "blk.3.ffn_gate_inp.scale"},
        {"model.language_model.layers.1.router.per_expert_scale", "blk.1.ffn_down_exps.scale"},
        {"model.language_model.layers.2.experts.gate_up_proj", "blk.2.ffn_gate_up_exps.weight"},
        {"model.language_model.layers.2.experts.down_proj", "blk.2.ffn_down_exps.weight"},
        {"model.language_model.layers.0.pre_feedforward_layernorm_2.weight",
         "blk.0.pre_ffw_norm_2.weight"},
        {"model.language_model.layers.0.post_feedforward_layernorm_1.weight",
         "blk.0.post_ffw_norm_1.weight"},
        {"model.language_model.layers.0.post_feedforward_layernorm_2.weight",
         "blk.0.post_ffw_norm_2.weight"},
        // The dense MLP stays beside the experts (the loader's shared expert).
        {"model.language_model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight"},
    };
    g4_expect_names_both_ways(rows);
    // The router is written exact F32 (the converter forces FFN_GATE_INP F32); the fused experts
    // are copied as they are (no row transform, not stacked from per-expert tensors).
    EXPECT_EQ(resolve_hf(g4(), "layers.0.router.proj.weight")->spec->role, SourceRole::router_f32);
    const auto fused = resolve_hf(g4(), "layers.0.experts.gate_up_proj");
    EXPECT_EQ(fused->spec->role, SourceRole::plain);
    EXPECT_EQ(fused->spec->rows, RowTransform::none);
    for (const char* refused : {"model.language_model.layers.0.router.norm.weight",
                                "model.language_model.layers.0.experts.0.down_proj.bias",
                                "model.language_model.layers.0.router.per_expert_scale.weight"})
        EXPECT_FALSE(resolve_hf(g4(), refused).has_value()) << refused;
    // ModelOpt NVFP4's per-expert modules (ModelBase._generate_nvfp4_tensors' regex
    // .experts.(\d+).(gate_proj|up_proj|down_proj).weight, stacked per layer and projection into
    // FFN_GATE_EXP / FFN_UP_EXP / FFN_DOWN_EXP: ffn_gate_exps / ffn_up_exps / ffn_down_exps).
    const std::tuple<const char*, const char*, uint32_t> split[] = {
        {"model.language_model.layers.0.experts.1.gate_proj.weight", "blk.0.ffn_gate_exps.weight",
         1},
        {"model.language_model.layers.2.experts.0.up_proj.weight", "blk.2.ffn_up_exps.weight", 0},
        {"model.language_model.layers.3.experts.1.down_proj.weight", "blk.3.ffn_down_exps.weight",
         1},
    };
    for (const auto& [hf, gguf, expert] : split) {
        const auto ref = resolve_hf(g4(), hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf) << hf;
        EXPECT_EQ(ref->expert, std::optional<uint32_t>(expert)) << hf;
        EXPECT_EQ(ref->spec->role, SourceRole::experts) << hf;
    }
}

// mlx-lm's gemma4_text sanitize: experts.gate_up_proj split at dim -2 into
// experts.switch_glu.gate_proj / up_proj (".weight": SwitchLinear modules), experts.down_proj
// renamed experts.switch_glu.down_proj. The halves name the one fused GGUF tensor (each its rows
// of it); the GGUF name still reads back as transformers' fused parameter.
TEST(Gemma4Registry, MoeMlxNames) {
    const std::tuple<const char*, const char*, RowTransform> rows[] = {
        {"language_model.model.layers.1.experts.switch_glu.gate_proj.weight",
         "blk.1.ffn_gate_up_exps.weight", RowTransform::fused_gate_rows},
        {"language_model.model.layers.1.experts.switch_glu.up_proj.weight",
         "blk.1.ffn_gate_up_exps.weight", RowTransform::fused_up_rows},
        {"language_model.model.layers.2.experts.switch_glu.down_proj.weight",
         "blk.2.ffn_down_exps.weight", RowTransform::none},
    };
    for (const auto& [hf, gguf, transform] : rows) {
        const auto ref = resolve_hf(g4(), hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf) << hf;
        EXPECT_EQ(ref->spec->rows, transform) << hf;
        EXPECT_EQ(ref->spec->role, SourceRole::plain) << hf;
    }
    EXPECT_EQ(resolve_gguf(g4(), "blk.1.ffn_gate_up_exps.weight")->hf_name,
              "layers.1.experts.gate_up_proj");
    EXPECT_EQ(resolve_gguf(g4(), "blk.2.ffn_down_exps.weight")->hf_name,
              "layers.2.experts.down_proj");
    EXPECT_FALSE(resolve_hf(g4(), "layers.0.experts.switch_glu.gate_proj").has_value());
}

TEST(Gemma4Registry, MoeShapesAndRequiredTensors) {
    const ModelConfig c = g4_config(kMoe);
    EXPECT_EQ(c.num_experts, 2u);
    EXPECT_EQ(c.num_experts_per_tok, 2u);  // top_k_experts
    EXPECT_EQ(c.moe_intermediate_size, std::optional<uint32_t>(32));
    EXPECT_EQ(c.layer_kinds, (std::vector<uint8_t>{2, 2, 2, 3}));
    // llama.cpp's loader (gemma4.cpp): ffn_gate_inp {n_embd, n_expert}, its scale {n_embd},
    // ffn_gate_up_exps {n_embd, n_ff_exp * 2, n_expert}, ffn_down_exps {n_ff_exp, n_embd,
    // n_expert}, down_exps_s {n_expert} (llama-model.cpp), the norms {n_embd}.
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, std::optional<Ne>> rows[] = {
        {"blk.0.ffn_gate_inp.weight", Ne{64, 2}},
        {"blk.3.ffn_gate_inp.scale", Ne{64}},
        {"blk.0.ffn_gate_up_exps.weight", Ne{64, 64, 2}},
        {"blk.3.ffn_down_exps.weight", Ne{32, 64, 2}},
        {"blk.1.ffn_down_exps.scale", Ne{2}},
        {"blk.2.pre_ffw_norm_2.weight", Ne{64}},
        {"blk.2.post_ffw_norm_1.weight", Ne{64}},
        {"blk.2.post_ffw_norm_2.weight", Ne{64}},
        {"blk.1.ffn_gate.weight", Ne{64, 128}},  // the dense MLP keeps intermediate_size
        {"blk.3.attn_k.weight", Ne{64, 32}},     // the full layer keeps its own widths
        {"blk.0.attn_k.weight", Ne{64, 32}},
        {"blk.3.attn_q.weight", Ne{64, 128}},
        // ModelOpt's per-expert modules, stacked apart: {n_embd, n_ff_exp, n_expert}.
        {"blk.0.ffn_gate_exps.weight", Ne{64, 32, 2}},
        {"blk.2.ffn_up_exps.weight", Ne{64, 32, 2}},
        {"blk.0.ffn_gate_up.weight", std::nullopt},
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(g4(), c, name), ne) << name;
    EXPECT_EQ(explain_dim(Dim::expert_ffn_x2, c),
              "2 * moe_intermediate_size 32 (gate and up) = 64");
    const std::vector<std::string> required = required_tensors(g4(), c);
    const auto has = [&](const std::string& name) {
        return std::find(required.begin(), required.end(), name) != required.end();
    };
    for (const char* name :
         {"ffn_gate_inp.weight", "ffn_gate_inp.scale", "pre_ffw_norm_2.weight",
          "post_ffw_norm_1.weight", "post_ffw_norm_2.weight", "ffn_gate_up_exps.weight",
          "ffn_down_exps.weight", "ffn_gate.weight", "post_ffw_norm.weight"})
        for (int layer = 0; layer < 4; ++layer)
            EXPECT_TRUE(has("blk." + std::to_string(layer) + "." + name)) << layer << name;
    // The loader takes down_exps_s as TENSOR_NOT_REQUIRED.
    EXPECT_FALSE(has("blk.0.ffn_down_exps.scale"));
    // gemma4.cpp loads ffn_gate_exps and ffn_up_exps when ffn_gate_up_exps is absent (ModelOpt's
    // per-expert modules, stacked apart).
    EXPECT_EQ(required_alternatives("blk.2.ffn_gate_up_exps.weight"),
              (std::vector<std::string>{"blk.2.ffn_gate_exps.weight", "blk.2.ffn_up_exps.weight"}));
    EXPECT_TRUE(required_alternatives("blk.2.ffn_down_exps.weight").empty());
    // The dense required set (2 + 4 * 12) plus 7 MoE tensors per layer.
    EXPECT_EQ(required.size(), 2u + 4 * (12 + 7));
    // A dense config requires none of them.
    for (const std::string& name : required_tensors(g4(), g4_config()))
        EXPECT_EQ(name.find("ffn_gate_inp"), std::string::npos) << name;
}

TEST(Gemma4Registry, MoeKvs) {
    const ModelConfig c = g4_config(kMoe);
    EXPECT_EQ(config_problems(g4(), c), std::vector<std::string>{});
    G4Kvs kvs = g4_kvs(c);  // named members: clang 14 cannot capture a structured binding
    auto& keys = kvs.keys;
    auto& values = kvs.values;
    // The dense keys, and TextModel.set_gguf_parameters' expert_count (num_experts) and
    // expert_used_count (top_k_experts) right after the rms epsilon; Gemma4Model's
    // expert_feed_forward_length (moe_intermediate_size) right after value_length_swa.
    std::vector<std::string> want(std::begin(kG4DenseKeys), std::end(kG4DenseKeys));
    const auto after = [&](const char* key) {
        return std::find(want.begin(), want.end(), key) + 1;
    };
    want.insert(after("attention.layer_norm_rms_epsilon"), {"expert_count", "expert_used_count"});
    want.insert(after("attention.value_length_swa"), "expert_feed_forward_length");
    ASSERT_EQ(want.size(), 23u);
    EXPECT_EQ(keys, want);
    EXPECT_EQ(values["expert_count"].as_u32(), 2u);
    EXPECT_EQ(values["expert_used_count"].as_u32(), 2u);
    EXPECT_EQ(values["expert_feed_forward_length"].as_u32(), 32u);
    EXPECT_EQ(values["feed_forward_length"].as_u32(), 128u);  // the dense MLP's
    // find_hparam takes num_experts_per_tok before top_k_experts, and Gemma4Model
    // expert_intermediate_size before moe_intermediate_size.
    const ModelConfig named = g4_config(
        std::string(kMoe) + R"(, "num_experts_per_tok": 1, "expert_intermediate_size": 16)");
    EXPECT_EQ(named.num_experts_per_tok, 1u);
    EXPECT_EQ(named.moe_intermediate_size, std::optional<uint32_t>(16));
}

TEST(Gemma4Registry, MoeRefusals) {
    // The block without its experts: an input error naming num_experts; experts without the
    // block: a BLOCKER (the converter would write expert_count over a dense model).
    try {
        g4_config(R"(, "enable_moe_block": true, "top_k_experts": 2)");
        ADD_FAILURE() << "enable_moe_block without num_experts";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_EQ(e.field(), "num_experts");
    }
    try {
        g4_config(R"(, "num_experts": 2)");
        ADD_FAILURE() << "num_experts without enable_moe_block";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::blocker);
        EXPECT_EQ(e.field(), "num_experts");
    }
    // A MoE checkpoint's quantization block is no reason to refuse it: GPTQ / AWQ /
    // compressed-tensors quantize Linear modules only (the fused experts stay float), MLX and
    // ModelOpt NVFP4 have their own readers; the tensors say what is quantized.
    {
        nlohmann::json root = nlohmann::json::parse(g4_json(kMoe));
        for (const nlohmann::json& block :
             {nlohmann::json{{"quant_method", "gptq"}, {"bits", 4}},
              nlohmann::json{{"quant_method", "awq"}, {"bits", 4}},
              nlohmann::json{{"quant_method", "compressed-tensors"}},
              nlohmann::json{{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}},
              nlohmann::json{{"bits", 4}, {"group_size", 64}}}) {
            root["quantization_config"] = block;
            EXPECT_NO_THROW(parse_model_config(root)) << block.dump();
        }
        root["quantization"] = root["quantization_config"];
        EXPECT_NO_THROW(parse_model_config(root)) << "MLX MoE";
        root.erase("quantization_config");
        EXPECT_NO_THROW(parse_model_config(root)) << "MLX MoE, quantization only";
    }
    for (const char* field : {"quantization", "quantization_config"}) {
        nlohmann::json root = nlohmann::json::parse(g4_json());
        root[field] = {{"bits", 4}, {"group_size", 64}};
        EXPECT_NO_THROW(parse_model_config(root)) << field;
    }
    EXPECT_TRUE(
        lists(config_problems(g4(), g4_config(std::string(kMoe) + R"(, "top_k_experts": 3)")),
              "top_k_experts 3 must be between 1 and num_experts 2"));
    EXPECT_TRUE(
        lists(config_problems(g4(), g4_config(std::string(kMoe) + R"(, "top_k_experts": null)")),
              "top_k_experts 0"));
    EXPECT_TRUE(lists(
        config_problems(g4(), g4_config(std::string(kMoe) + R"(, "moe_intermediate_size": null)")),
        "moe_intermediate_size is missing"));
}

// google/gemma-4-E2B-it's text_config in small: 6 layers (sliding, sliding, full, then the 3
// KV-shared layers sliding, sliding, full), one kv head on every layer (no
// num_global_key_value_heads, attention_k_eq_v false), per-layer inputs of 8, the double-wide MLP.
constexpr const char* kE2b = R"(, "num_hidden_layers": 6, "num_key_value_heads": 1,
    "num_global_key_value_heads": null, "attention_k_eq_v": false,
    "hidden_size_per_layer_input": 8, "num_kv_shared_layers": 3, "use_double_wide_mlp": true,
    "vocab_size_per_layer_input": 100)";
const char* const kE2bTypes = R"(["sliding_attention", "sliding_attention", "full_attention",
    "sliding_attention", "sliding_attention", "full_attention"])";

ModelConfig e2b_config(const std::string& extra = "", const char* types = kE2bTypes) {
    return parse_model_config(nlohmann::json::parse(g4_json(kE2b + extra, types)));
}

// gguf-py's tensor_mapping (PER_LAYER_*: model.embed_tokens_per_layer,
// model.per_layer_model_projection, model.per_layer_projection_norm, layers.{bid}.
// per_layer_input_gate / per_layer_projection / post_per_layer_input_norm) and constants.py's
// GGUF names.
TEST(Gemma4Registry, PerLayerInputNamesBothWays) {
    const std::tuple<const char*, const char*> rows[] = {
        {"model.language_model.embed_tokens_per_layer.weight", "per_layer_token_embd.weight"},
        {"model.language_model.per_layer_model_projection.weight", "per_layer_model_proj.weight"},
        {"model.language_model.per_layer_projection_norm.weight", "per_layer_proj_norm.weight"},
        {"model.language_model.layers.4.per_layer_input_gate.weight", "blk.4.inp_gate.weight"},
        {"model.language_model.layers.4.per_layer_projection.weight", "blk.4.proj.weight"},
        {"model.language_model.layers.4.post_per_layer_input_norm.weight",
         "blk.4.post_norm.weight"},
    };
    g4_expect_names_both_ways(rows);
    // The per-layer table is not cut (Gemma3Model cuts names holding "embed_tokens.weight").
    EXPECT_EQ(resolve_hf(g4(), "model.language_model.embed_tokens_per_layer.weight")->spec->rows,
              RowTransform::none);
}

// llama.cpp's gemma4 loader for n_embd_per_layer > 0: per_layer_tok_embd {n_embd_per_layer *
// n_layer, n_vocab}, per_layer_model_proj {n_embd, n_embd_per_layer * n_layer},
// per_layer_proj_norm {n_embd_per_layer}; per layer inp_gate {n_embd, n_embd_per_layer}, proj
// {n_embd_per_layer, n_embd}, post_norm {n_embd}; k / k_norm TENSOR_NOT_REQUIRED where !has_kv(i);
// n_ff(i) per layer (transformers' Gemma4TextMLP: doubled from the first KV-shared layer on).
TEST(Gemma4Registry, E2bShapesAndRequiredTensors) {
    const ModelConfig c = e2b_config();
    EXPECT_EQ(c.per_layer_input_width, 8u);
    EXPECT_EQ(c.kv_shared_layers, 3u);
    EXPECT_TRUE(c.double_wide_mlp);
    EXPECT_EQ(c.layer_kinds, (std::vector<uint8_t>{0, 0, 1, 6, 6, 7}));
    EXPECT_EQ(config_problems(g4(), c), std::vector<std::string>{});
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, std::optional<Ne>> rows[] = {
        {"per_layer_token_embd.weight", Ne{48, 100}},
        {"per_layer_model_proj.weight", Ne{64, 48}},
        {"per_layer_proj_norm.weight", Ne{8}},
        {"blk.0.inp_gate.weight", Ne{64, 8}},
        {"blk.5.proj.weight", Ne{8, 64}},
        {"blk.3.post_norm.weight", Ne{64}},
        {"blk.2.ffn_gate.weight", Ne{64, 128}},
        {"blk.3.ffn_gate.weight", Ne{64, 256}},
        {"blk.5.ffn_up.weight", Ne{64, 256}},
        {"blk.4.ffn_down.weight", Ne{256, 64}},
        {"blk.1.ffn_down.weight", Ne{128, 64}},
        {"blk.2.attn_k.weight", Ne{64, 32}},  // the full layer: 1 kv head of 32
        {"blk.2.attn_v.weight", Ne{64, 32}},
        {"blk.5.attn_k.weight", Ne{64, 32}},  // a KV-shared full layer, when written
        {"blk.4.attn_k_norm.weight", Ne{16}},
        {"blk.5.attn_q.weight", Ne{64, 128}},
    };
    for (const auto& [name, ne] : rows) EXPECT_EQ(expected_ne(g4(), c, name), ne) << name;
    const std::vector<std::string> required = required_tensors(g4(), c);
    const auto has = [&](const char* name) {
        return std::find(required.begin(), required.end(), name) != required.end();
    };
    for (const char* name :
         {"per_layer_token_embd.weight", "per_layer_model_proj.weight",
          "per_layer_proj_norm.weight", "blk.5.inp_gate.weight", "blk.0.proj.weight",
          "blk.3.post_norm.weight", "blk.2.attn_k.weight", "blk.2.attn_k_norm.weight"})
        EXPECT_TRUE(has(name)) << name;
    for (const char* name : {"blk.3.attn_k.weight", "blk.5.attn_k_norm.weight",
                             "blk.4.attn_v.weight", "blk.2.attn_v.weight"})
        EXPECT_FALSE(has(name)) << name;
    // token_embd, output_norm, the 3 per-layer input tensors; per layer attn_norm, q, q_norm, o,
    // the two attention / feed-forward norms, gate, up, down, post_ffw_norm, the 3 per-layer
    // input ones, and k / k_norm on the 3 layers with their own keys.
    EXPECT_EQ(required.size(), 5u + 6 * 13 + 3 * 2);
    // Without per-layer inputs (31B) nothing of them is required.
    const std::vector<std::string> dense = required_tensors(g4(), g4_config());
    EXPECT_EQ(std::count(dense.begin(), dense.end(), "per_layer_token_embd.weight"), 0);
    EXPECT_EQ(explain_dim(Dim::per_layer_input_all, c),
              "hidden_size_per_layer_input 8 * num_hidden_layers 6 = 48");
}

// Gemma4Model.set_gguf_parameters: shared_kv_layers, embedding_length_per_layer_input, and with
// use_double_wide_mlp feed_forward_length rewritten in place as INT32 per layer: n_ff for
// il < block_count - num_kv_shared_layers, n_ff * 2 after; head_count_kv stays one number (no
// num_global_key_value_heads).
TEST(Gemma4Registry, E2bKvs) {
    G4Kvs kvs = g4_kvs(e2b_config());
    const std::vector<std::string> want(std::begin(kG4DenseKeys), std::end(kG4DenseKeys));
    EXPECT_EQ(kvs.keys, want);
    EXPECT_EQ(kvs.values["attention.shared_kv_layers"].as_u32(), 3u);
    EXPECT_EQ(kvs.values["embedding_length_per_layer_input"].as_u32(), 8u);
    EXPECT_EQ(kvs.values["attention.head_count_kv"].type, GgufType::UINT32);
    EXPECT_EQ(kvs.values["attention.head_count_kv"].as_u32(), 1u);
    const GgufValue& ffn = kvs.values["feed_forward_length"];
    ASSERT_EQ(ffn.type, GgufType::ARRAY);
    EXPECT_EQ(ffn.elem_type, GgufType::INT32);
    ASSERT_EQ(ffn.array.size(), 6u);
    for (size_t i = 0; i < 6; ++i)
        EXPECT_EQ(std::get<int64_t>(ffn.array[i]), i < 3 ? 128 : 256) << i;
    // KV sharing without the double-wide MLP: one feed_forward_length.
    G4Kvs narrow = g4_kvs(e2b_config(R"(, "use_double_wide_mlp": false)"));
    EXPECT_EQ(narrow.values["feed_forward_length"].type, GgufType::UINT32);
    EXPECT_EQ(narrow.values["feed_forward_length"].as_u32(), 128u);
    EXPECT_EQ(e2b_config(R"(, "use_double_wide_mlp": false)").layer_kinds,
              (std::vector<uint8_t>{0, 0, 1, 4, 4, 5}));
}

// google/gemma-4-E2B-it's own numbers (its config.json text_config: 35 layers, four sliding then
// one full, the last 20 KV-shared, hidden 1536, intermediate 6144 doubled on the shared layers,
// 1 kv head, head_dim 256 / global 512, per-layer inputs of 256): the loader's shapes and the
// converter's feed_forward_length.
TEST(Gemma4Registry, E2bRealNumbers) {
    std::string types = "[";
    for (int i = 0; i < 35; ++i)
        types += std::string(i ? ", " : "") +
                 (i % 5 == 4 ? "\"full_attention\"" : "\"sliding_attention\"");
    types += "]";
    nlohmann::json root = nlohmann::json::parse(g4_json(kE2b, types));
    nlohmann::json& text = root["text_config"];
    for (const auto& [key, value] : {std::pair<const char*, uint32_t>{"hidden_size", 1536},
                                     {"intermediate_size", 6144},
                                     {"num_hidden_layers", 35},
                                     {"num_attention_heads", 8},
                                     {"head_dim", 256},
                                     {"global_head_dim", 512},
                                     {"hidden_size_per_layer_input", 256},
                                     {"num_kv_shared_layers", 20},
                                     {"vocab_size", 262144},
                                     {"vocab_size_per_layer_input", 262144},
                                     {"sliding_window", 512}})
        text[key] = value;
    const ModelConfig c = parse_model_config(root);
    EXPECT_EQ(config_problems(g4(), c), std::vector<std::string>{});
    using Ne = std::vector<int64_t>;
    EXPECT_EQ(expected_ne(g4(), c, "per_layer_token_embd.weight"), (Ne{8960, 262144}));
    EXPECT_EQ(expected_ne(g4(), c, "per_layer_model_proj.weight"), (Ne{1536, 8960}));
    EXPECT_EQ(expected_ne(g4(), c, "blk.14.ffn_gate.weight"), (Ne{1536, 6144}));
    EXPECT_EQ(expected_ne(g4(), c, "blk.15.ffn_gate.weight"), (Ne{1536, 12288}));
    EXPECT_EQ(expected_ne(g4(), c, "blk.14.attn_k.weight"), (Ne{1536, 512}));
    EXPECT_EQ(expected_ne(g4(), c, "blk.13.attn_k.weight"), (Ne{1536, 256}));
    G4Kvs kvs = g4_kvs(c);
    const GgufValue& ffn = kvs.values["feed_forward_length"];
    ASSERT_EQ(ffn.array.size(), 35u);
    EXPECT_EQ(std::get<int64_t>(ffn.array[14]), 6144);
    EXPECT_EQ(std::get<int64_t>(ffn.array[15]), 12288);
    EXPECT_EQ(kvs.values["attention.shared_kv_layers"].as_u32(), 20u);
}

TEST(Gemma4Registry, E2bRefusals) {
    // The last two layers with keys of their own must be sliding then full: llama.cpp's loader
    // reuses layer L - shared - 2 for sliding layers and L - shared - 1 for full ones.
    EXPECT_TRUE(lists(config_problems(g4(), e2b_config(R"(, "num_kv_shared_layers": 2)")),
                      "layers 2 and 3 (the last before the 2 KV-shared layers) are "
                      "full_attention and sliding_attention"));
    // Fewer than 2 layers of their own: llama.cpp asserts.
    EXPECT_TRUE(lists(config_problems(g4(), e2b_config(R"(, "num_kv_shared_layers": 5)")),
                      "num_kv_shared_layers 5 leaves fewer than 2"));
}

}  // namespace
}  // namespace rebox::arch
