// gemma4 fixture files (gemma4_files.hpp): fixed tiny shapes (hidden 64, feed-forward 128; sliding
// layers 4 heads of 16 with 2 kv heads, the full layer 4 heads of 32 with 1 kv head). BF16 content
// from SplitMix64 seeded per tensor name; mcq-v1 and MLX content from the writers every other
// fixture uses (one tensor plan). Gemma 4's RMSNorm weights are plain scales (no 1 + w), stored
// around 1; layer_scalar around 0.5.
#include "gemma4_files.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "gemma4_tokenizer.hpp"
#include "hf_files.hpp"
#include "json_files.hpp"
#include "mlx_files.hpp"
#include "mlx_recipe.hpp"
#include "model_plan.hpp"
#include "nvidia_fp4_files.hpp"
#include "prequant_files.hpp"
#include "seeded_bf16.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kG4Hidden = 64, kG4Layers = 4, kG4Heads = 4, kG4KvHeads = 2, kG4HeadDim = 16,
                  kG4FullHeadDim = 32, kG4FullKvHeads = 1, kG4Ff = 128;
// The MoE variant: 2 experts of 32, both used (no routing tie can flip between two files).
constexpr int64_t kG4Experts = 2, kG4ExpertsUsed = 2, kG4ExpertFf = 32;
// MLX: experts of 64, as mlx-lm quantizes down_proj in groups of 64 along them (26B-A4B's 704 is
// 11 of them).
// ModelOpt NVFP4: 64 too (down_proj's rows a whole ggml NVFP4 super-block of 64, as the
// converter's repack needs).
int64_t g4_expert_ff(const std::string& format) {
    return format == "mlx" || format == "modelopt-nvfp4" ? 64 : kG4ExpertFf;
}

// The quantized and MoE fixtures' q/k norm weights. Gemma 4 scores attention with scale 1 (the q/k
// norms replace 1/sqrt(head_dim)): with norms near 1 the softmax is sharp enough that llama.cpp's
// Q8_1 rounding of the activations (Q4_1 kernels), or its BF16 rounding of them through the MoE
// block's extra BF16 products, moves the output past cos 0.999 from the f32 twin; near 0.3 it
// stays soft.
constexpr double kG4QuantQkNormCenter = 0.3;

struct G4Tensor {
    std::string name;
    std::vector<int64_t> shape;
    double center = 0, spread = 1;
};

// The E2B / E4B layout (--gemma4-e2b), as google/gemma-4-E2B-it's config.json has it in small:
// 6 layers, sliding, sliding, full, then 3 KV-shared layers (sliding, sliding, full) whose MLP
// is double-wide; one kv head of 16 on every layer, the full layers' head 32 with its own
// v_proj (attention_k_eq_v false, num_global_key_value_heads null); per-layer inputs of 64
// (a multiple of 64, as mlx-lm's groups along per_layer_projection's rows need).
constexpr int64_t kE2bLayers = 6, kE2bShared = 3, kE2bKvHeads = 1, kE2bPerLayer = 64;

struct G4Layout {
    int64_t layers = kG4Layers, kv_heads = kG4KvHeads, shared = 0, per_layer = 0;
    bool e2b = false;
    bool full(int64_t layer) const { return e2b ? layer % 3 == 2 : layer == layers - 1; }
    bool kv_shared(int64_t layer) const { return layer >= layers - shared; }
    int64_t ffn(int64_t layer) const { return kv_shared(layer) ? 2 * kG4Ff : kG4Ff; }
};

G4Layout g4_layout(bool e2b) {
    if (!e2b) return {};
    return {kE2bLayers, kE2bKvHeads, kE2bShared, kE2bPerLayer, true};
}

// The vision tower (Gemma4VisionModel) and its projector (embed_vision, Gemma4MultimodalEmbedder)
// at tiny sizes, with the names transformers saves Gemma4ForConditionalGeneration under
// (model.vision_tower.*, model.embed_vision.*) and the vision_config keys of google/gemma-4's
// config.json files: 2 layers of width 32 (2 heads of 16, 2 kv heads), an MLP of 64, patches of 8
// x 8 pooled 3 x 3, a position table of 128 per axis. The dense and MoE layouts standardize
// (std_bias / std_scale, as the 26B-A4B and 31B towers do) without clipped linears; the E2B
// layout has the clipped linears (input_min / input_max / output_min / output_max scalars on each
// projection, as E2B / E4B store them) and no standardization.
constexpr int64_t kG4VisionHidden = 32, kG4VisionLayers = 2, kG4VisionHeads = 2,
                  kG4VisionHeadDim = 16, kG4VisionFf = 64, kG4VisionPatch = 8, kG4VisionPooling = 3,
                  kG4VisionPositions = 128;

