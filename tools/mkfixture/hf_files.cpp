// Writers for config.json, pooling files, safetensors files and the shard index.
#include "hf_files.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "safetensors_writer.hpp"
#include "tensor_content.hpp"

namespace mkfixture {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

void write_json(const fs::path& path, const ojson& value) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << value.dump(2) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

// The safetensors entries of one unit (a triple, or one norm).
void append_entries(std::vector<StTensor>& out, const PlanUnit& unit, uint64_t seed) {
    if (!unit.quantized) {
        const NormTensor norm = unit.norm;
        out.push_back({norm.name,
                       "F32",
                       {norm.length},
                       static_cast<uint64_t>(norm.length) * 4,
                       [norm, seed](std::ostream& s) { write_norm(s, norm, seed); }});
        return;
    }
    const QuantTensor q = unit.quant;
    const uint64_t code_bytes = q.packed_bytes() - (q.drop_last_byte ? 1 : 0);
    const uint64_t groups = static_cast<uint64_t>(q.group_count());
    // scales and mins come from one generation, shared by the two callbacks.
    auto params = std::make_shared<GroupParams>();
    out.push_back({q.name + ".qcodes",
                   "U8",
                   {static_cast<int64_t>(code_bytes)},
                   code_bytes,
                   [q, seed](std::ostream& s) { write_qcodes(s, q, seed); }});
    out.push_back({q.name + ".scales",
                   "F16",
                   {static_cast<int64_t>(groups)},
                   groups * 2,
                   [q, seed, params](std::ostream& s) {
                       *params = make_group_params(q, seed);
                       write_f16_le(s, params->scales);
                   }});
    out.push_back({q.name + ".mins",
                   "F16",
                   {static_cast<int64_t>(groups)},
                   groups * 2,
                   [params](std::ostream& s) {
                       write_f16_le(s, params->mins);
                       *params = GroupParams{};
                   }});
}

}  // namespace

namespace {

// config.json of a llama-family model, keys in the order transformers writes them.
ojson llama_family_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id,
                          const std::string& arch, const std::string& rope_scaling,
                          bool attention_bias) {
    const bool mistral = arch == "mistral";
    ojson config{
        {"architectures", ojson::array({mistral ? "MistralForCausalLM" : "LlamaForCausalLM"})},
        {"attention_bias", false},
        {"attention_dropout", 0.0}};
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    config["head_dim"] = d.head_dim;
    config["hidden_act"] = "silu";
    config["hidden_size"] = d.hidden;
    config["initializer_range"] = 0.02;
    config["intermediate_size"] = d.intermediate;
    config["max_position_embeddings"] = mistral ? 1024000 : 131072;
    if (!mistral) config["mlp_bias"] = false;
    config["model_type"] = arch;
    config["num_attention_heads"] = d.heads;
    config["num_hidden_layers"] = d.layers;
    config["num_key_value_heads"] = d.kv_heads;
    if (!mistral) config["pretraining_tp"] = 1;
    config["rms_norm_eps"] = 1e-05;
    if (rope_scaling == "llama3")
        config["rope_scaling"] = ojson{{"factor", 32.0},
                                       {"high_freq_factor", 4.0},
                                       {"low_freq_factor", 1.0},
                                       {"original_max_position_embeddings", 8192},
                                       {"rope_type", "llama3"}};
    else
        config["rope_scaling"] = nullptr;
    config["rope_theta"] = mistral ? 1000000.0 : 500000.0;
    if (mistral) config["sliding_window"] = nullptr;
    config["tie_word_embeddings"] = tied;
    config["torch_dtype"] = "bfloat16";
    config["use_cache"] = true;
    config["vocab_size"] = d.vocab;
    return config;
}

