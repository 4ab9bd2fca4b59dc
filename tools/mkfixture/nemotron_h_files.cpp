// nemotron_h fixture files (nemotron_h_files.hpp): fixed tiny shapes and deterministic BF16
// content from SplitMix64 seeded per tensor name. The RMSNorm weights are stored around 1 (a plain
// RMSNorm), A_log = log(uniform(1, 16)) and D around 1 as Mamba2 initialises them, dt_bias around
// 0.
#include "nemotron_h_files.hpp"

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <vector>

#include "hf_files.hpp"
#include "mlx_files.hpp"
#include "model_plan.hpp"
#include "nvidia_fp4_files.hpp"
#include "prequant_files.hpp"
#include "seeded_bf16.hpp"
#include "tokenizer_files.hpp"

namespace mkfixture {
// Named, not anonymous: the build compiles the fixture writers in batches of one translation unit.
namespace nemotron_h_fixture {

namespace fs = std::filesystem;

constexpr int64_t kHidden = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 32, kFf = 128, kMambaHeads = 8,
                  kMambaHeadDim = 16, kGroups = 2, kState = 16, kKernel = 4;
constexpr const char* kPattern = "M-M*-M";
// nemotron_h_moe: 'E' layers of 4 routed experts of 64 (2 used) and a shared expert of 64.
constexpr const char* kMoePattern = "MEM*EM";
constexpr int64_t kExperts = 4, kExpertsUsed = 2, kExpertFf = 64, kSharedFf = 64;
constexpr int64_t kLatent = 32;  // --nemotron-h-latent: moe_latent_size

struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    double center = 0, spread = 1;
    bool log_uniform = false;  // A_log: log(uniform(1, 16))
    // MLX: mlx-lm's sanitize stacks the experts' up_proj / down_proj into switch_mlp.fc1 / fc2
    // [experts, rows, cols]; the count here (0: an ordinary tensor).
    int64_t experts = 0;
};

// Rewrites `path` without the tensor `dropped` (the other tensors' bytes and the metadata kept).
void drop_tensor(const fs::path& path, const std::string& dropped) {
    std::ifstream in(path, std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw std::runtime_error(path.string() + ": cannot read");
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | uint8_t(raw[size_t(i)]);
    const nlohmann::ordered_json header =
        nlohmann::ordered_json::parse(raw.substr(8, size_t(header_len)));
    const size_t base = 8 + size_t(header_len);
    std::vector<StTensor> kept;
    std::vector<std::pair<std::string, std::string>> metadata;
    bool found = false;
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            for (const auto& [key, value] : entry.items())
                metadata.emplace_back(key, value.get<std::string>());
            continue;
        }
        if (name == dropped) {
            found = true;
            continue;
        }
        const uint64_t begin = entry["data_offsets"][0], end = entry["data_offsets"][1];
        const std::string bytes = raw.substr(base + begin, end - begin);
        kept.push_back(
            {name, entry["dtype"].get<std::string>(), entry["shape"].get<std::vector<int64_t>>(),
             end - begin,
             [bytes](std::ostream& s) { s.write(bytes.data(), std::streamsize(bytes.size())); }});
    }
    if (!found) throw std::runtime_error(path.string() + ": no tensor " + dropped + " to drop");
    write_safetensors(path, kept, metadata);
}

