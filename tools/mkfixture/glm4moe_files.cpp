// GLM-4.5 MoE fixture files (glm4moe_files.hpp): fixed tiny shapes as one tensor plan; the
// content from the float, mcq-v1 and MLX writers every other fixture uses.
#include "glm4moe_files.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "float_files.hpp"
#include "hf_files.hpp"
#include "json_files.hpp"
#include "mlx_files.hpp"
#include "model_plan.hpp"
#include "nvidia_fp4_files.hpp"
#include "prequant_files.hpp"
#include "tokenizer_files.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr int64_t kHidden = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 32, kFf = 128, kLayers = 2,
                  kDenseLayers = 1, kMtpLayers = 1, kExperts = 4, kExpertsUsed = 2, kMoeFf = 64,
                  kShared = 1;
// GLM-4.5's tokenizer.json Split regex (Llama 3's; llama.cpp's converter names it glm4 by hash).
constexpr const char* kGlmSplitRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGlmSpecials[] = {"[gMASK]", "<sop>", "<|user|>", "<|observation|>"};

// Every string equal to Qwen's regex becomes GLM's.
void use_glm_regex(ojson& node) {
    if (node.is_string() && node.get<std::string>() == kQwenSplitRegex) node = kGlmSplitRegex;
    if (node.is_structured())
        for (auto& child : node) use_glm_regex(child);
}

// GLM-4.5-Air's config.json fields at the fixture's sizes (GLM-4.5's use_qk_norm).
ojson config_json(int64_t vocab, int64_t endoftext, int64_t user, int64_t observation) {
    return ojson{{"architectures", {"Glm4MoeForCausalLM"}},
                 {"attention_bias", true},
                 {"attention_dropout", 0.0},
                 {"eos_token_id", {endoftext, user, observation}},
                 {"first_k_dense_replace", kDenseLayers},
                 {"head_dim", kHeadDim},
                 {"hidden_act", "silu"},
                 {"hidden_size", kHidden},
                 {"initializer_range", 0.02},
                 {"intermediate_size", kFf},
                 {"max_position_embeddings", 131072},
                 {"model_type", "glm4_moe"},
                 {"moe_intermediate_size", kMoeFf},
                 {"n_group", 1},
                 {"n_routed_experts", kExperts},
                 {"n_shared_experts", kShared},
                 {"norm_topk_prob", true},
                 {"num_attention_heads", kHeads},
                 {"num_experts_per_tok", kExpertsUsed},
                 {"num_hidden_layers", kLayers},
                 {"num_key_value_heads", kKvHeads},
                 {"num_nextn_predict_layers", kMtpLayers},
                 {"pad_token_id", endoftext},
                 {"partial_rotary_factor", 0.5},
                 {"rms_norm_eps", 1e-05},
                 {"rope_scaling", nullptr},
                 {"rope_theta", 1000000},
                 {"routed_scaling_factor", 2.5},
                 {"tie_word_embeddings", false},
                 {"topk_group", 1},
                 {"torch_dtype", "bfloat16"},
                 {"use_cache", true},
                 {"use_qk_norm", true},
                 {"vocab_size", vocab}};
}