// config.json of a gemma-family text model (keys of google/gemma-2b, gemma-2-2b, gemma-3-1b-pt,
// numbers of the tiny preset). gemma3: rope_theta 1e6 for the global layers and 10000 for the
// local ones, sliding_window_pattern 6.
ojson gemma_family_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id,
                          const std::string& arch) {
    const bool gemma2 = arch == "gemma2", gemma3 = arch == "gemma3";
    ojson config{{"architectures", ojson::array({gemma3   ? "Gemma3ForCausalLM"
                                                 : gemma2 ? "Gemma2ForCausalLM"
                                                          : "GemmaForCausalLM"})},
                 {"attention_bias", false},
                 {"attention_dropout", 0.0}};
    if (gemma2) config["attn_logit_softcapping"] = 50.0;
    if (gemma3) config["attn_logit_softcapping"] = nullptr;
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    if (gemma2) config["final_logit_softcapping"] = 30.0;
    if (gemma3) config["final_logit_softcapping"] = nullptr;
    config["head_dim"] = d.head_dim;
    config["hidden_activation"] = "gelu_pytorch_tanh";
    config["hidden_size"] = d.hidden;
    config["initializer_range"] = 0.02;
    config["intermediate_size"] = d.intermediate;
    config["max_position_embeddings"] = gemma3 ? 32768 : 8192;
    config["model_type"] = gemma3 ? "gemma3_text" : arch;
    config["num_attention_heads"] = d.heads;
    config["num_hidden_layers"] = d.layers;
    config["num_key_value_heads"] = d.kv_heads;
    if (gemma2 || gemma3) config["query_pre_attn_scalar"] = d.head_dim;
    config["rms_norm_eps"] = 1e-06;
    if (gemma3) config["rope_local_base_freq"] = 10000.0;
    config["rope_scaling"] = nullptr;
    config["rope_theta"] = gemma3 ? 1000000.0 : 10000.0;
    if (gemma2 || gemma3) config["sliding_window"] = gemma3 ? 512 : 4096;
    if (gemma3) config["sliding_window_pattern"] = 6;
    config["tie_word_embeddings"] = tied;
    config["torch_dtype"] = "bfloat16";
    config["use_cache"] = true;
    config["vocab_size"] = d.vocab;
    return config;
}

}  // namespace

void write_config_json(const fs::path& out_dir, const Dims& d, bool tied, int64_t bos_id,
                       int64_t eos_id, const std::string& arch, const std::string& rope_scaling,
                       bool attention_bias, bool multimodal) {
    if (arch.rfind("gemma", 0) == 0) {
        ojson text = gemma_family_config(d, tied, bos_id, eos_id, arch);
        if (!multimodal) {
            write_json(out_dir / "config.json", text);
            return;
        }
        // Gemma3ForConditionalGeneration (gemma-3-4b-it's layout): the text model's numbers in
        // text_config, linear rope scaling factor 8 for the global layers, a vision_config.
        // gemma-3-4b-it keeps its special token ids at the top level (converters read them there).
        text.erase("architectures");
        text.erase("bos_token_id");
        text.erase("eos_token_id");
        text["rope_scaling"] = ojson{{"factor", 8.0}, {"rope_type", "linear"}};
        ojson config{{"architectures", ojson::array({"Gemma3ForConditionalGeneration"})},
                     {"boi_token_index", 255999},
                     {"bos_token_id", bos_id >= 0 ? ojson(bos_id) : ojson(nullptr)},
                     {"eoi_token_index", 256000},
                     {"eos_token_id", eos_id >= 0 ? ojson(eos_id) : ojson(nullptr)},
                     {"image_token_index", 262144},
                     {"mm_tokens_per_image", 256},
                     {"model_type", "gemma3"},
                     {"text_config", text},
                     {"torch_dtype", "bfloat16"},
                     {"vision_config", ojson{{"hidden_size", 32},
                                             {"image_size", 896},
                                             {"intermediate_size", 64},
                                             {"model_type", "siglip_vision_model"},
                                             {"num_attention_heads", 2},
                                             {"num_hidden_layers", 1},
                                             {"patch_size", 14}}}};
        write_json(out_dir / "config.json", config);
        return;
    }
    if (arch == "llama" || arch == "mistral") {
        write_json(out_dir / "config.json", llama_family_config(d, tied, bos_id, eos_id, arch,
                                                                rope_scaling, attention_bias));
        return;
    }
    const bool qwen2 = arch == "qwen2";
    ojson config =
        ojson{{"architectures", ojson::array({qwen2 ? "Qwen2ForCausalLM" : "Qwen3ForCausalLM"})},
              {"attention_bias", qwen2},
              {"head_dim", d.head_dim},
              {"hidden_act", "silu"},
              {"hidden_size", d.hidden},
              {"intermediate_size", d.intermediate},
              {"max_position_embeddings", 32768},
              {"model_type", qwen2 ? "qwen2" : "qwen3"},
              {"num_attention_heads", d.heads},
              {"num_hidden_layers", d.layers},
              {"num_key_value_heads", d.kv_heads},
              {"rms_norm_eps", 1e-06},
              {"rope_theta", 1000000.0},
              {"tie_word_embeddings", tied},
              {"torch_dtype", "float16"},
              {"vocab_size", d.vocab}};
    // Qwen3's config.json names <|endoftext|> as bos and <|im_end|> as eos; converters read them.
    // Qwen2 configs have no head_dim key (it is hidden_size / num_attention_heads).
    if (qwen2) config.erase("head_dim");
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    write_json(out_dir / "config.json", config);
}

