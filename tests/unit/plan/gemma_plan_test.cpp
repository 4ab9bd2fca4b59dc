// make_plan on a tiny gemma3 directory written by the test (hidden 64, 1 layer: 15 tensors, heads 4
// / kv 2, head_dim 16, vocab 128, embed_tokens with 136 rows): every norm (q/k norms too) becomes
// an F32 add_one_f32 tensor, token_embd keeps rows 0..127 through the row map, a quantized norm is
// a BLOCKER naming it, the multimodal layout (language_model. prefix, text_config, vision tensors
// left out with a note) plans the same tensors, and the gemma3 KVs follow config.json.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "plan/plan.hpp"
#include "rebox/ggml_type.hpp"
#include "source/mcq_reader.hpp"
#include "source/mcq_test_writer.hpp"
#include "source/mlx_reader.hpp"
#include "source/mlx_test_writer.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

using nlohmann::json;

struct TinyGemma3 {
    std::string prefix = "model.";
    bool multimodal = false;
    bool quantized_norm = false;  // layers.0.self_attn.q_norm stored as 4-bit codes
    int embed_rows = 136;
    json text = {{"model_type", "gemma3_text"},
                 {"hidden_size", 64},
                 {"num_hidden_layers", 1},
                 {"num_attention_heads", 4},
                 {"num_key_value_heads", 2},
                 {"head_dim", 16},
                 {"intermediate_size", 128},
                 {"max_position_embeddings", 512},
                 {"vocab_size", 128},
                 {"rope_theta", 1000000.0},
                 {"rope_local_base_freq", 10000.0},
                 {"sliding_window", 512},
                 {"sliding_window_pattern", 6},
                 {"final_logit_softcapping", nullptr},
                 {"rms_norm_eps", 1e-6},
                 {"tie_word_embeddings", true}};

    void write(const std::filesystem::path& dir) const {
        test::McqFile file;
        const std::string& m = prefix;
        file.quant(m + "embed_tokens.weight", 4, 64, embed_rows, 64, 1);
        file.plain(m + "norm.weight", "BF16", {64}, 2);
        const std::string p = m + "layers.0.";
        for (const char* norm : {"input_layernorm", "post_attention_layernorm",
                                 "pre_feedforward_layernorm", "post_feedforward_layernorm"})
            file.plain(p + norm + ".weight", "F32", {64}, 4);
        if (quantized_norm)
            file.quant(p + "self_attn.q_norm.weight", 4, 16, 1, 16, 9);
        else
            file.plain(p + "self_attn.q_norm.weight", "F16", {16}, 2);
        file.plain(p + "self_attn.k_norm.weight", "F32", {16}, 4);
        file.quant(p + "self_attn.q_proj.weight", 4, 64, 64, 64, 2);
        file.quant(p + "self_attn.k_proj.weight", 4, 64, 32, 64, 3);
        file.quant(p + "self_attn.v_proj.weight", 4, 64, 32, 64, 4);
        file.quant(p + "self_attn.o_proj.weight", 4, 64, 64, 64, 5);
        file.quant(p + "mlp.gate_proj.weight", 4, 64, 128, 64, 6);
        file.quant(p + "mlp.up_proj.weight", 4, 64, 128, 64, 7);
        file.quant(p + "mlp.down_proj.weight", 4, 64, 64, 128, 8);
        if (multimodal) {
            file.plain("vision_tower.vision_model.post_layernorm.weight", "F32", {32}, 4);
            file.plain("multi_modal_projector.mm_soft_emb_norm.weight", "F32", {32}, 4);
        }
        file.write(dir / "model.safetensors");
        json config = text;
        if (multimodal) {
            config = {{"model_type", "gemma3"},
                      {"architectures", {"Gemma3ForConditionalGeneration"}},
                      {"text_config", text},
                      {"vision_config", {{"hidden_size", 32}}}};
        }
        std::ofstream(dir / "config.json") << config.dump();
    }
};