nlohmann::ordered_json g4_vision_config(bool clipped) {
    nlohmann::ordered_json v;
    v["attention_bias"] = false;
    v["attention_dropout"] = 0.0;
    v["default_output_length"] = 280;
    v["head_dim"] = kG4VisionHeadDim;
    v["hidden_activation"] = "gelu_pytorch_tanh";
    v["hidden_size"] = kG4VisionHidden;
    v["intermediate_size"] = kG4VisionFf;
    v["max_position_embeddings"] = 131072;
    v["model_type"] = "gemma4_vision";
    v["num_attention_heads"] = kG4VisionHeads;
    v["num_hidden_layers"] = kG4VisionLayers;
    v["num_key_value_heads"] = kG4VisionHeads;
    v["patch_size"] = kG4VisionPatch;
    v["pooling_kernel_size"] = kG4VisionPooling;
    v["position_embedding_size"] = kG4VisionPositions;
    v["rms_norm_eps"] = 1e-06;
    v["rope_parameters"] = {{"rope_theta", 100.0}, {"rope_type", "default"}};
    v["standardize"] = !clipped;
    v["use_clipped_linears"] = clipped;
    return v;
}

// processor_config.json as google/gemma-4 ships it: the image processor's keys under
// "image_processor" (no normalization: mean 0, std 1; 280 soft tokens).
void write_g4_processor_config(const fs::path& out_dir) {
    nlohmann::ordered_json image;
    image["do_convert_rgb"] = true;
    image["do_normalize"] = false;
    image["do_rescale"] = true;
    image["do_resize"] = true;
    image["image_mean"] = {0.0, 0.0, 0.0};
    image["image_processor_type"] = "Gemma4ImageProcessor";
    image["image_seq_length"] = 280;
    image["image_std"] = {1.0, 1.0, 1.0};
    image["max_soft_tokens"] = 280;
    image["patch_size"] = kG4VisionPatch;
    image["pooling_kernel_size"] = kG4VisionPooling;
    image["resample"] = 3;
    image["rescale_factor"] = 1.0 / 255.0;
    nlohmann::ordered_json processor;
    processor["image_processor"] = image;
    processor["image_seq_length"] = 280;
    processor["processor_class"] = "Gemma4Processor";
    write_json_file(out_dir / "processor_config.json", processor, 2);
}

nlohmann::ordered_json g4_config(int64_t vocab, const std::string& defect, bool moe,
                                 const G4Layout& l, int64_t expert_ff) {
    nlohmann::ordered_json text;
    text["model_type"] = "gemma4_text";
    text["hidden_size"] = kG4Hidden;
    text["intermediate_size"] = kG4Ff;
    text["num_hidden_layers"] = l.layers;
    text["num_attention_heads"] = kG4Heads;
    text["num_key_value_heads"] = l.kv_heads;
    text["head_dim"] = kG4HeadDim;
    text["global_head_dim"] = kG4FullHeadDim;
    text["num_global_key_value_heads"] =
        l.e2b ? nlohmann::ordered_json() : nlohmann::ordered_json(kG4FullKvHeads);
    text["attention_k_eq_v"] = !l.e2b;
    nlohmann::ordered_json types = nlohmann::ordered_json::array();
    const int64_t entries = defect == "layer-types" ? l.layers - 1 : l.layers;
    for (int64_t i = 0; i < entries; ++i)
        types.push_back(l.full(i) ? "full_attention" : "sliding_attention");
    text["layer_types"] = types;
    text["sliding_window"] = 32;
    text["max_position_embeddings"] = 4096;
    text["rms_norm_eps"] = 1e-06;
    text["final_logit_softcapping"] = 30.0;
    text["hidden_size_per_layer_input"] = l.per_layer;
    text["num_kv_shared_layers"] = l.shared;
    text["vocab_size_per_layer_input"] = vocab;
    text["use_double_wide_mlp"] = l.e2b;
    text["enable_moe_block"] = moe;
    text["num_experts"] = moe ? nlohmann::ordered_json(kG4Experts) : nullptr;
    text["top_k_experts"] = moe ? nlohmann::ordered_json(kG4ExpertsUsed) : nullptr;
    text["moe_intermediate_size"] = moe ? nlohmann::ordered_json(expert_ff) : nullptr;
    text["hidden_activation"] = "gelu_pytorch_tanh";
    text["rope_parameters"] = {
        {"full_attention",
         {{"partial_rotary_factor", 0.25},
          {"rope_theta", 1000000.0},
          {"rope_type", "proportional"}}},
        {"sliding_attention", {{"rope_theta", 10000.0}, {"rope_type", "default"}}}};
    text["tie_word_embeddings"] = true;
    text["vocab_size"] = vocab;
    nlohmann::ordered_json c;
    c["architectures"] = {"Gemma4ForConditionalGeneration"};
    c["model_type"] = "gemma4";
    c["text_config"] = text;
    c["vision_config"] = g4_vision_config(l.e2b);
    c["tie_word_embeddings"] = true;
    c["torch_dtype"] = "bfloat16";
    return c;
}

