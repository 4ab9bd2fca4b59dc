// llama-quantize's per-tensor type choice (recipe/): expectations worked out by hand from
// llama.cpp v0.4.0's src/llama-quant.cpp rules and the recipes its library wrote for a 16-layer
// llama (use_more_bits(i, 16) holds for i = 0, 1, 4, 7, 10, 13, 14, 15), not from rebox's code.
#include "recipe/type_choice.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "rebox/error.hpp"
#include "recipe/llama_tensor_order.hpp"

namespace rebox {
namespace {

using T = GgmlType;

struct LlamaModel {
    int layers = 16;
    int64_t embd = 256;
    int64_t ff = 512;
    int64_t kv = 256;  // n_head_kv * head_dim
    bool tied = false;
    uint32_t n_expert = 0;
};

// A llama-like tensor list in llama's order.
std::vector<RecipeTensor> llama_tensors(const LlamaModel& m) {
    std::vector<RecipeTensor> list;
    list.push_back({"token_embd.weight", {m.embd, 1000}, T::F16});
    list.push_back({"output_norm.weight", {m.embd}, T::F32});
    if (!m.tied) list.push_back({"output.weight", {m.embd, 1000}, T::F16});
    for (int l = 0; l < m.layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        list.push_back({p + "attn_norm.weight", {m.embd}, T::F32});
        list.push_back({p + "attn_q.weight", {m.embd, m.embd}, T::F16});
        list.push_back({p + "attn_k.weight", {m.embd, m.kv}, T::F16});
        list.push_back({p + "attn_v.weight", {m.embd, m.kv}, T::F16});
        list.push_back({p + "attn_output.weight", {m.embd, m.embd}, T::F16});
        list.push_back({p + "ffn_norm.weight", {m.embd}, T::F32});
        if (m.n_expert > 0) {
            const int64_t e = m.n_expert;
            list.push_back({p + "ffn_gate_inp.weight", {m.embd, e}, T::F32});
            list.push_back({p + "ffn_gate_exps.weight", {m.embd, m.ff, e}, T::F16});
            list.push_back({p + "ffn_up_exps.weight", {m.embd, m.ff, e}, T::F16});
            list.push_back({p + "ffn_down_exps.weight", {m.ff, m.embd, e}, T::F16});
        } else {
            list.push_back({p + "ffn_gate.weight", {m.embd, m.ff}, T::F16});
            list.push_back({p + "ffn_up.weight", {m.embd, m.ff}, T::F16});
            list.push_back({p + "ffn_down.weight", {m.ff, m.embd}, T::F16});
        }
    }
    std::vector<std::string> names;
    for (const auto& t : list) names.push_back(t.name);
    std::vector<RecipeTensor> sorted;
    for (size_t i : llama_tensor_order(names)) sorted.push_back(list[i]);
    return sorted;
}

QuantModelShape llama_shape(const LlamaModel& m, uint32_t n_gqa) {
    QuantModelShape shape;
    shape.arch = "llama";
    shape.n_layer = m.layers;
    shape.n_head = 8;
    shape.n_head_kv = 8 / n_gqa;
    shape.n_expert = m.n_expert;
    return shape;
}

// name -> chosen type
std::map<std::string, T> choose(const LlamaModel& m, const QuantRecipe& recipe,
                                uint32_t n_gqa = 1) {
    const auto tensors = llama_tensors(m);
    const auto choices = choose_tensor_types(tensors, llama_shape(m, n_gqa), recipe);
    std::map<std::string, T> result;
    for (size_t i = 0; i < tensors.size(); ++i) result[tensors[i].name] = choices[i].type;
    return result;
}

QuantRecipe recipe_of(QuantFtype ftype) {
    QuantRecipe r;
    r.ftype = ftype;
    return r;
}

// The type of blk.L.<role> for each layer.
std::vector<T> per_layer(const std::map<std::string, T>& types, const std::string& role, int n) {
    std::vector<T> out;
    for (int l = 0; l < n; ++l) out.push_back(types.at("blk." + std::to_string(l) + "." + role));
    return out;
}

std::vector<T> layers_with(int n, const std::vector<int>& more, T more_type, T other) {
    std::vector<T> out(n, other);
    for (int l : more) out[l] = more_type;
    return out;
}

const std::vector<int> kMoreBits16 = {0, 1, 4, 7, 10, 13, 14, 15};

TEST(QuantRecipe, Q4KMGivesQ6KToTheUseMoreBitsLayersAndTheOutput) {
    const auto types = choose({}, recipe_of(QuantFtype::MOSTLY_Q4_K_M));
    EXPECT_EQ(types.at("token_embd.weight"), T::Q4_K);
    EXPECT_EQ(types.at("output.weight"), T::Q6_K);
    EXPECT_EQ(types.at("output_norm.weight"), T::F32);
    EXPECT_EQ(per_layer(types, "attn_v.weight", 16),
              layers_with(16, kMoreBits16, T::Q6_K, T::Q4_K));
    EXPECT_EQ(per_layer(types, "ffn_down.weight", 16),
              layers_with(16, kMoreBits16, T::Q6_K, T::Q4_K));
    EXPECT_EQ(per_layer(types, "attn_q.weight", 16), std::vector<T>(16, T::Q4_K));
    EXPECT_EQ(per_layer(types, "attn_output.weight", 16), std::vector<T>(16, T::Q4_K));
    EXPECT_EQ(per_layer(types, "ffn_up.weight", 16), std::vector<T>(16, T::Q4_K));
    EXPECT_EQ(per_layer(types, "attn_norm.weight", 16), std::vector<T>(16, T::F32));
}

TEST(QuantRecipe, TheKMixturesOfTheLibraryTable) {
    // Q3_K_M: attn_v Q5_K for the first two, attn_output Q4_K, ffn_down Q5_K for n/16 = 1 layer.
    auto types = choose({}, recipe_of(QuantFtype::MOSTLY_Q3_K_M));
    EXPECT_EQ(per_layer(types, "attn_v.weight", 16), layers_with(16, {0, 1}, T::Q5_K, T::Q4_K));
    EXPECT_EQ(per_layer(types, "ffn_down.weight", 16), layers_with(16, {0}, T::Q5_K, T::Q4_K));
    EXPECT_EQ(per_layer(types, "attn_output.weight", 16), std::vector<T>(16, T::Q4_K));
    EXPECT_EQ(types.at("blk.3.attn_q.weight"), T::Q3_K);
    // Q3_K_L: Q5_K for attn_v, attn_output and ffn_down.
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q3_K_L));
    EXPECT_EQ(types.at("blk.9.attn_v.weight"), T::Q5_K);
    EXPECT_EQ(types.at("blk.9.attn_output.weight"), T::Q5_K);
    EXPECT_EQ(types.at("blk.9.ffn_down.weight"), T::Q5_K);
    EXPECT_EQ(types.at("blk.9.ffn_gate.weight"), T::Q3_K);
    // Q4_K_S: attn_v Q5_K for the first four, ffn_down Q5_K for n/8 = 2 layers.
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q4_K_S));
    EXPECT_EQ(per_layer(types, "attn_v.weight", 16),
              layers_with(16, {0, 1, 2, 3}, T::Q5_K, T::Q4_K));
    EXPECT_EQ(per_layer(types, "ffn_down.weight", 16), layers_with(16, {0, 1}, T::Q5_K, T::Q4_K));
    // Q5_K_M: Q6_K on the use_more_bits layers.
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q5_K_M));
    EXPECT_EQ(per_layer(types, "attn_v.weight", 16),
              layers_with(16, kMoreBits16, T::Q6_K, T::Q5_K));
    EXPECT_EQ(types.at("output.weight"), T::Q6_K);
    EXPECT_EQ(types.at("token_embd.weight"), T::Q5_K);
    // Q6_K and Q5_K_S: one type.
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q6_K));
    EXPECT_EQ(types.at("blk.0.ffn_down.weight"), T::Q6_K);
    EXPECT_EQ(types.at("output.weight"), T::Q6_K);
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q5_K_S));
    EXPECT_EQ(types.at("blk.0.ffn_down.weight"), T::Q5_K);
    EXPECT_EQ(types.at("blk.0.attn_v.weight"), T::Q5_K);
}

