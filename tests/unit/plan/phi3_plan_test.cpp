// make_plan on a tiny phi3 directory written by the test (hidden 64, 1 layer, heads 4 / kv 2,
// head_dim 16, ffn 128, vocab 128): the fused qkv_proj / gate_up_proj stay whole (no row map), the
// phi3.* KVs are exactly Phi3MiniModel.set_gguf_parameters' (sliding_window 0 for null, no
// key_length / vocab_size), a longrope config adds rope_factors_long/short first plus
// rope.scaling.attn_factor, and the bad inputs each give one BLOCKER naming the tensor or field.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "plan/plan.hpp"
#include "rebox/ggml_type.hpp"
#include "source/mcq_reader.hpp"
#include "source/mcq_test_writer.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

using nlohmann::json;

struct TinyPhi3 {
    int64_t qkv_rows = 128;  // 4 * 16 + 2 * 2 * 16
    int64_t gate_up_rows = 256;
    int64_t o_proj_cols = 64;  // heads * head_dim
    json config = {{"model_type", "phi3"},
                   {"architectures", {"Phi3ForCausalLM"}},
                   {"hidden_size", 64},
                   {"num_hidden_layers", 1},
                   {"num_attention_heads", 4},
                   {"num_key_value_heads", 2},
                   {"intermediate_size", 128},
                   {"max_position_embeddings", 131072},
                   {"original_max_position_embeddings", 4096},
                   {"vocab_size", 128},
                   {"rope_theta", 10000.0},
                   {"rms_norm_eps", 1e-5},
                   {"sliding_window", nullptr},
                   {"rope_scaling", nullptr},
                   {"tie_word_embeddings", false}};

    void write(const std::filesystem::path& dir) const {
        test::McqFile file;
        file.quant("embed_tokens.weight", 4, 64, 128, 64, 1);
        file.plain("norm.weight", "F32", {64}, 4);
        const std::string p = "layers.0.";
        file.plain(p + "input_layernorm.weight", "F32", {64}, 4);
        file.quant(p + "self_attn.qkv_proj.weight", 4, 64, qkv_rows, 64, 2);
        file.quant(p + "self_attn.o_proj.weight", 3, 32, 64, o_proj_cols, 5);
        file.plain(p + "post_attention_layernorm.weight", "F32", {64}, 4);
        file.quant(p + "mlp.gate_up_proj.weight", 4, 64, gate_up_rows, 64, 6);
        file.quant(p + "mlp.down_proj.weight", 4, 64, 64, 128, 8);
        file.quant("lm_head.weight", 4, 64, 128, 64, 9);
        file.write(dir / "model.safetensors");
        std::ofstream(dir / "config.json") << config.dump();
    }
};

json long_rope(size_t long_count, size_t short_count) {
    json longs = json::array(), shorts = json::array();
    for (size_t i = 0; i < long_count; ++i) longs.push_back(1.0 + 0.25 * double(i));
    for (size_t i = 0; i < short_count; ++i) shorts.push_back(1.01);
    return {{"type", "longrope"}, {"long_factor", longs}, {"short_factor", shorts}};
}

class Phi3PlanTest : public ::testing::Test {
  protected:
    test::ScratchDir dir{"phi3_plan"};
    SourceModel source;

    Plan plan(const TinyPhi3& model) {
        model.write(dir.path());
        source = read_mcq_model(*ModelDir::open(dir.path()));
        return make_plan(source, PlanOptions{});
    }
    static const TensorPlan* tensor(const Plan& p, const std::string& name) {
        for (const TensorPlan& t : p.tensors)
            if (t.gguf_name == name) return &t;
        return nullptr;
    }
    static std::vector<Blocker> tensor_blockers(const Plan& p) {
        std::vector<Blocker> out;
        for (const Blocker& b : p.blockers)
            if (b.tensor != "tokenizer.json") out.push_back(b);
        return out;
    }
    static const GgufValue* kv(const Plan& p, const std::string& key) {
        for (const GgufKV& item : p.kvs)
            if (item.key == key) return &item.value;
        return nullptr;
    }
    static uint32_t u32(const Plan& p, const std::string& key) {
        const GgufValue* value = kv(p, key);
        EXPECT_NE(value, nullptr) << key;
        return value ? value->as_u32().value_or(~0u) : ~0u;
    }
};

