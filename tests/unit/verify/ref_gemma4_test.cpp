// verify's own gemma4 pieces, worked by hand from llama.cpp's converter (conversion/gemma.py):
// Gemma4Model.set_vocab's vocabulary as read_ref_tokenizer derives it with the gemma4 flag (model
// "gemma4", merges as gguf-py joins them, score -1000, types BYTE / CONTROL / USER_DEFINED /
// NORMAL, add_bos true, add_space_prefix false), and generate_extra_tensors' proportional
// rope_freqs (int(D * p / 2) ones, then 1e30 up to D / 2); the MoE block's source shapes and
// counts as transformers' Gemma4TextDecoderLayer holds them (router [E, hidden], its scale
// [hidden], per_expert_scale [E], experts.gate_up_proj [E, 2 * F_e, hidden], down_proj
// [E, hidden, F_e]) with the used-expert count from top_k_experts (TextModel's find_hparam).
#include <gtest/gtest.h>

#include "rebox/error.hpp"
#include "test_files.hpp"
#include "verify/arch/expected_shapes.hpp"
#include "verify/sources/fused_experts_index.hpp"
#include "verify/sources/ref_config.hpp"
#include "verify/tokenizer/ref_tokenizer.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox::verify_ref {
namespace {

#define G4R_SP "\xE2\x96\x81"  // U+2581

std::string g4ref_tokenizer_json(const std::string& byte_fallback) {
    return R"({"added_tokens": [{"id": 0, "content": "<pad>", "special": true},
        {"id": 1, "content": "<eos>", "special": true},
        {"id": 2, "content": "<bos>", "special": true},
        {"id": 3, "content": "<|tool_call>", "special": true},
        {"id": 4, "content": "<|think|>", "special": true},
        {"id": 9, "content": "<y>", "special": false}],
      "decoder": {"type": "Sequence", "decoders": []},
      "model": {"type": "BPE", "byte_fallback": )" +
           byte_fallback + R"(, "vocab": {"<pad>": 0, "<eos>": 1, "<bos>": 2,
        "<|tool_call>": 3, "<|think|>": 4, "<0xFF>": 5, ")" G4R_SP R"(": 6, "x": 7,
        ")" G4R_SP R"(x": 8}, "merges": [[")" G4R_SP R"(", "x"]]}})";
}

TEST(RefGemma4, VocabularyWorkedByHand) {
    test::ScratchDir dir;
    dir.write("tokenizer.json", g4ref_tokenizer_json("true"));
    dir.write("tokenizer_config.json", R"({"bos_token": "<bos>", "eos_token": "<eos>",
        "pad_token": "<pad>", "extra_special_tokens": {"stc_token": "<|tool_call>",
        "think_token": "<|think|>"}})");
    const RefTokenizer t = read_ref_tokenizer(dir.path(), 10, false, true);
    EXPECT_EQ(t.model, "gemma4");
    EXPECT_EQ(t.merges, std::vector<std::string>{G4R_SP " x"});
    ASSERT_TRUE(t.vocab.has_value());
    const RefVocab& v = *t.vocab;
    EXPECT_EQ(v.tokens[9], "<y>");
    // <pad> <eos> <bos> named: CONTROL 3; <|tool_call> named but shown: USER_DEFINED 4; <|think|>
    // named: CONTROL; <0xFF> BYTE 6; three NORMAL 1; <y> past the 9 model.vocab ids: USER_DEFINED.
    EXPECT_EQ(v.token_types, (std::vector<int32_t>{3, 3, 3, 4, 3, 6, 1, 1, 1, 4}));
    EXPECT_EQ(v.scores, std::vector<float>(10, -1000.0f));
    EXPECT_EQ(v.bos_id, 2u);
    EXPECT_EQ(v.eos_id, 1u);
    EXPECT_EQ(v.pad_id, 0u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_EQ(v.add_space_prefix, false);

    // LlamaHfVocab refuses a BPE without byte_fallback.
    test::ScratchDir plain;
    plain.write("tokenizer.json", g4ref_tokenizer_json("false"));
    EXPECT_THROW(read_ref_tokenizer(plain.path(), 10, false, true), Error);
}

