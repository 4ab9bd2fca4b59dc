// Qwen3-VL fixtures: the tower's names and the config keys of the published checkpoint (see
// qwen3vl_files.hpp), at tiny sizes.
#include "qwen3vl_files.hpp"

#include <nlohmann/json.hpp>

#include "json_files.hpp"

namespace mkfixture {
namespace qwen3vl_fixture {

using ojson = nlohmann::ordered_json;

constexpr int64_t kQ3VisionHidden = 32, kQ3VisionHeads = 2, kQ3VisionDepth = 4, kQ3VisionFfn = 64;
constexpr int64_t kQ3Patch = 16, kQ3Merge = 2;
constexpr int64_t kQ3Positions = 64;  // num_position_embeddings: an 8 x 8 grid (image_size 128)
// deepstack_visual_indexes: the blocks whose output a deepstack merger takes (Qwen3-VL-2B:
// [5, 11, 17] of 24).
constexpr int64_t kQ3Deepstack[] = {1, 2};

}  // namespace qwen3vl_fixture

using namespace qwen3vl_fixture;

bool is_qwen3vl_arch(const std::string& arch) { return arch == "qwen3_vl"; }

std::string qwen3vl_text_prefix() { return "model.language_model."; }

std::vector<Qwen3vlTowerTensor> qwen3vl_tower_tensors(int64_t merger_width, int64_t temporal,
                                                      int64_t deepstack) {
    std::vector<Qwen3vlTowerTensor> out;
    const auto tensor = [&](const std::string& name, std::vector<int64_t> dims, double center,
                            double spread) {
        out.push_back({name, std::move(dims), center, spread});
    };
    const std::string v = "model.visual.";
    const int64_t h = kQ3VisionHidden, merged = h * kQ3Merge * kQ3Merge;
    tensor(v + "patch_embed.proj.weight", {h, 3, temporal, kQ3Patch, kQ3Patch}, 0.0, 0.05);
    tensor(v + "patch_embed.proj.bias", {h}, 0.0, 0.1);
    tensor(v + "pos_embed.weight", {kQ3Positions, h}, 0.0, 0.1);
    for (int64_t layer = 0; layer < kQ3VisionDepth; ++layer) {
        const std::string p = v + "blocks." + std::to_string(layer) + ".";
        tensor(p + "norm1.weight", {h}, 1.0, 0.05);
        tensor(p + "norm1.bias", {h}, 0.0, 0.1);
        tensor(p + "norm2.weight", {h}, 1.0, 0.05);
        tensor(p + "norm2.bias", {h}, 0.0, 0.1);
        tensor(p + "attn.qkv.weight", {3 * h, h}, 0.0, 0.05);
        tensor(p + "attn.qkv.bias", {3 * h}, 0.0, 0.1);
        tensor(p + "attn.proj.weight", {h, h}, 0.0, 0.05);
        tensor(p + "attn.proj.bias", {h}, 0.0, 0.1);
        tensor(p + "mlp.linear_fc1.weight", {kQ3VisionFfn, h}, 0.0, 0.05);
        tensor(p + "mlp.linear_fc1.bias", {kQ3VisionFfn}, 0.0, 0.1);
        tensor(p + "mlp.linear_fc2.weight", {h, kQ3VisionFfn}, 0.0, 0.05);
        tensor(p + "mlp.linear_fc2.bias", {h}, 0.0, 0.1);
    }
    // The merger normalizes each patch (hidden) before the 2 x 2 shuffle; a deepstack merger
    // normalizes after it (use_postshuffle_norm: hidden x 4).
    const auto merger = [&](const std::string& p, int64_t norm_width) {
        tensor(p + "norm.weight", {norm_width}, 1.0, 0.05);
        tensor(p + "norm.bias", {norm_width}, 0.0, 0.1);
        tensor(p + "linear_fc1.weight", {merged, merged}, 0.0, 0.05);
        tensor(p + "linear_fc1.bias", {merged}, 0.0, 0.1);
        tensor(p + "linear_fc2.weight", {merger_width, merged}, 0.0, 0.05);
        tensor(p + "linear_fc2.bias", {merger_width}, 0.0, 0.1);
    };
    merger(v + "merger.", h);
    for (int64_t i = 0; i < deepstack; ++i)
        merger(v + "deepstack_merger_list." + std::to_string(i) + ".", merged);
    return out;
}

void append_qwen3vl_tower(std::vector<PlanUnit>& units, int64_t merger_width, int64_t temporal) {
    for (Qwen3vlTowerTensor& t :
         qwen3vl_tower_tensors(merger_width, temporal, std::size(kQ3Deepstack))) {
        int64_t length = 1;
        for (const int64_t d : t.shape) length *= d;
        PlanUnit unit = vector_unit(t.name, length, t.center, t.spread);
        if (t.shape.size() > 1) unit.norm.dims = std::move(t.shape);
        units.push_back(std::move(unit));
    }
}

nlohmann::ordered_json qwen35_vision_config(int64_t merger_width) {
    return ojson{{"deepstack_visual_indexes", ojson::array()},
                 {"depth", kQ3VisionDepth},
                 {"hidden_act", "gelu_pytorch_tanh"},
                 {"hidden_size", kQ3VisionHidden},
                 {"in_channels", 3},
                 {"initializer_range", 0.02},
                 {"intermediate_size", kQ3VisionFfn},
                 {"model_type", "qwen3_5"},
                 {"num_heads", kQ3VisionHeads},
                 {"num_position_embeddings", kQ3Positions},
                 {"out_hidden_size", merger_width},
                 {"patch_size", kQ3Patch},
                 {"spatial_merge_size", kQ3Merge},
                 {"temporal_patch_size", 2}};
}

void write_qwen3vl_config(const std::filesystem::path& out_dir, const Dims& d, bool tied,
                          int64_t bos_id, int64_t eos_id, int64_t temporal, int64_t merger_width) {
    // text_config as Qwen3-VL-2B-Instruct lists it: head_dim given, the interleaved M-RoPE block
    // {"mrope_interleaved": true, "mrope_section": [t, h, w], "rope_type": "default"} with
    // sections over head_dim / 2 = 8 rotary pairs.
    ojson text{{"attention_bias", false},
               {"attention_dropout", 0.0},
               {"bos_token_id", bos_id >= 0 ? ojson(bos_id) : ojson(nullptr)},
               {"dtype", "bfloat16"},
               {"eos_token_id", eos_id >= 0 ? ojson(eos_id) : ojson(nullptr)},
               {"head_dim", d.head_dim},
               {"hidden_act", "silu"},
               {"hidden_size", d.hidden},
               {"initializer_range", 0.02},
               {"intermediate_size", d.intermediate},
               {"max_position_embeddings", 262144},
               {"model_type", "qwen3_vl_text"},
               {"num_attention_heads", d.heads},
               {"num_hidden_layers", d.layers},
               {"num_key_value_heads", d.kv_heads},
               {"rms_norm_eps", 1e-06},
               {"rope_scaling", ojson{{"mrope_interleaved", true},
                                      {"mrope_section", {2, 3, 3}},
                                      {"rope_type", "default"}}},
               {"rope_theta", 5000000},
               {"tie_word_embeddings", tied},
               {"use_cache", true},
               {"vocab_size", d.vocab}};
    ojson deepstack = ojson::array();
    for (const int64_t index : kQ3Deepstack) deepstack.push_back(index);
    const ojson vision{{"deepstack_visual_indexes", deepstack},
                       {"depth", kQ3VisionDepth},
                       {"hidden_act", "gelu_pytorch_tanh"},
                       {"hidden_size", kQ3VisionHidden},
                       {"in_channels", 3},
                       {"initializer_range", 0.02},
                       {"intermediate_size", kQ3VisionFfn},
                       {"model_type", "qwen3_vl"},
                       {"num_heads", kQ3VisionHeads},
                       {"num_position_embeddings", kQ3Positions},
                       {"out_hidden_size", merger_width},
                       {"patch_size", kQ3Patch},
                       {"spatial_merge_size", kQ3Merge},
                       {"temporal_patch_size", temporal}};
    const ojson config{{"architectures", ojson::array({"Qwen3VLForConditionalGeneration"})},
                       {"image_token_id", 151655},
                       {"model_type", "qwen3_vl"},
                       {"text_config", text},
                       {"tie_word_embeddings", tied},
                       {"transformers_version", "4.57.0.dev0"},
                       {"video_token_id", 151656},
                       {"vision_config", vision},
                       {"vision_end_token_id", 151653},
                       {"vision_start_token_id", 151652}};
    write_json_file(out_dir / "config.json", config, 2);
    write_qwen3vl_preprocessor(out_dir, temporal);
}

void write_qwen3vl_preprocessor(const std::filesystem::path& out_dir, int64_t temporal) {
    // Qwen3-VL-2B-Instruct's preprocessor_config.json (Qwen2VLImageProcessorFast, mean and std
    // 0.5).
    const ojson preprocessor{{"size", ojson{{"longest_edge", 16777216}, {"shortest_edge", 65536}}},
                             {"patch_size", kQ3Patch},
                             {"temporal_patch_size", temporal},
                             {"merge_size", kQ3Merge},
                             {"image_mean", ojson::array({0.5, 0.5, 0.5})},
                             {"image_std", ojson::array({0.5, 0.5, 0.5})},
                             {"processor_class", "Qwen3VLProcessor"},
                             {"image_processor_type", "Qwen2VLImageProcessorFast"}};
    write_json_file(out_dir / "preprocessor_config.json", preprocessor, 2);
}

}  // namespace mkfixture