TEST_F(Phi3PlanTest, FusedTensorsStayWhole) {
    const Plan p = plan(TinyPhi3{});
    ASSERT_TRUE(tensor_blockers(p).empty()) << tensor_blockers(p).front().reason;
    EXPECT_EQ(p.arch, "phi3");
    const TensorPlan* qkv = tensor(p, "blk.0.attn_qkv.weight");
    const TensorPlan* up = tensor(p, "blk.0.ffn_up.weight");
    ASSERT_NE(qkv, nullptr);
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(qkv->ne, (std::vector<int64_t>{64, 128}));
    EXPECT_EQ(up->ne, (std::vector<int64_t>{64, 256}));
    EXPECT_TRUE(qkv->row_source.empty());
    EXPECT_TRUE(up->row_source.empty());
    EXPECT_EQ(qkv->encoding, Encoding::q4_1_repack);
    EXPECT_EQ(tensor(p, "blk.0.ffn_gate.weight"), nullptr);
    EXPECT_NE(tensor(p, "output.weight"), nullptr);
    EXPECT_EQ(tensor(p, "rope_factors_long.weight"), nullptr);  // no rope_scaling
}

TEST_F(Phi3PlanTest, KvsAreSetGgufParameters) {
    TinyPhi3 model;
    model.config["max_position_embeddings"] = 4096;
    const Plan p = plan(model);
    EXPECT_EQ(u32(p, "phi3.context_length"), 4096u);
    EXPECT_EQ(u32(p, "phi3.rope.scaling.original_context_length"), 4096u);
    EXPECT_EQ(u32(p, "phi3.embedding_length"), 64u);
    EXPECT_EQ(u32(p, "phi3.feed_forward_length"), 128u);
    EXPECT_EQ(u32(p, "phi3.block_count"), 1u);
    EXPECT_EQ(u32(p, "phi3.attention.head_count"), 4u);
    EXPECT_EQ(u32(p, "phi3.attention.head_count_kv"), 2u);
    EXPECT_EQ(u32(p, "phi3.rope.dimension_count"), 16u);
    EXPECT_EQ(u32(p, "phi3.attention.sliding_window"), 0u);  // null: 0, as the converter writes
    ASSERT_NE(kv(p, "phi3.rope.freq_base"), nullptr);
    ASSERT_NE(kv(p, "phi3.attention.layer_norm_rms_epsilon"), nullptr);
    for (const char* absent :
         {"phi3.attention.key_length", "phi3.attention.value_length", "phi3.vocab_size",
          "phi3.rope.scaling.type", "phi3.rope.scaling.attn_factor"})
        EXPECT_EQ(kv(p, absent), nullptr) << absent;
    model.config["sliding_window"] = 2047;  // Phi-3-mini-4k
    model.config["partial_rotary_factor"] = 0.75;
    const Plan q = plan(model);
    EXPECT_EQ(u32(q, "phi3.attention.sliding_window"), 2047u);
    EXPECT_EQ(u32(q, "phi3.rope.dimension_count"), 12u);  // int(0.75 * 64) // 4
}

TEST_F(Phi3PlanTest, LongRopeAddsFactorTensorsFirstAndAttnFactor) {
    TinyPhi3 model;
    model.config["rope_scaling"] = long_rope(8, 8);
    const Plan p = plan(model);
    ASSERT_TRUE(tensor_blockers(p).empty()) << tensor_blockers(p).front().reason;
    ASSERT_GE(p.tensors.size(), 2u);
    EXPECT_EQ(p.tensors[0].gguf_name, "rope_factors_long.weight");
    EXPECT_EQ(p.tensors[1].gguf_name, "rope_factors_short.weight");
    for (const TensorPlan& t : {p.tensors[0], p.tensors[1]}) {
        EXPECT_TRUE(t.is_computed());
        EXPECT_EQ(t.type, GgmlType::F32);
        EXPECT_EQ(t.ne, (std::vector<int64_t>{8}));
    }
    EXPECT_EQ(p.tensors[0].computed[3], 1.75f);
    uint32_t short_bits = 0;
    std::memcpy(&short_bits, &p.tensors[1].computed[0], 4);
    EXPECT_EQ(short_bits, 0x3F8147AEu);  // 1.01 rounded once to binary32
    const GgufValue* factor = kv(p, "phi3.rope.scaling.attn_factor");
    ASSERT_NE(factor, nullptr);
    EXPECT_EQ(factor->type, GgufType::FLOAT32);
    // sqrt(1 + ln 32 / ln 4096) = sqrt(17/12) = 1.1902380714..., binary32 1.19023811817.
    EXPECT_EQ(static_cast<float>(std::get<double>(factor->scalar)), 1.19023811817169189453125f);
    EXPECT_EQ(kv(p, "phi3.rope.scaling.type"), nullptr);
}