// The text model's names: transformers' Gemma4ForConditionalGeneration ("model.language_model.");
// mlx-lm's gemma4.Model saves its own tree (language_model = gemma4_text.Model, whose .model is
// the Gemma4TextModel): "language_model.model.".
constexpr const char* kG4HfPrefix = "model.language_model.";
constexpr const char* kG4MlxPrefix = "language_model.model.";

// The MoE block of one layer as transformers' Gemma4TextDecoderLayer holds it: the router (its
// norm has no weight), the fused experts as [E, rows, cols] parameters (gate rows then up rows),
// three more norms. `mlx`: as mlx-lm's gemma4_text sanitize leaves them, gate_up_proj split at
// dim -2 into experts.switch_glu.gate_proj / up_proj [E, F, hidden] and down_proj renamed
// experts.switch_glu.down_proj (".weight" added: each a SwitchLinear).
// `split` (ModelOpt NVFP4): as ModelOpt's Gemma 4 MoE export holds them, each expert its own
// Linear modules experts.E.gate_proj / up_proj [F, hidden] and down_proj [hidden, F] (the
// converter's ModelBase._generate_nvfp4_tensors reads these names), the router BF16.
void g4_add_moe(std::vector<G4Tensor>& t, const std::string& p, bool router_scale, bool mlx,
                bool up = true, bool split = false) {
    const double w = 1.0 / std::sqrt(double(kG4Hidden));
    const int64_t ff = g4_expert_ff(mlx ? "mlx" : split ? "modelopt-nvfp4" : "");
    t.push_back({p + "router.proj.weight", {kG4Experts, kG4Hidden}, 0, w});
    if (router_scale) t.push_back({p + "router.scale", {kG4Hidden}, 1.0, 0.1});
    t.push_back({p + "router.per_expert_scale", {kG4Experts}, 1.0, 0.2});
    const double down = 1.0 / std::sqrt(double(ff));
    if (mlx) {
        t.push_back({p + "experts.switch_glu.gate_proj.weight", {kG4Experts, ff, kG4Hidden}, 0, w});
        if (up)
            t.push_back(
                {p + "experts.switch_glu.up_proj.weight", {kG4Experts, ff, kG4Hidden}, 0, w});
        t.push_back(
            {p + "experts.switch_glu.down_proj.weight", {kG4Experts, kG4Hidden, ff}, 0, down});
    } else if (split) {
        for (int64_t e = 0; e < kG4Experts; ++e) {
            const std::string x = p + "experts." + std::to_string(e) + ".";
            t.push_back({x + "gate_proj.weight", {ff, kG4Hidden}, 0, w});
            t.push_back({x + "up_proj.weight", {ff, kG4Hidden}, 0, w});
            t.push_back({x + "down_proj.weight", {kG4Hidden, ff}, 0, down});
        }
    } else {
        t.push_back({p + "experts.gate_up_proj", {kG4Experts, 2 * ff, kG4Hidden}, 0, w});
        t.push_back({p + "experts.down_proj", {kG4Experts, kG4Hidden, ff}, 0, down});
    }
    for (const char* norm : {"pre_feedforward_layernorm_2", "post_feedforward_layernorm_1",
                             "post_feedforward_layernorm_2"})
        t.push_back({p + norm + ".weight", {kG4Hidden}, 1.0, 0.1});
}