// Gemma 4's own tokenizer_config.json layout: the model tokens as top-level "*_token" keys.
TEST(RefGemma4, TopLevelModelTokensAreSpecial) {
    test::ScratchDir dir;
    dir.write("tokenizer.json", g4ref_tokenizer_json("true"));
    dir.write("tokenizer_config.json", R"({"bos_token": "<bos>", "eos_token": "<eos>",
        "add_bos_token": true, "stc_token": "<|tool_call>", "think_token": {"content": "<|think|>"},
        "extra_special_tokens": []})");
    const RefTokenizer t = read_ref_tokenizer(dir.path(), 10, false, true);
    ASSERT_TRUE(t.vocab.has_value());
    // <pad> named nowhere: NORMAL 1; <eos> <bos> CONTROL 3; <|tool_call> shown: 4; <|think|>
    // (think_token) CONTROL; <0xFF> BYTE; <y> past model.vocab: USER_DEFINED.
    EXPECT_EQ(t.vocab->token_types, (std::vector<int32_t>{1, 3, 3, 4, 3, 6, 1, 1, 1, 4}));
}

TEST(RefGemma4, ProportionalRopeFreqs) {
    RefConfig c;
    c.full_layers = RefConfig::FullAttentionLayers{
        .head_dim = 32, .kv_heads = std::nullopt, .partial_rotary_factor = 0.25};
    // D 32, p 0.25: int(32 * 0.25 / 2) = 4 ones, then 12 of 1e30 (16 in all).
    std::vector<float> want(16, 1e30f);
    for (int i = 0; i < 4; ++i) want[i] = 1.0f;
    EXPECT_EQ(expected_proportional_rope_freqs(c), want);
    c.full_layers->head_dim = 512;  // gemma-4-31B: 64 ones of 256
    const std::vector<float> big = expected_proportional_rope_freqs(c);
    ASSERT_EQ(big.size(), 256u);
    EXPECT_EQ(big[63], 1.0f);
    EXPECT_EQ(big[64], 1e30f);
}

TEST(RefGemma4, MoeShapesAndCounts) {
    const std::string text = R"({"model_type": "gemma4", "text_config": {
        "model_type": "gemma4_text", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "global_head_dim": 32, "vocab_size": 100,
        "hidden_size_per_layer_input": 0, "max_position_embeddings": 4096,
        "layer_types": ["sliding_attention", "full_attention"], "enable_moe_block": true,
        "num_experts": 3, "top_k_experts": 2, "moe_intermediate_size": 24}})";
    const RefConfig c = parse_ref_config(text);
    EXPECT_EQ(c.num_experts, 3u);
    EXPECT_EQ(c.num_experts_per_tok, 2u);
    EXPECT_EQ(c.moe_intermediate_size, std::optional<uint32_t>(24));
    using Shape = std::vector<int64_t>;
    const std::pair<const char*, Shape> rows[] = {
        {"layers.0.router.proj.weight", {3, 64}},
        {"layers.1.router.scale", {64}},
        {"layers.0.router.per_expert_scale", {3}},
        {"layers.1.experts.gate_up_proj", {3, 48, 64}},
        {"layers.0.experts.down_proj", {3, 64, 24}},
        {"layers.0.pre_feedforward_layernorm_2.weight", {64}},
        {"layers.1.post_feedforward_layernorm_1.weight", {64}},
        {"layers.1.post_feedforward_layernorm_2.weight", {64}},
        {"layers.0.mlp.gate_proj.weight", {128, 64}},  // the dense MLP beside them
        // mlx-lm's sanitize: gate_up_proj's halves of dim -2, down_proj renamed.
        {"layers.1.experts.switch_glu.gate_proj.weight", {3, 24, 64}},
        {"layers.1.experts.switch_glu.up_proj.weight", {3, 24, 64}},
        {"layers.0.experts.switch_glu.down_proj.weight", {3, 64, 24}},
        // ModelOpt's per-expert Linear modules ([out, in]).
        {"layers.1.experts.2.gate_proj.weight", {24, 64}},
        {"layers.0.experts.0.up_proj.weight", {24, 64}},
        {"layers.1.experts.1.down_proj.weight", {64, 24}},
    };
    for (const auto& [name, shape] : rows) EXPECT_EQ(expected_hf_shape(c, name), shape) << name;
    // A dense Gemma 4 has none of them.
    const std::string dense = R"({"model_type": "gemma4_text", "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 32, "vocab_size": 100,
        "layer_types": ["full_attention"], "num_experts": null})";
    EXPECT_EQ(expected_hf_shape(parse_ref_config(dense), "layers.0.router.scale"), std::nullopt);
    // num_experts_per_tok, when config.json has it, comes first.
    std::string named = text;
    named.replace(named.find(R"("top_k_experts": 2)"), 18,
                  R"("top_k_experts": 2, "num_experts_per_tok": 1)");
    EXPECT_EQ(parse_ref_config(named).num_experts_per_tok, 1u);
    // verify's own names of mlx-lm's split experts for the fused ones it expects.
    const auto gate_up = switch_glu_names("layers.1.experts.gate_up_proj");
    ASSERT_TRUE(gate_up.has_value());
    EXPECT_EQ(gate_up->gate_or_down, "layers.1.experts.switch_glu.gate_proj.weight");
    EXPECT_EQ(gate_up->up, "layers.1.experts.switch_glu.up_proj.weight");
    const auto down = switch_glu_names("layers.0.experts.down_proj");
    ASSERT_TRUE(down.has_value());
    EXPECT_EQ(down->gate_or_down, "layers.0.experts.switch_glu.down_proj.weight");
    EXPECT_EQ(down->up, "");
    EXPECT_FALSE(switch_glu_names("layers.0.mlp.down_proj.weight").has_value());
}

