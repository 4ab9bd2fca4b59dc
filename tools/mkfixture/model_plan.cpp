// Presets (tiny, qwen3-0.6b, qwen3-8b), Qwen3 (or, for tiny, Qwen2 / Llama / Mistral) tensor
// naming, and the refusable defects.
#include "model_plan.hpp"

#include <stdexcept>

namespace mkfixture {

uint64_t PlanUnit::byte_count() const {
    if (!quantized) return static_cast<uint64_t>(norm.length) * 4;
    const uint64_t codes = quant.packed_bytes() - (quant.drop_last_byte ? 1 : 0);
    return codes + 2 * 2 * static_cast<uint64_t>(quant.group_count());
}

const std::vector<std::string>& defect_names() {
    static const std::vector<std::string> names = {
        "group16", "bits5",        "bytecount", "metadata-lie", "metadata-lie-counts",
        "padding", "unknown-name", "no-merges"};
    return names;
}

namespace {

struct LayerQuant {
    int bits, group;
};

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
    } else {
        throw std::runtime_error("--preset: unknown preset '" + options.preset +
                                 "' (expected tiny, qwen3-0.6b or qwen3-8b)");
    }
    if (d.vocab < 1) throw std::runtime_error("--preset: vocabulary size must be positive");
    const bool qwen2 = options.arch == "qwen2";
    const bool llama = options.arch == "llama", mistral = options.arch == "mistral";
    const bool gemma = options.arch.rfind("gemma", 0) == 0;
    const bool gemma2_norms = options.arch == "gemma2" || options.arch == "gemma3";
    const bool gemma3 = options.arch == "gemma3";
    if (!qwen2 && !llama && !mistral && !gemma && options.arch != "qwen3")
        throw std::runtime_error("--arch: unknown architecture '" + options.arch +
                                 "' (expected qwen3, qwen2, llama, mistral, gemma, gemma2 or "
                                 "gemma3)");
    if (gemma && options.arch != "gemma" && !gemma2_norms)
        throw std::runtime_error("--arch: unknown architecture '" + options.arch + "'");
    if (options.multimodal && !gemma3)
        throw std::runtime_error("--multimodal applies to --arch gemma3");
    if (options.arch != "qwen3" && options.preset != "tiny")
        throw std::runtime_error("--arch " + options.arch + ": only with --preset tiny");
    // mistral tiny: head_dim set apart from hidden/heads (64/4), as in Mistral-Nemo.
    if (mistral) d.head_dim = 32;
    const bool qk_norm = (!qwen2 && !llama && !mistral && !gemma) || gemma3;
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
    const bool qkv_bias = qwen2 || options.attention_bias;
    const std::string prefix = options.multimodal     ? "language_model.model."
                               : options.prefix_model ? "model."
                                                      : "";
    std::vector<PlanUnit>& units = plan.units;

    units.push_back(
        quant_unit(prefix + "embed_tokens.weight", d.embedding_rows, d.hidden, embedding));
    for (int64_t layer = 0; layer < d.layers; ++layer) {
        const LayerQuant q = layer < first_3bit_layer ? LayerQuant{4, 64} : LayerQuant{3, 32};
        const std::string p = prefix + "layers." + std::to_string(layer) + ".";
        const int64_t q_width = d.heads * d.head_dim, kv_width = d.kv_heads * d.head_dim;
        units.push_back(norm(p + "input_layernorm.weight", d.hidden));
        units.push_back(quant_unit(p + "self_attn.q_proj.weight", q_width, d.hidden, q));
        if (qkv_bias) units.push_back(bias_unit(p + "self_attn.q_proj.bias", q_width));
        units.push_back(quant_unit(p + "self_attn.k_proj.weight", kv_width, d.hidden, q));
        if (qkv_bias) units.push_back(bias_unit(p + "self_attn.k_proj.bias", kv_width));
        units.push_back(quant_unit(p + "self_attn.v_proj.weight", kv_width, d.hidden, q));
        if (qkv_bias) units.push_back(bias_unit(p + "self_attn.v_proj.bias", kv_width));
        units.push_back(quant_unit(p + "self_attn.o_proj.weight", d.hidden, q_width, q));
        if (qk_norm) {
            units.push_back(norm(p + "self_attn.q_norm.weight", d.head_dim));
            units.push_back(norm(p + "self_attn.k_norm.weight", d.head_dim));
        }
        units.push_back(norm(p + "post_attention_layernorm.weight", d.hidden));
        if (gemma2_norms) units.push_back(norm(p + "pre_feedforward_layernorm.weight", d.hidden));
        units.push_back(quant_unit(p + "mlp.gate_proj.weight", d.intermediate, d.hidden, q));
        units.push_back(quant_unit(p + "mlp.up_proj.weight", d.intermediate, d.hidden, q));
        units.push_back(quant_unit(p + "mlp.down_proj.weight", d.hidden, d.intermediate, q));
        if (gemma2_norms) units.push_back(norm(p + "post_feedforward_layernorm.weight", d.hidden));
    }
    units.push_back(norm(prefix + "norm.weight", d.hidden));
    if (options.multimodal) {
        // A stand-in for the SigLIP tower and the projector: not part of the text GGUF.
        units.push_back(norm_unit("vision_tower.vision_model.post_layernorm.weight", 32));
        units.push_back(
            norm_unit("vision_tower.vision_model.encoder.layers.0.layer_norm1.weight", 32));
        units.push_back(quant_unit("vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight", 64,
                                   64, {4, 64}));
        units.push_back(norm_unit("multi_modal_projector.mm_soft_emb_norm.weight", 32));
    }
    if (options.untied)  // lm_head stays unprefixed, like HF checkpoints
        units.push_back(quant_unit("lm_head.weight", d.vocab, d.hidden, embedding));

    if (options.corners) {
        const std::string layer0 = prefix + "layers.0.";
        for (PlanUnit& u : units)
            if (u.quantized && u.quant.name.rfind(layer0, 0) == 0) u.quant.corners = true;
    }

    const std::string q_proj0 = prefix + "layers.0.self_attn.q_proj.weight";
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
