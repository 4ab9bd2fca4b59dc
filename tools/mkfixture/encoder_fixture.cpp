// rebox-mkfixture --arch bert | xlm-roberta | nomic-bert: the tensor list of each encoder layout,
// its config.json, the copied tokenizer files and the pooling files; the weights go through the
// mcq, MLX and float writers every other fixture uses.
#include "encoder_fixture.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "float_files.hpp"
#include "hf_files.hpp"
#include "json_files.hpp"
#include "mlx_files.hpp"

namespace mkfixture {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr int64_t kHidden = 64, kHeads = 4, kIntermediate = 128;
constexpr int64_t kBertPositions = 128;               // max_position_embeddings of the bert fixture
constexpr int64_t kXlmrPadTokenId = 1;                // XLM-R's <pad>
constexpr int64_t kNomicVocabMultiple = 64;           // nomic's pad_vocab_size_multiple
constexpr double kHeadGain = 4.0, kLogitGain = 12.0;  // reranker heads: dense / one-row output

using Quant = LayerQuant;
constexpr auto weight = quant_unit;

PlanUnit vector(const std::string& name, int64_t length, double center, double spread) {
    PlanUnit unit;
    unit.norm = NormTensor{name, length, center, spread};
    return unit;
}

void layer_norm(std::vector<PlanUnit>& units, const std::string& stem) {
    units.push_back(vector(stem + ".weight", kHidden, 1.0, 0.05));
    units.push_back(vector(stem + ".bias", kHidden, 0.0, 0.05));
}

void linear(std::vector<PlanUnit>& units, const std::string& stem, int64_t rows, int64_t cols,
            Quant q, bool bias = true) {
    units.push_back(weight(stem + ".weight", rows, cols, q));
    if (bias) units.push_back(vector(stem + ".bias", rows, 0.0, 0.1));
}

int64_t type_rows(const std::string& arch) { return arch == "xlm-roberta" ? 1 : 2; }
int64_t position_rows(const std::string& arch) {
    return arch == "xlm-roberta" ? kBertPositions + kXlmrPadTokenId + 1 : kBertPositions;
}

std::string default_pooling(const std::string& arch) {
    return arch == "nomic-bert" ? "mean" : "cls";
}

// The vocabulary size a tokenizer.json implies (highest id + 1 over model.vocab and
// added_tokens), after checking its model type fits the arch.
int64_t tokenizer_vocab(const fs::path& path, const std::string& arch) {
    const ojson tok = read_json_file(path);
    const std::string want = arch == "xlm-roberta" ? "Unigram" : "WordPiece";
    const std::string type = tok.contains("model") ? tok["model"].value("type", "") : "";
    if (type != want)
        throw std::runtime_error(path.string() + ": model.type is '" + type + "', --arch " + arch +
                                 " needs a " + want + " tokenizer.json (" +
                                 (want == "Unigram" ? "XLM-R's" : "a BERT WordPiece one") + ")");
    int64_t top = -1;
    const ojson& vocab = tok["model"]["vocab"];
    if (vocab.is_object())
        for (const auto& [piece, id] : vocab.items()) top = std::max(top, id.get<int64_t>());
    else
        top = static_cast<int64_t>(vocab.size()) - 1;
    if (tok.contains("added_tokens"))
        for (const ojson& added : tok["added_tokens"])
            top = std::max(top, added.value("id", int64_t{-1}));
    if (top < 0) throw std::runtime_error(path.string() + ": empty vocabulary");
    return top + 1;
}

ojson bert_like_config(const EncoderOptions& o, int64_t vocab) {
    const bool roberta = o.arch == "xlm-roberta";
    const std::string head =
        roberta ? "XLMRobertaForSequenceClassification" : "BertForSequenceClassification";
    ojson cfg = {
        {"model_type", roberta ? "xlm-roberta" : "bert"},
        {"architectures", {o.reranker ? head : (roberta ? "XLMRobertaModel" : "BertModel")}},
        {"hidden_size", kHidden},
        {"num_hidden_layers", o.layers},
        {"num_attention_heads", kHeads},
        {"intermediate_size", kIntermediate},
        {"max_position_embeddings", position_rows(o.arch)},
        {"type_vocab_size", type_rows(o.arch)},
        {"vocab_size", vocab},
        {"layer_norm_eps", roberta ? 1e-05 : 1e-12},
        {"hidden_act", "gelu"},
        {"pad_token_id", roberta ? kXlmrPadTokenId : 0},
        {"position_embedding_type", "absolute"},
    };
    if (roberta) {
        cfg["bos_token_id"] = 0;
        cfg["eos_token_id"] = 2;
    }
    if (o.reranker) {
        cfg["id2label"] = {{"0", "LABEL_0"}};
        cfg["label2id"] = {{"LABEL_0", 0}};
    }
    return cfg;
}

// nomic-embed-text-v1.5's config.json keys (GPT-2 names) with the fixture's small width.
ojson nomic_config(const EncoderOptions& o, int64_t vocab) {
    return {{"model_type", "nomic_bert"},
            {"architectures", {"NomicBertModel"}},
            {"activation_function", "swiglu"},
            {"causal", false},
            {"layer_norm_epsilon", 1e-12},
            {"max_trained_positions", 2048},
            {"mlp_fc1_bias", false},
            {"mlp_fc2_bias", false},
            {"n_embd", kHidden},
            {"n_head", kHeads},
            {"n_inner", kIntermediate},
            {"n_layer", o.layers},
            {"n_positions", 8192},
            {"pad_vocab_size_multiple", kNomicVocabMultiple},
            {"prenorm", false},
            {"qkv_proj_bias", false},
            {"rotary_emb_base", 1000},
            {"rotary_emb_fraction", 1.0},
            {"rotary_emb_interleaved", false},
            {"rotary_emb_scale_base", nullptr},
            {"rotary_scaling_factor", nullptr},
            {"type_vocab_size", 2},
            {"use_rms_norm", false},
            {"vocab_size", vocab}};
}

void check_options(const EncoderOptions& o) {
    if (!is_encoder_arch(o.arch)) throw std::runtime_error("not an encoder arch: " + o.arch);
    if (o.format != "mcq" && o.format != "mlx" && o.format != "float")
        throw std::runtime_error("--arch " + o.arch + ": --format mcq, mlx or float, not " +
                                 o.format);
    if (o.reranker && o.arch == "nomic-bert")
        throw std::runtime_error("--reranker: nomic-bert has no sequence-classification head");
    if (o.reranker && !o.pooling.empty() && o.pooling != "none")
        throw std::runtime_error(
            "--reranker writes no pooling files (rerankers have none); drop --pooling");
    if (o.tokenizer_json.empty())
        throw std::runtime_error(
            "--arch " + o.arch + " needs --tokenizer-json, a real tokenizer.json (" +
            (o.arch == "xlm-roberta" ? "XLM-R's Unigram" : "a BERT WordPiece") + " vocabulary)");
}

}  // namespace