// One decoder layer. A KV-shared layer keeps its k_proj / v_proj / k_norm in the checkpoint (as
// google/gemma-4-E2B-it stores them, unused) unless `drop_shared_kv` (mlx-lm's sanitize drops
// them; the quantizers that load the model through transformers, GPTQModel, llm-compressor and
// ModelOpt, never see them); E2B's layers add the per-layer input gate, projection and norm.
void g4_add_layer(std::vector<G4Tensor>& t, const std::string& prefix, int64_t layer, bool soft_qk,
                  const G4Layout& l, bool drop_shared_kv) {
    const std::string p = prefix + "layers." + std::to_string(layer) + ".";
    const bool full = l.full(layer), own_kv = !(drop_shared_kv && l.kv_shared(layer));
    const int64_t head = full ? kG4FullHeadDim : kG4HeadDim, ffn = l.ffn(layer);
    const int64_t q = kG4Heads * head, kv = (full && !l.e2b ? kG4FullKvHeads : l.kv_heads) * head;
    const double w = 1.0 / std::sqrt(double(kG4Hidden));
    t.push_back({p + "input_layernorm.weight", {kG4Hidden}, 1.0, 0.1});
    t.push_back({p + "self_attn.q_proj.weight", {q, kG4Hidden}, 0, w});
    if (own_kv) t.push_back({p + "self_attn.k_proj.weight", {kv, kG4Hidden}, 0, w});
    if (own_kv && (!full || l.e2b))
        t.push_back({p + "self_attn.v_proj.weight", {kv, kG4Hidden}, 0, w});
    t.push_back({p + "self_attn.o_proj.weight", {kG4Hidden, q}, 0, 1.0 / std::sqrt(double(q))});
    const double qk_center = soft_qk ? kG4QuantQkNormCenter : 1.0, qk_spread = soft_qk ? 0.05 : 0.1;
    t.push_back({p + "self_attn.q_norm.weight", {head}, qk_center, qk_spread});
    if (own_kv) t.push_back({p + "self_attn.k_norm.weight", {head}, qk_center, qk_spread});
    t.push_back({p + "post_attention_layernorm.weight", {kG4Hidden}, 1.0, 0.1});
    t.push_back({p + "pre_feedforward_layernorm.weight", {kG4Hidden}, 1.0, 0.1});
    t.push_back({p + "mlp.gate_proj.weight", {ffn, kG4Hidden}, 0, w});
    t.push_back({p + "mlp.up_proj.weight", {ffn, kG4Hidden}, 0, w});
    t.push_back({p + "mlp.down_proj.weight", {kG4Hidden, ffn}, 0, 1.0 / std::sqrt(double(ffn))});
    t.push_back({p + "post_feedforward_layernorm.weight", {kG4Hidden}, 1.0, 0.1});
    if (l.per_layer != 0) {
        t.push_back({p + "per_layer_input_gate.weight", {l.per_layer, kG4Hidden}, 0, w});
        t.push_back({p + "per_layer_projection.weight",
                     {kG4Hidden, l.per_layer},
                     0,
                     1.0 / std::sqrt(double(l.per_layer))});
        t.push_back({p + "post_per_layer_input_norm.weight", {kG4Hidden}, 1.0, 0.1});
    }
    t.push_back({p + "layer_scalar", {1}, 0.5, 0.25});
}

// The vision tower and projector (left out of the text GGUF, written to the mmproj file). The
// patch embedder is a Linear over each patch's pixels (row, column, channel), the position table
// [2, positions, width] one table per axis; each projection a Gemma4ClippableLinear (its weight
// under ".linear.", its clipping bounds as 0-d buffers). defect "projector-width": the
// projector takes twice the tower's width (a checkpoint rebox must refuse).
void g4_add_vision_tower(std::vector<G4Tensor>& t, bool clipped, const std::string& defect) {
    const std::string v = "model.vision_tower.";
    const int64_t h = kG4VisionHidden, q = kG4VisionHeads * kG4VisionHeadDim;
    const int64_t pixels = 3 * kG4VisionPatch * kG4VisionPatch;
    t.push_back(
        {v + "patch_embedder.input_proj.weight", {h, pixels}, 0, 1.0 / std::sqrt(double(pixels))});
    t.push_back(
        {v + "patch_embedder.position_embedding_table", {2, kG4VisionPositions, h}, 0, 0.1});
    const auto linear = [&](const std::string& p, int64_t rows, int64_t cols) {
        t.push_back({p + ".linear.weight", {rows, cols}, 0, 1.0 / std::sqrt(double(cols))});
        if (!clipped) return;
        t.push_back({p + ".input_min", {}, -6.0, 1.0});
        t.push_back({p + ".input_max", {}, 6.0, 1.0});
        t.push_back({p + ".output_min", {}, -6.0, 1.0});
        t.push_back({p + ".output_max", {}, 6.0, 1.0});
    };
    for (int64_t layer = 0; layer < kG4VisionLayers; ++layer) {
        const std::string p = v + "encoder.layers." + std::to_string(layer) + ".";
        t.push_back({p + "input_layernorm.weight", {h}, 1.0, 0.1});
        linear(p + "self_attn.q_proj", q, h);
        linear(p + "self_attn.k_proj", q, h);
        linear(p + "self_attn.v_proj", q, h);
        linear(p + "self_attn.o_proj", h, q);
        t.push_back({p + "self_attn.q_norm.weight", {kG4VisionHeadDim}, 1.0, 0.1});
        t.push_back({p + "self_attn.k_norm.weight", {kG4VisionHeadDim}, 1.0, 0.1});
        t.push_back({p + "post_attention_layernorm.weight", {h}, 1.0, 0.1});
        t.push_back({p + "pre_feedforward_layernorm.weight", {h}, 1.0, 0.1});
        linear(p + "mlp.gate_proj", kG4VisionFf, h);
        linear(p + "mlp.up_proj", kG4VisionFf, h);
        linear(p + "mlp.down_proj", h, kG4VisionFf);
        t.push_back({p + "post_feedforward_layernorm.weight", {h}, 1.0, 0.1});
    }
    if (!clipped) {
        t.push_back({v + "std_bias", {h}, 0, 0.1});
        t.push_back({v + "std_scale", {h}, 1.0, 0.1});
    }
    const int64_t width = defect == "projector-width" ? 2 * h : h;
    t.push_back({"model.embed_vision.embedding_projection.weight",
                 {kG4Hidden, width},
                 0,
                 1.0 / std::sqrt(double(width))});
}