nlohmann::ordered_json config_json(int64_t vocab, const std::string& defect, bool moe, bool latent,
                                   bool mtp) {
    const std::string pattern = moe ? kMoePattern : kPattern;
    nlohmann::ordered_json c;
    c["architectures"] = {"NemotronHForCausalLM"};
    c["model_type"] = "nemotron_h";
    c["vocab_size"] = vocab;
    c["tie_word_embeddings"] = false;
    c["hidden_size"] = kHidden;
    c["intermediate_size"] = kFf;
    c["num_hidden_layers"] = int64_t(pattern.size());
    c["hybrid_override_pattern"] =
        defect == "pattern-length" ? pattern.substr(0, pattern.size() - 1) : pattern;
    c["num_attention_heads"] = kHeads;
    c["head_dim"] = kHeadDim;
    c["num_key_value_heads"] = kKvHeads;
    c["mlp_hidden_act"] = "relu2";
    c["attention_bias"] = false;
    c["mlp_bias"] = false;
    c["use_bias"] = false;
    c["initializer_range"] = 0.02;
    c["layer_norm_epsilon"] = 1e-05;
    // The RMSNorm epsilon as Nemotron-H-8B's config.json spells it; Nemotron 3 Nano's has norm_eps.
    c[moe ? "norm_eps" : "rms_norm_eps"] = 1e-05;
    c["residual_in_fp32"] = false;
    c["use_cache"] = true;
    c["num_logits_to_keep"] = 1;
    c["pad_token_id"] = 0;
    c["bos_token_id"] = 1;
    c["eos_token_id"] = 2;
    c["sliding_window"] = nullptr;
    c["max_position_embeddings"] = 4096;
    c["attention_dropout"] = 0.0;
    c["hidden_dropout"] = 0.0;
    c["use_mamba_kernels"] = true;
    c["ssm_state_size"] = kState;
    c["mamba_num_heads"] = kMambaHeads;
    c["n_groups"] = kGroups;
    c["mamba_head_dim"] = kMambaHeadDim;
    c["conv_kernel"] = kKernel;
    c["expand"] = 2;
    c["mamba_hidden_act"] = "silu";
    c["time_step_min"] = 0.001;
    c["time_step_max"] = 0.1;
    c["time_step_floor"] = 0.0001;
    c["use_conv_bias"] = true;
    c["mamba_proj_bias"] = false;
    c["chunk_size"] = 128;
    c["rescale_prenorm_residual"] = true;
    if (moe) {  // NemotronHConfig's MoE fields (Nemotron 3 Nano)
        c["n_routed_experts"] = kExperts;
        c["n_shared_experts"] = 1;
        c["moe_intermediate_size"] = kExpertFf;
        c["moe_shared_expert_intermediate_size"] = kSharedFf;
        c["num_experts_per_tok"] = kExpertsUsed;
        c["routed_scaling_factor"] = 2.5;
        c["n_group"] = 1;
        c["topk_group"] = 1;
        c["norm_topk_prob"] = true;
        if (latent || defect == "latent-missing") c["moe_latent_size"] = kLatent;
        if (mtp || defect == "mtp-partial") {  // NemotronHConfig's MTP fields, as Nemotron 3
                                               // Super's config.json has them
            c["num_nextn_predict_layers"] = 1;
            c["mtp_hybrid_override_pattern"] = "*E";
        }
    }
    c["torch_dtype"] = "bfloat16";
    return c;
}

