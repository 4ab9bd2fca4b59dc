// qwen35 fixture files (qwen35_files.hpp): fixed tiny shapes (hidden 64, 4 attention heads of 32
// with 2 key/value heads, feed-forward 128; linear attention: 2 key heads and 4 value heads of 16,
// conv kernel 4) and deterministic BF16 content from SplitMix64 seeded per tensor name. The (1 + w)
// RMSNorm weights are stored around 0 as Qwen3.5 stores them; linear_attn.norm (a plain gated
// RMSNorm) around 1; A_log = log(uniform(1, 16)) as Qwen3.5 initialises it.
#include "qwen35_files.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "hf_files.hpp"
#include "model_plan.hpp"
#include "seeded_bf16.hpp"
#include "tokenizer_files.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kHidden = 64, kLayers = 4, kInterval = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 32,
                  kFf = 128, kKeyHeads = 2, kValueHeads = 4, kKernel = 4, kMtpLayers = 1,
                  kExperts = 4, kExpertsUsed = 2, kExpertFf = 32, kSharedFf = 96;
constexpr const char* kDefects[] = {"layer-types",    "no-a-log",     "heads",
                                    "expert-missing", "narrow-heads", nullptr};

// Qwen3.5's tokenizer.json split regex (Qwen2's, with combining marks \p{M} in the letter runs).
constexpr const char* kQwen35SplitRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Every string equal to Qwen2's regex becomes Qwen3.5's.
void use_qwen35_regex(nlohmann::ordered_json& node) {
    if (node.is_string() && node.get<std::string>() == kQwenSplitRegex) node = kQwen35SplitRegex;
    if (node.is_structured())
        for (auto& child : node) use_qwen35_regex(child);
}

struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    double center = 0, spread = 1;
    bool log_uniform = false;  // A_log: log(uniform(1, 16))
};

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

nlohmann::ordered_json config_json(int64_t vocab, const std::string& defect, bool moe,
                                   int64_t lin_dim) {
    nlohmann::ordered_json c;
    c["architectures"] = {moe ? "Qwen3_5MoeForCausalLM" : "Qwen3_5ForCausalLM"};
    c["model_type"] = moe ? "qwen3_5_moe_text" : "qwen3_5_text";
    c["hidden_size"] = kHidden;
    if (moe) {  // Qwen3.5 MoE's text config has no intermediate_size
        c["num_experts"] = kExperts;
        c["num_experts_per_tok"] = kExpertsUsed;
        c["moe_intermediate_size"] = kExpertFf;
        c["shared_expert_intermediate_size"] = kSharedFf;
    } else {
        c["intermediate_size"] = kFf;
    }
    c["num_hidden_layers"] = kLayers;
    c["num_attention_heads"] = kHeads;
    c["num_key_value_heads"] = kKvHeads;
    c["head_dim"] = kHeadDim;
    c["linear_conv_kernel_dim"] = kKernel;
    c["linear_key_head_dim"] = lin_dim;
    c["linear_value_head_dim"] = lin_dim;
    c["linear_num_key_heads"] = kKeyHeads;
    c["linear_num_value_heads"] = defect == "heads" ? 3 : kValueHeads;
    c["full_attention_interval"] = kInterval;
    nlohmann::ordered_json types = nlohmann::ordered_json::array();
    for (int64_t i = 0; i < kLayers; ++i)
        types.push_back((i + 1) % kInterval == 0 || (defect == "layer-types" && i == 0)
                            ? "full_attention"
                            : "linear_attention");
    c["layer_types"] = types;
    c["mtp_num_hidden_layers"] = kMtpLayers;
    c["max_position_embeddings"] = 4096;
    c["rms_norm_eps"] = 1e-06;
    c["rope_parameters"] = {{"rope_type", "default"},
                            {"rope_theta", 10000000},
                            {"partial_rotary_factor", 0.25},
                            {"mrope_section", {2, 1, 1}},
                            {"mrope_interleaved", true}};
    c["tie_word_embeddings"] = false;
    c["vocab_size"] = vocab;
    c["hidden_act"] = "silu";
    c["attention_bias"] = false;
    c["torch_dtype"] = "bfloat16";
    return c;
}

