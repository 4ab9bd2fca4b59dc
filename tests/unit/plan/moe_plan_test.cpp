// make_plan on a tiny qwen3_moe mcq-v1 directory written by the test (hidden 64, 1 layer, 3 experts
// of width 32, router at 8 bits): the experts stack in expert order whatever the file order, the
// router is an exact F32 copy whatever its bits, and every refusal of issue 13 is one BLOCKER
// naming the tensor: a missing expert, an expert of other bits or group, an expert index beyond
// num_experts, a config with dense layers between the MoE ones.
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

struct TinyQwen3Moe {
    int experts_in_files = 3;
    bool reverse_expert_order = false;
    int skip_expert = -1;       // leave expert N's up_proj out
    int odd_bits_expert = -1;   // expert N's gate_proj at 5 bits
    int odd_group_expert = -1;  // expert N's gate_proj at group 32
    json config = {{"model_type", "qwen3_moe"},
                   {"architectures", {"Qwen3MoeForCausalLM"}},
                   {"hidden_size", 64},
                   {"num_hidden_layers", 1},
                   {"num_attention_heads", 4},
                   {"num_key_value_heads", 2},
                   {"head_dim", 16},
                   {"intermediate_size", 96},
                   {"moe_intermediate_size", 32},
                   {"num_experts", 3},
                   {"num_experts_per_tok", 2},
                   {"decoder_sparse_step", 1},
                   {"mlp_only_layers", json::array()},
                   {"max_position_embeddings", 512},
                   {"vocab_size", 128},
                   {"tie_word_embeddings", true}};

    void write(const std::filesystem::path& dir) const {
        test::McqFile file;
        file.quant("embed_tokens.weight", 4, 64, 128, 64, 1);
        file.plain("norm.weight", "F32", {64}, 4);
        const std::string p = "layers.0.";
        file.plain(p + "input_layernorm.weight", "F32", {64}, 4);
        file.quant(p + "self_attn.q_proj.weight", 4, 64, 64, 64, 2);
        file.quant(p + "self_attn.k_proj.weight", 4, 64, 32, 64, 3);
        file.quant(p + "self_attn.v_proj.weight", 4, 64, 32, 64, 4);
        file.quant(p + "self_attn.o_proj.weight", 4, 64, 64, 64, 5);
        file.plain(p + "self_attn.q_norm.weight", "F32", {16}, 4);
        file.plain(p + "self_attn.k_norm.weight", "F32", {16}, 4);
        file.plain(p + "post_attention_layernorm.weight", "F32", {64}, 4);
        file.quant(p + "mlp.gate.weight", 8, 64, experts_in_files, 64, 6);  // mlx-lm's 8-bit router
        for (int k = 0; k < experts_in_files; ++k) {
            const int e = reverse_expert_order ? experts_in_files - 1 - k : k;
            const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
            const int gate_bits = e == odd_bits_expert ? 5 : 4;
            const int gate_group = e == odd_group_expert ? 32 : 64;
            file.quant(x + "gate_proj.weight", gate_bits, gate_group, 32, 64, 10 + e);
            if (e != skip_expert) file.quant(x + "up_proj.weight", 4, 64, 32, 64, 20 + e);
            file.quant(x + "down_proj.weight", 4, 32, 64, 32, 30 + e);
        }
        file.write(dir / "model.safetensors");
        std::ofstream(dir / "config.json") << config.dump();
    }
};

class MoePlanTest : public ::testing::Test {
  protected:
    test::ScratchDir dir{"moe_plan"};
    SourceModel source;

