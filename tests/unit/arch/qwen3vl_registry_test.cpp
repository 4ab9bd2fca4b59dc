// qwen3vl in the registry against hand-written tables from llama.cpp's qwen3vl loader
// (src/models/qwen3vl.cpp: qwen3's tensors, rope.dimension_sections, n_deepstack_layers) and
// converter (conversion/qwen3vl.py: Qwen3VLTextModel picked by architectures[0], TextModel's KVs,
// then the deepstack count): Qwen3-VL-2B-Instruct's published names both ways, the vision tower
// left out, the KVs in the converter's order with mrope_section padded to 4 and the deepstack
// count from vision_config (transformers' default [8, 16, 24] when the key is missing), and a
// malformed deepstack list refused.
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

// Qwen3-VL-2B-Instruct's config.json layout scaled down: the text numbers in text_config (head_dim
// 16, 4 heads, 2 kv heads, 2 layers), its interleaved M-RoPE rope_scaling, a vision_config.
std::string qwen3vl_json(const std::string& deepstack = R"("deepstack_visual_indexes": [1, 2],)") {
    return R"({"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
        "tie_word_embeddings": true,
        "text_config": {"model_type": "qwen3_vl_text", "head_dim": 16, "hidden_size": 64,
          "intermediate_size": 128, "max_position_embeddings": 262144, "num_attention_heads": 4,
          "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
          "rope_scaling": {"mrope_interleaved": true, "mrope_section": [2, 3, 3],
                           "rope_type": "default"},
          "rope_theta": 5000000, "tie_word_embeddings": true, "vocab_size": 100},
        "vision_config": {)" +
           deepstack + R"( "depth": 4, "hidden_size": 32, "out_hidden_size": 64}})";
}

ModelConfig q3vl_config_from(const std::string& json) {
    return parse_model_config(nlohmann::json::parse(json));
}

std::vector<GgufKV> qwen3vl_kvs(const ModelConfig& c) {
    ModelMetadataInput input;
    input.config = &c;
    std::vector<GgufKV> out;
    for (GgufKV& kv : build_model_metadata(input))
        if (kv.key.starts_with("qwen3vl.")) out.push_back(std::move(kv));
    return out;
}

TEST(Qwen3vlRegistry, NamesBothWays) {
    const Architecture* found = find_architecture("qwen3vl");
    ASSERT_NE(found, nullptr);
    const Architecture& a = *found;
    const std::pair<const char*, const char*> rows[] = {
        {"model.language_model.embed_tokens.weight", "token_embd.weight"},
        {"model.language_model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
        {"model.language_model.layers.1.self_attn.q_norm.weight", "blk.1.attn_q_norm.weight"},
        {"model.language_model.layers.0.self_attn.k_norm.weight", "blk.0.attn_k_norm.weight"},
        {"model.language_model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight"},
        {"model.language_model.layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight"},
        {"model.language_model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight"},
        {"model.language_model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, RowTransform::none) << hf;  // NEOX rope: no permutation
        ASSERT_TRUE(resolve_gguf(a, gguf).has_value()) << gguf;
    }
    for (const char* vision :
         {"model.visual.blocks.0.attn.qkv.weight", "model.visual.merger.linear_fc1.weight",
          "model.visual.deepstack_merger_list.0.norm.weight", "model.visual.pos_embed.weight"}) {
        EXPECT_FALSE(resolve_hf(a, vision).has_value()) << vision;
        EXPECT_TRUE(is_left_out(a, vision)) << vision;
    }
    // qwen3's attention has no biases.
    EXPECT_FALSE(resolve_hf(a, "model.language_model.layers.0.self_attn.q_proj.bias"));
}

TEST(Qwen3vlRegistry, ChosenByArchitecture) {
    EXPECT_EQ(q3vl_config_from(qwen3vl_json()).model_type, "qwen3vl");
    EXPECT_EQ(find_architecture("qwen3_vl")->gguf_arch, "qwen3vl");
}

// TextModel.set_gguf_parameters' order, then Qwen3VLTextModel's n_deepstack_layers; the sections
// [2, 3, 3] padded with 0 (INT32[4]); key/value length from text_config's head_dim.
TEST(Qwen3vlRegistry, KvsInTheConvertersOrder) {
    const std::vector<GgufKV> kvs = qwen3vl_kvs(q3vl_config_from(qwen3vl_json()));
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
                                           "attention.layer_norm_rms_epsilon",
                                           "attention.key_length",
                                           "attention.value_length",
                                           "n_deepstack_layers"};
    EXPECT_EQ(keys, want);
    ASSERT_EQ(kvs.size(), want.size());
    EXPECT_TRUE(kvs[6].value == GgufValue::i32_array({2, 3, 3, 0}));
    EXPECT_TRUE(kvs[11].value == GgufValue::u32(2));
    // No deepstack_visual_indexes: Qwen3VLVisionConfig's [8, 16, 24]; an empty list: 0, written.
    EXPECT_TRUE(qwen3vl_kvs(q3vl_config_from(qwen3vl_json("")))[11].value == GgufValue::u32(3));
    EXPECT_TRUE(
        qwen3vl_kvs(q3vl_config_from(qwen3vl_json(R"("deepstack_visual_indexes": [],)")))[11]
            .value == GgufValue::u32(0));
}

TEST(Qwen3vlRegistry, RefusesAMalformedDeepstackList) {
    for (const char* bad :
         {R"("deepstack_visual_indexes": "5,11",)", R"("deepstack_visual_indexes": [5, -1],)"}) {
        try {
            q3vl_config_from(qwen3vl_json(bad));
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("vision_config.deepstack_visual_indexes"),
                      std::string::npos)
                << e.what();
        }
    }
}