bool g4_is_vision(const std::string& name) {
    return name.starts_with("model.vision_tower.") || name.starts_with("model.embed_vision.");
}

// The tensors in transformers' order. The vision tower stand-in is left out of MLX checkpoints
// (mlx-lm's gemma4.Model.sanitize drops vision_tower / embed_vision).
std::vector<G4Tensor> g4_tensors(int64_t vocab, const Gemma4Options& options, const G4Layout& l) {
    const std::string& format = options.format;
    const std::string prefix = format == "mlx" ? kG4MlxPrefix : kG4HfPrefix;
    std::vector<G4Tensor> tensors;
    tensors.push_back({prefix + "embed_tokens.weight", {vocab, kG4Hidden}, 0, 0.5});
    if (l.per_layer != 0 && options.defect != "no-per-layer-embeddings")
        tensors.push_back(
            {prefix + "embed_tokens_per_layer.weight", {vocab, l.per_layer * l.layers}, 0, 0.5});
    if (l.per_layer != 0) {
        tensors.push_back({prefix + "per_layer_model_projection.weight",
                           {l.per_layer * l.layers, kG4Hidden},
                           0,
                           1.0 / std::sqrt(double(kG4Hidden))});
        tensors.push_back({prefix + "per_layer_projection_norm.weight", {l.per_layer}, 1.0, 0.1});
    }
    for (int64_t layer = 0; layer < l.layers; ++layer) {
        g4_add_layer(tensors, prefix, layer, options.moe || l.e2b, l,
                     format != "float" && format != "mcq");
        if (options.moe)
            g4_add_moe(tensors, prefix + "layers." + std::to_string(layer) + ".",
                       layer != 0 || options.defect != "no-router-scale", format == "mlx",
                       layer != 0 || options.defect != "no-expert-up", format == "modelopt-nvfp4");
    }
    tensors.push_back({prefix + "norm.weight", {kG4Hidden}, 1.0, 0.1});
    if (format == "mlx") return tensors;
    g4_add_vision_tower(tensors, l.e2b, options.defect);
    return tensors;
}

// The same tensors as one plan for the quantized writers: every matrix quantized (mlx-lm's
// gemma4_text has no quant predicate: each Linear and the Embedding), the norms and layer_scalar
// float. mcq: the embedding and layer 0 at 4 bits in groups of 64, later layers at 3 bits in groups
// of 32; MLX: the recipe asked for (apply_mlx_recipe).
// GPTQ / AWQ: GPTQModel's gemma4 definition (Gemma4ForConditionalGenerationGPTQ: its module tree
// walks model.language_model.layers.N) quantizes each decoder layer's q/k/v/o_proj, the MLP's
// gate/up/down_proj and E2B's per_layer_input_gate / per_layer_projection, 4 bits in groups of 32
// here; the embeddings, per_layer_model_projection and the vision tower stay float (F16).
bool g4_int4_quantized(const std::string& name) {
    if (name.find(".layers.") == std::string::npos ||
        name.find("vision_tower") != std::string::npos ||
        name.ends_with("router.proj.weight"))  // the MoE router stays float (the tools' MoE rule)
        return false;
    return name.ends_with("_proj.weight") || name.ends_with("per_layer_input_gate.weight") ||
           name.ends_with("per_layer_projection.weight");
}