    Plan plan(const TinyQwen3Moe& model, PlanOptions options = {}) {
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
    size_t source_of(const std::string& name) const {
        for (size_t i = 0; i < source.tensors.size(); ++i)
            if (source.tensors[i].name == name) return i;
        return SIZE_MAX;
    }
};

TEST_F(MoePlanTest, ExpertsStackInExpertOrderAndTheRouterIsExactF32) {
    TinyQwen3Moe model;
    model.reverse_expert_order = true;  // the file holds expert 2 first
    const Plan p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty()) << tensor_blockers(p).front();
    EXPECT_EQ(p.arch, "qwen3moe");
    const TensorPlan* up = tensor(p, "blk.0.ffn_up_exps.weight");
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(up->ne, (std::vector<int64_t>{64, 32, 3}));
    EXPECT_EQ(up->type, GgmlType::Q4_1);
    EXPECT_EQ(up->nbytes, 3u * 32 * 64 / 32 * 20);  // 3 experts x 64 blocks x 20 bytes
    EXPECT_EQ(up->expert_values, 32u * 64);
    EXPECT_EQ(up->expert_sources,
              (std::vector<size_t>{source_of("layers.0.mlp.experts.0.up_proj.weight"),
                                   source_of("layers.0.mlp.experts.1.up_proj.weight"),
                                   source_of("layers.0.mlp.experts.2.up_proj.weight")}));
    EXPECT_NE(up->note.find("3 experts stacked in order"), std::string::npos) << up->note;
    const TensorPlan* down = tensor(p, "blk.0.ffn_down_exps.weight");
    ASSERT_NE(down, nullptr);
    EXPECT_EQ(down->ne, (std::vector<int64_t>{32, 64, 3}));

    const TensorPlan* router = tensor(p, "blk.0.ffn_gate_inp.weight");
    ASSERT_NE(router, nullptr);
    EXPECT_EQ(router->type, GgmlType::F32);
    EXPECT_EQ(router->encoding, Encoding::dequant_f32);
    EXPECT_EQ(router->ne, (std::vector<int64_t>{64, 3}));
    EXPECT_NE(router->note.find("router"), std::string::npos) << router->note;
    EXPECT_NE(router->note.find("8-bit"), std::string::npos) << router->note;
    // Layer order: the router before the experts (table order), after ffn_norm.
    std::vector<std::string> layer0;
    for (const TensorPlan& t : p.tensors)
        if (t.gguf_name.starts_with("blk.0.ffn")) layer0.push_back(t.gguf_name);
    EXPECT_EQ(layer0,
              (std::vector<std::string>{"blk.0.ffn_norm.weight", "blk.0.ffn_gate_inp.weight",
                                        "blk.0.ffn_gate_exps.weight", "blk.0.ffn_down_exps.weight",
                                        "blk.0.ffn_up_exps.weight"}));
    // The KVs llama.cpp's qwen3moe loader reads.
    for (const auto& [key, value] : {std::pair<std::string, uint64_t>{"qwen3moe.expert_count", 3},
                                     {"qwen3moe.expert_used_count", 2},
                                     {"qwen3moe.expert_feed_forward_length", 32},
                                     {"qwen3moe.feed_forward_length", 96}}) {
        const std::string& wanted = key;  // clang 14: a lambda cannot capture a structured binding
        const auto kv = std::find_if(p.kvs.begin(), p.kvs.end(),
                                     [&](const GgufKV& k) { return k.key == wanted; });
        ASSERT_NE(kv, p.kvs.end()) << key;
        EXPECT_EQ(std::get<uint64_t>(kv->value.scalar), value) << key;
    }
}

TEST_F(MoePlanTest, RouterStaysF32UnderEveryOuttype) {
    for (const OutType outtype : {OutType::f32, OutType::q4_1}) {
        PlanOptions options;
        options.outtype = outtype;
        const Plan p = plan(TinyQwen3Moe{}, options);
        EXPECT_TRUE(tensor_blockers(p).empty());
        const TensorPlan* router = tensor(p, "blk.0.ffn_gate_inp.weight");
        ASSERT_NE(router, nullptr);
        EXPECT_EQ(router->type, GgmlType::F32);
        const TensorPlan* gate = tensor(p, "blk.0.ffn_gate_exps.weight");
        ASSERT_NE(gate, nullptr);
        EXPECT_EQ(gate->type, outtype == OutType::f32 ? GgmlType::F32 : GgmlType::Q4_1);
    }
}

TEST_F(MoePlanTest, MissingExpertIsABlockerNamingIt) {
    TinyQwen3Moe model;
    model.skip_expert = 2;
    const Plan p = plan(model);
    const auto blockers = tensor_blockers(p);
    ASSERT_EQ(blockers.size(), 1u) << blockers.front();
    EXPECT_NE(blockers[0].find("layers.0.mlp.experts.2.up_proj.weight: expert 2 of 3"),
              std::string::npos)
        << blockers[0];
    EXPECT_EQ(tensor(p, "blk.0.ffn_up_exps.weight"), nullptr);
}

