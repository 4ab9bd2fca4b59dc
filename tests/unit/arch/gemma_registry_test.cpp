// gemma, gemma2, gemma3 in the registry against tables written from llama.cpp's gemma loaders and
// gguf-py's tensor_mapping.py (docs/architectures.md "gemma"): names both ways (the
// "language_model." prefix of multimodal checkpoints too), which tensors get the +1 and which the
// vocabulary cut, the vision tower left out, KV lists; and the +1 itself on hand-worked values.
#include <gtest/gtest.h>

#include <bit>

#include "arch/architecture.hpp"
#include "arch/transforms.hpp"
#include "format/half.hpp"

namespace rebox::arch {
namespace {

struct Row {
    const char* hf;
    const char* gguf;
    ValueTransform values;
};

void expect_rows(const Architecture& a, std::initializer_list<Row> rows) {
    for (const Row& r : rows) {
        const auto ref = resolve_hf(a, r.hf);
        ASSERT_TRUE(ref.has_value()) << a.gguf_arch << ": " << r.hf;
        EXPECT_EQ(ref->gguf_name, r.gguf) << r.hf;
        EXPECT_EQ(ref->spec->values, r.values) << r.hf;
        ASSERT_TRUE(resolve_gguf(a, r.gguf).has_value()) << r.gguf;
    }
}

constexpr ValueTransform kPlus1 = ValueTransform::add_one, kNone = ValueTransform::none;

TEST(GemmaRegistry, ModelTypes) {
    ASSERT_NE(find_architecture("gemma"), nullptr);
    EXPECT_EQ(find_architecture("gemma")->gguf_arch, "gemma");
    EXPECT_EQ(find_architecture("gemma2")->gguf_arch, "gemma2");
    EXPECT_EQ(find_architecture("gemma3_text")->gguf_arch, "gemma3");
    EXPECT_EQ(find_architecture("gemma3"), find_architecture("gemma3_text"));  // multimodal config
    EXPECT_EQ(find_architecture("gemma3n"), nullptr);
}

TEST(GemmaRegistry, GemmaNames) {
    const Architecture& a = *find_architecture("gemma");
    expect_rows(
        a, {
               {"model.embed_tokens.weight", "token_embd.weight", kNone},
               {"model.norm.weight", "output_norm.weight", kPlus1},
               {"model.layers.1.input_layernorm.weight", "blk.1.attn_norm.weight", kPlus1},
               {"model.layers.1.post_attention_layernorm.weight", "blk.1.ffn_norm.weight", kPlus1},
               {"model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight", kNone},
               {"model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight", kNone},
           });
    // llama.cpp's gemma loader has no output tensor (always tied), no q/k norms, no biases.
    for (const char* refused : {"lm_head.weight", "model.layers.0.self_attn.q_norm.weight",
                                "model.layers.0.pre_feedforward_layernorm.weight",
                                "model.layers.0.self_attn.q_proj.bias"})
        EXPECT_FALSE(resolve_hf(a, refused).has_value()) << refused;
}

TEST(GemmaRegistry, Gemma2Names) {
    const Architecture& a = *find_architecture("gemma2");
    expect_rows(
        a, {
               {"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight", kPlus1},
               {"model.layers.0.post_attention_layernorm.weight",
                "blk.0.post_attention_norm.weight", kPlus1},
               {"model.layers.0.pre_feedforward_layernorm.weight", "blk.0.ffn_norm.weight", kPlus1},
               {"model.layers.0.post_feedforward_layernorm.weight", "blk.0.post_ffw_norm.weight",
                kPlus1},
               {"model.norm.weight", "output_norm.weight", kPlus1},
               {"model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", kNone},
           });
    EXPECT_FALSE(resolve_hf(a, "lm_head.weight").has_value());
    EXPECT_FALSE(resolve_hf(a, "model.layers.0.self_attn.k_norm.weight").has_value());
}

TEST(GemmaRegistry, Gemma3NamesPrefixesAndLeftOut) {
    const Architecture& a = *find_architecture("gemma3_text");
    expect_rows(
        a, {
               {"model.layers.2.self_attn.q_norm.weight", "blk.2.attn_q_norm.weight", kPlus1},
               {"model.layers.2.self_attn.k_norm.weight", "blk.2.attn_k_norm.weight", kPlus1},
               {"model.layers.2.post_feedforward_layernorm.weight", "blk.2.post_ffw_norm.weight",
                kPlus1},
               // transformers <= 4.49 multimodal layout, and >= 4.50's
               {"language_model.model.layers.2.self_attn.q_norm.weight", "blk.2.attn_q_norm.weight",
                kPlus1},
               {"model.language_model.layers.2.input_layernorm.weight", "blk.2.attn_norm.weight",
                kPlus1},
               {"language_model.model.embed_tokens.weight", "token_embd.weight", kNone},
               {"lm_head.weight", "output.weight", kNone},
           });
    EXPECT_EQ(resolve_hf(a, "model.embed_tokens.weight")->spec->rows,
              RowTransform::first_vocab_rows);
    EXPECT_EQ(resolve_hf(a, "model.layers.0.self_attn.q_proj.weight")->spec->rows,
              RowTransform::none);
    for (const char* vision : {"vision_tower.vision_model.post_layernorm.weight",
                               "model.vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight",
                               "multi_modal_projector.mm_soft_emb_norm.weight",
                               "model.multi_modal_projector.mm_input_projection_weight"}) {
        EXPECT_TRUE(is_left_out(a, vision)) << vision;
        EXPECT_FALSE(resolve_hf(a, vision).has_value()) << vision;
    }
    EXPECT_FALSE(is_left_out(a, "model.layers.0.self_attn.q_proj.weight"));
    EXPECT_FALSE(is_left_out(*find_architecture("gemma2"), "vision_tower.x.weight"));
}

TEST(GemmaRegistry, StripPrefixes) {
    EXPECT_EQ(strip_model_prefix("language_model.model.norm.weight"), "norm.weight");
    EXPECT_EQ(strip_model_prefix("model.language_model.norm.weight"), "norm.weight");
    EXPECT_EQ(strip_model_prefix("model.norm.weight"), "norm.weight");
    EXPECT_EQ(strip_model_prefix("my_language_model.x.weight"), "my_language_model.x.weight");
}

TEST(GemmaRegistry, KvLists) {
    const auto has = [](const char* type, ArchKv kv) {
        for (const ArchKv k : find_architecture(type)->kvs)
            if (k == kv) return true;
        return false;
    };
    // GemmaModel.set_gguf_parameters writes no rope.freq_base; Gemma2 adds softcapping and the
    // window; Gemma3 (TextModel's list) adds the local theta and no attention softcapping.
    EXPECT_FALSE(has("gemma", ArchKv::rope_freq_base));
    EXPECT_TRUE(has("gemma", ArchKv::key_length));
    EXPECT_FALSE(has("gemma", ArchKv::sliding_window));
    EXPECT_TRUE(has("gemma2", ArchKv::attn_logit_softcapping));
    EXPECT_TRUE(has("gemma2", ArchKv::final_logit_softcapping));
    EXPECT_TRUE(has("gemma2", ArchKv::sliding_window));
    EXPECT_FALSE(has("gemma2", ArchKv::rope_freq_base_swa));
    EXPECT_TRUE(has("gemma3", ArchKv::rope_freq_base));
    EXPECT_TRUE(has("gemma3", ArchKv::rope_freq_base_swa));
    EXPECT_FALSE(has("gemma3", ArchKv::attn_logit_softcapping));
    EXPECT_TRUE(has("gemma3", ArchKv::sliding_window));
}

// F16 weights: the converter adds 1 in fp16 (hand-worked roundings).
TEST(GemmaNormShift, F16AddRoundsToFp16) {
    // 0x1401 = 2^-10 + 2^-20; the exact sum 1 + 2^-10 + 2^-20 rounds to 1 + 2^-10 in fp16.
    EXPECT_EQ(std::bit_cast<uint32_t>(norm_plus_one_f16(0x1401)), 0x3F802000u);
    // The binary32 add keeps 2^-20: the two differ, which is why the dtype matters.
    EXPECT_EQ(std::bit_cast<uint32_t>(norm_plus_one_f32(half_to_float(0x1401))), 0x3F802008u);
    // 0x1000 = 2^-11: 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even, 1.
    EXPECT_EQ(std::bit_cast<uint32_t>(norm_plus_one_f16(0x1000)), 0x3F800000u);
    // 0x1600 = 1.5 * 2^-10: the tie between 1 + 2^-10 and 1 + 2^-9 goes to the even 1 + 2^-9.
    EXPECT_EQ(std::bit_cast<uint32_t>(norm_plus_one_f16(0x1600)), 0x3F804000u);
    // 0.5 (0x3800) + 1 = 1.5 exactly; -1 (0xBC00) + 1 = +0.
    EXPECT_EQ(norm_plus_one_f16(0x3800), 1.5f);
    EXPECT_EQ(std::bit_cast<uint32_t>(norm_plus_one_f16(0xBC00)), 0u);
    // 65504 + 1 rounds back to 65504 (fp16 spacing 32 there).
    EXPECT_EQ(norm_plus_one_f16(0x7BFF), 65504.0f);
}

// BF16 weights: widened to float32 first, so the add is binary32 and nothing rounds to bf16.
TEST(GemmaNormShift, Bf16AddIsBinary32) {
    // bf16 0x3C01 = 2^-7 + 2^-14; 1 + 2^-7 + 2^-14 is exact in binary32 (bf16 would give 1 + 2^-7).
    EXPECT_EQ(std::bit_cast<uint32_t>(norm_plus_one_f32(bf16_to_float(0x3C01))), 0x3F810200u);
    // F32 2^-24: 1 + 2^-24 is a binary32 tie, to even: 1.
    EXPECT_EQ(norm_plus_one_f32(std::ldexp(1.0f, -24)), 1.0f);
}

}  // namespace
}  // namespace rebox::arch
