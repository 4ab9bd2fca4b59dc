// qwen2vl in the registry against hand-written tables from llama.cpp's qwen2vl loader
// (src/models/qwen2vl.cpp: qwen2's tensors, rope.dimension_sections) and converter
// (conversion/qwenvl.py: Qwen2VLModel picked by architectures[0], TextModel's KVs): names both
// ways under both checkpoint layouts, the vision tower left out, the KVs in TextModel's order with
// mrope_section padded to 4, the published rope type "mrope" read as no scaling, and a malformed
// mrope_section refused; then the two vision records (src/arch/vision/qwen2vl_vision.cpp) against
// Qwen2.5-VL-3B-Instruct's published tensor names and the converter's q/k/v and temporal splits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "arch/vision/vision_architecture.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"
#include "verify/mmproj/ref_vision.hpp"

namespace rebox::arch {
namespace {

// Qwen2-VL-2B-Instruct's config.json keys scaled down: hidden 64, 4 heads of 16, 2 kv heads,
// 2 layers, its rope_scaling {"type": "mrope", "mrope_section": [...]} as published.
std::string qwen2vl_json(
    const std::string& rope = R"({"type": "mrope", "mrope_section": [2, 3, 3]})",
    const std::string& architecture = "Qwen2VLForConditionalGeneration") {
    return R"({"architectures": [")" + architecture +
           R"("], "model_type": "qwen2_vl", "hidden_size": 64, "intermediate_size": 128,
        "max_position_embeddings": 32768, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
        "tie_word_embeddings": true, "vocab_size": 100, "rope_scaling": )" +
           rope + R"(, "vision_config": {"depth": 4, "embed_dim": 32, "hidden_size": 64}})";
}

ModelConfig config_from(const std::string& json) {
    return parse_model_config(nlohmann::json::parse(json));
}

std::vector<GgufKV> qwen2vl_kvs(const ModelConfig& c) {
    ModelMetadataInput input;
    input.config = &c;
    std::vector<GgufKV> out;
    for (GgufKV& kv : build_model_metadata(input))
        if (kv.key.starts_with("qwen2vl.")) out.push_back(std::move(kv));
    return out;
}

TEST(Qwen2vlRegistry, NamesBothWaysInBothLayouts) {
    const Architecture* found = find_architecture("qwen2vl");
    ASSERT_NE(found, nullptr);
    const Architecture& a = *found;
    const std::pair<const char*, const char*> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.language_model.embed_tokens.weight", "token_embd.weight"},
        {"model.layers.1.self_attn.q_proj.bias", "blk.1.attn_q.bias"},
        {"model.language_model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight"},
        {"model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight"},
        {"model.language_model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
        // mlx-vlm's sanitize: "model" -> "language_model.model", "lm_head" ->
        // "language_model.lm_head".
        {"language_model.model.layers.1.self_attn.v_proj.bias", "blk.1.attn_v.bias"},
        {"language_model.lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, RowTransform::none) << hf;  // NEOX rope: no permutation
        ASSERT_TRUE(resolve_gguf(a, gguf).has_value()) << gguf;
    }
    for (const char* vision :
         {"visual.blocks.0.attn.qkv.weight", "visual.merger.mlp.0.weight",
          "model.visual.patch_embed.proj.weight",
          // mlx-vlm's sanitize: "visual" -> "vision_tower".
          "vision_tower.blocks.0.attn.qkv.weight", "vision_tower.patch_embed.proj.weight"}) {
        EXPECT_FALSE(resolve_hf(a, vision).has_value()) << vision;
        EXPECT_TRUE(is_left_out(a, vision)) << vision;
    }
    EXPECT_FALSE(resolve_hf(a, "model.layers.0.self_attn.q_norm.weight"));  // qwen2vl has none
}

TEST(Qwen2vlRegistry, ChosenByArchitecture) {
    EXPECT_EQ(config_from(qwen2vl_json()).model_type, "qwen2vl");
    EXPECT_EQ(config_from(qwen2vl_json(R"({"type": "mrope", "mrope_section": [2, 3, 3]})",
                                       "Qwen2_5_VLForConditionalGeneration"))
                  .model_type,
              "qwen2vl");
    // transformers >= 4.52: the text numbers in text_config, whose model_type is qwen2_5_vl_text.
    nlohmann::json split = nlohmann::json::parse(qwen2vl_json());
    split["text_config"] = {{"model_type", "qwen2_5_vl_text"}, {"hidden_size", 64}};
    EXPECT_EQ(parse_model_config(split).model_type, "qwen2vl");
    EXPECT_EQ(find_architecture("qwen2_5_vl")->gguf_arch, "qwen2vl");
}

// TextModel.set_gguf_parameters' order; the sections [2, 3, 3] padded with 0 (INT32[4]); no
// rope.scaling.* (the "mrope" type is transformers' "default"), no key/value length (no head_dim).
TEST(Qwen2vlRegistry, KvsInTheConvertersOrder) {
    const std::vector<GgufKV> kvs = qwen2vl_kvs(config_from(qwen2vl_json()));
    std::vector<std::string> keys;
    for (const GgufKV& kv : kvs) keys.push_back(kv.key.substr(8));
    const std::vector<std::string> want = {"block_count",
                                           "context_length",
                                           "embedding_length",
                                           "feed_forward_length",
                                           "attention.head_count",
                                           "attention.head_count_kv",
                                           "rope.dimension_sections",
                                           "rope.freq_base",
                                           "attention.layer_norm_rms_epsilon"};
    EXPECT_EQ(keys, want);
    ASSERT_EQ(kvs.size(), want.size());
    EXPECT_TRUE(kvs[6].value == GgufValue::i32_array({2, 3, 3, 0}));
    // transformers >= 4.52 writes rope_type "default" next to the sections; rope_parameters
    // (transformers 5) is read first.
    EXPECT_TRUE(qwen2vl_kvs(config_from(
                    qwen2vl_json(R"({"mrope_section": [16, 24, 24], "rope_type": "default"})")))[6]
                    .value == GgufValue::i32_array({16, 24, 24, 0}));
    // No mrope_section: no sections key.
    EXPECT_EQ(qwen2vl_kvs(config_from(qwen2vl_json("null"))).size(), want.size() - 1);
}

TEST(Qwen2vlRegistry, RefusesAMalformedMropeSection) {
    for (const char* bad : {R"({"type": "mrope", "mrope_section": [1, 2, 3, 4, 5]})",
                            R"({"type": "mrope", "mrope_section": [2, -3, 3]})",
                            R"({"type": "mrope", "mrope_section": "2,3,3"})"}) {
        try {
            config_from(qwen2vl_json(bad));
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("rope_scaling.mrope_section"), std::string::npos)
                << e.what();
        }
    }
}