// The MoE feed-forward of layer `p`: router, experts (fused as transformers saves them, or one
// tensor per expert and projection), shared expert and its gate.
void add_moe_ffn(std::vector<Tensor>& t, const std::string& p, bool fused, bool drop_last_up) {
    const double w = 1.0 / std::sqrt(double(kHidden));
    const double w_down = 1.0 / std::sqrt(double(kExpertFf));
    // A decisive router (wide logits), so BF16 and F32 arithmetic pick the same experts.
    t.push_back({p + "mlp.gate.weight", {kExperts, kHidden}, 0, 1.0});
    if (fused) {
        t.push_back({p + "mlp.experts.gate_up_proj", {kExperts, 2 * kExpertFf, kHidden}, 0, w});
        t.push_back({p + "mlp.experts.down_proj", {kExperts, kHidden, kExpertFf}, 0, w_down});
    } else {
        for (int64_t e = 0; e < kExperts; ++e) {
            const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
            t.push_back({x + "gate_proj.weight", {kExpertFf, kHidden}, 0, w});
            if (!(drop_last_up && e == kExperts - 1))
                t.push_back({x + "up_proj.weight", {kExpertFf, kHidden}, 0, w});
            t.push_back({x + "down_proj.weight", {kHidden, kExpertFf}, 0, w_down});
        }
    }
    t.push_back({p + "mlp.shared_expert.gate_proj.weight", {kSharedFf, kHidden}, 0, w});
    t.push_back({p + "mlp.shared_expert.up_proj.weight", {kSharedFf, kHidden}, 0, w});
    t.push_back({p + "mlp.shared_expert.down_proj.weight",
                 {kHidden, kSharedFf},
                 0,
                 1.0 / std::sqrt(double(kSharedFf))});
    t.push_back({p + "mlp.shared_expert_gate.weight", {1, kHidden}, 0, w});
}

// The decoder layer `p` ("model.layers.N." or "mtp.layers.K."): gated attention when `full`; a
// MoE feed-forward when `moe` (its experts fused when `fused`).
void add_layer(std::vector<Tensor>& t, const std::string& p, bool full, bool a_log, bool moe,
               bool fused, int64_t lin_dim, bool drop_last_up = false) {
    const double w = 1.0 / std::sqrt(double(kHidden));
    t.push_back({p + "input_layernorm.weight", {kHidden}, 0.0, 0.1});
    if (full) {
        t.push_back({p + "self_attn.q_proj.weight", {2 * kHeads * kHeadDim, kHidden}, 0, w});
        t.push_back({p + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kHidden}, 0, w});
        t.push_back({p + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kHidden}, 0, w});
        t.push_back({p + "self_attn.o_proj.weight", {kHidden, kHeads * kHeadDim}, 0, w});
        t.push_back({p + "self_attn.q_norm.weight", {kHeadDim}, 0.0, 0.1});
        t.push_back({p + "self_attn.k_norm.weight", {kHeadDim}, 0.0, 0.1});
    } else {
        const int64_t v = kValueHeads * lin_dim, conv = 2 * kKeyHeads * lin_dim + v;
        t.push_back({p + "linear_attn.in_proj_qkv.weight", {conv, kHidden}, 0, w});
        t.push_back({p + "linear_attn.in_proj_z.weight", {v, kHidden}, 0, w});
        t.push_back({p + "linear_attn.in_proj_b.weight", {kValueHeads, kHidden}, 0, w});
        t.push_back({p + "linear_attn.in_proj_a.weight", {kValueHeads, kHidden}, 0, w});
        t.push_back({p + "linear_attn.conv1d.weight", {conv, 1, kKernel}, 0, 0.5});
        t.push_back({p + "linear_attn.dt_bias", {kValueHeads}, 0.0, 0.5});
        if (a_log) t.push_back({p + "linear_attn.A_log", {kValueHeads}, 0, 0, true});
        t.push_back({p + "linear_attn.norm.weight", {lin_dim}, 1.0, 0.05});
        t.push_back({p + "linear_attn.out_proj.weight", {kHidden, v}, 0, w});
    }
    t.push_back({p + "post_attention_layernorm.weight", {kHidden}, 0.0, 0.1});
    if (moe) {
        add_moe_ffn(t, p, fused, drop_last_up);
        return;
    }
    t.push_back({p + "mlp.gate_proj.weight", {kFf, kHidden}, 0, w});
    t.push_back({p + "mlp.up_proj.weight", {kFf, kHidden}, 0, w});
    t.push_back({p + "mlp.down_proj.weight", {kHidden, kFf}, 0, 1.0 / std::sqrt(double(kFf))});
}

}  // namespace

