// make_plan on a tiny llama directory written by the test (hidden 64, 1 layer, heads 4 / kv 2,
// head_dim 16, ffn 128, vocab 128, q/k/v biases): q/k weights and biases carry the rope row map
// (hand-worked: per head of 16 rows, source rows 0 8 1 9 ... 7 15), v does not; mistral plans as
// llama; a quantization group that runs across rows still permutes, linear and llama3 rope
// scaling.
#include <gtest/gtest.h>

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

struct TinyLlama {
    int q_group = 64;  // group of layer 0's q_proj (64 = one group per row)
    json config = {{"model_type", "llama"},
                   {"architectures", {"LlamaForCausalLM"}},
                   {"hidden_size", 64},
                   {"num_hidden_layers", 1},
                   {"num_attention_heads", 4},
                   {"num_key_value_heads", 2},
                   {"head_dim", 16},
                   {"intermediate_size", 128},
                   {"max_position_embeddings", 512},
                   {"vocab_size", 128},
                   {"rope_theta", 500000.0},
                   {"rms_norm_eps", 1e-5},
                   {"tie_word_embeddings", true}};

    void write(const std::filesystem::path& dir) const {
        test::McqFile file;
        file.quant("embed_tokens.weight", 4, 64, 128, 64, 1);
        file.plain("norm.weight", "F32", {64}, 4);
        const std::string p = "layers.0.";
        file.plain(p + "input_layernorm.weight", "F32", {64}, 4);
        file.quant(p + "self_attn.q_proj.weight", 4, q_group, 64, 64, 2);
        file.plain(p + "self_attn.q_proj.bias", "F32", {64}, 4);
        file.quant(p + "self_attn.k_proj.weight", 4, 64, 32, 64, 3);
        file.plain(p + "self_attn.k_proj.bias", "BF16", {32}, 2);
        file.quant(p + "self_attn.v_proj.weight", 4, 64, 32, 64, 4);
        file.plain(p + "self_attn.v_proj.bias", "F32", {32}, 4);
        file.quant(p + "self_attn.o_proj.weight", 4, 64, 64, 64, 5);
        file.plain(p + "post_attention_layernorm.weight", "F32", {64}, 4);
        file.quant(p + "mlp.gate_proj.weight", 4, 64, 128, 64, 6);
        file.quant(p + "mlp.up_proj.weight", 4, 64, 128, 64, 7);
        file.quant(p + "mlp.down_proj.weight", 4, 64, 64, 128, 8);
        file.write(dir / "model.safetensors");
        std::ofstream(dir / "config.json") << config.dump();
        // tokenizer.json left out: its BLOCKER is not what these tests look at.
    }
};

class LlamaPlanTest : public ::testing::Test {
  protected:
    test::ScratchDir dir{"llama_plan"};
    SourceModel source;

