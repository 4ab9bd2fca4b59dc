// qwen35 fixture files (qwen35_files.hpp): fixed tiny shapes (hidden 64, 4 attention heads of 32
// with 2 key/value heads, feed-forward 128; linear attention: 2 key heads and 4 value heads of 16,
// conv kernel 4) and deterministic BF16 content from SplitMix64 seeded per tensor name. The (1 + w)
// RMSNorm weights are stored around 0 as Qwen3.5 stores them; linear_attn.norm (a plain gated
// RMSNorm) around 1; A_log = log(uniform(1, 16)) as Qwen3.5 initialises it.
#include "qwen35_files.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "hf_files.hpp"
#include "mlx_files.hpp"
#include "model_plan.hpp"
#include "nvidia_fp4_files.hpp"
#include "prequant_files.hpp"
#include "qwen3vl_files.hpp"
#include "seeded_bf16.hpp"
#include "tokenizer_files.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kHidden = 64, kLayers = 4, kInterval = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 32,
                  kFf = 128, kKeyHeads = 2, kValueHeads = 4, kKernel = 4, kMtpLayers = 1,
                  kExperts = 4, kExpertsUsed = 2, kExpertFf = 32, kSharedFf = 96;
constexpr const char* kDefects[] = {"layer-types",  "no-a-log",  "heads",         "expert-missing",
                                    "narrow-heads", "gdn-nvfp4", "gdn-nvfp4-one", nullptr};

// Qwen3.5's tokenizer.json split regex (Qwen2's, with combining marks \p{M} in the letter runs).
constexpr const char* kQwen35SplitRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Every string equal to Qwen2's regex becomes Qwen3.5's.
void use_qwen35_regex(nlohmann::ordered_json& node) {
    if (node.is_string() && node.get<std::string>() == kQwenSplitRegex) node = kQwen35SplitRegex;
    if (node.is_structured())
        for (auto& child : node) use_qwen35_regex(child);
}

// The widths of the tiny fixture (hidden 64, the constants above), or of a wide one whose every
// matrix row is a multiple of 256 values (hidden a multiple of 256: head_dim hidden / 2, so the
// attention output's input 2 * hidden; linear-attention heads of hidden / 4, so out_proj's input
// hidden; feed-forward 2 * hidden, experts and shared expert hidden), so that the K quant types
// apply to every tensor instead of their fallbacks.
struct Widths {
    int64_t hidden = kHidden, head_dim = kHeadDim, ff = kFf, expert_ff = kExpertFf,
            shared_ff = kSharedFf;
};

