// ModernBERT fixture files (modernbert_files.hpp): fixed tiny shapes (hidden 64, 4 heads, 3
// layers, intermediate 128) as one tensor plan; float32 content from SplitMix64 seeded per tensor
// name, mcq-v1 and MLX content from the writers every other fixture uses. vocab_size is the
// tokenizer's token count rounded up to 64, so the last rows are padding as in ModernBERT's
// 50,368-row table.
#include "modernbert_files.hpp"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "encoder_fixture.hpp"
#include "hf_files.hpp"
#include "json_files.hpp"
#include "model_plan.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"
#include "tokenizer_files.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr int64_t kHidden = 64, kHeads = 4, kLayers = 3, kFf = 128, kWindow = 8, kEvery = 2;
// The quantized formats' norm centres (see modernbert_plan): attention inputs, reranker head.
constexpr double kAttnGain = 4.0, kHeadGain = 8.0;
constexpr const char* kSpecials[] = {"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"};

// The generated tokenizer rewritten into ModernBERT's shape; returns the id of [UNK] (the first
// special) and sets *count to the token count.
int64_t modernbert_tokenizer(const fs::path& out_dir, int64_t* count) {
    const int64_t tokens = write_tokenizer_files(
        out_dir, TokenizerOptions{.kind = "small", .real_tokenizer_json = {}});
    ojson tok = read_json_file(out_dir / "tokenizer.json");
    const int64_t first = tokens;
    for (int64_t k = 0; k < 5; ++k)
        tok["added_tokens"].push_back(ojson{{"id", first + k},
                                            {"content", kSpecials[k]},
                                            {"single_word", false},
                                            {"lstrip", k == 4},  // [MASK], as ModernBERT's
                                            {"rstrip", false},
                                            {"normalized", false},
                                            {"special", true}});
    tok["pre_tokenizer"] = ojson{{"type", "ByteLevel"},
                                 {"add_prefix_space", false},
                                 {"trim_offsets", true},
                                 {"use_regex", true}};
    const auto special = [](const char* id) {
        return ojson{{"SpecialToken", {{"id", id}, {"type_id", 0}}}};
    };
    const auto sequence = [](const char* id) {
        return ojson{{"Sequence", {{"id", id}, {"type_id", 0}}}};
    };
    tok["post_processor"] =
        ojson{{"type", "TemplateProcessing"},
              {"single", ojson::array({special("[CLS]"), sequence("A"), special("[SEP]")})},
              {"pair", ojson::array({special("[CLS]"), sequence("A"), special("[SEP]"),
                                     sequence("B"), special("[SEP]")})},
              {"special_tokens",
               {{"[CLS]", {{"id", "[CLS]"}, {"ids", {first + 1}}, {"tokens", {"[CLS]"}}}},
                {"[SEP]", {{"id", "[SEP]"}, {"ids", {first + 2}}, {"tokens", {"[SEP]"}}}}}}};
    write_json_file(out_dir / "tokenizer.json", tok);
    write_json_file(out_dir / "tokenizer_config.json",
                    ojson{{"clean_up_tokenization_spaces", true},
                          {"cls_token", "[CLS]"},
                          {"mask_token", "[MASK]"},
                          {"model_max_length", 8192},
                          {"pad_token", "[PAD]"},
                          {"sep_token", "[SEP]"},
                          {"tokenizer_class", "PreTrainedTokenizerFast"},
                          {"unk_token", "[UNK]"}});
    *count = first + 5;
    return first;
}

ojson config_json(int64_t first_special, int64_t vocab_size) {
    return ojson{{"architectures", {"ModernBertModel"}},
                 {"attention_bias", false},
                 {"bos_token_id", first_special + 1},
                 {"classifier_pooling", "mean"},
                 {"cls_token_id", first_special + 1},
                 {"eos_token_id", first_special + 2},
                 {"global_attn_every_n_layers", kEvery},
                 {"global_rope_theta", 160000.0},
                 {"hidden_activation", "gelu"},
                 {"hidden_size", kHidden},
                 {"intermediate_size", kFf},
                 {"local_attention", kWindow},
                 {"local_rope_theta", 10000.0},
                 {"max_position_embeddings", 8192},
                 {"mlp_bias", false},
                 {"model_type", "modernbert"},
                 {"norm_bias", false},
                 {"norm_eps", 1e-05},
                 {"num_attention_heads", kHeads},
                 {"num_hidden_layers", kLayers},
                 {"pad_token_id", first_special + 3},
                 {"sep_token_id", first_special + 2},
                 {"tie_word_embeddings", true},
                 {"torch_dtype", "float32"},
                 {"vocab_size", vocab_size}};
}

// A float32 tensor: offset + uniform(-spread, spread), each name its own stream.
StTensor f32_tensor(const std::string& name, std::vector<int64_t> shape, double spread,
                    double offset, uint64_t seed) {
    uint64_t count = 1;
    for (const int64_t d : shape) count *= static_cast<uint64_t>(d);
    StTensor t{name, "F32", std::move(shape), 4 * count, {}};
    t.write = [name, count, spread, offset, seed](std::ostream& out) {
        SplitMix64 rng(seed ^ fnv1a64(name));
        std::vector<char> bytes(4 * count);
        for (uint64_t i = 0; i < count; ++i) {
            const float value = static_cast<float>(offset + rng.uniform(-spread, spread));
            std::memcpy(bytes.data() + 4 * i, &value, 4);  // little-endian hosts only, as rebox
        }
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    };
    return t;
}

PlanUnit norm(const std::string& name, int64_t length, double center, double spread) {
    PlanUnit unit;
    unit.norm = NormTensor{name, length, center, spread};
    return unit;
}