void write_pooling_files(const fs::path& out_dir, int64_t hidden) {
    write_json(out_dir / "modules.json",
               ojson::array({{{"idx", 0},
                              {"name", "0"},
                              {"path", ""},
                              {"type", "sentence_transformers.models.Transformer"}},
                             {{"idx", 1},
                              {"name", "1"},
                              {"path", "1_Pooling"},
                              {"type", "sentence_transformers.models.Pooling"}}}));
    fs::create_directories(out_dir / "1_Pooling");
    write_json(out_dir / "1_Pooling" / "config.json",
               ojson{{"word_embedding_dimension", hidden},
                     {"pooling_mode_cls_token", false},
                     {"pooling_mode_mean_tokens", false},
                     {"pooling_mode_max_tokens", false},
                     {"pooling_mode_mean_sqrt_len_tokens", false},
                     {"pooling_mode_weightedmean_tokens", false},
                     {"pooling_mode_lasttoken", true},
                     {"include_prompt", true}});
}

std::string mcq_metadata_json(const std::vector<PlanUnit>& units) {
    std::string json = "{\"version\": 1, \"tensors\": {";
    bool first = true;
    for (const PlanUnit& u : units) {
        if (!u.quantized) continue;
        const QuantTensor& q = u.quant;
        if (!first) json += ", ";
        first = false;
        json += "\"" + json_escape(q.name) + "\": {\"bits\": " + std::to_string(q.meta_bits) +
                ", \"group\": " + std::to_string(q.meta_group) +
                ", \"layout\": \"lsb0\", \"shape\": [" + std::to_string(q.meta_rows) + ", " +
                std::to_string(q.meta_cols) + "]}";
    }
    return json + "}}";
}

void write_safetensors_files(const fs::path& out_dir, const ModelPlan& plan, int shard_count,
                             const ShardEntries& entries, const ShardMetadata& metadata) {
    const auto shards = split_into_shards(plan.units, shard_count);
    std::map<std::string, std::string> weight_map;
    uint64_t total_size = 0;
    for (size_t k = 0; k < shards.size(); ++k) {
        std::string file = "model.safetensors";
        if (shard_count > 1) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", k + 1,
                          shards.size());
            file = buf;
        }
        const std::vector<StTensor> tensors = entries(shards[k]);
        for (const StTensor& t : tensors) {
            weight_map[t.name] = file;
            total_size += t.byte_count;
        }
        write_safetensors(out_dir / file, tensors, metadata(shards[k]));
    }
    if (shard_count > 1) {
        ojson weight_map_sorted = ojson::object();
        for (const auto& [name, file] : weight_map) weight_map_sorted[name] = file;
        write_json(
            out_dir / "model.safetensors.index.json",
            ojson{{"metadata", {{"total_size", total_size}}}, {"weight_map", weight_map_sorted}});
    }
}

void write_model_files(const fs::path& out_dir, const ModelPlan& plan, int shard_count,
                       uint64_t seed) {
    write_safetensors_files(
        out_dir, plan, shard_count,
        [&](const std::vector<PlanUnit>& units) {
            std::vector<StTensor> tensors;
            for (const PlanUnit& u : units) append_entries(tensors, u, seed);
            return tensors;
        },
        [](const std::vector<PlanUnit>& units) {
            return std::vector<std::pair<std::string, std::string>>{
                {"mcq", mcq_metadata_json(units)}};
        });
}

}  // namespace mkfixture