// Qwen/Qwen2.5-VL-3B-Instruct's model.safetensors.index.json names and gguf-py's names for them
// (tensor_mapping.py; the q/k/v parts and the second temporal slice are the converter's).
TEST(Qwen2vlVisionRecord, NamesAndSplitsAsTheConverter) {
    const nlohmann::json qwen25 = {{"architectures", {"Qwen2_5_VLForConditionalGeneration"}},
                                   {"vision_config", nlohmann::json::object()}};
    const VisionArchitecture* found = find_vision_architecture(qwen25);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->projector_type, "qwen2.5vl_merger");
    const nlohmann::json qwen2 = {{"architectures", {"Qwen2VLForConditionalGeneration"}},
                                  {"vision_config", nlohmann::json::object()}};
    EXPECT_EQ(find_vision_architecture(qwen2)->projector_type, "qwen2vl_merger");
    const auto parts_of = [&](std::string_view hf) {
        std::vector<std::pair<std::string, VisionSplit>> out;
        for (const auto* rows : {&found->first, &found->layer, &found->last})
            for (const VisionTensorSpec& spec : *rows)
                if (spec.hf == hf) out.emplace_back(std::string(spec.gguf), spec.split);
        return out;
    };
    using P = std::vector<std::pair<std::string, VisionSplit>>;
    EXPECT_EQ(parts_of("visual.patch_embed.proj.weight"),
              (P{{"v.patch_embd.weight", VisionSplit::temporal_0},
                 {"v.patch_embd.weight.1", VisionSplit::temporal_1}}));
    EXPECT_EQ(parts_of("visual.blocks.{N}.attn.qkv.bias"),
              (P{{"v.blk.{N}.attn_q.bias", VisionSplit::third_0},
                 {"v.blk.{N}.attn_k.bias", VisionSplit::third_1},
                 {"v.blk.{N}.attn_v.bias", VisionSplit::third_2}}));
    EXPECT_EQ(parts_of("visual.blocks.{N}.attn.proj.weight"),
              (P{{"v.blk.{N}.attn_out.weight", VisionSplit::none}}));
    EXPECT_EQ(parts_of("visual.blocks.{N}.mlp.gate_proj.weight"),
              (P{{"v.blk.{N}.ffn_gate.weight", VisionSplit::none}}));
    EXPECT_EQ(parts_of("visual.merger.ln_q.weight"), (P{{"v.post_ln.weight", VisionSplit::none}}));
    EXPECT_EQ(parts_of("visual.merger.mlp.2.bias"), (P{{"mm.2.bias", VisionSplit::none}}));
    EXPECT_TRUE(parts_of("visual.merger.ln_q.bias").empty());  // Qwen2.5-VL's RMSNorm: no bias

    // verify's list for Qwen2.5-VL-3B-Instruct's sizes: 2 + 32 blocks x 16 + 5 tensors; the
    // window pattern from fullatt_block_indexes [7, 15, 23, 31]; the top-level rms_norm_eps.
    verify_ref::RefVisionNumbers n;
    n.image_size = 560, n.patch_size = 14, n.hidden = 1280, n.ffn = 3420, n.layers = 32;
    n.heads = 16, n.channels = 3, n.text_hidden = 2048, n.merge = 2, n.temporal = 2;
    const auto* family = verify_ref::find_ref_vision_family(qwen25);
    ASSERT_NE(family, nullptr);
    const auto tensors = family->tensors(n);
    EXPECT_EQ(tensors.size(), 2u + 32 * 16 + 5);
    EXPECT_EQ(tensors[0].source_shape, (std::vector<int64_t>{1280, 3, 2, 14, 14}));
    const auto kvs = family->family_kvs(n, {{"fullatt_block_indexes", {7, 15, 23, 31}}},
                                        nlohmann::json::object(), {{"rms_norm_eps", 1e-6}});
    ASSERT_EQ(kvs.size(), 3u);
    EXPECT_EQ(kvs[0].key, "clip.use_silu");
    EXPECT_EQ(kvs[1].key, "clip.vision.n_wa_pattern");
    EXPECT_EQ(kvs[1].value.as_u32(), 8u);
    EXPECT_EQ(kvs[2].key, "clip.vision.attention.layer_norm_epsilon");
}

}  // namespace
}  // namespace rebox::arch