// compressed-tensors W4A16 (llm-compressor's Gemma 4 recipes: targets Linear, ignore lm_head,
// re:.*vision_tower.*, re:.*embed_vision.*, and for E2B / E4B re:.*per_layer_input_gate.* /
// re:.*per_layer_projection.*): every decoder layer's attention and MLP projection, 4 bits in
// groups of 32, symmetric; the embeddings (no Linear) BF16.
// NVFP4: ModelOpt as nvidia/Gemma-4-31B-IT-NVFP4 holds it (the MLP's gate / up / down_proj only;
// attention, embeddings and the vision tower BF16); compressed-tensors nvfp4-pack-quantized as
// the AutoRound / llm-compressor uploads of gemma-4-31B-it hold it (every decoder layer's
// attention and MLP projection; the vision tower, embed_vision and embed_tokens BF16).
// `per_layer_nv` (--gemma4-defect per-layer-nvfp4): E2B's layer 0 per_layer_input_gate NVFP4
// too (ModelOpt's default of every Linear), whose .scale the gemma4 graph does not apply.
bool g4_fp4_or_ct_quantized(const std::string& name, const std::string& format, bool per_layer_nv) {
    if (name.find(".layers.") == std::string::npos ||
        name.find("vision_tower") != std::string::npos || name.ends_with("router.proj.weight"))
        return false;
    if (name.ends_with("per_layer_input_gate.weight") ||
        name.ends_with("per_layer_projection.weight"))
        return per_layer_nv && name.ends_with(".layers.0.per_layer_input_gate.weight");
    if (format == "modelopt-nvfp4")
        return name.find(".mlp.") != std::string::npos ||
               name.find(".experts.") != std::string::npos;
    return name.ends_with("_proj.weight");
}

ModelPlan g4_plan(const std::vector<G4Tensor>& tensors, int64_t vocab, const std::string& format,
                  const G4Layout& l, bool per_layer_nv = false) {
    ModelPlan plan;
    plan.dims = Dims{kG4Hidden, l.layers, kG4Heads, l.kv_heads, kG4HeadDim, kG4Ff, vocab};
    plan.dims.embedding_rows = vocab;
    const bool int4 = format == "gptq" || format == "awq";
    const bool ct_or_nv =
        format == "compressed-tensors" || format == "modelopt-nvfp4" || format == "ct-nvfp4";
    for (const G4Tensor& t : tensors) {
        if (ct_or_nv && !g4_is_vision(t.name) && t.shape.size() == 2) {
            if (g4_fp4_or_ct_quantized(t.name, format, per_layer_nv)) {
                plan.units.push_back(
                    quant_unit(t.name, t.shape[0], t.shape[1],
                               LayerQuant{4, format == "compressed-tensors" ? 32 : 16}));
            } else {
                PlanUnit unit = vector_unit(t.name, t.shape[0] * t.shape[1], t.center, t.spread);
                unit.norm.dims = t.shape;
                plan.units.push_back(unit);
            }
            continue;
        }
        // The vision tower stays float in every format (the quantizers leave it so).
        if (g4_is_vision(t.name)) {
            int64_t length = 1;
            for (const int64_t d : t.shape) length *= d;
            PlanUnit unit = vector_unit(t.name, length, t.center, t.spread);
            if (t.shape.size() > 1) unit.norm.dims = t.shape;
            unit.norm.scalar = t.shape.empty();
            plan.units.push_back(unit);
            continue;
        }
        if (int4 && t.shape.size() == 2 && !g4_int4_quantized(t.name)) {
            PlanUnit unit = vector_unit(t.name, t.shape[0] * t.shape[1], t.center, t.spread);
            unit.norm.dims = t.shape;
            plan.units.push_back(unit);
            continue;
        }
        if (int4 && t.shape.size() == 2) {
            plan.units.push_back(quant_unit(t.name, t.shape[0], t.shape[1], LayerQuant{4, 32}));
            continue;
        }
        if (t.shape.size() == 3 && format == "mlx") {  // mlx-lm's SwitchLinear experts
            PlanUnit unit = quant_unit(t.name, t.shape[0] * t.shape[1], t.shape[2], {4, 64});
            unit.quant.experts = t.shape[0];
            plan.units.push_back(unit);
            continue;
        }
        if (t.shape.size() == 2) {
            const bool wide = format == "mlx" || t.name.find("layers.") == std::string::npos ||
                              t.name.find("layers.0.") != std::string::npos;
            plan.units.push_back(quant_unit(t.name, t.shape[0], t.shape[1],
                                            wide ? LayerQuant{4, 64} : LayerQuant{3, 32}));
            continue;
        }
        PlanUnit unit;
        unit.norm = NormTensor{t.name, t.shape[0], t.center, t.spread};
        if (t.shape.size() == 3) {  // the MoE block's fused experts: float (mcq-v1 is 2-D only)
            unit.norm.dims = t.shape;
            unit.norm.length = t.shape[0] * t.shape[1] * t.shape[2];
        }
        if (t.name.ends_with("q_norm.weight") || t.name.ends_with("k_norm.weight"))
            unit.norm.center = kG4QuantQkNormCenter, unit.norm.spread = 0.05;
        plan.units.push_back(unit);
    }
    return plan;
}

