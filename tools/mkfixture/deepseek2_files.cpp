// DeepSeek-V3 fixture files (deepseek2_files.hpp): fixed tiny shapes as one tensor plan; the
// content from the float and mcq-v1 writers every other fixture uses.
#include "deepseek2_files.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "float_files.hpp"
#include "glm4moe_files.hpp"
#include "hf_files.hpp"
#include "json_files.hpp"
#include "mlx_files.hpp"
#include "model_plan.hpp"
#include "nvidia_fp4_files.hpp"
#include "prequant_files.hpp"
#include "tokenizer_files.hpp"

namespace mkfixture {
namespace deepseek2_fixture {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr int64_t kHidden = 64, kHeads = 4, kQLora = 32, kNope = 32, kRope = 8, kV = 16,
                  kLayers = 3, kDenseLayers = 1, kExperts = 4, kExpertsUsed = 2, kShared = 1;

// The widths an NVFP4 weight's GGUF blocks (64 values) must divide: kv_lora_rank (attn_v_b's
// rows), the dense and expert feed-forward widths (the down projections' rows) are 64 and 128
// there; elsewhere 32 and 96, half a block and one and a half.
struct Widths {
    int64_t kv_lora, ff, moe_ff;
};
Widths widths_for(const std::string& format) {
    return format == "modelopt-nvfp4" || format == "ct-nvfp4" ? Widths{64, 128, 64}
                                                              : Widths{32, 96, 32};
}

// DeepSeek-V3's config.json fields at the fixture's sizes.
ojson ds_config(int64_t vocab, bool no_q_lora, const Widths& w) {
    const int64_t kKvLora = w.kv_lora, kFf = w.ff, kMoeFf = w.moe_ff;
    return ojson{{"architectures", {"DeepseekV3ForCausalLM"}},
                 {"attention_bias", false},
                 {"attention_dropout", 0.0},
                 {"first_k_dense_replace", kDenseLayers},
                 {"hidden_act", "silu"},
                 {"hidden_size", kHidden},
                 {"initializer_range", 0.02},
                 {"intermediate_size", kFf},
                 {"kv_lora_rank", kKvLora},
                 {"max_position_embeddings", 1024},
                 {"model_type", "deepseek_v3"},
                 {"moe_intermediate_size", kMoeFf},
                 {"moe_layer_freq", 1},
                 {"n_group", 2},
                 {"n_routed_experts", kExperts},
                 {"n_shared_experts", kShared},
                 {"norm_topk_prob", true},
                 {"num_attention_heads", kHeads},
                 {"num_experts_per_tok", kExpertsUsed},
                 {"num_hidden_layers", kLayers},
                 {"num_key_value_heads", kHeads},
                 {"num_nextn_predict_layers", 1},
                 {"q_lora_rank", no_q_lora ? ojson(nullptr) : ojson(kQLora)},
                 {"qk_nope_head_dim", kNope},
                 {"qk_rope_head_dim", kRope},
                 {"rms_norm_eps", 1e-06},
                 {"rope_scaling",
                  {{"beta_fast", 32},
                   {"beta_slow", 1},
                   {"factor", 4.0},
                   {"mscale", 1.0},
                   {"mscale_all_dim", 0.707},
                   {"original_max_position_embeddings", 256},
                   {"type", "yarn"}}},
                 {"rope_theta", 10000},
                 {"routed_scaling_factor", 2.5},
                 {"scoring_func", "sigmoid"},
                 {"tie_word_embeddings", false},
                 {"topk_group", 1},
                 {"topk_method", "noaux_tc"},
                 {"torch_dtype", "bfloat16"},
                 {"use_cache", true},
                 {"v_head_dim", kV},
                 {"vocab_size", vocab}};
}

// GLM-4.7-Flash's config.json fields (zai-org/GLM-4.7-Flash: Glm4MoeLiteForCausalLM, no
// scoring_func, no rope scaling, one MTP layer) at the fixture's sizes.
ojson glm_lite_config(int64_t vocab, int64_t endoftext, int64_t user, int64_t observation,
                      const Widths& w) {
    const int64_t kKvLora = w.kv_lora, kFf = w.ff, kMoeFf = w.moe_ff;
    return ojson{{"architectures", {"Glm4MoeLiteForCausalLM"}},
                 {"attention_bias", false},
                 {"attention_dropout", 0.0},
                 {"eos_token_id", {endoftext, user, observation}},
                 {"first_k_dense_replace", kDenseLayers},
                 {"hidden_act", "silu"},
                 {"hidden_size", kHidden},
                 {"intermediate_size", kFf},
                 {"kv_lora_rank", kKvLora},
                 {"max_position_embeddings", 2048},
                 {"model_type", "glm4_moe_lite"},
                 {"moe_intermediate_size", kMoeFf},
                 {"n_group", 1},
                 {"n_routed_experts", kExperts},
                 {"n_shared_experts", kShared},
                 {"norm_topk_prob", true},
                 {"num_attention_heads", kHeads},
                 {"num_experts_per_tok", kExpertsUsed},
                 {"num_hidden_layers", kLayers},
                 {"num_key_value_heads", kHeads},
                 {"num_nextn_predict_layers", 1},
                 {"pad_token_id", endoftext},
                 {"partial_rotary_factor", 1.0},
                 {"q_lora_rank", kQLora},
                 {"qk_nope_head_dim", kNope},
                 {"qk_rope_head_dim", kRope},
                 {"rms_norm_eps", 1e-05},
                 {"rope_scaling", nullptr},
                 {"rope_theta", 1000000},
                 {"routed_scaling_factor", 1.8},
                 {"tie_word_embeddings", false},
                 {"topk_group", 1},
                 {"topk_method", "noaux_tc"},
                 {"torch_dtype", "bfloat16"},
                 {"use_cache", true},
                 {"v_head_dim", kV},
                 {"vocab_size", vocab}};
}

// Whether GLM-4.7-Flash's checkpoint holds its MTP layer (layers.3): mlx-lm's glm4_moe_lite
// sanitize drops every layer at or above num_hidden_layers, and ModelOpt's export writes the
// layers transformers loads (NVIDIA/Model-Optimizer#750: the MTP weights copied back by hand), so
// those two are trunk-only; float and mcq-v1 keep it, and GPTQ / AWQ keep it as QuantTrio's
// glm4moe uploads do (its projections quantized like any layer's, its embed_tokens and
// shared_head.head float).
bool glm_lite_keeps_mtp(const Deepseek2Options& o) {
    return o.glm_lite && o.format != "mlx" && o.format != "modelopt-nvfp4";
}

// The checkpoint's tensors in transformers' order. mcq: 4 bits in groups of 32, the router at 8.
// MLX (mlx-lm's deepseek_v3 after its sanitize): 4 bits / 32, kv_b_proj stored split as embed_q
// [heads, kv_lora, nope] and unembed_out [heads, v, kv_lora], the experts stacked (switch_mlp),
// the router (MoEGate's plain weight) and its bias float, no MTP layer.
ModelPlan ds_plan(const Deepseek2Options& o, int64_t vocab) {
    const Widths w = widths_for(o.format);
    const int64_t kKvLora = w.kv_lora, kFf = w.ff, kMoeFf = w.moe_ff;
    const LayerQuant q{4, o.format == "modelopt-nvfp4" || o.format == "ct-nvfp4" ? 16 : 32};
    const bool mlx = o.format == "mlx";
    ModelPlan plan;
    Dims& d = plan.dims;
    d = Dims{kHidden, kLayers, kHeads, kHeads, kNope + kRope, kFf, vocab};
    d.experts = kExperts, d.experts_used = kExpertsUsed, d.moe_ffn = kMoeFf;
    d.embedding_rows = vocab;
    std::vector<PlanUnit>& u = plan.units;
    u.push_back(quant_unit("model.embed_tokens.weight", vocab, kHidden, q));
    const int64_t q_width = kHeads * (kNope + kRope), shared = kMoeFf * kShared;
    // GLM-4.7-Flash's MTP layer (layers.3) is a whole MoE layer, then the MTP head.
    for (int64_t i = 0; i < kLayers + (glm_lite_keeps_mtp(o) ? 1 : 0); ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        u.push_back(vector_unit(p + "input_layernorm.weight", kHidden, 1.0, 0.05));
        if (o.no_q_lora) {
            u.push_back(quant_unit(p + "self_attn.q_proj.weight", q_width, kHidden, q));
        } else {
            u.push_back(quant_unit(p + "self_attn.q_a_proj.weight", kQLora, kHidden, q));
            u.push_back(vector_unit(p + "self_attn.q_a_layernorm.weight", kQLora, 1.0, 0.05));
            u.push_back(quant_unit(p + "self_attn.q_b_proj.weight", q_width, kQLora, q));
        }
        u.push_back(
            quant_unit(p + "self_attn.kv_a_proj_with_mqa.weight", kKvLora + kRope, kHidden, q));
        u.push_back(vector_unit(p + "self_attn.kv_a_layernorm.weight", kKvLora, 1.0, 0.05));
        if (mlx) {
            PlanUnit embed_q =
                quant_unit(p + "self_attn.embed_q.weight", kHeads * kKvLora, kNope, q);
            embed_q.quant.experts = kHeads;  // [heads, kv_lora, nope]
            u.push_back(embed_q);
            PlanUnit unembed =
                quant_unit(p + "self_attn.unembed_out.weight", kHeads * kV, kKvLora, q);
            unembed.quant.experts = kHeads;  // [heads, v, kv_lora]
            u.push_back(unembed);
        } else {
            u.push_back(
                quant_unit(p + "self_attn.kv_b_proj.weight", kHeads * (kNope + kV), kKvLora, q));
        }
        u.push_back(quant_unit(p + "self_attn.o_proj.weight", kHidden, kHeads * kV, q));
        u.push_back(vector_unit(p + "post_attention_layernorm.weight", kHidden, 1.0, 0.05));
        if (i < kDenseLayers) {
            u.push_back(quant_unit(p + "mlp.gate_proj.weight", kFf, kHidden, q));
            u.push_back(quant_unit(p + "mlp.up_proj.weight", kFf, kHidden, q));
            u.push_back(quant_unit(p + "mlp.down_proj.weight", kHidden, kFf, q));
            continue;
        }
        PlanUnit router = quant_unit(p + "mlp.gate.weight", kExperts, kHidden, {8, 32});
        router.quant.mlx_float = mlx;
        u.push_back(router);
        u.push_back(vector_unit(p + "mlp.gate.e_score_correction_bias", kExperts, 0.0, 0.5));
        if (mlx) {
            for (const auto& [proj, down] :
                 {std::pair{"gate_proj", false}, std::pair{"up_proj", false},
                  std::pair{"down_proj", true}}) {
                PlanUnit unit =
                    quant_unit(p + "mlp.switch_mlp." + proj + ".weight",
                               kExperts * (down ? kHidden : kMoeFf), down ? kMoeFf : kHidden, q);
                unit.quant.experts = kExperts;
                u.push_back(unit);
            }
        }
        for (int64_t e = 0; e < (mlx ? 0 : kExperts); ++e)
            for (const auto& [proj, down] :
                 {std::pair{"gate_proj", false}, std::pair{"up_proj", false},
                  std::pair{"down_proj", true}})
                u.push_back(
                    quant_unit(p + "mlp.experts." + std::to_string(e) + "." + proj + ".weight",
                               down ? kHidden : kMoeFf, down ? kMoeFf : kHidden, q));
        u.push_back(quant_unit(p + "mlp.shared_experts.gate_proj.weight", shared, kHidden, q));
        u.push_back(quant_unit(p + "mlp.shared_experts.up_proj.weight", shared, kHidden, q));
        u.push_back(quant_unit(p + "mlp.shared_experts.down_proj.weight", kHidden, shared, q));
        if (i < kLayers) continue;
        u.push_back(quant_unit(p + "embed_tokens.weight", vocab, kHidden, q));
        u.push_back(quant_unit(p + "eh_proj.weight", kHidden, 2 * kHidden, q));
        u.push_back(vector_unit(p + "enorm.weight", kHidden, 1.0, 0.05));
        u.push_back(vector_unit(p + "hnorm.weight", kHidden, 1.0, 0.05));
        u.push_back(quant_unit(p + "shared_head.head.weight", vocab, kHidden, q));
        u.push_back(vector_unit(p + "shared_head.norm.weight", kHidden, 1.0, 0.05));
    }
    // A stand-in for the MTP layer (layers.3): DeepseekV2Model drops every tensor of it (mlx-lm's
    // sanitize too).
    const std::string mtp = "model.layers." + std::to_string(kLayers) + ".";
    if (!mlx && !o.glm_lite) {
        u.push_back(vector_unit(mtp + "input_layernorm.weight", kHidden, 1.0, 0.05));
        u.push_back(vector_unit(mtp + "enorm.weight", kHidden, 1.0, 0.05));
        u.push_back(vector_unit(mtp + "hnorm.weight", kHidden, 1.0, 0.05));
        u.push_back(quant_unit(mtp + "eh_proj.weight", kHidden, 2 * kHidden, q));
    }
    u.push_back(vector_unit("model.norm.weight", kHidden, 1.0, 0.05));
    u.push_back(quant_unit("lm_head.weight", vocab, kHidden, q));
    // Which weights each format leaves float:
    // - Kimi-K2-Thinking / K2.5 (compressed-tensors pack-quantized, 4 bits in groups of 32,
    //   symmetric): the routed experts only are int4; attention, the dense and shared MLPs, the
    //   router, the embedding and lm_head stay BF16.
    // - GPTQ / AWQ (GPTQModel's and AutoAWQ's DeepSeek-V3 module trees: every nn.Linear of a
    //   decoder layer, kv_b_proj included): the writers keep the embedding, lm_head and the
    //   router (MoEGate's plain parameter, no Linear) float themselves.
    // - ModelOpt NVFP4 as nvidia/DeepSeek-R1-0528-FP4-v2 (its hf_quant_config.json excludes
    //   self_attn but o_proj, the embedding, the routers and lm_head): every mlp.* projection
    //   (dense, routed and shared experts) and o_proj NVFP4, the rest of attention BF16;
    //   nvfp4_kv_b makes kv_b_proj NVFP4 too (ModelOpt's default of every Linear).
    const bool nvfp4 = o.format == "modelopt-nvfp4" || o.format == "ct-nvfp4";
    const auto stays_float = [&o, nvfp4](const std::string& name) {
        if (o.format == "compressed-tensors")
            return name.find(".mlp.experts.") == std::string::npos;
        if (!nvfp4) return false;
        if (name == "lm_head.weight") return true;
        if (o.nvfp4_kv_b && name.ends_with("kv_b_proj.weight")) return false;
        return name.find(".self_attn.") != std::string::npos &&
               !name.ends_with("self_attn.o_proj.weight");
    };
    if (o.format == "compressed-tensors" || nvfp4)
        for (PlanUnit& unit : u)
            if (unit.quantized && stays_float(unit.quant.name)) {
                const QuantTensor& m = unit.quant;
                PlanUnit plain =
                    vector_unit(m.name, m.rows * m.cols, 0.0, 1.0 / std::sqrt(double(m.cols)));
                plain.norm.dims = {m.rows, m.cols};
                unit = plain;
            }
    return plan;
}

void write_ds_json(const fs::path& path, const ojson& value) {
    std::ofstream out(path, std::ios::binary);
    out << value.dump(1) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

// deepseek-ai/DeepSeek-V3's tokenizer.json pre_tokenizer: three Isolated Splits (digits in groups
// of up to three; CJK ideographs and kana; words and punctuation), then a ByteLevel without regex.
// llama.cpp's converter names that tokenizer "deepseek-v3".
void use_deepseek_v3_pre_tokenizer(const fs::path& out_dir) {
    auto split = [](const char* regex) {
        return ojson{{"type", "Split"},
                     {"pattern", {{"Regex", regex}}},
                     {"behavior", "Isolated"},
                     {"invert", false}};
    };
    ojson tok = read_json_file(out_dir / "tokenizer.json");
    tok["pre_tokenizer"] = ojson{
        {"type", "Sequence"},
        {"pretokenizers",
         {split(R"(\p{N}{1,3})"),
          split("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"),
          split(
              R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
          {{"type", "ByteLevel"},
           {"add_prefix_space", false},
           {"trim_offsets", true},
           {"use_regex", false}}}}};
    write_json_file(out_dir / "tokenizer.json", tok);
}

}  // namespace deepseek2_fixture

std::string write_deepseek2_fixture(const std::filesystem::path& out_dir,
                                    const Deepseek2Options& o) {
    using namespace deepseek2_fixture;
    if (o.format != "float" && o.format != "mcq" && o.format != "mlx" &&
        o.format != "compressed-tensors" && o.format != "gptq" && o.format != "awq" &&
        o.format != "modelopt-nvfp4" && o.format != "ct-nvfp4")
        throw std::runtime_error(
            "--arch deepseek2: --format float, mcq, mlx, compressed-tensors, gptq, awq, "
            "modelopt-nvfp4 or ct-nvfp4, not " +
            o.format);
    if (o.glm_lite && (o.no_q_lora || o.format == "compressed-tensors" || o.format == "ct-nvfp4"))
        throw std::runtime_error(
            "--arch glm4_moe_lite: --format float, mcq, mlx, gptq, awq or modelopt-nvfp4, with "
            "q_lora_rank");
    if ((o.nvfp4_kv_b || o.ffn_scale_one) && o.format != "modelopt-nvfp4" && o.format != "ct-nvfp4")
        throw std::runtime_error(
            "--nvfp4-kv-b / --fp4-ffn-scale-one with --arch deepseek2: --format modelopt-nvfp4 or "
            "ct-nvfp4");
    int64_t vocab = 0;
    if (o.glm_lite) {
        int64_t endoftext = 0, user = 0, observation = 0;
        vocab = write_glm_tokenizer(out_dir, &endoftext, &user, &observation);
        write_ds_json(out_dir / "config.json",
                      glm_lite_config(vocab, endoftext, user, observation, widths_for(o.format)));
    } else {
        vocab = write_tokenizer_files(out_dir,
                                      TokenizerOptions{.kind = "small", .real_tokenizer_json = {}});
        use_deepseek_v3_pre_tokenizer(out_dir);
        write_ds_json(out_dir / "config.json", ds_config(vocab, o.no_q_lora, widths_for(o.format)));
    }
    const ModelPlan plan = ds_plan(o, vocab);
    if (o.format == "mcq") {
        write_model_files(out_dir, plan, 1, o.seed);
    } else if (o.format == "gptq" || o.format == "awq") {
        PrequantOptions pq;  // GPTQModel's / AutoAWQ's defaults: 4 bits, groups of 32 (AWQ asym)
        pq.format = o.format;
        pq.sym = o.format == "gptq";
        write_prequant_fixture(out_dir, plan, o.seed, pq);
    } else if (o.format == "modelopt-nvfp4" || o.format == "ct-nvfp4") {
        NvidiaFp4Options nv;
        nv.format = o.format;
        nv.ffn_scale_one = o.ffn_scale_one;
        nv.small_scales_when_one = true;
        if (o.nvfp4_kv_b) nv.scale_one_part = "kv_b_proj";
        add_nvidia_fp4_quantization(out_dir, nv);
        if (o.format == "ct-nvfp4") {  // llm-compressor's ignore: the same modules by regex
            ojson config = read_json_file(out_dir / "config.json");
            config["quantization_config"]["ignore"] = {
                "lm_head", "model.embed_tokens", "re:.*mlp.gate$",
                o.nvfp4_kv_b ? "re:.*self_attn.(q_a_proj|q_b_proj|kv_a_proj_with_mqa)$"
                             : "re:.*self_attn.(q_a_proj|q_b_proj|kv_a_proj_with_mqa|kv_b_proj)$"};
            write_ds_json(out_dir / "config.json", config);
            write_nvidia_fp4_model_files(out_dir, plan, 1, o.seed, nv);
            return std::string("deepseek2, ct-nvfp4, vocab ") + std::to_string(vocab) + ", " +
                   std::to_string(plan.units.size()) + " tensors";
        }
        // The modules this layout leaves BF16, as the release's exclude_modules names them.
        ojson side = read_json_file(out_dir / "hf_quant_config.json");
        ojson exclude = {"lm_head",
                         "model.embed_tokens",
                         "*mlp.gate",
                         "*self_attn.q_a_proj",
                         "*self_attn.q_b_proj",
                         "*self_attn.kv_a_proj_with_mqa"};
        if (!o.nvfp4_kv_b) exclude.push_back("*self_attn.kv_b_proj");
        side["quantization"]["exclude_modules"] = exclude;
        write_ds_json(out_dir / "hf_quant_config.json", side);
        write_nvidia_fp4_model_files(out_dir, plan, 1, o.seed, nv);
    } else if (o.format == "compressed-tensors") {
        PrequantOptions pq;  // Kimi-K2-Thinking's: 4 bits, groups of 32, symmetric, BF16 scales
        pq.format = o.format;
        pq.sym = true;
        pq.scale_dtype = "bf16";
        write_prequant_fixture(out_dir, plan, o.seed, pq);
    } else if (o.format == "mlx") {
        write_mlx_model_files(out_dir, plan, 1, o.seed, MlxOptions{});
        add_mlx_quantization(out_dir, MlxOptions{});
        // mlx_lm.convert --q-group-size 32: kv_lora_rank 32 rows hold one group of 64 no more.
        ojson config;
        {
            std::ifstream in(out_dir / "config.json");
            config = ojson::parse(in);
        }
        config["quantization"]["group_size"] = 32;
        config["quantization_config"]["group_size"] = 32;
        write_ds_json(out_dir / "config.json", config);
    } else {
        write_float_model_files(out_dir, plan, 1, o.seed, FloatOptions{"bf16", ""});
    }
    return std::string(o.glm_lite ? "glm4_moe_lite (deepseek2)" : "deepseek2") + ", " +
           (o.format == "float" ? std::string("bf16") : o.format) + ", vocab " +
           std::to_string(vocab) + (o.no_q_lora ? ", no q_lora_rank" : "") +
           (o.glm_lite && !glm_lite_keeps_mtp(o) ? ", trunk only" : "") + ", " +
           std::to_string(plan.units.size()) + " tensors";
}

}  // namespace mkfixture
