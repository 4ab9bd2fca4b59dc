// The vision records (src/arch/vision/) and verify's own families (src/verify/mmproj/): which
// config.json each claims (architectures[0], vision_config's own first; none without a
// vision_config), and the gemma3 tables' names against gemma-3-4b-it's published index.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch/vision/vision_architecture.hpp"
#include "verify/mmproj/ref_vision.hpp"

namespace rebox {
namespace {

using nlohmann::json;

TEST(VisionRegistry, ClaimsByArchitecture) {
    const json gemma3 = {{"architectures", {"Gemma3ForConditionalGeneration"}},
                         {"vision_config", {{"hidden_size", 1152}}}};
    const arch::VisionArchitecture* found = arch::find_vision_architecture(gemma3);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->projector_type, "gemma3");
    EXPECT_NE(verify_ref::find_ref_vision_family(gemma3), nullptr);
    // No vision_config: nothing to write (a text-only export of the same architecture).
    json text_only = gemma3;
    text_only.erase("vision_config");
    EXPECT_EQ(arch::find_vision_architecture(text_only), nullptr);
    EXPECT_EQ(verify_ref::find_ref_vision_family(text_only), nullptr);
    // vision_config.architectures[0] wins over the top level (get_model_architecture).
    json other = gemma3;
    // Pixtral-12B's HF class: LlavaVisionModel converts it, rebox has no record for it.
    other["vision_config"]["architectures"] = {"LlavaForConditionalGeneration"};
    EXPECT_EQ(arch::find_vision_architecture(other), nullptr);
    EXPECT_EQ(verify_ref::find_ref_vision_family(other), nullptr);
    other["vision_config"]["architectures"] = {"Mistral3ForConditionalGeneration"};
    ASSERT_NE(arch::find_vision_architecture(other), nullptr);
    EXPECT_EQ(arch::find_vision_architecture(other)->projector_type, "pixtral");
    EXPECT_NE(verify_ref::find_ref_vision_family(other), nullptr);
    other["vision_config"]["architectures"] = {"Qwen2VLForConditionalGeneration"};
    ASSERT_NE(arch::find_vision_architecture(other), nullptr);
    EXPECT_EQ(arch::find_vision_architecture(other)->projector_type, "qwen2vl_merger");
    const json qwen = {{"architectures", {"Qwen2_5_VLForConditionalGeneration"}},
                       {"vision_config", json::object()}};
    ASSERT_NE(arch::find_vision_architecture(qwen), nullptr);
    EXPECT_EQ(arch::find_vision_architecture(qwen)->projector_type, "qwen2.5vl_merger");
    const json qwen3 = {{"architectures", {"Qwen3VLForConditionalGeneration"}},
                        {"vision_config", json::object()}};
    ASSERT_NE(arch::find_vision_architecture(qwen3), nullptr);
    EXPECT_EQ(arch::find_vision_architecture(qwen3)->projector_type, "qwen3vl_merger");
    EXPECT_NE(verify_ref::find_ref_vision_family(qwen3), nullptr);
    // Qwen3.5's tower: the same converter class (Qwen3VLVisionModel), its own record (no
    // deepstack default).
    for (const char* name :
         {"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}) {
        const json qwen35 = {{"architectures", {name}}, {"vision_config", json::object()}};
        ASSERT_NE(arch::find_vision_architecture(qwen35), nullptr) << name;
        EXPECT_EQ(arch::find_vision_architecture(qwen35)->projector_type, "qwen3vl_merger");
        EXPECT_EQ(arch::find_vision_architecture(qwen35)->family, "qwen35vl");
        EXPECT_NE(verify_ref::find_ref_vision_family(qwen35), nullptr) << name;
    }
}

TEST(VisionRegistry, Gemma3NamesAsThePublishedCheckpoint) {
    // google/gemma-3-4b-it's model.safetensors.index.json names, and gguf-py's names for them.
    const arch::VisionArchitecture& a = arch::detail::gemma3_vision_architecture();
    const auto gguf_of = [&](std::string_view hf) -> std::string {
        for (const auto* rows : {&a.first, &a.layer, &a.last})
            for (const arch::VisionTensorSpec& spec : *rows)
                if (spec.hf == hf) return std::string(spec.gguf);
        return "";
    };
    EXPECT_EQ(gguf_of("vision_tower.vision_model.embeddings.patch_embedding.weight"),
              "v.patch_embd.weight");
    EXPECT_EQ(gguf_of("vision_tower.vision_model.encoder.layers.{N}.self_attn.out_proj.weight"),
              "v.blk.{N}.attn_out.weight");
    EXPECT_EQ(gguf_of("vision_tower.vision_model.encoder.layers.{N}.mlp.fc1.weight"),
              "v.blk.{N}.ffn_up.weight");
    EXPECT_EQ(gguf_of("vision_tower.vision_model.encoder.layers.{N}.layer_norm2.bias"),
              "v.blk.{N}.ln2.bias");
    EXPECT_EQ(gguf_of("multi_modal_projector.mm_input_projection_weight"),
              "mm.input_projection.weight");
    EXPECT_EQ(gguf_of("multi_modal_projector.mm_soft_emb_norm.weight"), "mm.soft_emb_norm.weight");
    // verify's list for gemma-3-4b-it's sizes: 3 + 27 layers x 16 + 4 tensors.
    verify_ref::RefVisionNumbers n;
    n.image_size = 896, n.patch_size = 14, n.hidden = 1152, n.ffn = 4304, n.layers = 27;
    n.heads = 16, n.channels = 3, n.text_hidden = 2560;
    const auto* family = verify_ref::find_ref_vision_family(json{
        {"architectures", {"Gemma3ForConditionalGeneration"}}, {"vision_config", json::object()}});
    ASSERT_NE(family, nullptr);
    const auto tensors = family->tensors(n);
    EXPECT_EQ(tensors.size(), 3u + 27 * 16 + 4);
    EXPECT_EQ(tensors[2].source_shape, (std::vector<int64_t>{4096, 1152}));  // 64 x 64 patches
    // 896 / 14 = 64 patches per side, 256 tokens = 16 per side: pooling 4, clip.cpp's default,
    // so no scale_factor key.
    const auto kvs = family->family_kvs(n, json{{"layer_norm_eps", 1e-6}},
                                        json{{"image_seq_length", 256}}, json::object());
    for (const GgufKV& kv : kvs) EXPECT_NE(kv.key, "clip.vision.projector.scale_factor");
}

TEST(VisionRegistry, PixtralNamesAsThePublishedCheckpoint) {
    // mistralai/Mistral-Small-3.1-24B-Instruct-2503's model.safetensors.index.json names, and
    // gguf-py's names for them ("pixtral-hf", "mistral small 3.1 - hf" rows).
    const arch::VisionArchitecture& a = arch::detail::pixtral_vision_architecture();
    const auto spec_of = [&](std::string_view hf) -> const arch::VisionTensorSpec* {
        for (const auto* rows : {&a.first, &a.layer, &a.last})
            for (const arch::VisionTensorSpec& spec : *rows)
                if (spec.hf == hf) return &spec;
        return nullptr;
    };
    const std::pair<const char*, const char*> names[] = {
        {"vision_tower.patch_conv.weight", "v.patch_embd.weight"},
        {"vision_tower.ln_pre.weight", "v.pre_ln.weight"},
        {"vision_tower.transformer.layers.{N}.attention_norm.weight", "v.blk.{N}.ln1.weight"},
        {"vision_tower.transformer.layers.{N}.attention.o_proj.weight",
         "v.blk.{N}.attn_out.weight"},
        {"vision_tower.transformer.layers.{N}.ffn_norm.weight", "v.blk.{N}.ln2.weight"},
        {"vision_tower.transformer.layers.{N}.feed_forward.gate_proj.weight",
         "v.blk.{N}.ffn_gate.weight"},
        {"multi_modal_projector.norm.weight", "mm.input_norm.weight"},
        {"multi_modal_projector.patch_merger.merging_layer.weight", "mm.patch_merger.weight"},
        {"multi_modal_projector.linear_1.weight", "mm.1.weight"},
        {"multi_modal_projector.linear_2.weight", "mm.2.weight"},
    };
    for (const auto& [hf, gguf] : names) {
        const arch::VisionTensorSpec* spec = spec_of(hf);
        ASSERT_NE(spec, nullptr) << hf;
        EXPECT_EQ(spec->gguf, gguf) << hf;
    }
    // q / k permuted (LlamaModel.permute for HF-format weights), v not.
    EXPECT_EQ(spec_of("vision_tower.transformer.layers.{N}.attention.q_proj.weight")->split,
              arch::VisionSplit::rope_pairs);
    EXPECT_EQ(spec_of("vision_tower.transformer.layers.{N}.attention.k_proj.weight")->split,
              arch::VisionSplit::rope_pairs);
    EXPECT_EQ(spec_of("vision_tower.transformer.layers.{N}.attention.v_proj.weight")->split,
              arch::VisionSplit::none);
    EXPECT_EQ(a.row_token, "[IMG_BREAK]");
    // verify's list for Mistral Small 3.1's sizes: 2 + 24 layers x 9 + 4 + the two optional
    // projector biases + the [IMG_BREAK] row.
    verify_ref::RefVisionNumbers n;
    n.image_size = 1540, n.patch_size = 14, n.hidden = 1024, n.ffn = 4096, n.layers = 24;
    n.heads = 16, n.channels = 3, n.text_hidden = 5120, n.merge = 2, n.text_vocab = 131072;
    n.token_row = 12;
    const auto* family = verify_ref::find_ref_vision_family(
        json{{"architectures", {"Mistral3ForConditionalGeneration"}},
             {"vision_config", json::object()}});
    ASSERT_NE(family, nullptr);
    const auto tensors = family->tensors(n);
    EXPECT_EQ(tensors.size(), 2u + 24 * 9 + 4 + 2 + 1);
    EXPECT_EQ(tensors.back().gguf_name, "v.token_embd.img_break");
    EXPECT_EQ(tensors.back().slice_begin, 12);
    // Pixtral's config has no layer_norm_eps: 1e-5, gelu by PixtralVisionConfig's default.
    const auto kvs =
        family->family_kvs(n, json{{"hidden_act", "gelu"}}, json::object(), json::object());
    ASSERT_EQ(kvs.size(), 3u);
    EXPECT_EQ(kvs[0].key, "clip.vision.attention.layer_norm_epsilon");
    EXPECT_EQ(kvs[0].value, GgufValue::f32(1e-5f));
    EXPECT_EQ(kvs[1].key, "clip.use_gelu");
    EXPECT_EQ(kvs[2].key, "clip.vision.spatial_merge_size");
}

}  // namespace
}  // namespace rebox