std::string write(const fs::path& out_dir, const NemotronHOptions& options) {
    const std::string& format = options.format;
    const bool mlx = format == "mlx";
    const bool int4 = format == "gptq" || format == "awq" || format == "compressed-tensors";
    if (format != "float" && format != "mcq" && format != "modelopt-nvfp4" && !mlx && !int4)
        throw std::runtime_error(
            "--arch nemotron_h: --format float, mcq, modelopt-nvfp4, mlx, gptq, awq or "
            "compressed-tensors");
    if ((options.latent || options.mtp) && !options.moe)
        throw std::runtime_error(
            "--nemotron-h-latent / --nemotron-h-mtp need --arch nemotron_h_moe");
    if (!options.defect.empty() && options.defect != "pattern-length" &&
        options.defect != "latent-missing" && options.defect != "mtp-partial" &&
        options.defect != "mtp-no-count" && options.defect != "mlx-missing-scales" &&
        options.defect != "gptq-actorder")
        throw std::runtime_error("--nemotron-h-defect: unknown '" + options.defect + "'");
    if (options.defect == "mlx-missing-scales" && !(mlx && options.moe))
        throw std::runtime_error(
            "--nemotron-h-defect mlx-missing-scales needs --arch nemotron_h_moe --format mlx");
    if (options.defect == "gptq-actorder" && format != "gptq")
        throw std::runtime_error("--nemotron-h-defect gptq-actorder needs --format gptq");
    TokenizerOptions tok;
    tok.kind = "small";
    // vocab_size a multiple of 8, as Nemotron's (131072): the tokenizer's ids and "[PAD<id>]"
    // after.
    const int64_t vocab = (write_tokenizer_files(out_dir, tok) + 7) / 8 * 8;
    {
        std::ofstream out(out_dir / "config.json", std::ios::binary);
        out << config_json(vocab, options.defect, options.moe, options.latent, options.mtp).dump(2)
            << "\n";
        if (!out) throw std::runtime_error((out_dir / "config.json").string() + ": cannot write");
    }
    const double w = 1.0 / std::sqrt(double(kHidden));
    const int64_t inner = kMambaHeads * kMambaHeadDim, channels = inner + 2 * kGroups * kState;
    std::vector<Tensor> t;
    t.push_back({"backbone.embeddings.weight", {vocab, kHidden}, 0, 0.5});
    const std::string pattern = options.moe ? kMoePattern : kPattern;
    // One layer's mixer of kind `kind` under `m` ("backbone.layers.N.mixer."); `layer`: its index
    // (the MTP block's sub-layers: none).
    const bool latent = options.latent || options.defect == "latent-missing";
    const auto mixer = [&](const std::string& m, char kind, std::optional<size_t> layer) {
        if (kind == 'M') {
            t.push_back({m + "in_proj.weight", {inner + channels + kMambaHeads, kHidden}, 0, w});
            // mlx-lm's sanitize moves conv1d's kernel axis: [channels, kernel, 1].
            t.push_back({m + "conv1d.weight",
                         mlx ? std::vector<int64_t>{channels, kKernel, 1}
                             : std::vector<int64_t>{channels, 1, kKernel},
                         0, 0.5});
            t.push_back({m + "conv1d.bias", {channels}, 0, 0.1});
            t.push_back({m + "dt_bias", {kMambaHeads}, 0.0, 0.5});
            t.push_back({m + "A_log", {kMambaHeads}, 0, 0, true});
            t.push_back({m + "D", {kMambaHeads}, 1.0, 0.5});
            t.push_back({m + "norm.weight", {inner}, 1.0, 0.05});
            t.push_back(
                {m + "out_proj.weight", {kHidden, inner}, 0, 1.0 / std::sqrt(double(inner))});
        } else if (kind == '*') {
            t.push_back({m + "q_proj.weight", {kHeads * kHeadDim, kHidden}, 0, w});
            t.push_back({m + "k_proj.weight", {kKvHeads * kHeadDim, kHidden}, 0, w});
            t.push_back({m + "v_proj.weight", {kKvHeads * kHeadDim, kHidden}, 0, w});
            t.push_back({m + "o_proj.weight",
                         {kHidden, kHeads * kHeadDim},
                         0,
                         1.0 / std::sqrt(double(kHeads * kHeadDim))});
        } else if (kind == 'E') {
            // A decisive router (wide logits), so BF16 and F32 arithmetic pick the same experts.
            t.push_back({m + "gate.weight", {kExperts, kHidden}, 0, 1.0});
            t.push_back({m + "gate.e_score_correction_bias", {kExperts}, 0, 0.1});
            // LatentMoE: the experts work at the latent width between the two projections.
            const int64_t width = latent ? kLatent : kHidden;
            if (mlx) {  // sanitize's stacks: up_proj as switch_mlp.fc1, down_proj as fc2
                t.push_back({m + "switch_mlp.fc1.weight",
                             {kExperts, kExpertFf, width},
                             0,
                             1.0 / std::sqrt(double(width)),
                             false,
                             kExperts});
                t.push_back({m + "switch_mlp.fc2.weight",
                             {kExperts, width, kExpertFf},
                             0,
                             1.0 / std::sqrt(double(kExpertFf)),
                             false,
                             kExperts});
            }
            for (int64_t e = 0; e < kExperts && !mlx; ++e) {
                const std::string x = m + "experts." + std::to_string(e) + ".";
                t.push_back(
                    {x + "up_proj.weight", {kExpertFf, width}, 0, 1.0 / std::sqrt(double(width))});
                t.push_back({x + "down_proj.weight",
                             {width, kExpertFf},
                             0,
                             1.0 / std::sqrt(double(kExpertFf))});
            }
            t.push_back({m + "shared_experts.up_proj.weight", {kSharedFf, kHidden}, 0, w});
            t.push_back({m + "shared_experts.down_proj.weight",
                         {kHidden, kSharedFf},
                         0,
                         1.0 / std::sqrt(double(kSharedFf))});
            if (latent) {
                t.push_back({m + "fc1_latent_proj.weight", {kLatent, kHidden}, 0, w});
                if (options.defect != "latent-missing" || layer != 1)
                    t.push_back({m + "fc2_latent_proj.weight",
                                 {kHidden, kLatent},
                                 0,
                                 1.0 / std::sqrt(double(kLatent))});
            }
        } else {
            t.push_back({m + "up_proj.weight", {kFf, kHidden}, 0, w});
            t.push_back({m + "down_proj.weight", {kHidden, kFf}, 0, 1.0 / std::sqrt(double(kFf))});
        }
    };
    for (size_t layer = 0; layer < pattern.size(); ++layer) {
        const std::string p = "backbone.layers." + std::to_string(layer) + ".";
        t.push_back({p + "norm.weight", {kHidden}, 1.0, 0.1});
        mixer(p + "mixer.", pattern[layer], layer);
    }
    // Nemotron 3 Super's MTP layers (mtp_hybrid_override_pattern "*E"): mtp.layers.0 the NextN
    // input fusion (enorm, hnorm, eh_proj [hidden, 2 * hidden]) and an attention sub-layer,
    // mtp.layers.1 a MoE sub-layer and the head's final_layernorm; each with its own norm.
    // mlx-lm's sanitize drops every mtp.* tensor.
    if ((options.mtp || options.defect == "mtp-partial" || options.defect == "mtp-no-count") &&
        !mlx) {
        t.push_back({"mtp.layers.0.enorm.weight", {kHidden}, 1.0, 0.1});
        t.push_back({"mtp.layers.0.hnorm.weight", {kHidden}, 1.0, 0.1});
        t.push_back({"mtp.layers.0.eh_proj.weight",
                     {kHidden, 2 * kHidden},
                     0,
                     1.0 / std::sqrt(double(2 * kHidden))});
        t.push_back({"mtp.layers.0.norm.weight", {kHidden}, 1.0, 0.1});
        mixer("mtp.layers.0.mixer.", '*', std::nullopt);
        t.push_back({"mtp.layers.1.norm.weight", {kHidden}, 1.0, 0.1});
        mixer("mtp.layers.1.mixer.", 'E', std::nullopt);
        if (options.defect != "mtp-partial")
            t.push_back({"mtp.layers.1.final_layernorm.weight", {kHidden}, 1.0, 0.1});
    }
    t.push_back({"backbone.norm_f.weight", {kHidden}, 1.0, 0.1});
    t.push_back({"lm_head.weight", {vocab, kHidden}, 0, w});

    const bool nvfp4 = format == "modelopt-nvfp4";
    // mcq: every matrix mcq-v1 4-bit / 32; ModelOpt NVFP4 (the embedding and routers BF16).
    // MLX as mlx-lm's quantize leaves it: every Linear and the Embedding (switch_mlp's experts
    // too) 4-bit / 64 whose input width 64 divides; the router (MoEGate's plain weight), conv1d,
    // the norms, dt_bias, A_log and D float (BF16).
    // GPTQ / AWQ / compressed-tensors int4 (GPTQModel / AutoAWQ / llm-compressor W4A16 uploads
    // of Nemotron 3 Nano: in_proj, out_proj, attention, experts and shared experts 4-bit, the
    // router FP32/BF16, embeddings and lm_head float): every *_proj Linear 4-bit in groups of 32
    // (GPTQ and compressed-tensors symmetric, AWQ asymmetric); the writer keeps embeddings and
    // lm_head float, the routers are float units.
    if (format == "mcq" || nvfp4 || mlx || int4) {
        ModelPlan plan;
        plan.dims = Dims{kHidden, int64_t(pattern.size()), kHeads, kKvHeads, kHeadDim, kFf, vocab};
        plan.dims.embedding_rows = vocab;
        const LayerQuant q{4, mlx ? 64 : 32};
        for (const Tensor& x : t) {
            // The routers stay float (a 4-bit router's narrow logits let llama.cpp's Q8_1
            // activation rounding pick other experts than the F32 twin).
            if ((x.shape.size() == 2 || x.experts != 0) && !x.name.ends_with("mixer.gate.weight")) {
                const int64_t rows = x.experts != 0 ? x.shape[0] * x.shape[1] : x.shape[0];
                PlanUnit unit = quant_unit(x.name, rows, x.shape.back(), q);
                unit.quant.experts = x.experts;
                unit.quant.mlx_float = mlx && x.shape.back() % q.group != 0;
                plan.units.push_back(unit);
                continue;
            }
            int64_t values = 1;
            for (const int64_t d : x.shape) values *= d;
            PlanUnit unit;  // A_log = log(uniform(1, 16)) stands as uniform over [0.1, 2.7]
            unit.norm = NormTensor{x.name, values, x.log_uniform ? 1.4 : x.center,
                                   x.log_uniform ? 1.3 : x.spread};
            if (x.shape.size() > 1) unit.norm.dims = x.shape;
            plan.units.push_back(unit);
        }
        if (nvfp4) {  // the embedding and routers stay BF16, as ModelOpt leaves them
            NvidiaFp4Options nv;
            nv.format = format;
            add_nvidia_fp4_quantization(out_dir, nv);
            write_nvidia_fp4_model_files(out_dir, plan, 1, options.seed, nv);
        } else if (mlx) {
            const MlxOptions mo;
            add_mlx_quantization(out_dir, mo);
            write_mlx_model_files(out_dir, plan, 1, options.seed, mo);
            if (options.defect == "mlx-missing-scales")
                drop_tensor(out_dir / "model.safetensors",
                            "backbone.layers.1.mixer.switch_mlp.fc1.scales");
        } else if (int4) {  // GPTQModel's default: symmetric; AWQ asymmetric (its only kind)
            PrequantOptions pq;
            pq.format = format;
            pq.sym = format != "awq";
            pq.scale_dtype = format == "compressed-tensors" ? "bf16" : "f16";
            if (options.defect == "gptq-actorder") pq.desc_act = "actorder";
            write_prequant_fixture(out_dir, plan, options.seed, pq);
        } else {
            write_model_files(out_dir, plan, 1, options.seed);
        }
        return std::string(options.moe ? "nemotron_h_moe" : "nemotron_h") + ", " + format +
               ", vocab " + std::to_string(vocab) + ", " + std::to_string(plan.units.size()) +
               " tensors, 6 layers " + pattern;
    }
    std::vector<StTensor> stored;
    for (const Tensor& x : t)
        stored.push_back(seeded_bf16(x.name, x.shape, options.seed, [x](SplitMix64& rng) {
            return x.log_uniform ? std::log(rng.uniform(1.0, 16.0))
                                 : x.center + x.spread * rng.uniform(-1.0, 1.0);
        }));
    write_safetensors(out_dir / "model.safetensors", stored, {{"format", "pt"}});
    return std::string(options.moe ? "nemotron_h_moe" : "nemotron_h") + ", vocab " +
           std::to_string(vocab) + ", " + std::to_string(stored.size()) +
           " BF16 tensors, 6 layers " + pattern;
}

}  // namespace nemotron_h_fixture

std::string write_nemotron_h_fixture(const std::filesystem::path& out_dir,
                                     const NemotronHOptions& options) {
    return nemotron_h_fixture::write(out_dir, options);
}

}  // namespace mkfixture