class Gemma3PlanTest : public ::testing::Test {
  protected:
    test::ScratchDir dir{"gemma_plan"};
    SourceModel source;

    Plan plan(const TinyGemma3& model) {
        model.write(dir.path());
        source = read_mcq_model(*ModelDir::open(dir.path()));
        return make_plan(source, PlanOptions{});
    }
    static const TensorPlan* tensor(const Plan& p, const std::string& name) {
        for (const TensorPlan& t : p.tensors)
            if (t.gguf_name == name) return &t;
        return nullptr;
    }
    static std::vector<std::string> tensor_blockers(const Plan& p) {
        std::vector<std::string> out;
        for (const Blocker& b : p.blockers)
            if (b.tensor != "tokenizer.json") out.push_back(b.tensor + ": " + b.reason);
        return out;
    }
    static const GgufValue* kv(const Plan& p, const std::string& key) {
        for (const GgufKV& item : p.kvs)
            if (item.key == key) return &item.value;
        return nullptr;
    }

    void expect_gemma3_tensors(const Plan& p) {
        EXPECT_TRUE(tensor_blockers(p).empty()) << tensor_blockers(p).front();
        EXPECT_EQ(p.arch, "gemma3");
        const TensorPlan* embd = tensor(p, "token_embd.weight");
        ASSERT_NE(embd, nullptr);
        EXPECT_EQ(embd->ne, (std::vector<int64_t>{64, 128}));
        std::vector<uint32_t> first_rows(128);
        for (uint32_t r = 0; r < 128; ++r) first_rows[r] = r;
        EXPECT_EQ(embd->row_source, first_rows);
        EXPECT_EQ(embd->row_values, 64u);
        EXPECT_EQ(embd->encoding, Encoding::q4_1_repack);
        EXPECT_EQ(embd->nbytes, 128u * 2 * 20);  // 2 Q4_1 blocks of 20 bytes per row
        for (const char* norm :
             {"output_norm.weight", "blk.0.attn_norm.weight", "blk.0.post_attention_norm.weight",
              "blk.0.ffn_norm.weight", "blk.0.post_ffw_norm.weight", "blk.0.attn_q_norm.weight",
              "blk.0.attn_k_norm.weight"}) {
            const TensorPlan* t = tensor(p, norm);
            ASSERT_NE(t, nullptr) << norm;
            EXPECT_EQ(t->encoding, Encoding::add_one_f32) << norm;
            EXPECT_EQ(t->type, GgmlType::F32) << norm;
        }
        EXPECT_EQ(tensor(p, "blk.0.attn_q.weight")->encoding, Encoding::q4_1_repack);
        EXPECT_TRUE(tensor(p, "blk.0.attn_q.weight")->row_source.empty());  // no rope permute
        EXPECT_EQ(tensor(p, "output.weight"), nullptr);
    }
};

TEST_F(Gemma3PlanTest, NormsShiftedEmbeddingCut) {
    const Plan p = plan(TinyGemma3{});
    expect_gemma3_tensors(p);
    EXPECT_EQ(p.tensors.size(), 15u);
    // KVs as Gemma3Model.set_gguf_parameters writes them for this config.
    ASSERT_NE(kv(p, "gemma3.rope.freq_base"), nullptr);
    EXPECT_EQ(std::get<double>(kv(p, "gemma3.rope.freq_base")->scalar), 1000000.0);
    ASSERT_NE(kv(p, "gemma3.rope.freq_base_swa"), nullptr);
    EXPECT_EQ(std::get<double>(kv(p, "gemma3.rope.freq_base_swa")->scalar), 10000.0);
    ASSERT_NE(kv(p, "gemma3.attention.sliding_window"), nullptr);
    EXPECT_EQ(kv(p, "gemma3.attention.sliding_window")->as_u32(), 512u);
    EXPECT_EQ(kv(p, "gemma3.final_logit_softcapping"), nullptr);  // null in config.json
    EXPECT_EQ(kv(p, "gemma3.attn_logit_softcapping"), nullptr);
    EXPECT_EQ(kv(p, "gemma3.attention.key_length")->as_u32(), 16u);
    EXPECT_EQ(kv(p, "gemma3.rope.dimension_count"), nullptr);
}