// Qwen/Qwen3-VL-2B-Instruct's model.safetensors.index.json names (model.visual.*, read without
// "model.") and the converter's names for them (Qwen3VLVisionModel.modify_tensors, gguf-py's
// tensor_mapping.py): qkv kept fused, the patch bias kept, the deepstack mergers by list position.
TEST(Qwen3vlVisionRecord, NamesAsTheConverter) {
    const nlohmann::json config = {{"architectures", {"Qwen3VLForConditionalGeneration"}},
                                   {"vision_config", nlohmann::json::object()}};
    const VisionArchitecture* found = find_vision_architecture(config);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->projector_type, "qwen3vl_merger");
    EXPECT_EQ(found->index_key, "deepstack_visual_indexes");
    const auto gguf_of = [&](std::string_view hf) {
        std::vector<std::string> out;
        for (const auto* rows : {&found->first, &found->layer, &found->indexed, &found->last})
            for (const VisionTensorSpec& spec : *rows)
                if (spec.hf == hf) out.emplace_back(spec.gguf);
        return out;
    };
    using V = std::vector<std::string>;
    EXPECT_EQ(gguf_of("visual.patch_embed.proj.weight"),
              (V{"v.patch_embd.weight", "v.patch_embd.weight.1"}));
    EXPECT_EQ(gguf_of("visual.patch_embed.proj.bias"), (V{"v.patch_embd.bias"}));
    EXPECT_EQ(gguf_of("visual.pos_embed.weight"), (V{"v.position_embd.weight"}));
    EXPECT_EQ(gguf_of("visual.blocks.{N}.attn.qkv.weight"), (V{"v.blk.{N}.attn_qkv.weight"}));
    EXPECT_EQ(gguf_of("visual.blocks.{N}.mlp.linear_fc1.bias"), (V{"v.blk.{N}.ffn_up.bias"}));
    EXPECT_EQ(gguf_of("visual.merger.norm.bias"), (V{"v.post_ln.bias"}));
    EXPECT_EQ(gguf_of("visual.merger.linear_fc1.weight"), (V{"mm.0.weight"}));
    EXPECT_EQ(gguf_of("visual.merger.linear_fc2.bias"), (V{"mm.2.bias"}));
    EXPECT_EQ(gguf_of("visual.deepstack_merger_list.{N}.linear_fc2.weight"),
              (V{"v.deepstack.{N}.fc2.weight"}));

    // verify's list for Qwen3-VL-2B-Instruct's sizes (depth 24, hidden 1024, deepstack [5, 11,
    // 17]): 4 + 24 blocks x 12 + 3 deepstack mergers x 6 + 6 tensors; the deepstack layers by the
    // indexes; text_config's rms_norm_eps.
    verify_ref::RefVisionNumbers n;
    n.image_size = 768, n.patch_size = 16, n.hidden = 1024, n.ffn = 4096, n.layers = 24;
    n.heads = 16, n.channels = 3, n.text_hidden = 2048, n.merge = 2, n.temporal = 2;
    n.positions = 2304, n.deepstack = {5, 11, 17};
    const auto* family = verify_ref::find_ref_vision_family(config);
    ASSERT_NE(family, nullptr);
    const auto tensors = family->tensors(n);
    EXPECT_EQ(tensors.size(), 4u + 24 * 12 + 3 * 6 + 6);
    EXPECT_EQ(tensors[3].source_shape, (std::vector<int64_t>{2304, 1024}));
    bool found_ds = false;
    for (const auto& t : tensors)
        if (t.gguf_name == "v.deepstack.11.norm.weight") {
            found_ds = true;
            EXPECT_EQ(t.source_name, "visual.deepstack_merger_list.1.norm.weight");
            EXPECT_EQ(t.source_shape, (std::vector<int64_t>{4096}));
        }
    EXPECT_TRUE(found_ds);
    const auto kvs = family->family_kvs(n, nlohmann::json::object(), nlohmann::json::object(),
                                        {{"text_config", {{"rms_norm_eps", 1e-6}}}});
    ASSERT_EQ(kvs.size(), 4u);
    EXPECT_EQ(kvs[0].key, "clip.use_gelu");
    EXPECT_EQ(kvs[1].key, "clip.vision.spatial_merge_size");
    EXPECT_EQ(kvs[2].key, "clip.vision.attention.layer_norm_epsilon");
    EXPECT_EQ(kvs[3].key, "clip.vision.is_deepstack_layers");
    ASSERT_EQ(kvs[3].value.array.size(), 24u);
    EXPECT_EQ(std::get<bool>(kvs[3].value.array[11]), true);
    EXPECT_EQ(std::get<bool>(kvs[3].value.array[12]), false);
}

}  // namespace
}  // namespace rebox::arch