// The checkpoint's tensors in transformers' order. mcq: layer 0 and the tables at 4 bits in groups
// of 64, later layers at 3 bits in groups of 32, the router at 8 bits; MLX: mlx-lm's 4 bits / 64
// everywhere, the router (MoEGate's plain weight, no Linear) float, the experts stacked.
// GPTQ / AWQ (GPTQModel's glm4_moe module tree, as QuantTrio's GLM-4.5-Air / GLM-4.6 uploads):
// every projection 4 bits in groups of 32, the MTP layer's too; the writers keep the embedding,
// lm_head and the router float. ModelOpt NVFP4 (its default of every Linear): every projection
// NVFP4 in groups of 16, lm_head and the whole MTP layer BF16.
ModelPlan glm4moe_plan(const Glm4MoeOptions& o, int64_t vocab) {
    const bool mlx = o.format == "mlx";
    const bool int4 = o.format == "gptq" || o.format == "awq";
    const bool nvfp4 = o.format == "modelopt-nvfp4" || o.format == "ct-nvfp4";
    const bool mtp = !o.trunk_only && !mlx;  // mlx-lm's sanitize drops the MTP layer
    const LayerQuant wide{4, 64};
    ModelPlan plan;
    Dims& d = plan.dims;
    d = Dims{kHidden, kLayers, kHeads, kKvHeads, kHeadDim, kFf, vocab};
    d.experts = kExperts, d.experts_used = kExpertsUsed, d.moe_ffn = kMoeFf;
    d.embedding_rows = vocab;
    std::vector<PlanUnit>& u = plan.units;
    u.push_back(quant_unit("model.embed_tokens.weight", vocab, kHidden, wide));
    const int64_t q_width = kHeads * kHeadDim, kv_width = kKvHeads * kHeadDim;
    const int64_t shared = kMoeFf * kShared;
    for (int64_t i = 0; i < kLayers + (mtp ? kMtpLayers : 0); ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        const LayerQuant q = int4            ? LayerQuant{4, 32}
                             : nvfp4         ? LayerQuant{4, 16}
                             : mlx || i == 0 ? wide
                                             : LayerQuant{3, 32};
        u.push_back(vector_unit(p + "input_layernorm.weight", kHidden, 1.0, 0.05));
        u.push_back(quant_unit(p + "self_attn.q_proj.weight", q_width, kHidden, q));
        u.push_back(vector_unit(p + "self_attn.q_proj.bias", q_width, 0.0, 0.1));
        u.push_back(quant_unit(p + "self_attn.k_proj.weight", kv_width, kHidden, q));
        u.push_back(vector_unit(p + "self_attn.k_proj.bias", kv_width, 0.0, 0.1));
        u.push_back(quant_unit(p + "self_attn.v_proj.weight", kv_width, kHidden, q));
        u.push_back(vector_unit(p + "self_attn.v_proj.bias", kv_width, 0.0, 0.1));
        u.push_back(quant_unit(p + "self_attn.o_proj.weight", kHidden, q_width, q));
        u.push_back(vector_unit(p + "self_attn.q_norm.weight", kHeadDim, 1.0, 0.05));
        u.push_back(vector_unit(p + "self_attn.k_norm.weight", kHeadDim, 1.0, 0.05));
        u.push_back(vector_unit(p + "post_attention_layernorm.weight", kHidden, 1.0, 0.05));
        if (i < kDenseLayers) {
            u.push_back(quant_unit(p + "mlp.gate_proj.weight", kFf, kHidden, q));
            u.push_back(quant_unit(p + "mlp.up_proj.weight", kFf, kHidden, q));
            u.push_back(quant_unit(p + "mlp.down_proj.weight", kHidden, kFf, q));
            continue;
        }
        PlanUnit router = quant_unit(p + "mlp.gate.weight", kExperts, kHidden, {8, 64});
        router.quant.mlx_float = mlx;
        u.push_back(router);
        u.push_back(vector_unit(p + "mlp.gate.e_score_correction_bias", kExperts, 0.0, 0.5));
        const std::pair<const char*, bool> projections[] = {
            {"gate_proj", false}, {"up_proj", false}, {"down_proj", true}};
        if (mlx) {
            for (const auto& [proj, down] : projections) {
                PlanUnit unit =
                    quant_unit(p + "mlp.switch_mlp." + proj + ".weight",
                               kExperts * (down ? kHidden : kMoeFf), down ? kMoeFf : kHidden, q);
                unit.quant.experts = kExperts;
                u.push_back(unit);
            }
        } else {
            for (int64_t e = 0; e < kExperts; ++e)
                for (const auto& [proj, down] : projections)
                    u.push_back(
                        quant_unit(p + "mlp.experts." + std::to_string(e) + "." + proj + ".weight",
                                   down ? kHidden : kMoeFf, down ? kMoeFf : kHidden, q));
        }
        u.push_back(quant_unit(p + "mlp.shared_experts.gate_proj.weight", shared, kHidden, q));
        u.push_back(quant_unit(p + "mlp.shared_experts.up_proj.weight", shared, kHidden, q));
        u.push_back(quant_unit(p + "mlp.shared_experts.down_proj.weight", kHidden, shared, q));
        if (i < kLayers) continue;
        // The MTP head (GLM-4.5's layer 92 / 4.5-Air's layer 46 hold no embed_tokens /
        // shared_head.head of their own in the published weights' index).
        u.push_back(quant_unit(p + "eh_proj.weight", kHidden, 2 * kHidden, q));
        u.push_back(vector_unit(p + "enorm.weight", kHidden, 1.0, 0.05));
        u.push_back(vector_unit(p + "hnorm.weight", kHidden, 1.0, 0.05));
        u.push_back(vector_unit(p + "shared_head.norm.weight", kHidden, 1.0, 0.05));
    }
    u.push_back(vector_unit("model.norm.weight", kHidden, 1.0, 0.05));
    u.push_back(quant_unit("lm_head.weight", vocab, kHidden, wide));
    if (nvfp4)
        for (PlanUnit& unit : u)
            if (unit.quantized && (unit.quant.name == "lm_head.weight" ||
                                   unit.quant.name.starts_with("model.layers.2."))) {
                const QuantTensor& m = unit.quant;
                PlanUnit plain =
                    vector_unit(m.name, m.rows * m.cols, 0.0, 1.0 / std::sqrt(double(m.cols)));
                plain.norm.dims = {m.rows, m.cols};
                unit = plain;
            }
    if (o.defect == "expert-missing") {
        const std::string last =
            "model.layers.1.mlp.experts." + std::to_string(kExperts - 1) + ".up_proj.weight";
        std::erase_if(
            u, [&](const PlanUnit& unit) { return unit.quantized && unit.quant.name == last; });
    }
    if (o.defect == "mtp-partial")
        std::erase_if(u, [](const PlanUnit& unit) {
            return !unit.quantized && unit.norm.name == "model.layers.2.hnorm.weight";
        });
    return plan;
}

}  // namespace