TEST(QuantRecipe, Q2KDependsOnGroupedQueryAttention) {
    auto types = choose({}, recipe_of(QuantFtype::MOSTLY_Q2_K), 1);
    EXPECT_EQ(types.at("blk.5.attn_v.weight"), T::Q3_K);
    EXPECT_EQ(types.at("blk.5.attn_output.weight"), T::Q3_K);
    EXPECT_EQ(types.at("blk.5.ffn_down.weight"), T::Q3_K);
    EXPECT_EQ(types.at("blk.5.attn_q.weight"), T::Q2_K);
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q2_K), 4);
    EXPECT_EQ(types.at("blk.5.attn_v.weight"), T::Q4_K);
    // Q2_K_S: attn_v Q2_K (gqa 1) / Q4_K (gqa 4); ffn_down Q4_K for n/8 layers; needs an imatrix.
    const LlamaModel m;
    const auto tensors = llama_tensors(m);
    const auto choices =
        choose_tensor_types(tensors, llama_shape(m, 1), recipe_of(QuantFtype::MOSTLY_Q2_K_S));
    for (size_t i = 0; i < tensors.size(); ++i) {
        const std::string& name = tensors[i].name;
        if (name == "blk.0.ffn_down.weight" || name == "blk.1.ffn_down.weight")
            EXPECT_EQ(choices[i].type, T::Q4_K) << name;
        if (name == "blk.2.ffn_down.weight" || name == "blk.3.attn_v.weight")
            EXPECT_EQ(choices[i].type, T::Q2_K) << name;
        // Q2_K inside a Q2_K_S file needs an imatrix, except token_embd and output.
        EXPECT_EQ(choices[i].requires_imatrix,
                  choices[i].type == T::Q2_K && name != "token_embd.weight")
            << name;
    }
    EXPECT_EQ(choose({}, recipe_of(QuantFtype::MOSTLY_Q2_K_S), 4).at("blk.3.attn_v.weight"),
              T::Q4_K);
}

