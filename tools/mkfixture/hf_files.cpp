// Writers for config.json, pooling files, safetensors files and the shard index.
#include "hf_files.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "json_files.hpp"
#include "mistral3_vision_files.hpp"
#include "qwen2vl_files.hpp"
#include "qwen3vl_files.hpp"
#include "safetensors_writer.hpp"
#include "tensor_content.hpp"

namespace mkfixture {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// The safetensors entries of one unit (a triple, or one norm).
void append_entries(std::vector<StTensor>& out, const PlanUnit& unit, uint64_t seed) {
    if (!unit.quantized) {
        const NormTensor norm = unit.norm;
        out.push_back({norm.name, "F32", norm.shape(), static_cast<uint64_t>(norm.length) * 4,
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
    const bool mistral = arch == "mistral", mixtral = arch == "mixtral";
    ojson config{{"architectures", ojson::array({mistral   ? "MistralForCausalLM"
                                                 : mixtral ? "MixtralForCausalLM"
                                                           : "LlamaForCausalLM"})},
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
    if (mixtral) {  // Mixtral-8x7B's keys: no head_dim, experts' width is intermediate_size
        config.erase("head_dim");
        config.erase("mlp_bias");
        config.erase("pretraining_tp");
        config["max_position_embeddings"] = 32768;
        config["num_experts_per_tok"] = d.experts_used;
        config["num_local_experts"] = d.experts;
        config["output_router_logits"] = false;
        config["router_aux_loss_coef"] = 0.02;
        config["sliding_window"] = nullptr;
    }
    if (rope_scaling == "llama3")
        config["rope_scaling"] = ojson{{"factor", 32.0},
                                       {"high_freq_factor", 4.0},
                                       {"low_freq_factor", 1.0},
                                       {"original_max_position_embeddings", 8192},
                                       {"rope_type", "llama3"}};
    else
        config["rope_scaling"] = nullptr;
    config["rope_theta"] = mistral || mixtral ? 1000000.0 : 500000.0;
    if (mistral) config["sliding_window"] = nullptr;
    config["tie_word_embeddings"] = tied;
    config["torch_dtype"] = "bfloat16";
    config["use_cache"] = true;
    config["vocab_size"] = d.vocab;
    return config;
}

// config.json of a Phi-3 model (the keys of Phi-3-mini / Phi-3.5-mini, in their order). "none":
// Phi-3-mini-4k (4k context, sliding_window 2047, no rope_scaling); "longrope": Phi-3.5-mini style
// 128k context with long/short factors for each of the head_dim/2 rotary pairs. The factors mix
// binary32-exact decimals (as Phi-3.5 writes them), numbers binary32 must round (1.01, 1/3) and an
// integer literal, so the converter's float32 rounding is exercised.
ojson phi3_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id,
                  const std::string& rope_scaling, double partial_rotary_factor) {
    const bool long_rope = rope_scaling == "longrope";
    ojson config{{"architectures", ojson::array({"Phi3ForCausalLM"})},
                 {"attention_bias", false},
                 {"attention_dropout", 0.0}};
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    config["embd_pdrop"] = 0.0;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    config["hidden_act"] = "silu";
    config["hidden_size"] = d.hidden;
    config["initializer_range"] = 0.02;
    config["intermediate_size"] = d.intermediate;
    config["max_position_embeddings"] = long_rope ? 131072 : 4096;
    config["model_type"] = "phi3";
    config["num_attention_heads"] = d.heads;
    config["num_hidden_layers"] = d.layers;
    config["num_key_value_heads"] = d.kv_heads;
    config["original_max_position_embeddings"] = 4096;
    if (partial_rotary_factor > 0) config["partial_rotary_factor"] = partial_rotary_factor;
    config["resid_pdrop"] = 0.0;
    config["rms_norm_eps"] = 1e-05;
    if (long_rope) {
        const double long_pattern[] = {1.0800000429153442, 1.1100000143051147, 1.1399999856948853,
                                       1.340000033378601,  1.5899999141693115, 1.600000023841858,
                                       1.6200000047683716, 2.620000123977661};
        const double short_pattern[] = {1.0, 1.01, 1.02, 1.1, 1.25, 1.0 / 3.0 + 1.0, 0.0, 0.9};
        ojson long_factor = ojson::array(), short_factor = ojson::array();
        const double part = partial_rotary_factor > 0 ? partial_rotary_factor : 1.0;
        const int64_t rotary = static_cast<int64_t>(part * double(d.hidden)) / d.heads;
        for (int64_t i = 0; i < rotary / 2; ++i) {
            long_factor.push_back(long_pattern[i % 8] + double(i / 8));
            if (i % 8 == 6)
                short_factor.push_back(1);  // an integer literal, as some configs have
            else
                short_factor.push_back(short_pattern[i % 8]);
        }
        config["rope_scaling"] = ojson{
            {"long_factor", long_factor}, {"short_factor", short_factor}, {"type", "longrope"}};
    } else {
        config["rope_scaling"] = nullptr;
    }
    config["rope_theta"] = 10000.0;
    config["sliding_window"] = long_rope ? 262144 : 2047;
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

// config.json of a Seed-OSS model: Seed-OSS-36B-Instruct's keys in their order, the tiny numbers.
ojson seed_oss_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id) {
    ojson config{{"architectures", ojson::array({"SeedOssForCausalLM"})},
                 {"attention_bias", true},
                 {"attention_dropout", 0.1},
                 {"attention_out_bias", false}};
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    config["head_dim"] = d.head_dim;
    config["hidden_act"] = "silu";
    config["hidden_size"] = d.hidden;
    config["initializer_range"] = 0.02;
    config["intermediate_size"] = d.intermediate;
    config["max_position_embeddings"] = 524288;
    config["mlp_bias"] = false;
    config["model_type"] = "seed_oss";
    config["num_attention_heads"] = d.heads;
    config["num_hidden_layers"] = d.layers;
    config["num_key_value_heads"] = d.kv_heads;
    config["residual_dropout"] = 0.1;
    config["rms_norm_eps"] = 1e-06;
    config["rope_scaling"] = ojson{{"rope_type", "default"}};
    config["rope_theta"] = 10000000.0;
    config["tie_word_embeddings"] = tied;
    config["torch_dtype"] = "bfloat16";
    config["use_cache"] = true;
    config["vocab_size"] = d.vocab;
    return config;
}

// config.json of an OLMo 2 (OLMo-2-1124-7B's keys) or Olmo 3 model (Olmo-3-7B's: a sliding_window
// and layer_types, here 4 tokens and sliding, full, ...; with `yarn`, its rope_scaling: factor 8
// over 8192 positions, attention_factor 0.1 * ln(8) + 1, betas 32 and 1).
ojson olmo2_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id, bool olmo3,
                   bool yarn) {
    ojson config{{"architectures", ojson::array({olmo3 ? "Olmo3ForCausalLM" : "Olmo2ForCausalLM"})},
                 {"attention_bias", false},
                 {"attention_dropout", 0.0}};
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    config["hidden_act"] = "silu";
    config["hidden_size"] = d.hidden;
    config["initializer_range"] = 0.02;
    config["intermediate_size"] = d.intermediate;
    if (olmo3) {
        ojson types = ojson::array();
        for (int64_t i = 0; i < d.layers; ++i)
            types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
        config["layer_types"] = types;
    }
    config["max_position_embeddings"] = olmo3 ? 65536 : 4096;
    config["model_type"] = olmo3 ? "olmo3" : "olmo2";
    config["num_attention_heads"] = d.heads;
    config["num_hidden_layers"] = d.layers;
    config["num_key_value_heads"] = d.kv_heads;
    config["rms_norm_eps"] = 1e-06;
    config["rope_scaling"] = nullptr;
    if (yarn)
        config["rope_scaling"] = {{"attention_factor", 1.2079441541679836},
                                  {"beta_fast", 32.0},
                                  {"beta_slow", 1.0},
                                  {"factor", 8.0},
                                  {"original_max_position_embeddings", 8192},
                                  {"rope_type", "yarn"}};
    config["rope_theta"] = 500000.0;
    if (olmo3) config["sliding_window"] = 4;
    config["tie_word_embeddings"] = tied;
    config["torch_dtype"] = "bfloat16";
    config["use_cache"] = true;
    config["vocab_size"] = d.vocab;
    return config;
}

// config.json of a SmolLM3 model: SmolLM3-3B's keys in their order (no head_dim; tied; rope left
// out on every 4th layer, no_rope_layer_interval 4).
ojson smollm3_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id) {
    ojson config{{"architectures", ojson::array({"SmolLM3ForCausalLM"})},
                 {"attention_bias", false},
                 {"attention_dropout", 0.0}};
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    config["hidden_act"] = "silu";
    config["hidden_size"] = d.hidden;
    config["initializer_range"] = 0.02;
    config["intermediate_size"] = d.intermediate;
    config["max_position_embeddings"] = 65536;
    config["max_window_layers"] = d.layers;
    config["mlp_bias"] = false;
    config["model_type"] = "smollm3";
    config["no_rope_layer_interval"] = 4;
    ojson no_rope = ojson::array();
    for (int64_t i = 0; i < d.layers; ++i) no_rope.push_back((i + 1) % 4 != 0 ? 1 : 0);
    config["no_rope_layers"] = no_rope;
    config["num_attention_heads"] = d.heads;
    config["num_hidden_layers"] = d.layers;
    config["num_key_value_heads"] = d.kv_heads;
    config["pretraining_tp"] = 2;
    config["rms_norm_eps"] = 1e-06;
    config["rope_scaling"] = nullptr;
    config["rope_theta"] = 5000000.0;
    config["sliding_window"] = nullptr;
    config["tie_word_embeddings"] = tied;
    config["torch_dtype"] = "bfloat16";
    config["use_cache"] = true;
    config["use_sliding_window"] = false;
    config["vocab_size"] = d.vocab;
    return config;
}

// config.json of a Mistral3ForConditionalGeneration with a ministral3 text model (Ministral 3 /
// Devstral Small 2's layout): the text numbers and the yarn rope_parameters in text_config; no
// vision_config (the tower's tensors are stand-ins the text model leaves out, not a tower an
// mmproj could hold: --multimodal writes a whole one); head_dim apart from hidden/heads;
// mscale_all_dim 1 (0.1 would be deepseek2's factor) and llama_4_scaling_beta 0.1.
ojson mistral3_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id) {
    ojson text{{"attention_dropout", 0.0}};
    if (bos_id >= 0) text["bos_token_id"] = bos_id;
    if (eos_id >= 0) text["eos_token_id"] = eos_id;
    text["head_dim"] = d.head_dim;
    text["hidden_act"] = "silu";
    text["hidden_size"] = d.hidden;
    text["initializer_range"] = 0.02;
    text["intermediate_size"] = d.intermediate;
    text["max_position_embeddings"] = 262144;
    text["model_type"] = "ministral3";
    text["num_attention_heads"] = d.heads;
    text["num_hidden_layers"] = d.layers;
    text["num_key_value_heads"] = d.kv_heads;
    text["rms_norm_eps"] = 1e-05;
    text["rope_parameters"] = ojson{{"beta_fast", 32.0},
                                    {"beta_slow", 1.0},
                                    {"factor", 16.0},
                                    {"llama_4_scaling_beta", 0.1},
                                    {"mscale", 1.0},
                                    {"mscale_all_dim", 1.0},
                                    {"original_max_position_embeddings", 16384},
                                    {"rope_theta", 1000000.0},
                                    {"rope_type", "yarn"},
                                    {"type", "yarn"}};
    text["sliding_window"] = nullptr;
    text["use_cache"] = true;
    text["vocab_size"] = d.vocab;
    return ojson{{"architectures", ojson::array({"Mistral3ForConditionalGeneration"})},
                 {"image_token_index", 10},
                 {"model_type", "mistral3"},
                 {"multimodal_projector_bias", false},
                 {"projector_hidden_act", "gelu"},
                 {"spatial_merge_size", 2},
                 {"text_config", text},
                 {"tie_word_embeddings", tied},
                 {"torch_dtype", "bfloat16"},
                 {"vision_feature_layer", -1}};
}

// config.json of an Apertus model: Apertus-8B-Instruct-2509's keys in their order (no head_dim,
// hidden_act xielu, q/k norms, llama3 rope scaling, untied).
ojson apertus_config(const Dims& d, bool tied, int64_t bos_id, int64_t eos_id) {
    ojson config{{"architectures", ojson::array({"ApertusForCausalLM"})},
                 {"attention_bias", false},
                 {"attention_dropout", 0.0}};
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    config["hidden_act"] = "xielu";
    config["hidden_dropout"] = 0.0;
    config["hidden_size"] = d.hidden;
    config["initializer_range"] = 0.02;
    config["intermediate_size"] = d.intermediate;
    config["max_position_embeddings"] = 65536;
    config["mlp_bias"] = false;
    config["model_type"] = "apertus";
    config["num_attention_heads"] = d.heads;
    config["num_hidden_layers"] = d.layers;
    config["num_key_value_heads"] = d.kv_heads;
    config["post_norm"] = false;
    config["qk_norm"] = true;
    config["rms_norm_eps"] = 1e-05;
    config["rope_scaling"] = ojson{{"factor", 8.0},
                                   {"high_freq_factor", 4.0},
                                   {"low_freq_factor", 1.0},
                                   {"original_max_position_embeddings", 8192},
                                   {"rope_type", "llama3"}};
    config["rope_theta"] = 12000000;
    config["tie_word_embeddings"] = tied;
    config["torch_dtype"] = "bfloat16";
    config["use_cache"] = true;
    config["vocab_size"] = d.vocab;
    return config;
}

}  // namespace