// The float modules as each tool's config names them (g4_fp4_or_ct_quantized): llm-compressor's
// `ignore` (lm_head, the vision tower, embed_vision; E2B's per-layer input modules; NVFP4 adds
// the embedding), ModelOpt's hf_quant_config.json exclude_modules (attention, embeddings, the
// vision tower). The readers take what is quantized from the tensors.
void g4_say_float_modules(const fs::path& out_dir, const std::string& format, const G4Layout& l) {
    nlohmann::ordered_json ignore = {"lm_head", "re:.*vision_tower.*", "re:.*embed_vision.*"};
    if (l.per_layer != 0) {
        ignore.push_back("re:.*per_layer_input_gate.*");
        ignore.push_back("re:.*per_layer_projection.*");
    }
    if (format == "modelopt-nvfp4") {
        const fs::path path = out_dir / "hf_quant_config.json";
        nlohmann::ordered_json side;
        {
            std::ifstream in(path);
            side = nlohmann::ordered_json::parse(in);
        }
        side["quantization"]["exclude_modules"] = {
            "lm_head",        "model.language_model.embed_tokens*",
            "*self_attn*",    "*vision_tower*",
            "*embed_vision*", "model.language_model.layers.*.router*"};
        write_json_file(path, side, 4);
        return;
    }
    if (format == "ct-nvfp4") ignore.push_back("re:.*embed_tokens.*");
    ignore.push_back("re:.*router.*");  // the MoE router (no module of that name in a dense model)
    const fs::path path = out_dir / "config.json";
    nlohmann::ordered_json config;
    {
        std::ifstream in(path);
        config = nlohmann::ordered_json::parse(in);
    }
    config["quantization_config"]["ignore"] = ignore;
    write_json_file(path, config, 2);
}

}  // namespace