TEST(QuantRecipe, LegacyTypesGetAQ6KOutputAndQ8_0StaysQ8_0) {
    auto types = choose({}, recipe_of(QuantFtype::MOSTLY_Q4_0));
    EXPECT_EQ(types.at("output.weight"), T::Q6_K);
    EXPECT_EQ(types.at("token_embd.weight"), T::Q4_0);
    EXPECT_EQ(types.at("blk.0.ffn_down.weight"), T::Q4_0);
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q5_1));
    EXPECT_EQ(types.at("output.weight"), T::Q6_K);
    EXPECT_EQ(types.at("blk.0.attn_v.weight"), T::Q5_1);
    types = choose({}, recipe_of(QuantFtype::MOSTLY_Q8_0));
    EXPECT_EQ(types.at("output.weight"), T::Q8_0);
    EXPECT_EQ(types.at("token_embd.weight"), T::Q8_0);
    // With an imatrix, Q4_0's first n/8 ffn_down layers become Q4_1.
    QuantRecipe with_imatrix = recipe_of(QuantFtype::MOSTLY_Q4_0);
    with_imatrix.has_imatrix = true;
    types = choose({}, with_imatrix);
    EXPECT_EQ(per_layer(types, "ffn_down.weight", 16), layers_with(16, {0, 1}, T::Q4_1, T::Q4_0));
}

TEST(QuantRecipe, TiedEmbeddingsTakeTheOutputRule) {
    LlamaModel tied;
    tied.tied = true;
    EXPECT_EQ(choose(tied, recipe_of(QuantFtype::MOSTLY_Q4_K_M)).at("token_embd.weight"), T::Q6_K);
    EXPECT_EQ(choose(tied, recipe_of(QuantFtype::MOSTLY_Q8_0)).at("token_embd.weight"), T::Q8_0);
}

