// nomic-bert (nomic-embed-text v1 / v1.5; config model_type nomic_bert): llama.cpp's nomic-bert
// graph (docs/architectures.md "nomic-bert"). A post-LayerNorm BERT without position tables:
// NEOX rope (no row permutation), the fused Wqkv kept fused as attn_qkv (q | k | v row blocks, the
// split llama.cpp's graph makes), and the SwiGLU pair fc11 / fc12 as ffn_up / ffn_gate (HF
// computes fc11(x) * silu(fc12(x)), llama.cpp up * silu(gate)), fc2 as ffn_down. Every tensor is a
// rename; token_types is written exact F32. config.json uses GPT-2 names (n_embd, n_layer, ...),
// read in the converter's search order; NomicBertModel's asserts are refusals, and its context
// rewrite (n_positions 8192 with max_trained_positions 2048 -> 2048) is applied. The MoE variant
// (nomic-embed-text-v2-moe: an expert transpose, not exact on quantized codes) is refused.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace nomic_bert_record {

using nlohmann::json;

constexpr std::string_view kModelTypes[] = {"nomic_bert"};

constexpr TensorSpec layer_norm(std::string_view hf, std::string_view gguf) {
    return {hf, gguf, Presence::required, Presence::required, 1, {Dim::hidden}};
}
// A Linear without bias (ne {in, out}); NomicBertModel asserts the dense model has none.
constexpr TensorSpec linear(std::string_view hf, std::string_view gguf, Dim in, Dim out) {
    return {hf, gguf, Presence::required, Presence::absent, 2, {in, out}};
}

constexpr TensorSpec kFirst[] = {
    {"embeddings.word_embeddings",
     "token_embd",
     Presence::required,
     Presence::absent,
     2,
     {Dim::hidden, Dim::vocab}},
    exact_f32_row("embeddings.token_type_embeddings", "token_types", Dim::token_types,
                  SourceRole::table_f32),
    layer_norm("emb_ln", "token_embd_norm"),
};
constexpr TensorSpec kLayer[] = {
    linear("attn.Wqkv", "attn_qkv", Dim::hidden, Dim::qkv_width),
    linear("attn.out_proj", "attn_output", Dim::hidden, Dim::hidden),
    layer_norm("norm1", "attn_output_norm"),
    linear("mlp.fc11", "ffn_up", Dim::hidden, Dim::ffn),
    linear("mlp.fc12", "ffn_gate", Dim::hidden, Dim::ffn),
    linear("mlp.fc2", "ffn_down", Dim::ffn, Dim::hidden),
    layer_norm("norm2", "layer_output_norm"),
};
// TextModel.set_gguf_parameters (rope.freq_base from rotary_emb_base, no head_count_kv), then
// BertModel's causal flag.
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,         ArchKv::context_length, ArchKv::embedding_length,
    ArchKv::feed_forward_length, ArchKv::head_count,     ArchKv::rope_freq_base,
    ArchKv::layer_norm_epsilon,  ArchKv::causal_false,
};

[[noreturn]] void refuse(const std::string& field, const std::string& what,
                         const std::string& expected) {
    throw_input_error("config.json", field,
                      what + " (llama.cpp's converter and nomic-bert graph take only this)",
                      expected);
}

// `field` must be present and equal `want` (NomicBertModel.__init__ reads it with hparams[...]).
void require_value(const json& root, const char* field, const json& want) {
    const auto it = root.find(field);
    if (it == root.end()) refuse(field, "missing", want.dump());
    if (*it != want) refuse(field, "is " + it->dump(), want.dump());
}

// NomicBertModel.__init__ (its asserts and the context rewrite) and TextModel's search order for
// the GPT-2 names, as config.json fields read_model_config understands.
void prepare_nomic_bert_config(json& root) {
    if (const auto moe = root.find("moe_every_n_layers");
        moe != root.end() && !moe->is_null() && *moe != 0 && *moe != false)
        refuse("moe_every_n_layers",
               "is set: nomic-bert-moe (v2-moe) needs its experts' w2 transposed, which is not "
               "exact",
               "a dense nomic-bert (v1 / v1.5)");
    require_value(root, "activation_function", "swiglu");
    require_value(root, "causal", false);
    for (const char* field :
         {"qkv_proj_bias", "mlp_fc1_bias", "mlp_fc2_bias", "prenorm", "rotary_emb_interleaved"})
        require_value(root, field, false);
    require_value(root, "rotary_emb_scale_base", nullptr);
    const auto fraction = root.find("rotary_emb_fraction");
    if (fraction == root.end() || !fraction->is_number() || fraction->get<double>() != 1.0)
        refuse("rotary_emb_fraction", fraction == root.end() ? "missing" : "is " + fraction->dump(),
               "1.0");
    const std::pair<const char*, const char*> kAliases[] = {
        {"hidden_size", "n_embd"},         {"num_hidden_layers", "n_layer"},
        {"num_attention_heads", "n_head"}, {"intermediate_size", "n_inner"},
        {"rope_theta", "rotary_emb_base"},
    };
    for (const auto& [field, gpt2] : kAliases)
        if ((!root.contains(field) || root[field].is_null()) && root.contains(gpt2))
            root[field] = root[gpt2];
    const auto positions = root.find("n_positions");
    if (positions == root.end() || !positions->is_number_unsigned())
        refuse("n_positions", "missing or not a count", "8192 (nomic-embed-text v1 / v1.5)");
    const json trained = root.value("max_trained_positions", json(2048));
    const uint64_t npos = positions->get<uint64_t>();
    if (npos == 8192 && trained == 2048)
        root["n_positions"] = 2048;  // v1 / v1.5 are trained for 2048 tokens
    else if (npos == 2048 && trained == 2048)
        root["n_positions"] = 512;
    else
        refuse("n_positions",
               std::to_string(npos) + " with max_trained_positions " + trained.dump() +
                   " is not a nomic-embed-text layout",
               "8192 with 2048 (v1 / v1.5) or 2048 with 2048");
}

constexpr Architecture kNomicBert = [] {
    Architecture a{"nomic-bert", kModelTypes, kFirst, kLayer, {}, kKvs, {}};
    a.hf_layer_prefix = "encoder.layers.";
    a.encoder = true;
    a.converter_buffers = kBertModelBuffers;  // NomicBertModel derives from BertModel
    a.prepare_config = prepare_nomic_bert_config;
    return a;
}();

}  // namespace nomic_bert_record

const Architecture& nomic_bert_architecture() { return nomic_bert_record::kNomicBert; }

}  // namespace rebox::arch::detail