TEST_F(Phi3PlanTest, FusedQkvWithWrongRowsNamesTheFields) {
    TinyPhi3 model;
    model.qkv_rows = 96;  // as if num_key_value_heads were 1
    const Plan p = plan(model);
    const std::vector<Blocker> blockers = tensor_blockers(p);
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_EQ(blockers[0].tensor, "layers.0.self_attn.qkv_proj.weight");
    const std::string& reason = blockers[0].reason;
    EXPECT_NE(reason.find("96 rows"), std::string::npos) << reason;
    EXPECT_NE(reason.find("num_attention_heads 4 * head_dim 16 + 2 * num_key_value_heads 2 * "
                          "head_dim 16 = 128"),
              std::string::npos)
        << reason;
}

TEST_F(Phi3PlanTest, GateUpWithWrongRowsNamesIntermediateSize) {
    TinyPhi3 model;
    model.gate_up_rows = 128;  // gate only, or a split checkpoint's up_proj
    const Plan p = plan(model);
    const std::vector<Blocker> blockers = tensor_blockers(p);
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_EQ(blockers[0].tensor, "layers.0.mlp.gate_up_proj.weight");
    EXPECT_NE(
        blockers[0].reason.find("128 rows, config.json implies 2 * intermediate_size 128 = 256"),
        std::string::npos)
        << blockers[0].reason;
}

TEST_F(Phi3PlanTest, FactorListOfTheWrongLengthIsOneBlocker) {
    TinyPhi3 model;
    model.config["rope_scaling"] = long_rope(8, 6);
    const Plan p = plan(model);
    const std::vector<Blocker> blockers = tensor_blockers(p);
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_EQ(blockers[0].tensor, "config.json: rope_scaling.short_factor");
    EXPECT_NE(blockers[0].reason.find("rope_factors_short.weight would get 6 values"),
              std::string::npos)
        << blockers[0].reason;
    EXPECT_NE(blockers[0].fix.find("8 numbers"), std::string::npos) << blockers[0].fix;
    EXPECT_EQ(tensor(p, "rope_factors_long.weight"), nullptr);
}

// llama.cpp's phi3 loader derives the head size from hidden/heads (no key_length is written) and
// wants attn_output {n_embd, n_embd}: a head_dim of 32 with 4 heads (q width 128 != 64) is refused.
TEST_F(Phi3PlanTest, HeadDimOtherThanHiddenOverHeadsIsRefused) {
    TinyPhi3 model;
    model.config["head_dim"] = 32;
    model.qkv_rows = 4 * 32 + 2 * 2 * 32;
    model.o_proj_cols = 4 * 32;  // o_proj [64, 128] as such a checkpoint has it
    const Plan p = plan(model);
    const std::vector<Blocker> blockers = tensor_blockers(p);
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_EQ(blockers[0].tensor, "layers.0.self_attn.o_proj.weight");
    EXPECT_NE(blockers[0].reason.find("128 columns, config.json implies hidden_size 64"),
              std::string::npos)
        << blockers[0].reason;
}

TEST_F(Phi3PlanTest, MissingOriginalContextIsABlocker) {
    TinyPhi3 model;
    model.config.erase("original_max_position_embeddings");
    const Plan p = plan(model);
    const std::vector<Blocker> blockers = tensor_blockers(p);
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_EQ(blockers[0].tensor, "config.json: original_max_position_embeddings");
}

}  // namespace
}  // namespace rebox