std::string write_qwen35_fixture(const fs::path& out_dir, const Qwen35Options& options) {
    if (!options.defect.empty()) {
        bool known = false;
        for (const char* const* d = kDefects; *d; ++d) known |= options.defect == *d;
        if (!known) throw std::runtime_error("--qwen35-defect: unknown '" + options.defect + "'");
    }
    TokenizerOptions tok;
    tok.kind = "small";
    const int64_t vocab = write_tokenizer_files(out_dir, tok);
    {  // Qwen3.5's split regex in place of Qwen2's
        std::ifstream in(out_dir / "tokenizer.json");
        nlohmann::ordered_json tokenizer = nlohmann::ordered_json::parse(in);
        use_qwen35_regex(tokenizer);
        write_text(out_dir / "tokenizer.json", tokenizer.dump(2));
    }
    if (options.format != "float" && options.format != "mcq")
        throw std::runtime_error("--arch qwen35 / qwen35moe: --format float or mcq");
    const bool mcq = options.format == "mcq";
    const int64_t lin_dim = mcq && options.defect != "narrow-heads" ? 32 : 16;
    write_text(out_dir / "config.json",
               config_json(vocab, options.defect, options.moe, lin_dim).dump(2) + "\n");

    std::vector<Tensor> tensors;
    tensors.push_back({"model.embed_tokens.weight", {vocab, kHidden}, 0, 0.5});
    for (int64_t layer = 0; layer < kLayers; ++layer)
        add_layer(tensors, "model.layers." + std::to_string(layer) + ".",
                  (layer + 1) % kInterval == 0, !(options.defect == "no-a-log" && layer == 0),
                  options.moe, !mcq, lin_dim);
    tensors.push_back({"model.norm.weight", {kHidden}, 0.0, 0.1});
    tensors.push_back({"lm_head.weight", {vocab, kHidden}, 0, 1.0 / std::sqrt(double(kHidden))});
    tensors.push_back({"mtp.fc.weight", {kHidden, 2 * kHidden}, 0, 1.0 / std::sqrt(2.0 * kHidden)});
    tensors.push_back({"mtp.pre_fc_norm_embedding.weight", {kHidden}, 0.0, 0.1});
    tensors.push_back({"mtp.pre_fc_norm_hidden.weight", {kHidden}, 0.0, 0.1});
    tensors.push_back({"mtp.norm.weight", {kHidden}, 0.0, 0.1});
    add_layer(tensors, "mtp.layers.0.", true, true, options.moe, false, lin_dim,
              options.defect == "expert-missing");
    if (mcq) {  // every matrix but the routers mcq-v1 4-bit / 32; the rest F32 alike
        ModelPlan plan;
        plan.dims = Dims{kHidden, kLayers, kHeads, kKvHeads, kHeadDim, kFf, vocab};
        plan.dims.embedding_rows = vocab;
        for (const Tensor& t : tensors) {
            // The routers stay float (as MLX keeps them at 8 bits): a 4-bit router's narrow
            // logits let llama.cpp's Q8_1 activation rounding pick other experts than the F32 twin.
            const bool router = t.name.ends_with("mlp.gate.weight") ||
                                t.name.ends_with("shared_expert_gate.weight");
            if (t.shape.size() == 2 && !router) {
                plan.units.push_back(quant_unit(t.name, t.shape[0], t.shape[1], LayerQuant{4, 32}));
                continue;
            }
            int64_t values = 1;
            for (const int64_t d : t.shape) values *= d;
            PlanUnit unit;  // A_log = log(uniform(1, 16)) stands as uniform over [0.1, 2.7]
            unit.norm = NormTensor{t.name, values, t.log_uniform ? 1.4 : t.center,
                                   t.log_uniform ? 1.3 : t.spread};
            if (t.shape.size() > 1) unit.norm.dims = t.shape;
            plan.units.push_back(unit);
        }
        write_model_files(out_dir, plan, 1, options.seed);
        return std::string(options.moe ? "qwen35moe" : "qwen35") + ", mcq, vocab " +
               std::to_string(vocab) + ", " + std::to_string(plan.units.size()) +
               " tensors, 4 layers + 1 MTP layer";
    }

    std::vector<StTensor> stored;
    for (const Tensor& t : tensors)
        stored.push_back(seeded_bf16(t.name, t.shape, options.seed, [t](SplitMix64& rng) {
            return t.log_uniform ? std::log(rng.uniform(1.0, 16.0))
                                 : t.center + t.spread * rng.uniform(-1.0, 1.0);
        }));
    write_safetensors(out_dir / "model.safetensors", stored, {{"format", "pt"}});
    return std::string(options.moe ? "qwen35moe" : "qwen35") + ", vocab " + std::to_string(vocab) +
           ", " + std::to_string(stored.size()) + " BF16 tensors, 4 layers + 1 MTP layer";
}

}  // namespace mkfixture