// google/gemma-4-E2B-it's layout in small: 4 layers, the last 2 KV-shared with a double-wide MLP,
// per-layer inputs of 8. transformers' Gemma4TextModel: embed_tokens_per_layer [vocab_size_per_
// layer_input, L * 8], per_layer_model_projection [L * 8, hidden], per_layer_projection_norm [8];
// Gemma4TextDecoderLayer: per_layer_input_gate [8, hidden], per_layer_projection [hidden, 8],
// post_per_layer_input_norm [hidden]; Gemma4TextMLP: intermediate_size * 2 from layer 2 on.
TEST(RefGemma4, E2bShapes) {
    const std::string text = R"({"model_type": "gemma4", "text_config": {
        "model_type": "gemma4_text", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 1,
        "head_dim": 16, "global_head_dim": 32, "vocab_size": 100, "vocab_size_per_layer_input": 100,
        "hidden_size_per_layer_input": 8, "num_kv_shared_layers": 2, "use_double_wide_mlp": true,
        "max_position_embeddings": 4096, "layer_types": ["sliding_attention", "full_attention",
        "sliding_attention", "full_attention"]}})";
    const RefConfig c = parse_ref_config(text);
    EXPECT_EQ(c.per_layer_input_width, 8u);
    EXPECT_EQ(c.kv_shared_layers, 2u);
    EXPECT_TRUE(c.double_wide_mlp);
    using Shape = std::vector<int64_t>;
    const std::pair<const char*, Shape> rows[] = {
        {"embed_tokens_per_layer.weight", {100, 32}},
        {"per_layer_model_projection.weight", {32, 64}},
        {"per_layer_projection_norm.weight", {8}},
        {"layers.0.per_layer_input_gate.weight", {8, 64}},
        {"layers.3.per_layer_projection.weight", {64, 8}},
        {"layers.2.post_per_layer_input_norm.weight", {64}},
        {"layers.1.mlp.gate_proj.weight", {128, 64}},
        {"layers.2.mlp.up_proj.weight", {256, 64}},
        {"layers.3.mlp.down_proj.weight", {64, 256}},
        {"layers.3.self_attn.k_proj.weight", {32, 64}},  // kept in the checkpoint, unused
    };
    for (const auto& [name, shape] : rows) EXPECT_EQ(expected_hf_shape(c, name), shape) << name;
    // Without the double-wide MLP every layer keeps intermediate_size.
    std::string narrow = text;
    narrow.replace(narrow.find(R"("use_double_wide_mlp": true)"), 27,
                   R"("use_double_wide_mlp": false)");
    EXPECT_EQ(expected_hf_shape(parse_ref_config(narrow), "layers.3.mlp.down_proj.weight"),
              (Shape{64, 128}));
}

}  // namespace
}  // namespace rebox::verify_ref