std::string write_gemma4_fixture(const fs::path& out_dir, const Gemma4Options& options) {
    if (!options.defect.empty() && options.defect != "layer-types" &&
        options.defect != "no-router-scale" && options.defect != "no-per-layer-embeddings" &&
        options.defect != "projector-width" && options.defect != "no-expert-up" &&
        options.defect != "expert-up-8bit" && options.defect != "per-layer-nvfp4")
        throw std::runtime_error("--gemma4-defect: unknown '" + options.defect + "'");
    if (options.defect == "per-layer-nvfp4" &&
        (!options.e2b || (options.format != "modelopt-nvfp4" && options.format != "ct-nvfp4")))
        throw std::runtime_error(
            "--gemma4-defect per-layer-nvfp4 needs --gemma4-e2b --format modelopt-nvfp4|ct-nvfp4");
    if (options.defect == "no-router-scale" && !options.moe)
        throw std::runtime_error("--gemma4-defect no-router-scale needs --gemma4-moe");
    if (options.defect == "no-per-layer-embeddings" && !options.e2b)
        throw std::runtime_error("--gemma4-defect no-per-layer-embeddings needs --gemma4-e2b");
    if ((options.defect == "no-expert-up" || options.defect == "expert-up-8bit") &&
        (!options.moe || options.format != "mlx"))
        throw std::runtime_error("--gemma4-defect " + options.defect +
                                 " needs --gemma4-moe --format mlx");
    if (options.e2b && options.moe)
        throw std::runtime_error("--gemma4-e2b and --gemma4-moe: one layout at a time");
    const G4Layout layout = g4_layout(options.e2b);
    const std::string& format = options.format;
    const bool int4 = format == "gptq" || format == "awq";
    const bool ct = format == "compressed-tensors";
    const bool nvidia = format == "modelopt-nvfp4" || format == "ct-nvfp4";
    if (format != "float" && format != "mcq" && format != "mlx" && !int4 && !ct && !nvidia)
        throw std::runtime_error(
            "--arch gemma4: --format float, mcq, mlx, gptq, awq, compressed-tensors, "
            "modelopt-nvfp4 or ct-nvfp4, not " +
            format);
    if (options.moe && format == "ct-nvfp4")
        throw std::runtime_error(
            "--gemma4-moe: --format float, mcq, mlx, gptq, awq, compressed-tensors or "
            "modelopt-nvfp4");
    const int64_t vocab = write_gemma4_tokenizer(out_dir);
    if (format != "mlx") write_g4_processor_config(out_dir);
    {
        std::ofstream out(out_dir / "config.json", std::ios::binary);
        out << g4_config(vocab, options.defect, options.moe, layout, g4_expert_ff(format)).dump(2)
            << "\n";
        if (!out) throw std::runtime_error((out_dir / "config.json").string() + ": cannot write");
    }
    const std::vector<G4Tensor> tensors = g4_tensors(vocab, options, layout);
    const std::string shape =
        (options.e2b ? std::string(", E2B layout: 6 layers (the last 3 KV-shared, double-wide), "
                                   "per-layer inputs of 64")
                     : std::string(", 4 layers (3 sliding, 1 full)")) +
        (options.moe ? ", MoE: 2 experts of " + std::to_string(g4_expert_ff(format)) + ", both used"
                     : std::string());
    if (options.mlx_unquantized && format != "mlx")
        throw std::runtime_error("--gemma4-mlx-unquantized needs --format mlx");
    if (format != "float" && !options.mlx_unquantized) {
        ModelPlan plan =
            g4_plan(tensors, vocab, format, layout, options.defect == "per-layer-nvfp4");
        if (format == "mcq") {
            write_model_files(out_dir, plan, 1, options.seed);
        } else if (ct) {  // llm-compressor W4A16 with groups of 32, BF16 scales
            PrequantOptions pq;
            pq.format = format;
            pq.scale_dtype = "bf16";
            check_prequant_options(pq, &plan);
            add_prequant_quantization(out_dir, pq);
            g4_say_float_modules(out_dir, format, layout);
            write_prequant_model_files(out_dir, plan, 1, options.seed, pq);
        } else if (nvidia) {
            NvidiaFp4Options nv;
            nv.format = format;
            add_nvidia_fp4_quantization(out_dir, nv);
            g4_say_float_modules(out_dir, format, layout);
            write_nvidia_fp4_model_files(out_dir, plan, 1, options.seed, nv);
        } else if (int4) {  // GPTQModel's defaults: symmetric GPTQ; AWQ asymmetric (its only kind)
            PrequantOptions pq;
            pq.format = format;
            pq.sym = format != "awq";
            write_prequant_fixture(out_dir, plan, options.seed, pq);
        } else {
            MlxOptions mlx;
            mlx.overrides = apply_mlx_recipe(plan, options.recipe);
            // mlx-lm's gemma4_text quant_predicate: the router's proj at 8 bits in groups of 64,
            // listed per module in "quantization".
            for (PlanUnit& unit : plan.units)
                if (unit.quantized && unit.quant.name.ends_with("router.proj.weight")) {
                    unit.quant.bits = unit.quant.meta_bits = 8;
                    unit.quant.group = unit.quant.meta_group = 64;
                    mlx.overrides[unit.quant.name.substr(0, unit.quant.name.size() - 7)] = {8, 64};
                }
            // A recipe that gives layer 0's up half other bits than its gate half.
            for (PlanUnit& unit : plan.units)
                if (options.defect == "expert-up-8bit" && unit.quantized &&
                    unit.quant.name.ends_with("layers.0.experts.switch_glu.up_proj.weight")) {
                    unit.quant.bits = unit.quant.meta_bits = 8;
                    mlx.overrides[unit.quant.name.substr(0, unit.quant.name.size() - 7)] = {8, 64};
                }
            add_mlx_quantization(out_dir, mlx);
            write_mlx_model_files(out_dir, plan, 1, options.seed, mlx);
        }
        return "gemma4, " + format + ", vocab " + std::to_string(vocab) + ", " +
               std::to_string(plan.units.size()) + " tensors" + shape;
    }
    std::vector<StTensor> stored;
    for (const G4Tensor& t : tensors)
        stored.push_back(seeded_bf16(t.name, t.shape, options.seed, [t](SplitMix64& rng) {
            return t.center + t.spread * rng.uniform(-1.0, 1.0);
        }));
    write_safetensors(out_dir / "model.safetensors", stored,
                      {{"format", options.mlx_unquantized ? "mlx" : "pt"}});
    return "gemma4, " + std::string(options.mlx_unquantized ? "mlx (unquantized), " : "") +
           "vocab " + std::to_string(vocab) + ", " + std::to_string(stored.size()) +
           " BF16 tensors" + shape;
}

}  // namespace mkfixture
