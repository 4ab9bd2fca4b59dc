// Presets (tiny, qwen3-0.6b, qwen3-8b), Qwen3 (or, for tiny, Qwen2 / Llama / Mistral) tensor
// naming, and the refusable defects.
#include "model_plan.hpp"

#include <stdexcept>

#include "mistral3_vision_files.hpp"
#include "qwen2vl_files.hpp"
#include "qwen3vl_files.hpp"

namespace mkfixture {

uint64_t PlanUnit::byte_count() const {
    if (!quantized) return static_cast<uint64_t>(norm.length) * 4;
    const uint64_t codes = quant.packed_bytes() - (quant.drop_last_byte ? 1 : 0);
    return codes + 2 * 2 * static_cast<uint64_t>(quant.group_count());
}

const std::vector<std::string>& moe_defect_names() {
    static const std::vector<std::string> names = {"expert-missing", "expert-bits",
                                                   "experts-count"};
    return names;
}

const std::vector<std::string>& defect_names() {
    static const std::vector<std::string> names = {
        "group16", "bits5",        "bytecount", "metadata-lie", "metadata-lie-counts",
        "padding", "unknown-name", "no-merges"};
    return names;
}

PlanUnit quant_unit(const std::string& name, int64_t rows, int64_t cols, LayerQuant q) {
    PlanUnit unit;
    unit.quantized = true;
    QuantTensor& t = unit.quant;
    t.name = name;
    t.rows = t.meta_rows = rows;
    t.cols = t.meta_cols = cols;
    t.bits = t.meta_bits = q.bits;
    t.group = t.meta_group = q.group;
    return unit;
}

PlanUnit vector_unit(const std::string& name, int64_t length, double center, double spread) {
    PlanUnit unit;
    unit.norm = NormTensor{name, length, center, spread};
    return unit;
}

namespace {

PlanUnit norm_unit(const std::string& name, int64_t length) {
    PlanUnit unit;
    unit.norm = NormTensor{name, length};
    return unit;
}

// A q/k/v projection bias (qwen2, llama with attention_bias): small values around 0.
PlanUnit bias_unit(const std::string& name, int64_t length) {
    PlanUnit unit;
    unit.norm = NormTensor{name, length, 0.0, 0.1};
    return unit;
}

// gemma-3-4b-it's SigLIP tower and projector names (model.safetensors.index.json), at the sizes
// of write_config_json's vision_config: hidden 32, intermediate 64, 2 layers, 3 channels, patch
// 14, image 224 (16 x 16 = 256 positions). Float in every format: the quantizers leave the tower
// unquantized. The projector's weights lie in [0.05, 0.45], so a BF16 copy is exact in F16 (the
// converter's forced type) while an F32 one is not.
void append_siglip_tower(std::vector<PlanUnit>& units, int64_t text_hidden) {
    constexpr int64_t kHidden = 32, kFfn = 64, kLayers = 2;
    const auto tensor = [&](const std::string& name, std::vector<int64_t> dims, double center,
                            double spread) {
        int64_t length = 1;
        for (const int64_t d : dims) length *= d;
        PlanUnit unit = vector_unit(name, length, center, spread);
        if (dims.size() > 1) unit.norm.dims = std::move(dims);
        units.push_back(std::move(unit));
    };
    const std::string v = "vision_tower.vision_model.";
    tensor(v + "embeddings.patch_embedding.weight", {kHidden, 3, 14, 14}, 0.0, 0.05);
    tensor(v + "embeddings.patch_embedding.bias", {kHidden}, 0.0, 0.1);
    tensor(v + "embeddings.position_embedding.weight", {256, kHidden}, 0.0, 0.05);
    for (int64_t layer = 0; layer < kLayers; ++layer) {
        const std::string p = v + "encoder.layers." + std::to_string(layer) + ".";
        for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
            tensor(p + "self_attn." + proj + ".weight", {kHidden, kHidden}, 0.0, 0.05);
            tensor(p + "self_attn." + proj + ".bias", {kHidden}, 0.0, 0.1);
        }
        for (const char* norm : {"layer_norm1", "layer_norm2"}) {
            tensor(p + norm + ".weight", {kHidden}, 1.0, 0.05);
            tensor(p + norm + ".bias", {kHidden}, 0.0, 0.1);
        }
        tensor(p + "mlp.fc1.weight", {kFfn, kHidden}, 0.0, 0.05);
        tensor(p + "mlp.fc1.bias", {kFfn}, 0.0, 0.1);
        tensor(p + "mlp.fc2.weight", {kHidden, kFfn}, 0.0, 0.05);
        tensor(p + "mlp.fc2.bias", {kHidden}, 0.0, 0.1);
    }
    tensor(v + "post_layernorm.weight", {kHidden}, 1.0, 0.05);
    tensor(v + "post_layernorm.bias", {kHidden}, 0.0, 0.1);
    tensor("multi_modal_projector.mm_input_projection_weight", {kHidden, text_hidden}, 0.25, 0.2);
    // Gemma3RMSNorm: stored around 0 (the model computes 1 + weight).
    tensor("multi_modal_projector.mm_soft_emb_norm.weight", {kHidden}, 0.0, 0.5);
}

bool is_moe_arch(const std::string& arch) {
    return arch == "qwen3_moe" || arch == "qwen2_moe" || arch == "mixtral";
}

// The mixture-of-experts block of one layer (p = "model.layers.N."): the router (8-bit group 64
// for qwen, as mlx-lm's quant predicate stores it; the layer's bits for mixtral), the experts (one
// tensor per expert, or MLX's stacked switch_mlp), and qwen2_moe's shared expert with its gate.
void append_moe_block(std::vector<PlanUnit>& units, const std::string& p, const Dims& d,
                      const std::string& arch, LayerQuant q, bool stacked) {
    const bool mixtral = arch == "mixtral";
    const std::string block = mixtral ? "block_sparse_moe." : "mlp.";
    const LayerQuant router = mixtral ? q : LayerQuant{8, 64};
    units.push_back(quant_unit(p + block + "gate.weight", d.experts, d.hidden, router));
    // HF order of the three projections: gate, up, down (mixtral w1, w3, w2).
    struct Projection {
        const char* per_expert;  // after "experts.{e}."
        const char* stacked;     // after "switch_mlp."
        bool down;
    };
    const Projection qwen[] = {{"gate_proj.weight", "gate_proj.weight", false},
                               {"up_proj.weight", "up_proj.weight", false},
                               {"down_proj.weight", "down_proj.weight", true}};
    const Projection mix[] = {{"w1.weight", "gate_proj.weight", false},
                              {"w3.weight", "up_proj.weight", false},
                              {"w2.weight", "down_proj.weight", true}};
    const int64_t ffn = d.moe_ffn;
    if (stacked) {
        for (const Projection& proj : mixtral ? mix : qwen) {
            PlanUnit unit =
                quant_unit(p + block + "switch_mlp." + proj.stacked,
                           d.experts * (proj.down ? d.hidden : ffn), proj.down ? ffn : d.hidden, q);
            unit.quant.experts = d.experts;
            units.push_back(unit);
        }
    } else {
        for (int64_t e = 0; e < d.experts; ++e)
            for (const Projection& proj : mixtral ? mix : qwen)
                units.push_back(
                    quant_unit(p + block + "experts." + std::to_string(e) + "." + proj.per_expert,
                               proj.down ? d.hidden : ffn, proj.down ? ffn : d.hidden, q));
    }
    if (arch == "qwen2_moe") {
        units.push_back(
            quant_unit(p + "mlp.shared_expert.gate_proj.weight", d.shared_ffn, d.hidden, q));
        units.push_back(
            quant_unit(p + "mlp.shared_expert.up_proj.weight", d.shared_ffn, d.hidden, q));
        units.push_back(
            quant_unit(p + "mlp.shared_expert.down_proj.weight", d.hidden, d.shared_ffn, q));
        units.push_back(quant_unit(p + "mlp.shared_expert_gate.weight", 1, d.hidden, router));
    }
}

QuantTensor* find_quant(std::vector<PlanUnit>& units, const std::string& name) {
    for (PlanUnit& u : units)
        if (u.quantized && u.quant.name == name) return &u.quant;
    throw std::logic_error("mkfixture: no tensor " + name);
}

}  // namespace