    Plan plan(const TinyLlama& model, PlanOptions options = {}) {
        model.write(dir.path());
        source = read_mcq_model(*ModelDir::open(dir.path()));
        return make_plan(source, options);
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
};

constexpr uint32_t kHead16[16] = {0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15};

std::vector<uint32_t> hand_map(uint32_t heads) {
    std::vector<uint32_t> map;
    for (uint32_t h = 0; h < heads; ++h)
        for (const uint32_t r : kHead16) map.push_back(16 * h + r);
    return map;
}

TEST_F(LlamaPlanTest, QkWeightsAndBiasesCarryTheRowMap) {
    const Plan p = plan(TinyLlama{});
    EXPECT_TRUE(tensor_blockers(p).empty()) << tensor_blockers(p).front();
    EXPECT_EQ(p.arch, "llama");
    const TensorPlan* q = tensor(p, "blk.0.attn_q.weight");
    const TensorPlan* k = tensor(p, "blk.0.attn_k.weight");
    const TensorPlan* qb = tensor(p, "blk.0.attn_q.bias");
    const TensorPlan* kb = tensor(p, "blk.0.attn_k.bias");
    const TensorPlan* v = tensor(p, "blk.0.attn_v.weight");
    const TensorPlan* vb = tensor(p, "blk.0.attn_v.bias");
    for (const TensorPlan* t : {q, k, qb, kb, v, vb}) ASSERT_NE(t, nullptr);
    EXPECT_EQ(q->row_source, hand_map(4));  // 4 q heads of 16 rows
    EXPECT_EQ(q->row_values, 64u);
    EXPECT_EQ(q->encoding, Encoding::q4_1_repack);
    EXPECT_EQ(k->row_source, hand_map(2));  // 2 kv heads
    EXPECT_EQ(qb->row_source, hand_map(4));
    EXPECT_EQ(qb->row_values, 1u);
    EXPECT_EQ(kb->row_source, hand_map(2));
    EXPECT_EQ(kb->encoding, Encoding::widen_f32);  // BF16 bias, 1-D: widened, rows still moved
    EXPECT_TRUE(v->row_source.empty());
    EXPECT_TRUE(vb->row_source.empty());
    EXPECT_TRUE(tensor(p, "blk.0.attn_output.weight")->row_source.empty());
    EXPECT_EQ(tensor(p, "rope_freqs.weight"), nullptr);  // no rope_scaling
}

TEST_F(LlamaPlanTest, OuttypeF32KeepsTheRowMap) {
    PlanOptions options;
    options.outtype = OutType::f32;
    const Plan p = plan(TinyLlama{}, options);
    const TensorPlan* q = tensor(p, "blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->encoding, Encoding::dequant_f32);
    EXPECT_EQ(q->row_source, hand_map(4));
}

TEST_F(LlamaPlanTest, MistralPlansAsLlama) {
    TinyLlama model;
    model.config["model_type"] = "mistral";
    model.config["architectures"] = {"MistralForCausalLM"};
    const Plan p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty());
    EXPECT_EQ(p.arch, "llama");
    ASSERT_NE(kv(p, "general.architecture"), nullptr);
    EXPECT_EQ(*kv(p, "general.architecture")->as_string(), "llama");
    EXPECT_NE(kv(p, "llama.vocab_size"), nullptr);
    EXPECT_EQ(tensor(p, "blk.0.attn_k.weight")->row_source, hand_map(2));
}

// Groups of 128 values run across q_proj's rows of 64: every 32-value Q4_1 block still lies inside
// one row and one group and carries that group's scale and min, so the rows move exactly.
TEST_F(LlamaPlanTest, GroupAcrossRowsStillPermutes) {
    TinyLlama model;
    model.q_group = 128;  // two rows of 64 values share each group
    const Plan p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty());
    const TensorPlan* q = tensor(p, "blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->type, GgmlType::Q4_1);
    EXPECT_EQ(q->row_source, hand_map(4));
    EXPECT_EQ(q->row_values, 64u);
}

TEST_F(LlamaPlanTest, Llama3RopeScalingAddsRopeFreqsFirst) {
    TinyLlama model;
    model.config["rope_scaling"] = {{"rope_type", "llama3"},
                                    {"factor", 32.0},
                                    {"low_freq_factor", 1.0},
                                    {"high_freq_factor", 4.0},
                                    {"original_max_position_embeddings", 8192}};
    const Plan p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty());
    ASSERT_FALSE(p.tensors.empty());
    const TensorPlan& freqs = p.tensors.front();
    EXPECT_EQ(freqs.gguf_name, "rope_freqs.weight");
    EXPECT_TRUE(freqs.is_computed());
    EXPECT_EQ(freqs.type, GgmlType::F32);
    EXPECT_EQ(freqs.ne, std::vector<int64_t>{8});  // head_dim / 2
    EXPECT_EQ(freqs.nbytes, 32u);
    EXPECT_EQ(kv(p, "llama.rope.scaling.type"), nullptr);  // llama3 writes no scaling KVs
}

TEST_F(LlamaPlanTest, LinearRopeScalingWritesTypeAndFactor) {
    TinyLlama model;
    model.config["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
    const Plan p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty());
    ASSERT_NE(kv(p, "llama.rope.scaling.type"), nullptr);
    EXPECT_EQ(*kv(p, "llama.rope.scaling.type")->as_string(), "linear");
    ASSERT_NE(kv(p, "llama.rope.scaling.factor"), nullptr);
    EXPECT_EQ(kv(p, "llama.rope.scaling.factor")->type, GgufType::FLOAT32);
    EXPECT_EQ(std::get<double>(kv(p, "llama.rope.scaling.factor")->scalar), 4.0);
    EXPECT_EQ(tensor(p, "rope_freqs.weight"), nullptr);
}

}  // namespace
}  // namespace rebox