// The checkpoint's tensors in transformers' order. mcq: the table, the head and layer 0 at 4 bits
// in groups of 64, later layers at 3 bits in groups of 32 (both carried exactly by Q4_1); MLX:
// mlx-embeddings' one 4-bit / 64 setting (every Linear and Embedding, the classifier included).
// The quantized formats' weights are about +-0.1 (against float32's +-0.3): there the norms in
// front of attention are centred on kAttnGain, so attention depends on positions (the window, the
// rope), and the reranker's head.norm on kHeadGain, so the logits reach past +-1 on test pairs.
ModelPlan modernbert_plan(const ModernBertOptions& o, int64_t vocab) {
    const LayerQuant wide{4, 64};
    const auto layer_quant = [&](int64_t layer) {
        return o.format == "mcq" && layer > 0 ? LayerQuant{3, 32} : wide;
    };
    const std::string m = o.reranker ? "model." : "";
    ModelPlan plan;
    plan.dims.hidden = kHidden;
    plan.dims.layers = kLayers;
    plan.dims.heads = plan.dims.kv_heads = kHeads;
    plan.dims.head_dim = kHidden / kHeads;
    plan.dims.intermediate = kFf;
    plan.dims.vocab = plan.dims.embedding_rows = vocab;
    // The norms in front of attention (layer 0 reads embeddings.norm) and the head's norm.
    const bool quantized = o.format != "float";
    const double attn = quantized ? kAttnGain : 1.0, head = quantized ? kHeadGain : 1.0;
    std::vector<PlanUnit>& u = plan.units;
    u.push_back(quant_unit(m + "embeddings.tok_embeddings.weight", vocab, kHidden, wide));
    u.push_back(norm(m + "embeddings.norm.weight", kHidden, attn, 0.15 * attn));
    for (int64_t i = 0; i < kLayers; ++i) {
        const std::string p = m + "layers." + std::to_string(i) + ".";
        const LayerQuant q = layer_quant(i);
        if (i != 0)  // layer 0's attn_norm is an Identity
            u.push_back(norm(p + "attn_norm.weight", kHidden, attn, 0.15 * attn));
        u.push_back(quant_unit(p + "attn.Wqkv.weight", 3 * kHidden, kHidden, q));
        u.push_back(quant_unit(p + "attn.Wo.weight", kHidden, kHidden, q));
        u.push_back(norm(p + "mlp_norm.weight", kHidden, 1.0, 0.15));
        u.push_back(quant_unit(p + "mlp.Wi.weight", 2 * kFf, kHidden, q));
        u.push_back(quant_unit(p + "mlp.Wo.weight", kHidden, kFf, q));
    }
    u.push_back(norm(m + "final_norm.weight", kHidden, 1.0, 0.15));
    if (o.reranker) {  // ModernBertPredictionHead (no dense bias), then the classifier (with one)
        u.push_back(quant_unit("head.dense.weight", kHidden, kHidden, wide));
        u.push_back(norm("head.norm.weight", kHidden, head, 0.15 * head));
        u.push_back(quant_unit("classifier.weight", 1, kHidden, wide));
        u.push_back(norm("classifier.bias", 1, 0.0, 0.1));
    }
    return plan;
}

// The float32 checkpoint: the plan's tensors as plain F32 (the table +-0.8, the linear layers
// +-0.3, norms as planned).
void write_float32_files(const fs::path& out_dir, const ModelPlan& plan, uint64_t seed) {
    std::vector<StTensor> tensors;
    for (const PlanUnit& unit : plan.units) {
        if (!unit.quantized) {
            const NormTensor& n = unit.norm;
            tensors.push_back(f32_tensor(n.name, {n.length}, n.spread, n.center, seed));
            continue;
        }
        const QuantTensor& q = unit.quant;
        const double spread = q.name.find("tok_embeddings") != std::string::npos ? 0.8 : 0.3;
        tensors.push_back(f32_tensor(q.name, {q.rows, q.cols}, spread, 0, seed));
    }
    write_safetensors(out_dir / "model.safetensors", tensors, {{"format", "pt"}});
}

}  // namespace

std::string write_modernbert_fixture(const fs::path& out_dir, const ModernBertOptions& o) {
    if (o.format != "float" && o.format != "mcq" && o.format != "mlx")
        throw std::runtime_error("--arch modernbert: --format float, mcq or mlx, not " + o.format);
    int64_t tokens = 0;
    const int64_t first_special = modernbert_tokenizer(out_dir, &tokens);
    const int64_t vocab = (tokens + 63) / 64 * 64;
    ojson config = config_json(first_special, vocab);
    if (o.format != "float") config.erase("torch_dtype");
    if (o.format == "mlx")  // mlx-embeddings: "quantization" only, no quantization_config
        config["quantization"] = {{"group_size", 64}, {"bits", 4}};
    if (o.reranker) {
        config["architectures"] = {"ModernBertForSequenceClassification"};
        config["classifier_activation"] = "gelu";
        config["classifier_bias"] = false;
        config["id2label"] = {{"0", "LABEL_0"}};
        config["label2id"] = {{"LABEL_0", 0}};
    }
    write_json_file(out_dir / "config.json", config);
    if (!o.reranker) write_pooling_files(out_dir, kHidden, "mean");

    const ModelPlan plan = modernbert_plan(o, vocab);
    if (o.format == "mcq" || o.format == "mlx") {
        write_quantized_encoder_weights(out_dir, plan, o.format, o.seed);
    } else {
        write_float32_files(out_dir, plan, o.seed);
    }
    return std::string("modernbert") + (o.reranker ? " reranker" : "") + ", " +
           (o.format == "float" ? "float32" : o.format) + ", vocab " + std::to_string(vocab) +
           ", " + std::to_string(plan.units.size()) + " tensors";
}

}  // namespace mkfixture