TEST(QuantRecipe, RowsNotAMultipleOf256FallBack) {
    // n_ff = 320, 2 layers: ffn_down rows have 320 values. use_more_bits(i, 2) holds for i = 1.
    LlamaModel m;
    m.layers = 2;
    m.ff = 320;
    const auto types = choose(m, recipe_of(QuantFtype::MOSTLY_Q4_K_M));
    EXPECT_EQ(types.at("blk.0.ffn_down.weight"), T::Q5_0);  // Q4_K -> Q5_0
    EXPECT_EQ(types.at("blk.1.ffn_down.weight"), T::Q8_0);  // Q6_K -> Q8_0
    EXPECT_EQ(types.at("blk.1.ffn_up.weight"), T::Q4_K);    // 256-wide rows: no fallback
    EXPECT_EQ(choose(m, recipe_of(QuantFtype::MOSTLY_Q5_K_S)).at("blk.0.ffn_down.weight"), T::Q5_1);
    EXPECT_EQ(choose(m, recipe_of(QuantFtype::MOSTLY_Q3_K_S)).at("blk.0.ffn_down.weight"), T::Q4_0);
    EXPECT_EQ(choose(m, recipe_of(QuantFtype::MOSTLY_IQ4_XS)).at("blk.0.ffn_down.weight"),
              T::IQ4_NL);
    // A row of 100: no 32-block type fits either, so F16.
    m.ff = 100;
    EXPECT_EQ(choose(m, recipe_of(QuantFtype::MOSTLY_Q4_K_M)).at("blk.0.ffn_down.weight"), T::F16);
    EXPECT_EQ(choose(m, recipe_of(QuantFtype::MOSTLY_Q8_0)).at("blk.0.ffn_down.weight"), T::F16);
    // Output rows not a multiple of the block: Q8_0 for the output rule.
    m.ff = 512;
    m.embd = 320;
    m.kv = 320;
    EXPECT_EQ(choose(m, recipe_of(QuantFtype::MOSTLY_Q4_K_M)).at("output.weight"), T::Q8_0);
}

TEST(QuantRecipe, EightExpertsBumpAttentionAndOtherCountsDoNot) {
    LlamaModel moe;
    moe.n_expert = 8;
    auto types = choose(moe, recipe_of(QuantFtype::MOSTLY_Q4_K_M));
    EXPECT_EQ(types.at("blk.3.attn_k.weight"), T::Q8_0);
    EXPECT_EQ(types.at("blk.3.attn_v.weight"), T::Q8_0);
    EXPECT_EQ(types.at("blk.3.attn_output.weight"), T::Q5_K);
    EXPECT_EQ(types.at("blk.3.ffn_gate_inp.weight"), T::F32);  // the router is never quantized
    // ffn_down_exps: the layer from the name, so use_more_bits by layer.
    EXPECT_EQ(per_layer(types, "ffn_down_exps.weight", 16),
              layers_with(16, kMoreBits16, T::Q6_K, T::Q4_K));
    moe.n_expert = 4;
    types = choose(moe, recipe_of(QuantFtype::MOSTLY_Q4_K_M));
    EXPECT_EQ(types.at("blk.3.attn_k.weight"), T::Q4_K);
    EXPECT_EQ(types.at("blk.3.attn_output.weight"), T::Q4_K);
    EXPECT_EQ(per_layer(types, "attn_v.weight", 16),
              layers_with(16, kMoreBits16, T::Q6_K, T::Q4_K));
}