int64_t write_glm_tokenizer(const fs::path& out_dir, int64_t* endoftext, int64_t* user,
                            int64_t* observation) {
    int64_t count = write_tokenizer_files(
        out_dir, TokenizerOptions{.kind = "small", .real_tokenizer_json = {}});
    ojson tok = read_json_file(out_dir / "tokenizer.json");
    ojson config = read_json_file(out_dir / "tokenizer_config.json");
    use_glm_regex(tok);
    for (const char* content : kGlmSpecials) {
        ojson token{{"id", count++},   {"content", content}, {"single_word", false},
                    {"lstrip", false}, {"rstrip", false},    {"normalized", false},
                    {"special", true}};
        tok["added_tokens"].push_back(token);
        token.erase("id");
        config["added_tokens_decoder"][std::to_string(count - 1)] = token;
    }
    config["eos_token"] = "<|endoftext|>";
    config["tokenizer_class"] = "PreTrainedTokenizerFast";
    write_json_file(out_dir / "tokenizer.json", tok);
    write_json_file(out_dir / "tokenizer_config.json", config);
    *endoftext = added_token_id_in_file(out_dir / "tokenizer.json", "<|endoftext|>");
    *user = added_token_id_in_file(out_dir / "tokenizer.json", "<|user|>");
    *observation = added_token_id_in_file(out_dir / "tokenizer.json", "<|observation|>");
    return count;
}