bool is_encoder_arch(const std::string& arch) {
    return arch == "bert" || arch == "xlm-roberta" || arch == "nomic-bert";
}

ModelPlan make_encoder_plan(const EncoderOptions& o, int64_t vocab) {
    // mcq: the tables, the heads and layer 0 at 4 bits in groups of 64, later layers at 3 bits in
    // groups of 32 (both re-encode exactly); MLX: mlx-embeddings' one 4-bit / 64 setting.
    const Quant wide{4, 64};
    const auto layer_quant = [&](int layer) {
        return o.format == "mcq" && layer > 0 ? Quant{3, 32} : wide;
    };
    const int64_t e = kHidden, f = kIntermediate;
    ModelPlan plan;
    plan.dims.hidden = e;
    plan.dims.layers = o.layers;
    plan.dims.heads = plan.dims.kv_heads = kHeads;
    plan.dims.head_dim = e / kHeads;
    plan.dims.intermediate = f;
    plan.dims.vocab = plan.dims.embedding_rows = vocab;
    std::vector<PlanUnit>& u = plan.units;
    if (o.arch == "nomic-bert") {
        u.push_back(weight("embeddings.word_embeddings.weight", vocab, e, wide));
        u.push_back(weight("embeddings.token_type_embeddings.weight", 2, e, wide));
        layer_norm(u, "emb_ln");
        for (int i = 0; i < o.layers; ++i) {
            const std::string p = "encoder.layers." + std::to_string(i) + ".";
            const Quant q = layer_quant(i);
            linear(u, p + "attn.Wqkv", 3 * e, e, q, false);
            linear(u, p + "attn.out_proj", e, e, q, false);
            linear(u, p + "mlp.fc11", f, e, q, false);
            linear(u, p + "mlp.fc12", f, e, q, false);
            linear(u, p + "mlp.fc2", e, f, q, false);
            layer_norm(u, p + "norm1");
            layer_norm(u, p + "norm2");
        }
        return plan;
    }
    const std::string prefix =
        o.reranker ? (o.arch == "xlm-roberta" ? "roberta." : "bert.") : std::string();
    u.push_back(weight(prefix + "embeddings.word_embeddings.weight", vocab, e, wide));
    u.push_back(
        weight(prefix + "embeddings.position_embeddings.weight", position_rows(o.arch), e, wide));
    u.push_back(
        weight(prefix + "embeddings.token_type_embeddings.weight", type_rows(o.arch), e, wide));
    layer_norm(u, prefix + "embeddings.LayerNorm");
    for (int i = 0; i < o.layers; ++i) {
        const std::string p = prefix + "encoder.layer." + std::to_string(i) + ".";
        const Quant q = layer_quant(i);
        linear(u, p + "attention.self.query", e, e, q);
        linear(u, p + "attention.self.key", e, e, q);
        linear(u, p + "attention.self.value", e, e, q);
        linear(u, p + "attention.output.dense", e, e, q);
        layer_norm(u, p + "attention.output.LayerNorm");
        linear(u, p + "intermediate.dense", f, e, q);
        linear(u, p + "output.dense", e, f, q);
        layer_norm(u, p + "output.LayerNorm");
    }
    // A reranker's head at larger weights, so that its logits spread over several units (at the
    // layers' magnitude they stay within +-0.5 and every sigmoid score is near 0.5).
    const size_t head_begin = u.size();
    if (o.reranker && o.arch == "xlm-roberta") {  // RobertaClassificationHead
        linear(u, "classifier.dense", e, e, wide);
        linear(u, "classifier.out_proj", 1, e, wide);
    } else {
        linear(u, prefix + "pooler.dense", e, e, wide);  // embedders keep it too (unused)
        if (o.reranker) linear(u, "classifier", 1, e, wide);
    }
    if (o.reranker)
        for (size_t i = head_begin; i < u.size(); ++i)
            if (u[i].quantized) u[i].quant.gain = u[i].quant.rows == 1 ? kLogitGain : kHeadGain;
    return plan;
}