// MXFP4_MOE (llama-quant.cpp: the output branch gives Q8_0; then ne[2] > 1 gives MXFP4, anything
// else Q8_0, before any per-category rule).
TEST(QuantRecipe, Mxfp4MoeGivesExpertsMxfp4AndEverythingElseQ8_0) {
    LlamaModel moe;
    moe.n_expert = 8;
    auto types = choose(moe, recipe_of(QuantFtype::MOSTLY_MXFP4_MOE));
    EXPECT_EQ(types.at("blk.3.ffn_gate_exps.weight"), T::MXFP4);
    EXPECT_EQ(types.at("blk.3.ffn_up_exps.weight"), T::MXFP4);
    EXPECT_EQ(types.at("blk.0.ffn_down_exps.weight"), T::MXFP4);
    EXPECT_EQ(types.at("blk.3.attn_v.weight"), T::Q8_0);
    EXPECT_EQ(types.at("blk.3.attn_q.weight"), T::Q8_0);
    EXPECT_EQ(types.at("blk.3.ffn_gate_inp.weight"), T::F32);
    EXPECT_EQ(types.at("output.weight"), T::Q8_0);
    EXPECT_EQ(types.at("token_embd.weight"), T::Q8_0);
    // A dense model: nothing has experts, so all Q8_0.
    types = choose(LlamaModel{}, recipe_of(QuantFtype::MOSTLY_MXFP4_MOE));
    EXPECT_EQ(types.at("blk.0.ffn_down.weight"), T::Q8_0);
    EXPECT_EQ(types.at("output.weight"), T::Q8_0);
    EXPECT_EQ(static_cast<uint32_t>(parse_quant_ftype("mxfp4_moe")->ftype), 38u);
}

TEST(QuantRecipe, PureAndOverridesDoNotAdvanceTheCounters) {
    QuantRecipe recipe = recipe_of(QuantFtype::MOSTLY_Q4_K_M);
    recipe.pure = true;
    auto types = choose({}, recipe);
    EXPECT_EQ(types.at("blk.0.attn_v.weight"), T::Q4_K);
    EXPECT_EQ(types.at("output.weight"), T::Q4_K);  // --pure skips the output rule too
    EXPECT_EQ(types.at("token_embd.weight"), T::Q4_K);

    // blk.0's attn_v is manual, so blk.L's attn_v is counted as L - 1: Q6_K where L - 1 is a
    // use_more_bits index (0, 1, 4, 7, 10, 13, 14).
    recipe = recipe_of(QuantFtype::MOSTLY_Q4_K_M);
    recipe.tensor_types = {{"blk\\.0\\.attn_v", T::Q8_0}};
    types = choose({}, recipe);
    EXPECT_EQ(types.at("blk.0.attn_v.weight"), T::Q8_0);
    std::vector<T> expected = layers_with(16, {1, 2, 5, 8, 11, 14, 15}, T::Q6_K, T::Q4_K);
    expected[0] = T::Q8_0;
    EXPECT_EQ(per_layer(types, "attn_v.weight", 16), expected);
}

TEST(QuantRecipe, TheFirstMatchingPatternWinsAndEarlyOptionsComeFirst) {
    QuantRecipe recipe = recipe_of(QuantFtype::MOSTLY_Q4_K_M);
    recipe.tensor_types = {{"ffn_(up|down)", T::Q5_K}, {"ffn_up", T::Q8_0}};
    recipe.token_embedding_type = T::Q8_0;
    recipe.output_tensor_type = T::F16;
    const auto types = choose({}, recipe);
    EXPECT_EQ(types.at("blk.4.ffn_up.weight"), T::Q5_K);
    EXPECT_EQ(types.at("blk.4.ffn_down.weight"), T::Q5_K);
    EXPECT_EQ(types.at("token_embd.weight"), T::Q8_0);
    EXPECT_EQ(types.at("output.weight"), T::F16);
    // An override that does not fit the row falls back like the recipe's own types.
    LlamaModel m;
    m.layers = 2;
    m.ff = 320;
    recipe.tensor_types = {{"ffn_down", T::Q6_K}};
    EXPECT_EQ(choose(m, recipe).at("blk.0.ffn_down.weight"), T::Q8_0);
    recipe.tensor_types = {{"ffn_down[", T::Q6_K}};
    EXPECT_THROW(choose(m, recipe), Error);
}