void write_config_json(const fs::path& out_dir, const Dims& d, bool tied, int64_t bos_id,
                       int64_t eos_id, const std::string& arch, const std::string& rope_scaling,
                       bool attention_bias, double partial_rotary_factor, bool multimodal,
                       bool vl_split, int64_t vl_temporal, int64_t vl_merger_width) {
    if (arch == "phi3") {
        write_json_file(out_dir / "config.json",
                        phi3_config(d, tied, bos_id, eos_id, rope_scaling, partial_rotary_factor),
                        2);
        return;
    }
    if (arch.rfind("gemma", 0) == 0) {
        ojson text = gemma_family_config(d, tied, bos_id, eos_id, arch);
        if (!multimodal) {
            write_json_file(out_dir / "config.json", text, 2);
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
                     {"mm_tokens_per_image", 64},
                     {"model_type", "gemma3"},
                     {"text_config", text},
                     {"torch_dtype", "bfloat16"},
                     {"vision_config", ojson{{"hidden_size", 32},
                                             {"image_size", 224},
                                             {"intermediate_size", 64},
                                             {"model_type", "siglip_vision_model"},
                                             {"num_attention_heads", 2},
                                             {"num_hidden_layers", 2},
                                             {"patch_size", 14},
                                             {"vision_use_head", false}}}};
        write_json_file(out_dir / "config.json", config, 2);
        // gemma-3-4b-it's preprocessor_config.json and processor_config.json, at this image
        // size; 64 image tokens (8 per side) make the projector pool 16 / 8 = 2 patches per side.
        const ojson preprocessor{{"do_convert_rgb", nullptr},
                                 {"do_normalize", true},
                                 {"do_pan_and_scan", nullptr},
                                 {"do_rescale", true},
                                 {"do_resize", true},
                                 {"image_mean", ojson::array({0.5, 0.5, 0.5})},
                                 {"image_processor_type", "Gemma3ImageProcessor"},
                                 {"image_seq_length", 64},
                                 {"image_std", ojson::array({0.5, 0.5, 0.5})},
                                 {"pan_and_scan_max_num_crops", nullptr},
                                 {"pan_and_scan_min_crop_size", nullptr},
                                 {"pan_and_scan_min_ratio_to_activate", nullptr},
                                 {"processor_class", "Gemma3Processor"},
                                 {"resample", 2},
                                 {"rescale_factor", 0.00392156862745098},
                                 {"size", ojson{{"height", 224}, {"width", 224}}}};
        write_json_file(out_dir / "preprocessor_config.json", preprocessor, 2);
        write_json_file(out_dir / "processor_config.json",
                        ojson{{"image_seq_length", 64}, {"processor_class", "Gemma3Processor"}}, 2);
        return;
    }
    if (is_qwen2vl_arch(arch)) {
        write_qwen2vl_config(out_dir, d, tied, bos_id, eos_id, arch, vl_split, vl_temporal,
                             vl_merger_width ? vl_merger_width : d.hidden);
        return;
    }
    if (is_qwen3vl_arch(arch)) {
        write_qwen3vl_config(out_dir, d, tied, bos_id, eos_id, vl_temporal,
                             vl_merger_width ? vl_merger_width : d.hidden);
        return;
    }
    if (arch == "apertus") {
        write_json_file(out_dir / "config.json", apertus_config(d, tied, bos_id, eos_id), 2);
        return;
    }
    if (arch == "mistral3" && multimodal) {
        write_mistral3_vision_config(out_dir, d, tied, bos_id, eos_id, vl_split);
        return;
    }
    if (arch == "mistral3") {
        write_json_file(out_dir / "config.json", mistral3_config(d, tied, bos_id, eos_id), 2);
        return;
    }
    if (arch == "smollm3") {
        write_json_file(out_dir / "config.json", smollm3_config(d, tied, bos_id, eos_id), 2);
        return;
    }
    if (arch == "olmo2" || arch == "olmo3") {
        write_json_file(
            out_dir / "config.json",
            olmo2_config(d, tied, bos_id, eos_id, arch == "olmo3", rope_scaling == "yarn"), 2);
        return;
    }
    if (arch == "seed_oss") {
        write_json_file(out_dir / "config.json", seed_oss_config(d, tied, bos_id, eos_id), 2);
        return;
    }
    if (arch == "llama" || arch == "mistral" || arch == "mixtral") {
        write_json_file(
            out_dir / "config.json",
            llama_family_config(d, tied, bos_id, eos_id, arch, rope_scaling, attention_bias), 2);
        return;
    }
    const bool qwen2 = arch == "qwen2" || arch == "qwen2_moe";
    const char* architecture = arch == "qwen2"       ? "Qwen2ForCausalLM"
                               : arch == "qwen2_moe" ? "Qwen2MoeForCausalLM"
                               : arch == "qwen3_moe" ? "Qwen3MoeForCausalLM"
                                                     : "Qwen3ForCausalLM";
    ojson config =
        ojson{{"architectures", ojson::array({architecture})},
              {"attention_bias", qwen2},
              {"head_dim", d.head_dim},
              {"hidden_act", "silu"},
              {"hidden_size", d.hidden},
              {"intermediate_size", d.intermediate},
              {"max_position_embeddings", 32768},
              {"model_type",
               arch == "qwen2" || arch == "qwen3_moe" || arch == "qwen2_moe" ? arch : "qwen3"},
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
    if (d.experts > 0) {  // the MoE keys of Qwen3-30B-A3B's / Qwen2-57B-A14B's config.json
        config["decoder_sparse_step"] = 1;
        config["mlp_only_layers"] = ojson::array();
        config["moe_intermediate_size"] = d.moe_ffn;
        config["norm_topk_prob"] = arch == "qwen3_moe";
        config["num_experts"] = d.experts;
        config["num_experts_per_tok"] = d.experts_used;
        config["output_router_logits"] = false;
        config["router_aux_loss_coef"] = 0.001;
        if (d.shared_ffn > 0) config["shared_expert_intermediate_size"] = d.shared_ffn;
    }
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    write_json_file(out_dir / "config.json", config, 2);
}

void set_config_number(const fs::path& out_dir, const std::string& key, int64_t value) {
    ojson config;
    {
        std::ifstream in(out_dir / "config.json");
        config = ojson::parse(in);
    }
    config[key] = value;
    write_json_file(out_dir / "config.json", config, 2);
}

void write_pooling_files(const fs::path& out_dir, int64_t hidden, const std::string& mode) {
    write_json_file(out_dir / "modules.json",
                    ojson::array({{{"idx", 0},
                                   {"name", "0"},
                                   {"path", ""},
                                   {"type", "sentence_transformers.models.Transformer"}},
                                  {{"idx", 1},
                                   {"name", "1"},
                                   {"path", "1_Pooling"},
                                   {"type", "sentence_transformers.models.Pooling"}}}),
                    2);
    fs::create_directories(out_dir / "1_Pooling");
    write_json_file(out_dir / "1_Pooling" / "config.json",
                    ojson{{"word_embedding_dimension", hidden},
                          {"pooling_mode_cls_token", mode == "cls"},
                          {"pooling_mode_mean_tokens", mode == "mean"},
                          {"pooling_mode_max_tokens", false},
                          {"pooling_mode_mean_sqrt_len_tokens", false},
                          {"pooling_mode_weightedmean_tokens", false},
                          {"pooling_mode_lasttoken", mode == "lasttoken"},
                          {"include_prompt", true}},
                    2);
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
        write_json_file(
            out_dir / "model.safetensors.index.json",
            ojson{{"metadata", {{"total_size", total_size}}}, {"weight_map", weight_map_sorted}},
            2);
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