ModelPlan make_plan(const PlanOptions& options) {
    ModelPlan plan;
    Dims& d = plan.dims;
    LayerQuant embedding{3, 64};
    int first_3bit_layer = 0;
    if (options.preset == "qwen3-0.6b") {
        d = Dims{1024, 28, 16, 8, 128, 3072, 151669};
        first_3bit_layer = 7;
    } else if (options.preset == "qwen3-8b") {
        d = Dims{4096, 36, 32, 8, 128, 12288, 151669};
        first_3bit_layer = 9;  // the first quarter of the layers at 4 bits, as for qwen3-0.6b
    } else if (options.preset == "tiny") {
        d = Dims{64, 2, 4, 2, 16, 128, options.vocab};
        first_3bit_layer = 1;
        if (options.hidden != 0) {
            if (options.hidden % 32 != 0 || options.hidden < 32)
                throw std::runtime_error("--hidden: a positive multiple of 32");
            d.hidden = options.hidden;
        }
    } else if (options.preset == "qwen3-30b-a3b-2layers") {
        // Qwen3-30B-A3B's shapes, its first two layers (both at 4 bits / group 64 in mcq).
        d = Dims{2048, 2, 32, 4, 128, 6144, options.vocab};
        first_3bit_layer = 2;
    } else {
        throw std::runtime_error(
            "--preset: unknown preset '" + options.preset +
            "' (expected tiny, qwen3-0.6b, qwen3-8b or qwen3-30b-a3b-2layers)");
    }
    if (d.vocab < 1) throw std::runtime_error("--preset: vocabulary size must be positive");
    const bool moe = is_moe_arch(options.arch);
    const bool qwen2vl = is_qwen2vl_arch(options.arch);
    const bool qwen3vl = is_qwen3vl_arch(options.arch);
    const bool qwen2 = options.arch == "qwen2" || options.arch == "qwen2_moe" || qwen2vl;
    const bool mixtral = options.arch == "mixtral";
    const bool phi3 = options.arch == "phi3";
    const bool llama = options.arch == "llama" || mixtral, mistral = options.arch == "mistral";
    const bool gemma = options.arch.rfind("gemma", 0) == 0;
    const bool gemma2_norms = options.arch == "gemma2" || options.arch == "gemma3";
    const bool gemma3 = options.arch == "gemma3";
    const bool seed_oss = options.arch == "seed_oss";
    const bool olmo2 = options.arch == "olmo2" || options.arch == "olmo3";
    const bool smollm3 = options.arch == "smollm3";
    const bool mistral3 = options.arch == "mistral3";
    const bool apertus = options.arch == "apertus";
    if (!qwen2 && !llama && !mistral && !phi3 && !gemma && !seed_oss && !olmo2 && !smollm3 &&
        !mistral3 && !apertus && !qwen3vl && options.arch != "qwen3" && options.arch != "qwen3_moe")
        throw std::runtime_error("--arch: unknown architecture '" + options.arch +
                                 "' (expected qwen3, qwen2, llama, mistral, qwen3_moe, qwen2_moe, "
                                 "mixtral, phi3, gemma, gemma2, gemma3, seed_oss, olmo2, olmo3, "
                                 "smollm3, mistral3, apertus, qwen2_vl, qwen2_5_vl or qwen3_vl)");
    if (gemma && options.arch != "gemma" && !gemma2_norms)
        throw std::runtime_error("--arch: unknown architecture '" + options.arch + "'");
    if (options.multimodal && !gemma3 && !mistral3)
        throw std::runtime_error("--multimodal applies to --arch gemma3 and mistral3");
    // mistral3 --multimodal: --vl-merger-width is the projector's input width (linear_1).
    // --vl-split: transformers >= 4.52's layout (model.language_model.*, model.vision_tower.*).
    const bool pixtral_width = mistral3 && options.multimodal && options.vl_temporal == 2;
    if ((options.vl_split || options.vl_temporal != 2 || options.vl_merger_width) && !qwen2vl &&
        !qwen3vl && !pixtral_width)
        throw std::runtime_error(
            "--vl-split / --vl-temporal apply to --arch qwen2_vl / qwen2_5_vl / qwen3_vl");
    if (options.vl_split && qwen3vl)
        throw std::runtime_error("--vl-split: Qwen3-VL has only the model.language_model. layout");
    if (options.preset == "qwen3-30b-a3b-2layers" && options.arch != "qwen3_moe")
        throw std::runtime_error("--preset qwen3-30b-a3b-2layers needs --arch qwen3_moe");
    if (options.hidden != 0 && options.preset != "tiny")
        throw std::runtime_error("--hidden: only with --preset tiny");
    if (options.arch != "qwen3" && options.preset != "tiny" &&
        options.preset != "qwen3-30b-a3b-2layers")
        throw std::runtime_error("--arch " + options.arch + ": only with --preset tiny");
    if (moe) {
        if (options.preset == "qwen3-30b-a3b-2layers") {
            d.experts = 128, d.experts_used = 8, d.moe_ffn = 768;
        } else {
            d.experts = options.experts, d.experts_used = options.experts_used;
            d.moe_ffn = options.moe_ffn;
        }
        if (d.experts < 2 || d.experts_used < 1 || d.experts_used > d.experts || d.moe_ffn < 64 ||
            d.moe_ffn % 64 != 0)
            throw std::runtime_error(
                "--experts >= 2, 1 <= --experts-used <= --experts, --moe-ffn a multiple of 64");
        if (qwen2) d.shared_ffn = 2 * d.moe_ffn;
        if (mixtral) d.intermediate = d.moe_ffn;  // Mixtral's experts are intermediate_size wide
    }
    if (!moe && !options.moe_defect.empty())
        throw std::runtime_error("--moe-defect needs an MoE --arch");
    // mistral tiny: head_dim set apart from hidden/heads (64/4), as in Mistral-Nemo.
    // seed_oss tiny too (Seed-OSS-36B: head_dim 128, hidden/heads 64).
    // mistral3 too (Mistral Small 3: head_dim 128, hidden/heads 160).
    if (mistral || seed_oss || mistral3) d.head_dim = 32;
    // smollm3 tiny: 4 layers, so that the last one is a no-rope layer (every 4th).
    if (smollm3) d.layers = 4;
    // qwen3_vl tiny: 3 layers, more than its 2 deepstack layers (llama.cpp's qwen3vl graph adds the
    // deepstack features after the last layer's output rows are picked when there are no more).
    if (qwen3vl) d.layers = 3;
    const bool qk_norm =
        (!qwen2 && !llama && !mistral && !phi3 && !gemma && !seed_oss && !smollm3 && !mistral3) ||
        gemma3;
    // gemma: norms as HF stores them, around 0 (the model computes x * (1 + weight)).
    const double norm_center = gemma ? 0.0 : 1.0, norm_spread = gemma ? 0.5 : 0.05;
    const auto norm = [&](const std::string& name, int64_t length) {
        PlanUnit unit = norm_unit(name, length);
        unit.norm.center = norm_center;
        unit.norm.spread = norm_spread;
        return unit;
    };
    d.embedding_rows = gemma3 ? d.vocab + 32 : d.vocab;
    if (options.attention_bias && !llama && !mistral)
        throw std::runtime_error("--attention-bias applies to --arch llama/mistral");
    const bool qkv_bias = qwen2 || seed_oss || options.attention_bias;
    // mistral3: Mistral3ForConditionalGeneration as transformers 5 saves it (Ministral 3).
    const std::string prefix = qwen2vl   ? qwen2vl_text_prefix(options.vl_split)
                               : qwen3vl ? qwen3vl_text_prefix()
                               : options.multimodal && mistral3 && options.vl_split
                                   ? "model.language_model."
                               : options.multimodal   ? "language_model.model."
                               : mistral3             ? "model.language_model."
                               : options.prefix_model ? "model."
                                                      : "";
    std::vector<PlanUnit>& units = plan.units;

    if ((d.embedding_rows * d.hidden) % embedding.group != 0) embedding.group = 32;
    units.push_back(
        quant_unit(prefix + "embed_tokens.weight", d.embedding_rows, d.hidden, embedding));
    for (int64_t layer = 0; layer < d.layers; ++layer) {
        const LayerQuant q = layer < first_3bit_layer ? LayerQuant{4, 64} : LayerQuant{3, 32};
        const std::string p = prefix + "layers." + std::to_string(layer) + ".";
        const int64_t q_width = d.heads * d.head_dim, kv_width = d.kv_heads * d.head_dim;
        // apertus: its own names for the two pre-norms.
        if (!olmo2)
            units.push_back(norm(
                p + (apertus ? "attention_layernorm.weight" : "input_layernorm.weight"), d.hidden));
        if (phi3) {  // fused as Phi-3 stores them: q, k, v rows in one; gate rows, then up
            units.push_back(
                quant_unit(p + "self_attn.qkv_proj.weight", q_width + 2 * kv_width, d.hidden, q));
            units.push_back(quant_unit(p + "self_attn.o_proj.weight", d.hidden, q_width, q));
            units.push_back(norm(p + "post_attention_layernorm.weight", d.hidden));
            units.push_back(
                quant_unit(p + "mlp.gate_up_proj.weight", 2 * d.intermediate, d.hidden, q));
            units.push_back(quant_unit(p + "mlp.down_proj.weight", d.hidden, d.intermediate, q));
            continue;
        }
        units.push_back(quant_unit(p + "self_attn.q_proj.weight", q_width, d.hidden, q));
        if (qkv_bias) units.push_back(bias_unit(p + "self_attn.q_proj.bias", q_width));
        units.push_back(quant_unit(p + "self_attn.k_proj.weight", kv_width, d.hidden, q));
        if (qkv_bias) units.push_back(bias_unit(p + "self_attn.k_proj.bias", kv_width));
        units.push_back(quant_unit(p + "self_attn.v_proj.weight", kv_width, d.hidden, q));
        if (qkv_bias) units.push_back(bias_unit(p + "self_attn.v_proj.bias", kv_width));
        units.push_back(quant_unit(p + "self_attn.o_proj.weight", d.hidden, q_width, q));
        if (qk_norm) {  // olmo2: over the whole projection, not per head
            units.push_back(norm(p + "self_attn.q_norm.weight", olmo2 ? q_width : d.head_dim));
            units.push_back(norm(p + "self_attn.k_norm.weight", olmo2 ? kv_width : d.head_dim));
        }
        units.push_back(
            norm(p + (apertus ? "feedforward_layernorm.weight" : "post_attention_layernorm.weight"),
                 d.hidden));
        if (apertus) {  // xIELU: up and down only, then the activation's four numbers
            units.push_back(quant_unit(p + "mlp.up_proj.weight", d.intermediate, d.hidden, q));
            units.push_back(quant_unit(p + "mlp.down_proj.weight", d.hidden, d.intermediate, q));
            // Apertus-8B's layout: alpha_p / alpha_n [1] (stored before softplus), beta and eps [].
            const std::pair<const char*, double> xielu[] = {
                {"alpha_p", 0.8}, {"alpha_n", 0.55}, {"beta", 0.5}, {"eps", -1e-6}};
            for (const auto& [param, center] : xielu) {
                PlanUnit unit = norm_unit(p + "mlp.act_fn." + param, 1);
                unit.norm.center = center;
                unit.norm.spread = center == 0.5 || center < 0 ? 0.0 : 0.1;
                unit.norm.scalar = center == 0.5 || center < 0;
                units.push_back(unit);
            }
            continue;
        }
        if (moe) {
            append_moe_block(units, p, d, options.arch, q, options.stacked_experts);
            continue;
        }
        if (gemma2_norms) units.push_back(norm(p + "pre_feedforward_layernorm.weight", d.hidden));
        units.push_back(quant_unit(p + "mlp.gate_proj.weight", d.intermediate, d.hidden, q));
        units.push_back(quant_unit(p + "mlp.up_proj.weight", d.intermediate, d.hidden, q));
        units.push_back(quant_unit(p + "mlp.down_proj.weight", d.hidden, d.intermediate, q));
        if (gemma2_norms || olmo2)
            units.push_back(norm(p + "post_feedforward_layernorm.weight", d.hidden));
    }
    units.push_back(norm(prefix + "norm.weight", d.hidden));
    if (options.multimodal && gemma3) append_siglip_tower(units, d.hidden);
    if (qwen2vl)
        append_qwen2vl_tower(units, options.arch,
                             options.vl_merger_width ? options.vl_merger_width : d.hidden,
                             options.vl_split, options.vl_temporal);
    if (qwen3vl)
        append_qwen3vl_tower(units, options.vl_merger_width ? options.vl_merger_width : d.hidden,
                             options.vl_temporal);
    if (mistral3 && options.multimodal) {
        append_pixtral_tower(units, d.hidden, options.vl_merger_width, options.vl_split);
    } else if (mistral3) {
        // Stand-ins for the Pixtral tower and the projector: not part of the text GGUF.
        units.push_back(norm_unit("model.vision_tower.ln_pre.weight", 32));
        units.push_back(
            norm_unit("model.vision_tower.transformer.layers.0.attention_norm.weight", 32));
        units.push_back(quant_unit("model.multi_modal_projector.linear_1.weight", 64, 64, {4, 64}));
        units.push_back(norm_unit("model.multi_modal_projector.norm.weight", 32));
    }
    // lm_head stays unprefixed, like HF checkpoints (Mistral Small 3.1's under language_model.)
    if (options.untied)
        units.push_back(quant_unit(mistral3 && options.multimodal && !options.vl_split
                                       ? "language_model.lm_head.weight"
                                       : "lm_head.weight",
                                   d.vocab, d.hidden, embedding));

    if (options.corners) {
        const std::string layer0 = prefix + "layers.0.";
        for (PlanUnit& u : units)
            if (u.quantized && u.quant.name.rfind(layer0, 0) == 0) u.quant.corners = true;
    }

    if (options.moe_defect == "expert-missing" || options.moe_defect == "expert-bits") {
        if (options.stacked_experts)
            throw std::runtime_error("--moe-defect " + options.moe_defect +
                                     " needs one tensor per expert (--format mcq or float)");
        const std::string layer0 = prefix + "layers.0." + (mixtral ? "block_sparse_moe" : "mlp");
        if (options.moe_defect == "expert-missing") {
            const std::string last = layer0 + ".experts." + std::to_string(d.experts - 1) +
                                     (mixtral ? ".w3.weight" : ".up_proj.weight");
            std::erase_if(units,
                          [&](const PlanUnit& u) { return u.quantized && u.quant.name == last; });
        } else {
            QuantTensor* t = find_quant(
                units, layer0 + ".experts.1." + (mixtral ? "w1" : "gate_proj") + ".weight");
            t->bits = t->meta_bits = 5;
        }
    } else if (!options.moe_defect.empty() && options.moe_defect != "experts-count") {
        throw std::runtime_error("--moe-defect: unknown defect '" + options.moe_defect + "'");
    }

    const std::string q_proj0 =
        prefix + (phi3 ? "layers.0.self_attn.qkv_proj.weight" : "layers.0.self_attn.q_proj.weight");
    const std::string& defect = options.defect;
    if (defect.empty() || defect == "no-merges") {
        // no tensor change
    } else if (defect == "group16") {
        QuantTensor* t = find_quant(units, q_proj0);
        t->group = t->meta_group = 16;
    } else if (defect == "bits5") {
        QuantTensor* t = find_quant(units, q_proj0);
        t->bits = t->meta_bits = 5;
    } else if (defect == "bytecount") {
        find_quant(units, q_proj0)->drop_last_byte = true;
    } else if (defect == "metadata-lie") {
        // Written as bits 4 / group 64; the metadata claims bits 2 / group 128 with twice the
        // rows, so every byte count still agrees (N*4/8 == 2N*2/8, N/64 == 2N/128).
        QuantTensor* t = find_quant(units, q_proj0);
        t->bits = 4;
        t->group = 64;
        t->meta_bits = 2;
        t->meta_group = 128;
        t->meta_rows = 2 * t->rows;
    } else if (defect == "metadata-lie-counts") {
        // Written as bits 4 / group 64; the metadata claims bits 2 / group 128 for the same shape:
        // the same group*bits, so only the spec's byte-count checks can refuse it.
        QuantTensor* t = find_quant(units, q_proj0);
        t->bits = 4;
        t->group = 64;
        t->meta_bits = 2;
        t->meta_group = 128;
    } else if (defect == "padding") {
        // An extra quantized tensor [1, 3] at 3 bits (9 bits of codes in 2 bytes) whose 7
        // padding bits are all set: the smallest tensor that has padding at all.
        PlanUnit extra =
            quant_unit(prefix + "layers.0.self_attn.padding_probe.weight", 1, 3, {3, 3});
        extra.quant.dirty_padding = true;
        units.insert(units.begin() + 1, extra);
    } else if (defect == "unknown-name") {
        const int bits = first_3bit_layer > 0 ? 4 : 3, group = first_3bit_layer > 0 ? 64 : 32;
        units.insert(units.begin() + 1, quant_unit(prefix + "layers.0.mlp.extra_proj.weight",
                                                   d.intermediate, d.hidden, {bits, group}));
    } else {
        throw std::runtime_error("--defect: unknown defect '" + defect + "'");
    }
    return plan;
}

std::vector<std::vector<PlanUnit>> split_into_shards(const std::vector<PlanUnit>& units,
                                                     int shard_count) {
    if (shard_count < 1 || static_cast<size_t>(shard_count) > units.size())
        throw std::runtime_error("--shards: must be between 1 and " + std::to_string(units.size()));
    uint64_t total = 0;
    for (const PlanUnit& u : units) total += u.byte_count();
    std::vector<std::vector<PlanUnit>> shards(static_cast<size_t>(shard_count));
    uint64_t done = 0;
    size_t shard = 0;
    for (size_t i = 0; i < units.size(); ++i) {
        const size_t units_left = units.size() - i;
        const size_t shards_left_after = shards.size() - shard - 1;
        // Move on when this shard reached its share, or when the rest need one unit each.
        const bool share_reached =
            !shards[shard].empty() && done * shards.size() >= total * (shard + 1);
        const bool must_move = !shards[shard].empty() && units_left <= shards_left_after;
        if ((share_reached || must_move) && shard + 1 < shards.size()) ++shard;
        shards[shard].push_back(units[i]);
        done += units[i].byte_count();
    }
    return shards;
}

}  // namespace mkfixture