TEST(QuantRecipe, LeaveOutputTensorAndNeverQuantizedTensors) {
    QuantRecipe recipe = recipe_of(QuantFtype::MOSTLY_Q4_K_M);
    recipe.quantize_output = false;
    EXPECT_EQ(choose({}, recipe).at("output.weight"), T::F16);  // kept as the input has it
    EXPECT_FALSE(tensor_allows_quantization("blk.0.attn_norm.weight", 2, true));
    EXPECT_FALSE(tensor_allows_quantization("blk.0.attn_q.bias", 2, true));
    EXPECT_FALSE(tensor_allows_quantization("blk.0.attn_q.weight", 1, true));
    EXPECT_FALSE(tensor_allows_quantization("blk.0.ffn_gate_inp.weight", 2, true));
    EXPECT_FALSE(tensor_allows_quantization("position_embd.weight", 2, true));
    EXPECT_FALSE(tensor_allows_quantization("blk.0.ssm_conv1d.weight", 2, true));
    EXPECT_TRUE(tensor_allows_quantization("blk.0.ffn_gate_exps.weight", 3, true));
    EXPECT_TRUE(tensor_allows_quantization("output.weight", 2, true));
    EXPECT_FALSE(tensor_allows_quantization("output.weight", 2, false));
}

TEST(QuantRecipe, SeventyBLlamaBumpsAttnV) {
    LlamaModel m;
    m.layers = 80;
    QuantModelShape shape = llama_shape(m, 8);
    shape.type_70b = true;
    const auto tensors = llama_tensors(m);
    const auto choices = choose_tensor_types(tensors, shape, recipe_of(QuantFtype::MOSTLY_Q4_K_S));
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == "blk.40.attn_v.weight") EXPECT_EQ(choices[i].type, T::Q5_K);
}

TEST(QuantTensorOrder, LayerNumberFirstThenBytes) {
    const std::vector<std::string> names = {"blk.10.attn_q.weight", "blk.2.attn_q.weight",
                                            "token_embd.weight",    "output_norm.weight",
                                            "output.weight",        "blk.2.attn_k.weight"};
    std::vector<std::string> sorted;
    for (size_t i : llama_tensor_order(names)) sorted.push_back(names[i]);
    EXPECT_EQ(sorted, (std::vector<std::string>{"output.weight", "output_norm.weight",
                                                "token_embd.weight", "blk.2.attn_k.weight",
                                                "blk.2.attn_q.weight", "blk.10.attn_q.weight"}));
}

TEST(QuantFtypeNames, AnyCaseAliasesAndNumbers) {
    EXPECT_EQ(parse_quant_ftype("q4_k_m")->ftype, QuantFtype::MOSTLY_Q4_K_M);
    EXPECT_EQ(parse_quant_ftype("Q4_K")->ftype, QuantFtype::MOSTLY_Q4_K_M);
    EXPECT_EQ(parse_quant_ftype("q3_k")->ftype, QuantFtype::MOSTLY_Q3_K_M);
    EXPECT_EQ(parse_quant_ftype("Q5_k")->ftype, QuantFtype::MOSTLY_Q5_K_M);
    EXPECT_EQ(parse_quant_ftype("iq4_xs")->ftype, QuantFtype::MOSTLY_IQ4_XS);
    EXPECT_EQ(parse_quant_ftype("15")->ftype, QuantFtype::MOSTLY_Q4_K_M);
    EXPECT_EQ(static_cast<uint32_t>(parse_quant_ftype("Q2_K_S")->ftype), 21u);
    EXPECT_FALSE(parse_quant_ftype("q4_k_x"));
    EXPECT_FALSE(parse_quant_ftype("4"));
    EXPECT_FALSE(parse_quant_ftype(""));
    EXPECT_EQ(parse_ggml_type_name("q6_k"), T::Q6_K);
    EXPECT_EQ(parse_ggml_type_name("F16"), T::F16);
    EXPECT_FALSE(parse_ggml_type_name("q6_k_m"));
}

}  // namespace
}  // namespace rebox