TEST_F(Gemma3PlanTest, EmbeddingOfExactlyVocabRowsIsNotMapped) {
    TinyGemma3 model;
    model.embed_rows = 128;
    const Plan p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty());
    EXPECT_TRUE(tensor(p, "token_embd.weight")->row_source.empty());
}

TEST_F(Gemma3PlanTest, FewerEmbeddingRowsThanVocabIsABlocker) {
    TinyGemma3 model;
    model.embed_rows = 120;
    const auto blockers = tensor_blockers(plan(model));
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_NE(blockers[0].find("model.embed_tokens.weight"), std::string::npos) << blockers[0];
}

TEST_F(Gemma3PlanTest, SlidingWindowPatternOneWritesNoWindow) {
    TinyGemma3 model;
    model.text["sliding_window_pattern"] = 1;
    EXPECT_EQ(kv(plan(model), "gemma3.attention.sliding_window"), nullptr);
}

TEST_F(Gemma3PlanTest, QuantizedNormIsABlockerNamingIt) {
    TinyGemma3 model;
    model.quantized_norm = true;
    const auto blockers = tensor_blockers(plan(model));
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_NE(blockers[0].find("model.layers.0.self_attn.q_norm.weight"), std::string::npos)
        << blockers[0];
    EXPECT_NE(blockers[0].find("gemma RMSNorm"), std::string::npos) << blockers[0];
}

// An MLX checkpoint whose gemma2 norm was quantized (a [1, 64] module at 4 bits): the BLOCKER names
// it and says why, whatever else the directory lacks.
TEST_F(Gemma3PlanTest, MlxQuantizedNormIsABlockerNamingIt) {
    test::MlxDir mlx;
    mlx.config = {{"model_type", "gemma2"},   {"hidden_size", 64},
                  {"num_hidden_layers", 1},   {"num_attention_heads", 4},
                  {"num_key_value_heads", 2}, {"head_dim", 16},
                  {"intermediate_size", 128}, {"max_position_embeddings", 512},
                  {"vocab_size", 128},        {"quantization", {{"group_size", 64}, {"bits", 4}}}};
    mlx.quant("model.layers.0.pre_feedforward_layernorm", 1, std::vector<uint32_t>(8, 0x12345678u),
              1);
    mlx.plain("model.norm.weight", "BF16", {64});
    mlx.write(dir.path());
    source = read_mlx_model(*ModelDir::open(dir.path()));
    const Plan p = make_plan(source, PlanOptions{});
    size_t named = 0;
    for (const Blocker& b : p.blockers)
        if (b.tensor == "model.layers.0.pre_feedforward_layernorm.weight") {
            ++named;
            EXPECT_NE(b.reason.find("gemma RMSNorm weight stored quantized (4-bit codes)"),
                      std::string::npos)
                << b.reason;
        }
    EXPECT_EQ(named, 1u);
    EXPECT_EQ(tensor(p, "blk.0.ffn_norm.weight"), nullptr);
    ASSERT_NE(tensor(p, "output_norm.weight"), nullptr);  // the float norm is planned (+1)
    EXPECT_EQ(tensor(p, "output_norm.weight")->encoding, Encoding::add_one_f32);
}

TEST_F(Gemma3PlanTest, MultimodalLayoutPlansTheTextModel) {
    TinyGemma3 model;
    model.multimodal = true;
    model.prefix = "language_model.model.";
    const Plan p = plan(model);
    expect_gemma3_tensors(p);
    EXPECT_EQ(p.tensors.size(), 15u);
    bool noted = false;
    for (const std::string& note : p.notes)
        noted |= note.find("2 vision tower / multimodal projector tensor(s) left out") == 0;
    EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace rebox