Widths widths_for(int64_t hidden) {
    if (hidden == kHidden) return {};
    if (hidden <= 0 || hidden % 256 != 0)
        throw std::runtime_error(
            "--arch qwen35 / qwen35moe / qwen3next: --hidden 64 (the default) "
            "or a multiple of 256");
    return {hidden, hidden / 2, 2 * hidden, hidden, hidden};
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

nlohmann::ordered_json config_json(const Widths& wd, int64_t vocab, const std::string& defect,
                                   bool moe, int64_t lin_dim, bool next) {
    nlohmann::ordered_json c;
    c["architectures"] = {next  ? "Qwen3NextForCausalLM"
                          : moe ? "Qwen3_5MoeForCausalLM"
                                : "Qwen3_5ForCausalLM"};
    c["model_type"] = next ? "qwen3_next" : moe ? "qwen3_5_moe_text" : "qwen3_5_text";
    c["hidden_size"] = wd.hidden;
    if (next) {  // Qwen3-Next's config.json has both (decoder_sparse_step 1: MoE everywhere)
        c["intermediate_size"] = wd.ff;
        c["decoder_sparse_step"] = 1;
        c["mlp_only_layers"] = nlohmann::ordered_json::array();
        c["norm_topk_prob"] = true;
    }
    if (moe) {  // Qwen3.5 MoE's text config has no intermediate_size
        c["num_experts"] = kExperts;
        c["num_experts_per_tok"] = kExpertsUsed;
        c["moe_intermediate_size"] = wd.expert_ff;
        c["shared_expert_intermediate_size"] = wd.shared_ff;
    } else {
        c["intermediate_size"] = wd.ff;
    }
    c["num_hidden_layers"] = kLayers;
    c["num_attention_heads"] = kHeads;
    c["num_key_value_heads"] = kKvHeads;
    c["head_dim"] = wd.head_dim;
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
    if (!next || defect == "layer-types") c["layer_types"] = types;
    if (!next) c["mtp_num_hidden_layers"] = kMtpLayers;
    c["max_position_embeddings"] = 4096;
    c["rms_norm_eps"] = 1e-06;
    if (next) {  // Qwen3-Next's published config.json
        c["rope_theta"] = 10000000;
        c["partial_rotary_factor"] = 0.25;
        c["rope_scaling"] = nullptr;
    } else {
        c["rope_parameters"] = {{"rope_type", "default"},
                                {"rope_theta", 10000000},
                                {"partial_rotary_factor", 0.25},
                                {"mrope_section", {2, 1, 1}},
                                {"mrope_interleaved", true}};
    }
    c["tie_word_embeddings"] = false;
    c["vocab_size"] = vocab;
    c["hidden_act"] = "silu";
    c["attention_bias"] = false;
    c["torch_dtype"] = "bfloat16";
    return c;
}

// The MoE feed-forward of layer `p`: router, experts (fused as transformers saves them, or one
// tensor per expert and projection), shared expert and its gate.
void add_moe_ffn(std::vector<Tensor>& t, const Widths& wd, const std::string& p, bool fused,
                 bool drop_last_up) {
    const double w = 1.0 / std::sqrt(double(wd.hidden));
    const double w_down = 1.0 / std::sqrt(double(wd.expert_ff));
    // A decisive router (wide logits), so BF16 and F32 arithmetic pick the same experts.
    t.push_back({p + "mlp.gate.weight", {kExperts, wd.hidden}, 0, 1.0});
    if (fused) {
        t.push_back(
            {p + "mlp.experts.gate_up_proj", {kExperts, 2 * wd.expert_ff, wd.hidden}, 0, w});
        t.push_back({p + "mlp.experts.down_proj", {kExperts, wd.hidden, wd.expert_ff}, 0, w_down});
    } else {
        for (int64_t e = 0; e < kExperts; ++e) {
            const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
            t.push_back({x + "gate_proj.weight", {wd.expert_ff, wd.hidden}, 0, w});
            if (!(drop_last_up && e == kExperts - 1))
                t.push_back({x + "up_proj.weight", {wd.expert_ff, wd.hidden}, 0, w});
            t.push_back({x + "down_proj.weight", {wd.hidden, wd.expert_ff}, 0, w_down});
        }
    }
    t.push_back({p + "mlp.shared_expert.gate_proj.weight", {wd.shared_ff, wd.hidden}, 0, w});
    t.push_back({p + "mlp.shared_expert.up_proj.weight", {wd.shared_ff, wd.hidden}, 0, w});
    t.push_back({p + "mlp.shared_expert.down_proj.weight",
                 {wd.hidden, wd.shared_ff},
                 0,
                 1.0 / std::sqrt(double(wd.shared_ff))});
    t.push_back({p + "mlp.shared_expert_gate.weight", {1, wd.hidden}, 0, w});
}

// The decoder layer `p` ("model.layers.N." or "mtp.layers.K."): gated attention when `full`; a
// MoE feed-forward when `moe` (its experts fused when `fused`).
void add_layer(std::vector<Tensor>& t, const Widths& wd, const std::string& p, bool full,
               bool a_log, bool moe, bool fused, int64_t lin_dim, bool drop_last_up = false,
               bool next = false) {
    const double w = 1.0 / std::sqrt(double(wd.hidden));
    t.push_back({p + "input_layernorm.weight", {wd.hidden}, 0.0, 0.1});
    if (full) {
        t.push_back({p + "self_attn.q_proj.weight", {2 * kHeads * wd.head_dim, wd.hidden}, 0, w});
        t.push_back({p + "self_attn.k_proj.weight", {kKvHeads * wd.head_dim, wd.hidden}, 0, w});
        t.push_back({p + "self_attn.v_proj.weight", {kKvHeads * wd.head_dim, wd.hidden}, 0, w});
        t.push_back({p + "self_attn.o_proj.weight", {wd.hidden, kHeads * wd.head_dim}, 0, w});
        t.push_back({p + "self_attn.q_norm.weight", {wd.head_dim}, 0.0, 0.1});
        t.push_back({p + "self_attn.k_norm.weight", {wd.head_dim}, 0.0, 0.1});
    } else {
        const int64_t v = kValueHeads * lin_dim, conv = 2 * kKeyHeads * lin_dim + v;
        if (next) {  // per key head: q, k, then its value heads' v and z rows; then b and a
            t.push_back({p + "linear_attn.in_proj_qkvz.weight", {conv + v, wd.hidden}, 0, w});
            t.push_back({p + "linear_attn.in_proj_ba.weight", {2 * kValueHeads, wd.hidden}, 0, w});
        } else {
            t.push_back({p + "linear_attn.in_proj_qkv.weight", {conv, wd.hidden}, 0, w});
            t.push_back({p + "linear_attn.in_proj_z.weight", {v, wd.hidden}, 0, w});
            t.push_back({p + "linear_attn.in_proj_b.weight", {kValueHeads, wd.hidden}, 0, w});
            t.push_back({p + "linear_attn.in_proj_a.weight", {kValueHeads, wd.hidden}, 0, w});
        }
        t.push_back({p + "linear_attn.conv1d.weight", {conv, 1, kKernel}, 0, 0.5});
        t.push_back({p + "linear_attn.dt_bias", {kValueHeads}, 0.0, 0.5});
        if (a_log) t.push_back({p + "linear_attn.A_log", {kValueHeads}, 0, 0, true});
        t.push_back({p + "linear_attn.norm.weight", {lin_dim}, 1.0, 0.05});
        t.push_back({p + "linear_attn.out_proj.weight", {wd.hidden, v}, 0, w});
    }
    t.push_back({p + "post_attention_layernorm.weight", {wd.hidden}, 0.0, 0.1});
    if (moe) {
        add_moe_ffn(t, wd, p, fused, drop_last_up);
        return;
    }
    t.push_back({p + "mlp.gate_proj.weight", {wd.ff, wd.hidden}, 0, w});
    t.push_back({p + "mlp.up_proj.weight", {wd.ff, wd.hidden}, 0, w});
    t.push_back(
        {p + "mlp.down_proj.weight", {wd.hidden, wd.ff}, 0, 1.0 / std::sqrt(double(wd.ff))});
}

// The checkpoint as units for the quantized writers (mlx_files, prequant_files,
// nvidia_fp4_files).
// MLX: mlx-lm's Qwen3.5 checkpoint (mlx_lm.convert of a Qwen3_5(Moe)ForConditionalGeneration, its
// default 4 bits in groups of 64): the text model under "language_model." (qwen3_5.Model.sanitize),
// its sanitize applied: no "mtp.*", conv1d moved to [channels, kernel, 1], + 1 already added to
// input_layernorm, post_attention_layernorm, q_norm, k_norm and model.norm (so they sit around 1;
// linear_attn.norm is not shifted). Every Linear and the Embedding whose input width 64 divides is
// quantized (mlx-lm's quantize_model); the MoE routers mlp.gate and shared_expert_gate at 8 bits in
// groups of 64 (qwen3_5's quant_predicate, listed in `overrides`); a module of input width 32 or 96
// stays BF16 (the experts' and the shared expert's down_proj), the experts stacked (switch_mlp).
// Otherwise (GPTQ, compressed-tensors, NVFP4): the Hugging Face layout of the float fixture (MTP
// layer and head kept, per-expert experts, norms unshifted around 0) with every matrix a quantized
// unit but those each tool keeps float (below); the writers keep the embedding, lm_head (GPTQ /
// compressed-tensors) and the routers float by their own rules (qwen35moe's int4 routers are float
// units with the float fixture's wide logits). conv1d, dt_bias and A_log are float everywhere (no
// quantizer touches a Conv1d or a plain parameter).
ModelPlan quant_plan(int64_t vocab, bool moe, int64_t lin_dim, const std::string& format,
                     std::map<std::string, std::pair<int, int>>& overrides, bool next = false,
                     bool gdn_nvfp4 = false, bool multimodal = false) {
    const bool mlx = format == "mlx";
    // GPTQ / AWQ / compressed-tensors int4 (GPTQModel's Qwen3.5 uploads): in_proj_a / in_proj_b
    // and the MTP layer stay float.
    const bool int4 = format == "gptq" || format == "awq" || format == "compressed-tensors";
    const LayerQuant q{4, mlx ? 64 : int4 ? 32 : 16};
    const double shift = mlx ? 1.0 : 0.0;  // the (1 + w) norms' center
    ModelPlan plan;
    plan.dims = Dims{kHidden, kLayers, kHeads, kKvHeads, kHeadDim, kFf, vocab};
    plan.dims.embedding_rows = vocab;
    std::vector<PlanUnit>& u = plan.units;
    // The MTP layer stays float in the HF-layout quantized checkpoints (GPTQModel's uploads; for
    // NVFP4 also because llama.cpp v0.4.0 fails to load a file whose MTP layer has .scale
    // tensors unless it loads that layer: its scale pass skips the layer's absent weights).
    // Qwen3.5 MoE, each tool as its published uploads hold it (the dense model and Qwen3-Next
    // quantize every projection): GPTQ as Qwen/Qwen3.5-35B-A3B-GPTQ-Int4 (GPTQModel with
    // `dynamic` leaving every *attn*, *shared_expert* and *mtp* module float: the routed experts
    // only); compressed-tensors as llm-compressor's Qwen3.5-MoE W4A16 example (linear_attn, the
    // routers, embedding, head and MTP layer ignored: self_attn, the routed and shared experts);
    // AWQ as GPTQModel's qwen3_5_moe module tree (self_attn, in_proj_qkv / in_proj_z / out_proj
    // and both kinds of experts; in_proj_a / in_proj_b and the routers float).
    // Qwen3-Next NVFP4 as nvidia/Qwen3-Next-80B-A3B-Instruct-NVFP4 (ModelOpt) holds it: the routed
    // and shared experts and o_proj NVFP4; q_proj / k_proj / v_proj, the whole gated delta-net,
    // the head (and the routers, embedding, MTP layer) BF16. gdn_nvfp4: in_proj_qkvz, in_proj_ba
    // and out_proj NVFP4 too (ModelOpt's default of every Linear).
    const bool moe_gptq = moe && !next && format == "gptq";
    const bool moe_ct = moe && !next && format == "compressed-tensors";
    const bool next_nv = next && format == "modelopt-nvfp4";
    const auto kept_float = [moe_gptq, moe_ct, next_nv, gdn_nvfp4](const std::string& name) {
        if (next_nv && name == "lm_head.weight") return true;
        if (name.find(".layers.") == std::string::npos) return false;  // embedding, head
        if (next_nv)
            return (!gdn_nvfp4 && name.find(".linear_attn.") != std::string::npos) ||
                   name.ends_with("self_attn.q_proj.weight") ||
                   name.ends_with("self_attn.k_proj.weight") ||
                   name.ends_with("self_attn.v_proj.weight");
        return (moe_gptq && name.find(".mlp.experts.") == std::string::npos) ||
               (moe_ct && name.find(".linear_attn.") != std::string::npos);
    };
    const auto linear = [&u, q, mlx, int4, kept_float](const std::string& name, int64_t rows,
                                                       int64_t cols, int64_t experts = 0) {
        if ((int4 && (name.ends_with("in_proj_a.weight") || name.ends_with("in_proj_b.weight"))) ||
            (!mlx && name.starts_with("mtp.")) || kept_float(name)) {
            PlanUnit unit = vector_unit(name, rows * cols, 0.0, 1.0 / std::sqrt(double(cols)));
            unit.norm.dims = {rows, cols};
            u.push_back(unit);
            return;
        }
        PlanUnit unit = quant_unit(name, rows, cols, q);
        unit.quant.experts = experts;
        unit.quant.mlx_float = mlx && cols % q.group != 0;
        u.push_back(unit);
    };
    const auto layer = [&](const std::string& p, bool full) {
        u.push_back(vector_unit(p + "input_layernorm.weight", kHidden, shift, 0.1));
        if (full) {
            linear(p + "self_attn.q_proj.weight", 2 * kHeads * kHeadDim, kHidden);
            linear(p + "self_attn.k_proj.weight", kKvHeads * kHeadDim, kHidden);
            linear(p + "self_attn.v_proj.weight", kKvHeads * kHeadDim, kHidden);
            linear(p + "self_attn.o_proj.weight", kHidden, kHeads * kHeadDim);
            u.push_back(vector_unit(p + "self_attn.q_norm.weight", kHeadDim, shift, 0.1));
            u.push_back(vector_unit(p + "self_attn.k_norm.weight", kHeadDim, shift, 0.1));
        } else {
            const int64_t v = kValueHeads * lin_dim, conv = 2 * kKeyHeads * lin_dim + v;
            if (next) {  // mlx-lm's qwen3_next keeps the fused projections
                linear(p + "linear_attn.in_proj_qkvz.weight", conv + v, kHidden);
                linear(p + "linear_attn.in_proj_ba.weight", 2 * kValueHeads, kHidden);
            } else {
                linear(p + "linear_attn.in_proj_qkv.weight", conv, kHidden);
                linear(p + "linear_attn.in_proj_z.weight", v, kHidden);
                linear(p + "linear_attn.in_proj_b.weight", kValueHeads, kHidden);
                linear(p + "linear_attn.in_proj_a.weight", kValueHeads, kHidden);
            }
            PlanUnit conv1d = vector_unit(p + "linear_attn.conv1d.weight", conv * kKernel, 0, 0.5);
            conv1d.norm.dims = mlx ? std::vector<int64_t>{conv, kKernel, 1}
                                   : std::vector<int64_t>{conv, 1, kKernel};
            u.push_back(conv1d);
            u.push_back(vector_unit(p + "linear_attn.dt_bias", kValueHeads, 0.0, 0.5));
            // A_log = log(uniform(1, 16)) stands as uniform over [0.1, 2.7]
            u.push_back(vector_unit(p + "linear_attn.A_log", kValueHeads, 1.4, 1.3));
            u.push_back(vector_unit(p + "linear_attn.norm.weight", lin_dim, 1.0, 0.05));
            linear(p + "linear_attn.out_proj.weight", kHidden, v);
        }
        u.push_back(vector_unit(p + "post_attention_layernorm.weight", kHidden, shift, 0.1));
        if (!moe) {
            linear(p + "mlp.gate_proj.weight", kFf, kHidden);
            linear(p + "mlp.up_proj.weight", kFf, kHidden);
            linear(p + "mlp.down_proj.weight", kHidden, kFf);
            return;
        }
        for (const char* router : {"mlp.gate", "mlp.shared_expert_gate"}) {
            const int64_t rows = std::string(router) == "mlp.gate" ? kExperts : 1;
            if (int4 && !next) {
                // Float as every upload keeps them, and decisive as the float fixture's (wide
                // logits), so the F16 / BF16 router and its F32 twin pick the same experts.
                PlanUnit unit = vector_unit(p + router + ".weight", rows * kHidden, 0.0, 1.0);
                unit.norm.dims = {rows, kHidden};
                u.push_back(unit);
                continue;
            }
            u.push_back(quant_unit(p + router + ".weight",
                                   std::string(router) == "mlp.gate" ? kExperts : 1, kHidden,
                                   mlx ? LayerQuant{8, 64} : q));
            if (mlx) overrides[p + router] = {8, 64};
        }
        if (mlx) {
            linear(p + "mlp.switch_mlp.gate_proj.weight", kExperts * kExpertFf, kHidden, kExperts);
            linear(p + "mlp.switch_mlp.up_proj.weight", kExperts * kExpertFf, kHidden, kExperts);
            linear(p + "mlp.switch_mlp.down_proj.weight", kExperts * kHidden, kExpertFf, kExperts);
        } else {
            for (int64_t e = 0; e < kExperts; ++e) {
                const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
                linear(x + "gate_proj.weight", kExpertFf, kHidden);
                linear(x + "up_proj.weight", kExpertFf, kHidden);
                linear(x + "down_proj.weight", kHidden, kExpertFf);
            }
        }
        linear(p + "mlp.shared_expert.gate_proj.weight", kSharedFf, kHidden);
        linear(p + "mlp.shared_expert.up_proj.weight", kSharedFf, kHidden);
        linear(p + "mlp.shared_expert.down_proj.weight", kHidden, kSharedFf);
    };
    // mlx-lm's qwen3_5 keeps the multimodal checkpoint's "language_model."; qwen3_next is text
    // only.
    // multimodal: Qwen3_5MoeForConditionalGeneration's names (the text model under
    // "model.language_model.", the Qwen3.5 vision tower float under "model.visual.").
    const std::string m = mlx && !next ? "language_model.model."
                          : multimodal ? "model.language_model."
                                       : "model.";
    if (multimodal)
        for (const Qwen3vlTowerTensor& t : qwen3vl_tower_tensors(kHidden, 2, 0)) {
            int64_t length = 1;
            for (const int64_t d : t.shape) length *= d;
            PlanUnit unit = vector_unit(t.name, length, t.center, t.spread);
            if (t.shape.size() > 1) unit.norm.dims = t.shape;
            u.push_back(unit);
        }
    linear(m + "embed_tokens.weight", vocab, kHidden);
    for (int64_t i = 0; i < kLayers; ++i)
        layer(m + "layers." + std::to_string(i) + ".", (i + 1) % kInterval == 0);
    u.push_back(vector_unit(m + "norm.weight", kHidden, shift, 0.1));
    linear(mlx && !next ? "language_model.lm_head.weight" : "lm_head.weight", vocab, kHidden);
    if (mlx) return plan;  // mlx-lm's sanitize drops "mtp.*"
    linear("mtp.fc.weight", kHidden, 2 * kHidden);
    for (const char* norm : {"mtp.pre_fc_norm_embedding", "mtp.pre_fc_norm_hidden", "mtp.norm"})
        u.push_back(vector_unit(std::string(norm) + ".weight", kHidden, 0.0, 0.1));
    layer("mtp.layers.0.", true);
    return plan;
}

// quantization_config as the Qwen3.5 MoE uploads write it (quant_plan): GPTQModel's `dynamic`
// negative rules on Qwen/Qwen3.5-35B-A3B-GPTQ-Int4, llm-compressor's `ignore` (every float Linear
// module by name, the head included). The readers take what is quantized from the tensors.
void say_float_modules(const fs::path& out_dir, const std::string& format, const ModelPlan& plan) {
    if (format != "gptq" && format != "compressed-tensors") return;
    const fs::path path = out_dir / "config.json";
    nlohmann::ordered_json config;
    {
        std::ifstream in(path);
        config = nlohmann::ordered_json::parse(in);
    }
    nlohmann::ordered_json& q = config["quantization_config"];
    if (format == "gptq") {
        q["dynamic"] = {{"-:.*attn.*", nlohmann::ordered_json::object()},
                        {"-:.*shared_expert.*", nlohmann::ordered_json::object()},
                        {"-:.*mtp.*", nlohmann::ordered_json::object()},
                        {"-:.*visual.*", nlohmann::ordered_json::object()}};
    } else {
        nlohmann::ordered_json ignore = nlohmann::ordered_json::array();
        for (const PlanUnit& unit : plan.units) {
            const std::string& name = unit.quantized ? unit.quant.name : unit.norm.name;
            const bool matrix = unit.quantized ? true : unit.norm.dims.size() == 2;
            if (!matrix || name.find("embed_tokens") != std::string::npos ||
                !name.ends_with(".weight"))
                continue;
            const bool linear_float = !unit.quantized || name.ends_with("mlp.gate.weight") ||
                                      name.ends_with("shared_expert_gate.weight") ||
                                      name == "lm_head.weight";
            if (linear_float) ignore.push_back(name.substr(0, name.size() - 7));
        }
        q["ignore"] = ignore;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
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
    if (!options.next) {  // Qwen3.5's split regex in place of Qwen2's (Qwen3-Next keeps Qwen2's)
        std::ifstream in(out_dir / "tokenizer.json");
        nlohmann::ordered_json tokenizer = nlohmann::ordered_json::parse(in);
        use_qwen35_regex(tokenizer);
        write_text(out_dir / "tokenizer.json", tokenizer.dump(2));
    }
    const std::string& format = options.format;
    if (options.next && format != "float" && format != "mcq" && format != "mlx" &&
        format != "gptq" && format != "awq" && format != "compressed-tensors" &&
        format != "modelopt-nvfp4")
        throw std::runtime_error(
            "--arch qwen3next: --format float, mcq, mlx, gptq, awq, compressed-tensors or "
            "modelopt-nvfp4");
    const bool gdn_nvfp4 = options.defect == "gdn-nvfp4" || options.defect == "gdn-nvfp4-one";
    if (gdn_nvfp4 && !(options.next && format == "modelopt-nvfp4"))
        throw std::runtime_error(
            "--qwen35-defect gdn-nvfp4(-one): --arch qwen3next --format modelopt-nvfp4 only");
    const bool nvidia = format == "modelopt-nvfp4" || format == "ct-nvfp4";
    const bool int4 = format == "gptq" || format == "awq" || format == "compressed-tensors";
    if (format != "float" && format != "mcq" && format != "mlx" && !nvidia && !int4)
        throw std::runtime_error(
            "--arch qwen35 / qwen35moe: --format float, mcq, mlx, gptq, awq, "
            "compressed-tensors, modelopt-nvfp4 or ct-nvfp4");
    const bool mcq = format == "mcq", mlx = format == "mlx";
    if (options.vision && format != "float")
        throw std::runtime_error("--qwen35-vision: --format float only");
    const bool narrow = options.defect == "narrow-heads";
    const Widths wd = widths_for(options.hidden);
    if (wd.hidden != kHidden && (format != "float" || options.vision || !options.defect.empty()))
        throw std::runtime_error(
            "--hidden with --arch qwen35 / qwen35moe / qwen3next: --format "
            "float only, without --qwen35-vision or --qwen35-defect");
    // Value heads a whole number of quantization groups and GGUF blocks (mcq-v1 / Q4_1, GPTQ /
    // compressed-tensors / Q4_0: 32; MLX groups 64; NVFP4's GGUF blocks 64), or half a GGUF block
    // (narrow: 16; NVFP4 32; an MLX group of 64 is two Q4_1 blocks, so 32 would still move).
    const int64_t lin_dim = narrow                 ? (nvidia ? 32 : 16)
                            : mlx || nvidia        ? 64
                            : mcq || int4          ? 32
                            : wd.hidden != kHidden ? wd.hidden / 4
                                                   : 16;
    nlohmann::ordered_json config =
        config_json(wd, vocab, options.defect, options.moe, lin_dim, options.next);
    if (mlx && !options.next) {  // the multimodal config.json mlx_lm.convert copies (no vision)
        nlohmann::ordered_json top;
        top["architectures"] = {options.moe ? "Qwen3_5MoeForConditionalGeneration"
                                            : "Qwen3_5ForConditionalGeneration"};
        top["model_type"] = options.moe ? "qwen3_5_moe" : "qwen3_5";
        top["tie_word_embeddings"] = false;
        config.erase("architectures");
        top["text_config"] = config;
        config = top;
    }
    // Qwen/Qwen3.5-35B-A3B-GPTQ-Int4 is the multimodal model, its vision tower BF16 (`dynamic`).
    const bool multimodal = options.vision || (options.moe && !options.next && format == "gptq");
    if (multimodal) {  // Qwen/Qwen3.5-*'s multimodal config.json
        nlohmann::ordered_json top;
        top["architectures"] = {options.moe ? "Qwen3_5MoeForConditionalGeneration"
                                            : "Qwen3_5ForConditionalGeneration"};
        top["image_token_id"] = 248056;
        top["model_type"] = options.moe ? "qwen3_5_moe" : "qwen3_5";
        config.erase("architectures");
        top["text_config"] = config;
        top["tie_word_embeddings"] = false;
        top["video_token_id"] = 248057;
        top["vision_config"] = qwen35_vision_config(wd.hidden);
        top["vision_end_token_id"] = 248054;
        top["vision_start_token_id"] = 248053;
        config = top;
        write_qwen3vl_preprocessor(out_dir, 2);
    }
    write_text(out_dir / "config.json", config.dump(2) + "\n");
    if (int4 || nvidia) {
        std::map<std::string, std::pair<int, int>> unused;
        ModelPlan plan = quant_plan(vocab, options.moe, lin_dim, format, unused, options.next,
                                    gdn_nvfp4, multimodal);
        if (int4) {  // GPTQModel's defaults for these uploads: 4 bits, groups of 32, symmetric
            PrequantOptions pq;  // (AWQ: asymmetric, its only kind)
            pq.format = format;
            pq.sym = format != "awq";
            pq.scale_dtype = format == "compressed-tensors" ? "bf16" : "f16";
            check_prequant_options(pq, &plan);
            add_prequant_quantization(out_dir, pq);
            if (options.moe && !options.next) say_float_modules(out_dir, format, plan);
            write_prequant_model_files(out_dir, plan, 1, options.seed, pq);
        } else {
            NvidiaFp4Options nv;
            nv.format = format;
            if (options.defect == "gdn-nvfp4-one") nv.scale_one_part = ".linear_attn.";
            add_nvidia_fp4_quantization(out_dir, nv);
            write_nvidia_fp4_model_files(out_dir, plan, 1, options.seed, nv);
        }
        return std::string(options.next  ? "qwen3next"
                           : options.moe ? "qwen35moe"
                                         : "qwen35") +
               ", " + format + ", vocab " + std::to_string(vocab) + ", " +
               std::to_string(plan.units.size()) + " tensors, 4 layers + 1 MTP layer";
    }
    if (mlx) {
        MlxOptions mlx_options;
        ModelPlan plan =
            quant_plan(vocab, options.moe, lin_dim, "mlx", mlx_options.overrides, options.next);
        add_mlx_quantization(out_dir, mlx_options);
        write_mlx_model_files(out_dir, plan, 1, options.seed, mlx_options);
        return std::string(options.next  ? "qwen3next"
                           : options.moe ? "qwen35moe"
                                         : "qwen35") +
               ", mlx, vocab " + std::to_string(vocab) + ", " + std::to_string(plan.units.size()) +
               " tensors, 4 layers (mlx-lm drops the MTP layer)";
    }

    std::vector<Tensor> tensors;
    const std::string m = options.vision ? "model.language_model." : "model.";
    tensors.push_back({m + "embed_tokens.weight", {vocab, wd.hidden}, 0, 0.5});
    for (int64_t layer = 0; layer < kLayers; ++layer)
        add_layer(tensors, wd, m + "layers." + std::to_string(layer) + ".",
                  (layer + 1) % kInterval == 0, !(options.defect == "no-a-log" && layer == 0),
                  options.moe, !mcq && !options.next, lin_dim, false, options.next);
    tensors.push_back({m + "norm.weight", {wd.hidden}, 0.0, 0.1});
    if (options.vision)
        for (const Qwen3vlTowerTensor& t : qwen3vl_tower_tensors(wd.hidden, 2, 0))
            tensors.push_back({t.name, t.shape, t.center, t.spread});
    tensors.push_back(
        {"lm_head.weight", {vocab, wd.hidden}, 0, 1.0 / std::sqrt(double(wd.hidden))});
    tensors.push_back(
        {"mtp.fc.weight", {wd.hidden, 2 * wd.hidden}, 0, 1.0 / std::sqrt(2.0 * wd.hidden)});
    tensors.push_back({"mtp.pre_fc_norm_embedding.weight", {wd.hidden}, 0.0, 0.1});
    tensors.push_back({"mtp.pre_fc_norm_hidden.weight", {wd.hidden}, 0.0, 0.1});
    tensors.push_back({"mtp.norm.weight", {wd.hidden}, 0.0, 0.1});
    add_layer(tensors, wd, "mtp.layers.0.", true, true, options.moe, false, lin_dim,
              options.defect == "expert-missing", options.next);
    if (mcq) {  // every matrix but the routers mcq-v1 4-bit / 32; the rest F32 alike
        ModelPlan plan;
        plan.dims = Dims{wd.hidden, kLayers, kHeads, kKvHeads, wd.head_dim, wd.ff, vocab};
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
        return std::string(options.next  ? "qwen3next"
                           : options.moe ? "qwen35moe"
                                         : "qwen35") +
               ", mcq, vocab " + std::to_string(vocab) + ", " + std::to_string(plan.units.size()) +
               " tensors, 4 layers + 1 MTP layer";
    }

    std::vector<StTensor> stored;
    for (const Tensor& t : tensors)
        stored.push_back(seeded_bf16(t.name, t.shape, options.seed, [t](SplitMix64& rng) {
            return t.log_uniform ? std::log(rng.uniform(1.0, 16.0))
                                 : t.center + t.spread * rng.uniform(-1.0, 1.0);
        }));
    write_safetensors(out_dir / "model.safetensors", stored, {{"format", "pt"}});
    return std::string(options.next  ? "qwen3next"
                       : options.moe ? "qwen35moe"
                                     : "qwen35") +
           ", vocab " + std::to_string(vocab) + ", " + std::to_string(stored.size()) +
           " BF16 tensors, 4 layers + 1 MTP layer";
}

}  // namespace mkfixture
