// Mistral 3 fixtures with the Pixtral tower: the names, config keys and processor files of
// mistralai/Mistral-Small-3.1-24B-Instruct-2503 (see mistral3_vision_files.hpp), at tiny sizes.
#include "mistral3_vision_files.hpp"

#include <fstream>
#include <stdexcept>

#include "json_files.hpp"

namespace mkfixture {
namespace {

using ojson = nlohmann::ordered_json;

constexpr int64_t kVisionHidden = 32, kVisionHeads = 2, kVisionFfn = 64, kVisionLayers = 3;
constexpr int64_t kPatch = 14, kImageSize = 224, kMerge = 2;

ojson read_json(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path.string() + ": cannot read");
    return ojson::parse(in);
}

}  // namespace

void append_pixtral_tower(std::vector<PlanUnit>& units, int64_t text_hidden,
                          int64_t projector_input, bool split_layout) {
    const std::string model = split_layout ? "model." : "";
    const auto tensor = [&](const std::string& stem, std::vector<int64_t> dims, double center,
                            double spread) {
        const std::string name = model + stem;
        int64_t length = 1;
        for (const int64_t d : dims) length *= d;
        PlanUnit unit = vector_unit(name, length, center, spread);
        if (dims.size() > 1) unit.norm.dims = std::move(dims);
        units.push_back(std::move(unit));
    };
    const int64_t h = kVisionHidden, f = kVisionFfn;
    tensor("vision_tower.patch_conv.weight", {h, 3, kPatch, kPatch}, 0.0, 0.05);
    tensor("vision_tower.ln_pre.weight", {h}, 1.0, 0.05);
    for (int64_t layer = 0; layer < kVisionLayers; ++layer) {
        const std::string p = "vision_tower.transformer.layers." + std::to_string(layer) + ".";
        tensor(p + "attention_norm.weight", {h}, 1.0, 0.05);
        for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
            tensor(p + "attention." + proj + ".weight", {h, h}, 0.0, 0.1);
        tensor(p + "ffn_norm.weight", {h}, 1.0, 0.05);
        tensor(p + "feed_forward.gate_proj.weight", {f, h}, 0.0, 0.1);
        tensor(p + "feed_forward.up_proj.weight", {f, h}, 0.0, 0.1);
        tensor(p + "feed_forward.down_proj.weight", {h, f}, 0.0, 0.1);
    }
    tensor("multi_modal_projector.norm.weight", {h}, 1.0, 0.05);
    tensor("multi_modal_projector.patch_merger.merging_layer.weight", {h, h * kMerge * kMerge}, 0.0,
           0.05);
    tensor("multi_modal_projector.linear_1.weight",
           {text_hidden, projector_input ? projector_input : h}, 0.0, 0.1);
    tensor("multi_modal_projector.linear_2.weight", {text_hidden, text_hidden}, 0.0, 0.1);
}

void write_mistral3_vision_config(const std::filesystem::path& out_dir, const Dims& d, bool tied,
                                  int64_t bos_id, int64_t eos_id, bool split_layout) {
    // Mistral-Small-3.1-24B-Instruct-2503's text_config keys (model_type mistral, no yarn).
    ojson text{{"attention_dropout", 0.0},
               {"head_dim", d.head_dim},
               {"hidden_act", "silu"},
               {"hidden_size", d.hidden},
               {"initializer_range", 0.02},
               {"intermediate_size", d.intermediate},
               {"max_position_embeddings", 131072},
               {"model_type", "mistral"},
               {"num_attention_heads", d.heads},
               {"num_hidden_layers", d.layers},
               {"num_key_value_heads", d.kv_heads},
               {"rms_norm_eps", 1e-05},
               {"rope_theta", 1000000000.0},
               {"sliding_window", nullptr},
               {"use_cache", true},
               {"vocab_size", d.vocab}};
    if (bos_id >= 0) text["bos_token_id"] = bos_id;
    if (eos_id >= 0) text["eos_token_id"] = eos_id;
    const ojson vision{{"attention_dropout", 0.0},
                       {"head_dim", kVisionHidden / kVisionHeads},
                       {"hidden_act", "silu"},
                       {"hidden_size", kVisionHidden},
                       {"image_size", kImageSize},
                       {"initializer_range", 0.02},
                       {"intermediate_size", kVisionFfn},
                       {"model_type", "pixtral"},
                       {"num_attention_heads", kVisionHeads},
                       {"num_channels", 3},
                       {"num_hidden_layers", kVisionLayers},
                       {"patch_size", kPatch},
                       {"rope_theta", 10000.0}};
    const ojson config{{"architectures", ojson::array({"Mistral3ForConditionalGeneration"})},
                       {"image_token_index", 10},
                       {"model_type", "mistral3"},
                       {"multimodal_projector_bias", false},
                       {"projector_hidden_act", "gelu"},
                       {"spatial_merge_size", kMerge},
                       {"text_config", text},
                       {"tie_word_embeddings", tied},
                       {"torch_dtype", "bfloat16"},
                       {"transformers_version", split_layout ? "4.53.1" : "4.50.0.dev0"},
                       {"vision_config", vision},
                       {"vision_feature_layer", -1}};
    write_json_file(out_dir / "config.json", config, 2);
    // PixtralImageProcessor's file (CLIP's mean and std, longest_edge as image_size).
    const ojson preprocessor{{"crop_size", nullptr},
                             {"do_center_crop", nullptr},
                             {"do_convert_rgb", true},
                             {"do_normalize", true},
                             {"do_rescale", true},
                             {"do_resize", true},
                             {"image_mean", ojson::array({0.48145466, 0.4578275, 0.40821073})},
                             {"image_processor_type", "PixtralImageProcessor"},
                             {"image_std", ojson::array({0.26862954, 0.26130258, 0.27577711})},
                             {"patch_size", ojson{{"height", kPatch}, {"width", kPatch}}},
                             {"processor_class", "PixtralProcessor"},
                             {"resample", 3},
                             {"rescale_factor", 0.00392156862745098},
                             {"size", ojson{{"longest_edge", kImageSize}}}};
    write_json_file(out_dir / "preprocessor_config.json", preprocessor, 2);
    const ojson processor{{"image_break_token", "[IMG_BREAK]"},
                          {"image_end_token", "[IMG_END]"},
                          {"image_token", "[IMG]"},
                          {"patch_size", kPatch},
                          {"processor_class", "PixtralProcessor"},
                          {"spatial_merge_size", kMerge}};
    write_json_file(out_dir / "processor_config.json", processor, 2);
}

int64_t add_img_break_token(const std::filesystem::path& out_dir, int64_t token_count) {
    const std::string content = "[IMG_BREAK]";
    ojson tokenizer = read_json(out_dir / "tokenizer.json");
    ojson entry{{"id", token_count}, {"content", content}, {"single_word", false},
                {"lstrip", false},   {"rstrip", false},    {"normalized", false},
                {"special", true}};
    tokenizer["added_tokens"].push_back(entry);
    write_json_file(out_dir / "tokenizer.json", tokenizer, 2);
    ojson config = read_json(out_dir / "tokenizer_config.json");
    entry.erase("id");
    config["added_tokens_decoder"][std::to_string(token_count)] = entry;
    write_json_file(out_dir / "tokenizer_config.json", config, 2);
    return token_count + 1;
}

}  // namespace mkfixture