void write_quantized_encoder_weights(const fs::path& out_dir, const ModelPlan& plan,
                                     const std::string& format, uint64_t seed) {
    if (format == "mcq") {
        write_model_files(out_dir, plan, 1, seed);
        return;
    }
    MlxOptions mlx;
    mlx.scale_dtype = "f16";  // mlx-embeddings stores f16 scales and biases
    write_mlx_model_files(out_dir, plan, 1, seed, mlx);
}

std::string write_encoder_fixture(const fs::path& out_dir, const EncoderOptions& options) {
    EncoderOptions o = options;
    check_options(o);
    if (o.pooling.empty()) o.pooling = o.reranker ? "none" : default_pooling(o.arch);
    int64_t vocab = tokenizer_vocab(o.tokenizer_json, o.arch);
    if (o.arch == "nomic-bert")  // nomic pads the embedding to a multiple of 64 rows
        vocab = (vocab + kNomicVocabMultiple - 1) / kNomicVocabMultiple * kNomicVocabMultiple;

    const fs::path source_dir = o.tokenizer_json.parent_path();
    fs::copy_file(o.tokenizer_json, out_dir / "tokenizer.json",
                  fs::copy_options::overwrite_existing);
    for (const char* name : {"tokenizer_config.json", "special_tokens_map.json"})
        if (fs::exists(source_dir / name))
            fs::copy_file(source_dir / name, out_dir / name, fs::copy_options::overwrite_existing);
    if (o.arch == "xlm-roberta" && fs::exists(source_dir / "sentencepiece.bpe.model"))
        fs::copy_file(source_dir / "sentencepiece.bpe.model", out_dir / "sentencepiece.bpe.model",
                      fs::copy_options::overwrite_existing);

    ojson config = o.arch == "nomic-bert" ? nomic_config(o, vocab) : bert_like_config(o, vocab);
    if (o.format == "mlx")  // mlx-embeddings: "quantization" only, no quantization_config
        config["quantization"] = {{"group_size", 64}, {"bits", 4}};
    write_json_file(out_dir / "config.json", config);
    if (o.pooling != "none") write_pooling_files(out_dir, kHidden, o.pooling);

    const ModelPlan plan = make_encoder_plan(o, vocab);
    if (o.format == "mcq" || o.format == "mlx") {
        write_quantized_encoder_weights(out_dir, plan, o.format, o.seed);
    } else {
        set_float_torch_dtype(out_dir, o.dtype);
        write_float_model_files(out_dir, plan, 1, o.seed, {o.dtype, ""});
    }
    return o.arch + (o.reranker ? " reranker" : "") + ", " + o.format + ", vocab " +
           std::to_string(vocab) + ", pooling " + o.pooling + ", " +
           std::to_string(plan.units.size()) + " tensors";
}

}  // namespace mkfixture
