// Qwen2-VL / Qwen2.5-VL fixtures: the tower's names and the config keys of the published
// checkpoints (see qwen2vl_files.hpp), at tiny sizes.
#include "qwen2vl_files.hpp"

#include "json_files.hpp"

namespace mkfixture {
namespace {

using ojson = nlohmann::ordered_json;

// 4 blocks: gguf-py maps merger.mlp.{bid} only for bid below the block count (mlp.2 needs 3).
constexpr int64_t kVisionHidden = 32, kVisionHeads = 2, kVisionDepth = 4, kPatch = 14;
constexpr int64_t kMerge = 2;          // spatial_merge_size: the merger takes 2 x 2 patches
constexpr int64_t kQwen2MlpRatio = 4;  // Qwen2-VL: fc1 is embed_dim * mlp_ratio wide
constexpr int64_t kQwen25Ffn = 64;     // Qwen2.5-VL: intermediate_size

bool is_qwen25(const std::string& arch) { return arch == "qwen2_5_vl"; }

}  // namespace

bool is_qwen2vl_arch(const std::string& arch) { return arch == "qwen2_vl" || arch == "qwen2_5_vl"; }

std::string qwen2vl_text_prefix(bool split_layout) {
    return split_layout ? "model.language_model." : "model.";
}

void append_qwen2vl_tower(std::vector<PlanUnit>& units, const std::string& arch,
                          int64_t merger_width, bool split_layout, int64_t temporal) {
    const bool qwen25 = is_qwen25(arch);
    const auto tensor = [&](const std::string& name, std::vector<int64_t> dims, double center,
                            double spread) {
        int64_t length = 1;
        for (const int64_t d : dims) length *= d;
        PlanUnit unit = vector_unit(name, length, center, spread);
        if (dims.size() > 1) unit.norm.dims = std::move(dims);
        units.push_back(std::move(unit));
    };
    const std::string v = split_layout ? "model.visual." : "visual.";
    const int64_t h = kVisionHidden, ffn = qwen25 ? kQwen25Ffn : h * kQwen2MlpRatio;
    const int64_t merged = h * kMerge * kMerge;
    tensor(v + "patch_embed.proj.weight", {h, 3, temporal, kPatch, kPatch}, 0.0, 0.05);
    for (int64_t layer = 0; layer < kVisionDepth; ++layer) {
        const std::string p = v + "blocks." + std::to_string(layer) + ".";
        // Qwen2-VL: LayerNorm (weight and bias); Qwen2.5-VL: Qwen2RMSNorm (weight only).
        tensor(p + "norm1.weight", {h}, 1.0, 0.05);
        if (!qwen25) tensor(p + "norm1.bias", {h}, 0.0, 0.1);
        tensor(p + "norm2.weight", {h}, 1.0, 0.05);
        if (!qwen25) tensor(p + "norm2.bias", {h}, 0.0, 0.1);
        tensor(p + "attn.qkv.weight", {3 * h, h}, 0.0, 0.05);
        tensor(p + "attn.qkv.bias", {3 * h}, 0.0, 0.1);
        tensor(p + "attn.proj.weight", {h, h}, 0.0, 0.05);
        tensor(p + "attn.proj.bias", {h}, 0.0, 0.1);
        if (qwen25) {
            for (const char* proj : {"gate_proj", "up_proj"}) {
                tensor(p + "mlp." + proj + ".weight", {ffn, h}, 0.0, 0.05);
                tensor(p + "mlp." + proj + ".bias", {ffn}, 0.0, 0.1);
            }
            tensor(p + "mlp.down_proj.weight", {h, ffn}, 0.0, 0.05);
            tensor(p + "mlp.down_proj.bias", {h}, 0.0, 0.1);
        } else {
            tensor(p + "mlp.fc1.weight", {ffn, h}, 0.0, 0.05);
            tensor(p + "mlp.fc1.bias", {ffn}, 0.0, 0.1);
            tensor(p + "mlp.fc2.weight", {h, ffn}, 0.0, 0.05);
            tensor(p + "mlp.fc2.bias", {h}, 0.0, 0.1);
        }
    }
    tensor(v + "merger.ln_q.weight", {h}, 1.0, 0.05);
    if (!qwen25) tensor(v + "merger.ln_q.bias", {h}, 0.0, 0.1);
    tensor(v + "merger.mlp.0.weight", {merged, merged}, 0.0, 0.05);
    tensor(v + "merger.mlp.0.bias", {merged}, 0.0, 0.1);
    tensor(v + "merger.mlp.2.weight", {merger_width, merged}, 0.0, 0.05);
    tensor(v + "merger.mlp.2.bias", {merger_width}, 0.0, 0.1);
}

void write_qwen2vl_config(const std::filesystem::path& out_dir, const Dims& d, bool tied,
                          int64_t bos_id, int64_t eos_id, const std::string& arch,
                          bool split_layout, int64_t temporal, int64_t merger_width) {
    const bool qwen25 = is_qwen25(arch);
    // The text numbers as Qwen2-VL-2B-Instruct / Qwen2.5-VL-3B-Instruct list them (no head_dim),
    // with the published M-RoPE block {"type": "mrope", "mrope_section": [t, h, w]}: sections
    // over head_dim / 2 = 8 rotary pairs.
    ojson text{{"attention_dropout", 0.0},
               {"hidden_act", "silu"},
               {"hidden_size", d.hidden},
               {"initializer_range", 0.02},
               {"intermediate_size", d.intermediate},
               {"max_position_embeddings", 32768},
               {"max_window_layers", d.layers},
               {"num_attention_heads", d.heads},
               {"num_hidden_layers", d.layers},
               {"num_key_value_heads", d.kv_heads},
               {"rms_norm_eps", 1e-06},
               {"rope_theta", 1000000.0},
               {"sliding_window", 32768},
               {"tie_word_embeddings", tied},
               {"use_sliding_window", false},
               {"vocab_size", d.vocab},
               {"rope_scaling", ojson{{"type", "mrope"}, {"mrope_section", {2, 3, 3}}}}};
    ojson vision;
    if (qwen25)  // Qwen2_5_VLVisionConfig's keys in Qwen2.5-VL-3B-Instruct's config.json
        vision = ojson{{"depth", kVisionDepth},
                       {"hidden_act", "silu"},
                       {"hidden_size", kVisionHidden},
                       {"intermediate_size", kQwen25Ffn},
                       {"num_heads", kVisionHeads},
                       {"in_chans", 3},
                       {"out_hidden_size", merger_width},
                       {"patch_size", kPatch},
                       {"spatial_merge_size", kMerge},
                       {"spatial_patch_size", kPatch},
                       {"window_size", 112},
                       {"fullatt_block_indexes", {1, 3}},
                       {"tokens_per_second", 2},
                       {"temporal_patch_size", temporal}};
    else  // Qwen2VLVisionConfig's: embed_dim is the width, hidden_size the merger's output
        vision = ojson{{"depth", kVisionDepth},
                       {"embed_dim", kVisionHidden},
                       {"mlp_ratio", kQwen2MlpRatio},
                       {"num_heads", kVisionHeads},
                       {"in_chans", 3},
                       {"hidden_size", merger_width},
                       {"patch_size", kPatch},
                       {"spatial_merge_size", kMerge},
                       {"spatial_patch_size", kPatch},
                       {"temporal_patch_size", temporal}};
    const char* architecture =
        qwen25 ? "Qwen2_5_VLForConditionalGeneration" : "Qwen2VLForConditionalGeneration";
    const char* model_type = qwen25 ? "qwen2_5_vl" : "qwen2_vl";
    ojson config{{"architectures", ojson::array({architecture})}};
    if (bos_id >= 0) config["bos_token_id"] = bos_id;
    if (eos_id >= 0) config["eos_token_id"] = eos_id;
    config["vision_start_token_id"] = 151652;
    config["vision_end_token_id"] = 151653;
    config["vision_token_id"] = 151654;
    config["image_token_id"] = 151655;
    config["video_token_id"] = 151656;
    config["model_type"] = model_type;
    if (split_layout) {
        // transformers >= 4.52 save_pretrained: the text numbers in text_config (its own
        // model_type) and mirrored at the top level, rope_scaling with rope_type "default".
        text["rope_scaling"] =
            ojson{{"mrope_section", {2, 3, 3}}, {"rope_type", "default"}, {"type", "default"}};
        for (const auto& [key, value] : text.items()) config[key] = value;
        ojson text_config = text;
        text_config["model_type"] = qwen25 ? "qwen2_5_vl_text" : "qwen2_vl_text";
        config["text_config"] = text_config;
    } else {
        for (const auto& [key, value] : text.items()) config[key] = value;
    }
    config["torch_dtype"] = "bfloat16";
    config["transformers_version"] = split_layout ? "4.53.1" : "4.41.2";
    config["use_cache"] = true;
    vision["model_type"] = model_type;
    config["vision_config"] = vision;
    write_json_file(out_dir / "config.json", config, 2);
    // preprocessor_config.json of both (Qwen2VLImageProcessor: CLIP's mean and std).
    const ojson preprocessor{
        {"min_pixels", 3136},
        {"max_pixels", 12845056},
        {"patch_size", kPatch},
        {"temporal_patch_size", temporal},
        {"merge_size", kMerge},
        {"image_mean", ojson::array({0.48145466, 0.4578275, 0.40821073})},
        {"image_std", ojson::array({0.26862954, 0.26130258, 0.27577711})},
        {"image_processor_type", "Qwen2VLImageProcessor"},
        {"processor_class", qwen25 ? "Qwen2_5_VLProcessor" : "Qwen2VLProcessor"}};
    write_json_file(out_dir / "preprocessor_config.json", preprocessor, 2);
}

}  // namespace mkfixture
