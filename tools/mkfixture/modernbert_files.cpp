// ModernBERT fixture files (modernbert_files.hpp): fixed tiny shapes (hidden 64, 4 heads, 3
// layers, intermediate 128) and deterministic float32 content from SplitMix64 seeded per tensor
// name; vocab_size is the tokenizer's token count rounded up to 64, so the last rows are padding
// as in ModernBERT's 50,368-row table.
#include "modernbert_files.hpp"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "hf_files.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"
#include "tokenizer_files.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr int64_t kHidden = 64, kHeads = 4, kLayers = 3, kFf = 128, kWindow = 8, kEvery = 2;
constexpr const char* kSpecials[] = {"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"};

ojson read_json(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path.string() + ": cannot read");
    return ojson::parse(in);
}

void write_json(const fs::path& path, const ojson& value) {
    std::ofstream out(path, std::ios::binary);
    out << value.dump(1) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

// The generated tokenizer rewritten into ModernBERT's shape; returns the id of [UNK] (the first
// special) and sets *count to the token count.
int64_t modernbert_tokenizer(const fs::path& out_dir, int64_t* count) {
    const int64_t tokens = write_tokenizer_files(
        out_dir, TokenizerOptions{.kind = "small", .real_tokenizer_json = {}});
    ojson tok = read_json(out_dir / "tokenizer.json");
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
    write_json(out_dir / "tokenizer.json", tok);
    write_json(out_dir / "tokenizer_config.json",
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

}  // namespace

int write_modernbert_fixture(const fs::path& out_dir, uint64_t seed) {
    int64_t tokens = 0;
    const int64_t first_special = modernbert_tokenizer(out_dir, &tokens);
    const int64_t vocab = (tokens + 63) / 64 * 64;
    write_json(out_dir / "config.json", config_json(first_special, vocab));
    write_pooling_files(out_dir, kHidden, "mean");

    std::vector<StTensor> tensors;
    tensors.push_back(
        f32_tensor("embeddings.tok_embeddings.weight", {vocab, kHidden}, 0.8, 0, seed));
    tensors.push_back(f32_tensor("embeddings.norm.weight", {kHidden}, 0.15, 1.0, seed));
    for (int64_t i = 0; i < kLayers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        if (i != 0)  // layer 0's attn_norm is an Identity
            tensors.push_back(f32_tensor(p + "attn_norm.weight", {kHidden}, 0.15, 1.0, seed));
        tensors.push_back(f32_tensor(p + "attn.Wqkv.weight", {3 * kHidden, kHidden}, 0.3, 0, seed));
        tensors.push_back(f32_tensor(p + "attn.Wo.weight", {kHidden, kHidden}, 0.3, 0, seed));
        tensors.push_back(f32_tensor(p + "mlp_norm.weight", {kHidden}, 0.15, 1.0, seed));
        tensors.push_back(f32_tensor(p + "mlp.Wi.weight", {2 * kFf, kHidden}, 0.3, 0, seed));
        tensors.push_back(f32_tensor(p + "mlp.Wo.weight", {kHidden, kFf}, 0.3, 0, seed));
    }
    tensors.push_back(f32_tensor("final_norm.weight", {kHidden}, 0.15, 1.0, seed));
    const int count = static_cast<int>(tensors.size());
    write_safetensors(out_dir / "model.safetensors", tensors, {{"format", "pt"}});
    return count;
}

}  // namespace mkfixture