TEST_F(MoePlanTest, ExpertWithOtherBitsOrGroupIsABlockerNamingIt) {
    TinyQwen3Moe model;
    model.odd_bits_expert = 1;
    auto blockers = tensor_blockers(plan(model));
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_NE(blockers[0].find("layers.0.mlp.experts.1.gate_proj.weight: expert 1 of "
                               "blk.0.ffn_gate_exps.weight is 5-bit, group 64"),
              std::string::npos)
        << blockers[0];
    EXPECT_NE(blockers[0].find("expert 0 (layers.0.mlp.experts.0.gate_proj.weight) is 4-bit"),
              std::string::npos)
        << blockers[0];
    model.odd_bits_expert = -1;
    model.odd_group_expert = 2;
    blockers = tensor_blockers(plan(model));
    ASSERT_EQ(blockers.size(), 1u);
    EXPECT_NE(blockers[0].find("experts.2.gate_proj.weight: expert 2 of "
                               "blk.0.ffn_gate_exps.weight is 4-bit, group 32"),
              std::string::npos)
        << blockers[0];
}

TEST_F(MoePlanTest, NumExpertsDisagreeingWithTheTensorsIsABlocker) {
    TinyQwen3Moe model;
    model.config["num_experts"] = 2;  // the files hold 3
    auto blockers = tensor_blockers(plan(model));
    ASSERT_EQ(blockers.size(), 4u);  // the router's rows, then expert 2 of gate/up/down
    EXPECT_NE(blockers[0].find("blk.0.ffn_gate_inp.weight has ne [64, 3] but config.json "
                               "implies [64, 2]"),
              std::string::npos)
        << blockers[0];
    EXPECT_NE(blockers[1].find("experts.2.gate_proj.weight: expert 2 is beyond config.json "
                               "num_experts = 2"),
              std::string::npos)
        << blockers[1];
    model.config["num_experts"] = 4;  // one more than the files hold
    blockers = tensor_blockers(plan(model));
    ASSERT_FALSE(blockers.empty());
    EXPECT_NE(blockers.back().find("experts.3.up_proj.weight: expert 3 of 4"), std::string::npos)
        << blockers.back();
}

// llama.cpp aborts on a file with more than LLAMA_MAX_EXPERTS (1024) experts; the conversion is
// still exact, so it is a note, not a BLOCKER.
TEST_F(MoePlanTest, MoreExpertsThanLlamaCppLoadsIsANote) {
    const auto llama_note = [](const Plan& p) {
        for (const std::string& note : p.notes)
            if (note.find("LLAMA_MAX_EXPERTS") != std::string::npos) return note;
        return std::string();
    };
    TinyQwen3Moe model;
    model.experts_in_files = 1024;
    model.config["num_experts"] = 1024;
    Plan p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty());
    EXPECT_EQ(llama_note(p), "");
    model.experts_in_files = 1025;
    model.config["num_experts"] = 1025;
    p = plan(model);
    EXPECT_TRUE(tensor_blockers(p).empty());
    EXPECT_EQ(llama_note(p),
              "config.json: num_experts 1025 is more than stock llama.cpp loads (1024, "
              "LLAMA_MAX_EXPERTS): the file is exact, but llama.cpp aborts when it loads it");
}

TEST_F(MoePlanTest, DenseLayersBetweenMoeLayersAreRefused) {
    TinyQwen3Moe model;
    model.config["decoder_sparse_step"] = 2;
    model.config["mlp_only_layers"] = {0};
    const Plan p = plan(model);
    ASSERT_EQ(p.blockers.size(), 2u);
    EXPECT_EQ(p.blockers[0].tensor, "config.json");
    EXPECT_NE(p.blockers[0].reason.find("decoder_sparse_step 2"), std::string::npos);
    EXPECT_NE(p.blockers[1].reason.find("mlp_only_layers"), std::string::npos);
    EXPECT_TRUE(p.tensors.empty());
}

}  // namespace
}  // namespace rebox