std::string write_glm4moe_fixture(const fs::path& out_dir, const Glm4MoeOptions& o) {
    if (o.format != "float" && o.format != "mcq" && o.format != "mlx" && o.format != "gptq" &&
        o.format != "awq" && o.format != "modelopt-nvfp4" && o.format != "ct-nvfp4")
        throw std::runtime_error(
            "--arch glm4moe: --format float, mcq, mlx, gptq, awq, modelopt-nvfp4 or ct-nvfp4, "
            "not " +
            o.format);
    if (o.ffn_scale_one && o.format != "modelopt-nvfp4" && o.format != "ct-nvfp4")
        throw std::runtime_error(
            "--fp4-ffn-scale-one with --arch glm4moe: --format modelopt-nvfp4");
    if (!o.defect.empty() && o.defect != "expert-missing" && o.defect != "no-shared-count" &&
        o.defect != "mtp-partial")
        throw std::runtime_error(
            "--glm4moe-defect: expert-missing, no-shared-count or mtp-partial, not " + o.defect);
    if (o.defect == "mtp-partial" && (o.trunk_only || o.format == "mlx"))
        throw std::runtime_error("--glm4moe-defect mtp-partial: needs the MTP layer");
    if (o.defect == "expert-missing" && o.format == "mlx")
        throw std::runtime_error(
            "--glm4moe-defect expert-missing: one tensor per expert (not mlx)");
    int64_t endoftext = 0, user = 0, observation = 0;
    const int64_t vocab = write_glm_tokenizer(out_dir, &endoftext, &user, &observation);
    ojson config = config_json(vocab, endoftext, user, observation);
    if (o.defect == "no-shared-count") config.erase("n_shared_experts");
    write_json_file(out_dir / "config.json", config);

    const ModelPlan plan = glm4moe_plan(o, vocab);
    if (o.format == "mcq") {
        write_model_files(out_dir, plan, 1, o.seed);
    } else if (o.format == "mlx") {
        write_mlx_model_files(out_dir, plan, 1, o.seed, MlxOptions{});
        add_mlx_quantization(out_dir, MlxOptions{});
    } else if (o.format == "gptq" || o.format == "awq") {
        PrequantOptions pq;  // 4 bits, groups of 32; AWQ asymmetric, its only kind
        pq.format = o.format;
        pq.sym = o.format == "gptq";
        write_prequant_fixture(out_dir, plan, o.seed, pq);
    } else if (o.format == "modelopt-nvfp4" || o.format == "ct-nvfp4") {
        NvidiaFp4Options nv;
        nv.format = o.format;
        nv.ffn_scale_one = o.ffn_scale_one;
        nv.small_scales_when_one = true;
        add_nvidia_fp4_quantization(out_dir, nv);
        if (o.format == "ct-nvfp4") {  // llm-compressor's ignore: the same modules by regex
            ojson config = read_json_file(out_dir / "config.json");
            config["quantization_config"]["ignore"] = {"lm_head", "model.embed_tokens",
                                                       "re:.*mlp.gate$", "re:model.layers.2.*"};
            write_json_file(out_dir / "config.json", config);
            write_nvidia_fp4_model_files(out_dir, plan, 1, o.seed, nv);
            return "glm4moe, ct-nvfp4, vocab " + std::to_string(vocab) + ", " +
                   std::to_string(plan.units.size()) + " tensors";
        }
        ojson side = read_json_file(out_dir / "hf_quant_config.json");
        side["quantization"]["exclude_modules"] = {"lm_head", "model.embed_tokens", "*mlp.gate",
                                                   "model.layers.2*"};
        write_json_file(out_dir / "hf_quant_config.json", side);
        write_nvidia_fp4_model_files(out_dir, plan, 1, o.seed, nv);
    } else {
        write_float_model_files(out_dir, plan, 1, o.seed, FloatOptions{"bf16", ""});
    }
    return "glm4moe, " + (o.format == "float" ? std::string("bf16") : o.format) + ", vocab " +
           std::to_string(vocab) + (o.trunk_only || o.format == "mlx" ? ", trunk only" : "") +
           ", " + std::to_string(plan.units.size()) + " tensors";
}

}  // namespace mkfixture
