// make_mmproj_plan: the vision record (src/arch/vision/) claims the checkpoint by its
// architectures, its vision_config gets transformers' defaults for what it leaves out, the
// preprocessor files give image_mean / image_std, and each source tensor under the record's
// prefixes is named, shape-checked against the configs and typed. Types follow the converter's
// rules where they are exact: F32 where it forces F32, the source's float type for weights under
// --outtype auto (an F32 checkpoint stays F32 where the converter writes F16), and F16 for a
// forced-F16 tensor only when every value is exact in F16, else exact F32.
#include "plan/mmproj_plan.hpp"

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>

#include "arch/architecture.hpp"
#include "arch/transforms.hpp"
#include "arch/vision/vision_architecture.hpp"
#include "model/json_file.hpp"
#include "plan/row_moves.hpp"
#include "quant_checks.hpp"
#include "rebox/ggml_type.hpp"
#include "source/model_dir.hpp"
#include "tensor_rules.hpp"

namespace rebox {
namespace {

using arch::VisionArchitecture;
using arch::VisionDim;
using arch::VisionDtype;
using arch::VisionInputs;
using arch::VisionTensorSpec;
using nlohmann::json;

constexpr std::string_view kFixConfig = "use the config.json that belongs to these weights";

// MmprojModel's key lists: the first key vision_config holds is the one read.
constexpr std::string_view kBlockKeys[] = {
    "n_layers",       "num_hidden_layers",   "n_layer", "num_layers", "depth", "layers",
    "encoder_layers", "vt_num_hidden_layers"};
constexpr std::string_view kHiddenKeys[] = {"hidden_size", "width", "vt_hidden_size"};
constexpr std::string_view kFfnKeys[] = {"intermediate_size", "vt_intermediate_size"};
constexpr std::string_view kHeadKeys[] = {"num_attention_heads", "num_heads", "heads",
                                          "vt_num_attention_heads"};
// The tower's input channels: SigLIP's num_channels, Qwen2-VL's in_channels.
constexpr std::string_view kChannelKeys[] = {"num_channels", "in_channels"};

// The vision numbers the tensor table and the common KVs need.
struct VisionNumbers {
    uint32_t image_size = 0, patch_size = 0, hidden = 0, ffn = 0, blocks = 0, heads = 0;
    uint32_t channels = 0, text_hidden = 0;
    // Read only where a family's table uses them (0: vision_config has none).
    uint32_t merge = 0, temporal = 0, mlp_ratio = 0, positions = 0;
    uint32_t axis_positions = 0, head_dim = 0, kv_heads = 0;
    // text_config vocab_size, and the row VisionSplit::token_row takes (-1: none).
    uint32_t text_vocab = 0;
    int64_t token_row = -1;
    // The layers the record's indexed rows attach to (VisionArchitecture::index_key), in order.
    std::vector<int64_t> indexes;
};

// A positive integer vision_config may hold (0 when absent or not one: a shape that needs it then
// fails its check, naming the key).
uint32_t optional_count(const json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_integer() || it->get<int64_t>() <= 0 ||
        it->get<int64_t>() > int64_t{1} << 20)
        return 0;
    return static_cast<uint32_t>(it->get<int64_t>());
}

// A positive integer under the first of `keys` the object holds; a Blocker naming it otherwise.
uint32_t read_count(const json& object, std::span<const std::string_view> keys,
                    std::string_view where, std::vector<Blocker>* blockers) {
    for (const std::string_view key : keys) {
        const auto it = object.find(std::string(key));
        if (it == object.end()) continue;
        if (it->is_number_integer() && it->get<int64_t>() > 0 &&
            it->get<int64_t>() <= int64_t{1} << 30)
            return static_cast<uint32_t>(it->get<int64_t>());
        blockers->push_back({"config.json: " + std::string(where) + std::string(key),
                             "is " + it->dump() + ", not a positive integer",
                             std::string(kFixConfig)});
        return 0;
    }
    blockers->push_back({"config.json: " + std::string(where) + std::string(keys[0]),
                         "is missing and has no default", std::string(kFixConfig)});
    return 0;
}

// preprocessor_config.json (its media_proc_cfg merged up), then processor_config.json (its
// image_processor merged up) over it, as MmprojModel.__init__ merges them.
json read_preprocessor(const std::filesystem::path& dir) {
    json merged = json::object();
    const auto merge = [&](const std::filesystem::path& path, const char* inner) {
        if (!std::filesystem::is_regular_file(path)) return;
        json cfg = detail::read_json_object(path);
        if (cfg.contains(inner) && cfg[inner].is_object()) cfg.update(cfg[inner]);
        merged.update(cfg);
    };
    merge(dir / "preprocessor_config.json", "media_proc_cfg");
    merge(dir / "processor_config.json", "image_processor");
    return merged;
}

// image_mean / image_std: FLOAT32 arrays; the converter reads them with no default.
std::optional<std::vector<float>> read_float_list(const json& preprocessor, const char* key,
                                                  std::vector<Blocker>* blockers) {
    const std::string field = std::string("preprocessor_config.json: ") + key;
    const auto it = preprocessor.find(key);
    if (it == preprocessor.end()) {
        blockers->push_back({field,
                             "is missing (llama.cpp's converter reads it with no default; the "
                             "mmproj needs it to normalize images)",
                             "add the checkpoint's preprocessor_config.json, or convert with "
                             "--no-mmproj"});
        return std::nullopt;
    }
    std::vector<float> values;
    if (it->is_array())
        for (const json& value : *it)
            if (value.is_number()) values.push_back(static_cast<float>(value.get<double>()));
    if (!it->is_array() || values.empty() || values.size() != it->size()) {
        blockers->push_back({field, "is " + it->dump() + ", not a list of numbers",
                             "use the preprocessor_config.json that belongs to these weights"});
        return std::nullopt;
    }
    return values;
}

// The id of an added token as LlavaVisionModel.get_token_id finds it: tokenizer_config.json's
// added_tokens_decoder, else tokenizer.json's added_tokens; a Blocker when neither has it (the
// converter raises) or the id is 0 (the converter then writes no row, which clip.cpp requires).
int64_t added_token_id(const std::filesystem::path& dir, std::string_view token,
                       std::vector<Blocker>* blockers) {
    const std::string text(token);
    int64_t id = -1;
    if (std::filesystem::is_regular_file(dir / "tokenizer_config.json")) {
        const json cfg = detail::read_json_object(dir / "tokenizer_config.json");
        const auto decoder = cfg.find("added_tokens_decoder");
        if (decoder != cfg.end() && decoder->is_object())
            for (const auto& [key, entry] : decoder->items())
                if (id < 0 && entry.is_object() && entry.value("content", std::string()) == text &&
                    !key.empty() && key.size() < 10 &&
                    key.find_first_not_of("0123456789") == std::string::npos)
                    id = std::stoll(key);
    }
    if (id < 0 && std::filesystem::is_regular_file(dir / "tokenizer.json")) {
        const json tok = detail::read_json_object(dir / "tokenizer.json");
        const auto added = tok.find("added_tokens");
        if (added != tok.end() && added->is_array())
            for (const json& entry : *added)
                if (id < 0 && entry.is_object() && entry.value("content", std::string()) == text &&
                    entry.contains("id") && entry["id"].is_number_integer())
                    id = entry["id"].get<int64_t>();
    }
    if (id <= 0)
        blockers->push_back(
            {"tokenizer_config.json / tokenizer.json: " + text,
             id < 0 ? "is not an added token; the mmproj needs its embedding row (llama.cpp's "
                      "converter: \"Token '" +
                          text + "' not found\")"
                    : "has id 0, whose row llama.cpp's converter never copies",
             "add the checkpoint's tokenizer files, or convert with --no-mmproj"});
    return id;
}

int64_t dim_value(VisionDim dim, const VisionNumbers& n) {
    switch (dim) {
        case VisionDim::one:
            return 1;
        case VisionDim::hidden:
            return n.hidden;
        case VisionDim::intermediate:
            return n.ffn;
        case VisionDim::text_hidden:
            return n.text_hidden;
        case VisionDim::channels:
            return n.channels;
        case VisionDim::patch:
            return n.patch_size;
        case VisionDim::patches: {
            const int64_t side = n.patch_size ? n.image_size / n.patch_size : 0;
            return side * side;
        }
        case VisionDim::qkv:
            return int64_t{3} * n.hidden;
        case VisionDim::merged:
            return int64_t{n.hidden} * n.merge * n.merge;
        case VisionDim::temporal:
            return n.temporal;
        case VisionDim::mlp_width:
            return int64_t{n.hidden} * n.mlp_ratio;
        case VisionDim::positions:
            return n.positions;
        case VisionDim::two:
            return 2;
        case VisionDim::axis_positions:
            return n.axis_positions;
        case VisionDim::patch_pixels:
            return int64_t{n.channels} * n.patch_size * n.patch_size;
        case VisionDim::q_width:
            return int64_t{n.heads} * n.head_dim;
        case VisionDim::kv_width:
            return int64_t{n.kv_heads} * n.head_dim;
        case VisionDim::head_dim:
            return n.head_dim;
        case VisionDim::text_vocab:
            return n.text_vocab;
    }
    return 0;
}

const char* dim_source(VisionDim dim) {
    switch (dim) {
        case VisionDim::one:
            return "1";
        case VisionDim::hidden:
            return "vision_config.hidden_size";
        case VisionDim::intermediate:
            return "vision_config.intermediate_size";
        case VisionDim::text_hidden:
            return "text_config.hidden_size";
        case VisionDim::channels:
            return "vision_config.num_channels";
        case VisionDim::patch:
            return "vision_config.patch_size";
        case VisionDim::patches:
            return "(image_size / patch_size)^2";
        case VisionDim::qkv:
            return "3 x vision_config.hidden_size";
        case VisionDim::merged:
            return "vision_config.hidden_size x spatial_merge_size^2";
        case VisionDim::temporal:
            return "vision_config.temporal_patch_size";
        case VisionDim::mlp_width:
            return "vision_config.hidden_size x mlp_ratio";
        case VisionDim::positions:
            return "vision_config.num_position_embeddings";
        case VisionDim::two:
            return "2";
        case VisionDim::axis_positions:
            return "vision_config.position_embedding_size";
        case VisionDim::patch_pixels:
            return "3 x vision_config.patch_size^2";
        case VisionDim::q_width:
            return "vision_config.num_attention_heads x head_dim";
        case VisionDim::kv_width:
            return "vision_config.num_key_value_heads x head_dim";
        case VisionDim::head_dim:
            return "vision_config.head_dim";
        case VisionDim::text_vocab:
            return "text_config.vocab_size";
    }
    return "";
}

// A source name matched to a table row: the row and the GGUF name (layer index filled in).
struct VisionMatch {
    const VisionTensorSpec* spec = nullptr;
    std::string gguf_name;
    int64_t layer = -1;
    // mlx-vlm's Conv3D patch embedding, stored channel-last [out, T, kh, kw, in].
    bool channel_last = false;
};

std::string with_layer(std::string_view pattern, int64_t layer) {
    std::string name(pattern);
    const size_t at = name.find("{N}");
    if (at != std::string::npos) name.replace(at, 3, std::to_string(layer));
    return name;
}

// Every row naming the source (several when the converter splits it into parts).
std::vector<VisionMatch> match_vision_name(const VisionArchitecture& arch, const std::string& name,
                                           const std::vector<int64_t>& indexes) {
    std::vector<VisionMatch> matches;
    for (const auto* rows : {&arch.first, &arch.last})
        for (const VisionTensorSpec& spec : *rows)
            if (spec.hf == name) matches.push_back(VisionMatch{&spec, std::string(spec.gguf)});
    for (const VisionTensorSpec& spec : arch.layer) {
        const size_t at = spec.hf.find("{N}");
        const std::string_view head = spec.hf.substr(0, at), tail = spec.hf.substr(at + 3);
        if (!name.starts_with(head) || !name.ends_with(tail) ||
            name.size() <= head.size() + tail.size())
            continue;
        const std::string digits =
            name.substr(head.size(), name.size() - head.size() - tail.size());
        if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const int64_t layer = std::stoll(digits);
        matches.push_back(VisionMatch{&spec, with_layer(spec.gguf, layer), layer});
    }
    // Indexed rows: the list position in the HF name, the layer it attaches to in the GGUF name (a
    // position past the list matches nothing).
    for (const VisionTensorSpec& spec : arch.indexed) {
        const size_t at = spec.hf.find("{N}");
        const std::string_view head = spec.hf.substr(0, at), tail = spec.hf.substr(at + 3);
        if (!name.starts_with(head) || !name.ends_with(tail) ||
            name.size() <= head.size() + tail.size())
            continue;
        const std::string digits =
            name.substr(head.size(), name.size() - head.size() - tail.size());
        if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const uint64_t position = std::stoull(digits);
        if (position >= indexes.size()) continue;
        const int64_t layer = indexes[position];
        matches.push_back(VisionMatch{&spec, with_layer(spec.gguf, layer), layer});
    }
    return matches;
}

// A split part (VisionSplit): GGUF row r holds source row row_source[r], rows of row_values
// values. q/k/v: the source's rows [k n/3, (k+1) n/3) (a bias: single values). A Conv3D
// [out, in, T, kh, kw] seen as out x in x T rows of kh x kw: part t takes every T-th row from t,
// and its ne drops the temporal dim. A BLOCKER where the output type's blocks would mix two rows.
bool attach_split(arch::VisionSplit split, const SourceTensor& source, const VisionNumbers& n,
                  bool channel_last, TensorPlan* tp, std::vector<Blocker>* blockers) {
    using arch::VisionSplit;
    if (split == VisionSplit::none) return true;
    const std::vector<int64_t>& shape = source.shape;
    if (split == VisionSplit::rope_pairs) {
        // LlamaModel.permute(w, n_head, n_head): whole rows, as the text models' q / k.
        const auto rows = static_cast<uint64_t>(shape[0]);
        const auto rows_map = arch::rope_pair_source_rows(rows, n.heads);
        const uint64_t row_values = source.element_count() / rows;
        if (!rows_map) {
            blockers->push_back({source.name,
                                 std::to_string(rows) + " rows do not split into " +
                                     std::to_string(n.heads) +
                                     " heads of an even size (vision_config.num_attention_heads, "
                                     "LlamaModel.permute)",
                                 std::string(kFixConfig)});
            return false;
        }
        if (const auto problem = plan_detail::row_move_problem(
                tp->type, row_values,
                source.quant_group() > 0 ? static_cast<uint64_t>(source.quant_group()) : 0)) {
            blockers->push_back(
                {source.name,
                 "is permuted into " + tp->gguf_name + " by whole rows, but " + *problem,
                 "--outtype f32 (every value moves on its own)"});
            return false;
        }
        tp->row_source = *rows_map;
        tp->row_values = row_values;
        tp->note += std::string(tp->note.empty() ? "" : "; ") + "rows permuted for rope";
        return true;
    }
    if (split == VisionSplit::token_row) {
        // data_torch[id] of the text embedding: one whole row, F32 (a 1-D tensor).
        if (source.is_quantized() || source.fp8) {
            blockers->push_back(
                {source.name,
                 "is quantized; the mmproj's v.token_embd.img_break is its row " +
                     std::to_string(n.token_row) +
                     " as float values, which rebox does not dequantize into the mmproj",
                 "a checkpoint whose text embedding is float (AWQ, GPTQ and compressed-tensors "
                 "keep it float), or convert with --no-mmproj"});
            return false;
        }
        if (n.token_row < 0 || n.token_row >= shape[0]) {
            blockers->push_back({source.name,
                                 "has " + std::to_string(shape[0]) + " rows, no row " +
                                     std::to_string(n.token_row) + " for the token",
                                 std::string(kFixConfig)});
            return false;
        }
        tp->row_source = {static_cast<uint32_t>(n.token_row)};
        tp->row_values = static_cast<uint64_t>(shape[1]);
        tp->ne = {shape[1]};
        tp->nbytes = 4 * static_cast<uint64_t>(shape[1]);
        tp->note += std::string(tp->note.empty() ? "" : "; ") + "row " +
                    std::to_string(n.token_row) + " of the text embedding";
        return true;
    }
    if (split == VisionSplit::hwc_to_chw) {
        // [out, p x p x 3] -> [out, 3, p, p]: GGUF value (o, c, y, x) is source value
        // (o, (y p + x) 3 + c); each value a row of one.
        const auto out = static_cast<uint64_t>(shape[0]);
        const auto row = static_cast<uint64_t>(shape[1]);
        uint64_t p = 0;
        while ((p + 1) * (p + 1) * 3 <= row) ++p;
        if (p * p * 3 != row || out * row > (uint64_t{1} << 31)) {
            blockers->push_back({source.name,
                                 "is [" + std::to_string(out) + ", " + std::to_string(row) +
                                     "], not a patch embedding of 3 x p x p pixels per row",
                                 "use the config.json that belongs to these weights"});
            return false;
        }
        std::vector<uint32_t> row_source(out * row);
        for (uint64_t o = 0; o < out; ++o)
            for (uint64_t c = 0; c < 3; ++c)
                for (uint64_t i = 0; i < p * p; ++i)
                    row_source[o * row + c * p * p + i] =
                        static_cast<uint32_t>(o * row + i * 3 + c);
        if (const auto problem = plan_detail::row_move_problem(tp->type, 1, 0)) {
            blockers->push_back(
                {source.name,
                 "is reordered into " + tp->gguf_name + " value by value, but " + *problem,
                 "--outtype f32 (every value moves on its own)"});
            return false;
        }
        tp->row_source = std::move(row_source);
        tp->row_values = 1;
        tp->ne = {static_cast<int64_t>(p), static_cast<int64_t>(p), 3, static_cast<int64_t>(out)};
        tp->nbytes = ggml_nbytes(tp->type, tp->ne).value_or(0);
        tp->note += std::string(tp->note.empty() ? "" : "; ") +
                    "the Linear patch embedding's pixels (row, column, channel) laid out as the "
                    "Conv2D [out, channel, row, column]";
        return true;
    }
    const bool third = split == VisionSplit::third_0 || split == VisionSplit::third_1 ||
                       split == VisionSplit::third_2;
    uint64_t rows = 0, row_values = 0;
    std::vector<uint32_t> row_source;
    if (third) {
        row_values = shape.size() == 2 ? static_cast<uint64_t>(shape[1]) : 1;
        rows = static_cast<uint64_t>(shape[0]) / 3;
        const uint64_t part = split == VisionSplit::third_0   ? 0
                              : split == VisionSplit::third_1 ? 1
                                                              : 2;
        for (uint64_t r = 0; r < rows; ++r)
            row_source.push_back(static_cast<uint32_t>(part * rows + r));
    } else {
        const uint64_t depth = static_cast<uint64_t>(shape[channel_last ? 1 : 2]);
        if (depth != 2) {
            if (split == VisionSplit::temporal_1) return false;  // said once, for part 0
            blockers->push_back(
                {source.name,
                 "is a Conv3D patch embedding of temporal size " + std::to_string(depth) +
                     "; llama.cpp's converter splits only a temporal size of 2 (\"Current "
                     "implementation only support temporal_patch_size of 2\") into "
                     "v.patch_embd.weight and v.patch_embd.weight.1, and clip.cpp reads two",
                 "a checkpoint with temporal_patch_size 2, or convert with --no-mmproj"});
            return false;
        }
        const uint64_t t = split == VisionSplit::temporal_1 ? 1 : 0;
        if (channel_last) {
            // mlx-vlm's [out, T, kh, kw, in]: GGUF value (o, c, y, x) of part t is source value
            // (o, t, y, x, c); each value a row of one.
            const auto out = static_cast<uint64_t>(shape[0]), kh = static_cast<uint64_t>(shape[2]),
                       kw = static_cast<uint64_t>(shape[3]), in = static_cast<uint64_t>(shape[4]);
            if (out * depth * kh * kw * in >= (uint64_t{1} << 31)) {
                blockers->push_back({source.name, "is too large a patch embedding to reorder",
                                     "convert with --no-mmproj"});
                return false;
            }
            row_values = 1;
            rows = out * in * kh * kw;
            for (uint64_t o = 0; o < out; ++o)
                for (uint64_t c = 0; c < in; ++c)
                    for (uint64_t y = 0; y < kh; ++y)
                        for (uint64_t x = 0; x < kw; ++x)
                            row_source.push_back(static_cast<uint32_t>(
                                (((o * depth + t) * kh + y) * kw + x) * in + c));
        } else {
            row_values = static_cast<uint64_t>(shape[3] * shape[4]);
            rows = static_cast<uint64_t>(shape[0] * shape[1]);
            for (uint64_t r = 0; r < rows; ++r)
                row_source.push_back(static_cast<uint32_t>(r * depth + t));
        }
    }
    const int64_t group = source.quant_group();
    if (const auto problem = plan_detail::row_move_problem(
            tp->type, row_values, group > 0 ? static_cast<uint64_t>(group) : 0)) {
        blockers->push_back({source.name,
                             "is split into " + tp->gguf_name + " by whole rows, but " + *problem,
                             "--outtype f32 (every value moves on its own)"});
        return false;
    }
    tp->row_source = std::move(row_source);
    tp->row_values = row_values;
    if (third) {
        tp->ne.back() /= 3;
    } else if (channel_last) {  // each part is [out, in, kh, kw]
        tp->ne = {shape[3], shape[2], shape[4], shape[0]};
    } else {  // planned as the 4-D [out, in x T, kh, kw]; each part is [out, in, kh, kw]
        tp->ne = {shape[4], shape[3], shape[1], shape[0]};
    }
    tp->nbytes = ggml_nbytes(tp->type, tp->ne).value_or(0);
    tp->note += std::string(tp->note.empty() ? "" : "; ") +
                (third          ? "one third of the fused q/k/v rows"
                 : channel_last ? "one temporal slice of mlx-vlm's channel-last Conv3D, moved to "
                                  "[out, in, kh, kw] value by value"
                                : "one temporal slice of the Conv3D");
    return true;
}

// The source name the record's table uses: "model." in front dropped (transformers >= 4.50
// saves the tower as model.vision_tower.*); nullopt for a name outside the record's prefixes.
// The text model's tensors (a family that takes a row of them) as "language_model.<name>" in both
// layouts: "language_model.model.*" (transformers < 4.52) and "model.language_model.*".
std::optional<std::string> vision_name(const VisionArchitecture& arch, std::string_view name) {
    if (name.starts_with("model.")) name.remove_prefix(6);
    std::string normalized(name);
    // mlx-vlm's tower name ("vision_tower.blocks.0..." for the published "visual.blocks.0...").
    if (!arch.mlx_vlm_prefix.empty() && !arch.prefixes.empty() &&
        normalized.starts_with(arch.mlx_vlm_prefix))
        normalized = std::string(arch.prefixes[0]) + normalized.substr(arch.mlx_vlm_prefix.size());
    if (normalized.starts_with("language_model.model."))
        normalized.erase(std::string_view("language_model.").size(), 6);
    for (const std::string_view prefix : arch.prefixes)
        if (normalized.starts_with(prefix)) return normalized;
    return std::nullopt;
}

// The tensor's type: the record's dtype rule, then rebox's exactness (plan/tensor_rules.hpp).
bool plan_vision_tensor(const SourceTensor& whole, size_t index, const VisionMatch& match,
                        const PlanOptions& options, std::string_view family, const VisionNumbers& n,
                        TensorPlan* tp, std::vector<Blocker>* blockers) {
    const VisionTensorSpec& spec = *match.spec;
    // A Conv3D source is planned as 4-D (GGUF holds at most 4 dims): [out, in x T, kh, kw], the
    // same bytes; attach_split then takes its parts.
    SourceTensor folded;
    const bool conv3d = whole.shape.size() == 5;
    if (conv3d) {
        folded = whole;
        folded.shape = {whole.shape[0], whole.shape[1] * whole.shape[2], whole.shape[3],
                        whole.shape[4]};
    }
    // A 0-d buffer: the converter unsqueezes it to [1].
    const bool scalar = whole.shape.empty();
    if (scalar) {
        folded = whole;
        folded.shape = {1};
    }
    const SourceTensor& tensor = conv3d || scalar ? folded : whole;
    const std::string record = std::string(family) + " vision";
    if (spec.dtype == VisionDtype::f32)
        return plan_detail::plan_exact_f32(tensor, index, match.gguf_name, record,
                                           "embedding table", tp, blockers) &&
               attach_split(spec.split, whole, n, match.channel_last, tp, blockers);
    if (spec.dtype == VisionDtype::f16_when_exact) {
        // The converter forces F16. Exact in F16: the converter's bytes; otherwise exact F32
        // values rather than the converter's rounding (rebox never rounds a value).
        if (!tensor.is_quantized() && tensor.float_dtype == FloatDtype::F16)
            return plan_detail::plan_tensor(tensor, index, match.gguf_name, options, tp, blockers);
        if (const auto inexact =
                plan_detail::first_inexact_value(tensor, plan_detail::FitTarget::f16)) {
            if (!plan_detail::plan_exact_f32(tensor, index, match.gguf_name, record,
                                             "forced-F16 projection", tp, blockers))
                return false;
            tp->note = "llama.cpp's converter forces F16, which would round value " +
                       std::to_string(inexact->index) + ": exact F32 instead";
            return true;
        }
        tp->source_index = index;
        tp->gguf_name = match.gguf_name;
        tp->ne.assign(tensor.shape.rbegin(), tensor.shape.rend());
        tp->type = GgmlType::F16;
        tp->encoding = tensor.is_quantized() ? Encoding::dequant_f16 : Encoding::recast_f16;
        tp->nbytes = 2 * tensor.element_count();
        tp->note = "F16 as llama.cpp's converter forces it, every value exact";
        return true;
    }
    if (!plan_detail::plan_tensor(tensor, index, match.gguf_name, options, tp, blockers))
        return false;
    // The patch embedding: F16 where the file is F16 (an F16 source), else F32.
    if (spec.dtype == VisionDtype::f32_unless_f16 && tp->type != GgmlType::F16 &&
        tp->type != GgmlType::F32 &&
        !plan_detail::plan_exact_f32(tensor, index, match.gguf_name, record, "patch embedding", tp,
                                     blockers))
        return false;
    if (!attach_split(spec.split, whole, n, match.channel_last, tp, blockers)) return false;
    return plan_detail::attach_value_transform(spec.value, tensor, tp, blockers);
}

// The source shape the configs imply for a row, or a Blocker.
bool check_vision_shape(const SourceTensor& tensor, const VisionMatch& match,
                        const VisionNumbers& numbers, std::vector<Blocker>* blockers) {
    const VisionTensorSpec& spec = *match.spec;
    std::vector<int64_t> expected;
    std::string sources;
    // mlx-vlm's channel-last Conv3D: [out, in, T, kh, kw] stored as [out, T, kh, kw, in].
    constexpr uint8_t kChannelLast[] = {0, 2, 3, 4, 1};
    for (uint8_t i = 0; i < spec.dims; ++i) {
        const uint8_t d = match.channel_last ? kChannelLast[i] : i;
        expected.push_back(dim_value(spec.shape[d], numbers));
        sources += (i ? ", " : "") + std::string(dim_source(spec.shape[d]));
    }
    if (tensor.shape == expected) return true;
    // A scalar: a 0-d buffer, or one value of shape [1].
    if (spec.dims == 0 && tensor.shape == std::vector<int64_t>{1}) return true;
    if (spec.dims == 0) sources = "a scalar";
    const auto text = [](const std::vector<int64_t>& shape) {
        std::string out = "[";
        for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
        return out + "]";
    };
    blockers->push_back({tensor.name,
                         "is " + text(tensor.shape) + " where the configs say " + text(expected) +
                             " (" + sources + ")",
                         "use the config.json that belongs to these weights"});
    return false;
}

std::vector<GgufKV> mmproj_kvs(const VisionArchitecture& arch, const VisionInputs& inputs,
                               const VisionNumbers& n, const std::vector<float>& mean,
                               const std::vector<float>& std_dev, const Plan& plan,
                               const SourceModel& source, const PlanOptions& options,
                               std::vector<Blocker>* blockers) {
    std::vector<GgufKV> kvs;
    kvs.push_back({"general.architecture", GgufValue::str("clip")});
    // prepare_metadata: set_type (MmprojModel: "mmproj"), then the model card over this file's
    // tensors.
    for (GgufKV& kv : plan_detail::card_kvs(source, options, plan.tensors)) {
        if (kv.key == "general.type") kv.value = GgufValue::str("mmproj");
        kvs.push_back(std::move(kv));
    }
    // MmprojModel.set_gguf_parameters.
    kvs.push_back({"general.file_type",
                   GgufValue::u32(static_cast<uint32_t>(plan_detail::file_type(plan, options)))});
    kvs.push_back({"clip.has_vision_encoder", GgufValue::boolean(true)});
    kvs.push_back({"clip.vision.projection_dim", GgufValue::u32(n.text_hidden)});
    kvs.push_back({"clip.vision.image_size", GgufValue::u32(n.image_size)});
    kvs.push_back({"clip.vision.patch_size", GgufValue::u32(n.patch_size)});
    kvs.push_back({"clip.vision.embedding_length", GgufValue::u32(n.hidden)});
    kvs.push_back({"clip.vision.feed_forward_length", GgufValue::u32(n.ffn)});
    kvs.push_back({"clip.vision.block_count", GgufValue::u32(n.blocks)});
    kvs.push_back({"clip.vision.attention.head_count", GgufValue::u32(n.heads)});
    kvs.push_back({"clip.vision.image_mean", GgufValue::f32_array(mean)});
    kvs.push_back({"clip.vision.image_std", GgufValue::f32_array(std_dev)});
    // The family's class: its projector type first, then its own keys.
    kvs.push_back(
        {std::string(arch.projector_key), GgufValue::str(std::string(arch.projector_type))});
    if (arch.family_kvs) arch.family_kvs(inputs, &kvs, blockers);
    kvs.push_back({"general.quantization_version", GgufValue::u32(2)});  // GGML_QNT_VERSION
    return kvs;
}

}  // namespace

std::optional<Plan> make_mmproj_plan(const SourceModel& source, const PlanOptions& options) {
    const json config = source.model_dir && source.model_dir->has_config()
                            ? source.model_dir->config()
                            : detail::read_json_object(source.dir / "config.json");
    const VisionArchitecture* arch = arch::find_vision_architecture(config);
    if (arch == nullptr) return std::nullopt;
    // The tensors the mmproj takes, with their index in the source.
    std::vector<std::pair<size_t, std::string>> members;
    size_t left_out = 0;
    for (size_t i = 0; i < source.tensors.size(); ++i) {
        if (auto name = vision_name(*arch, source.tensors[i].name)) {
            members.emplace_back(i, std::move(*name));
            continue;
        }
        std::string_view name = source.tensors[i].name;
        if (name.starts_with("model.")) name.remove_prefix(6);
        for (const std::string_view prefix : arch->left_out)
            if (name.starts_with(prefix)) {
                ++left_out;
                break;
            }
    }
    if (members.empty()) return std::nullopt;

    Plan plan;
    plan.arch = "clip";
    plan.config.model_type = std::string(arch->family);
    // vision_config with the vision config class's defaults, as AutoConfig gives it the converter.
    json vision = config["vision_config"];
    for (const arch::ConfigDefault& d : arch->vision_defaults)
        if (!vision.contains(std::string(d.field)))
            vision[std::string(d.field)] = json::parse(d.json_value);
    if (arch->prepare_vision) arch->prepare_vision(vision);
    if (arch->prepare_with_config) arch->prepare_with_config(vision, config);
    VisionNumbers n;
    n.image_size = read_count(vision, std::array{std::string_view("image_size")}, "vision_config.",
                              &plan.blockers);
    n.patch_size = read_count(vision, std::array{std::string_view("patch_size")}, "vision_config.",
                              &plan.blockers);
    n.hidden = read_count(vision, kHiddenKeys, "vision_config.", &plan.blockers);
    n.ffn = read_count(vision, kFfnKeys, "vision_config.", &plan.blockers);
    n.blocks = read_count(vision, kBlockKeys, "vision_config.", &plan.blockers);
    n.heads = read_count(vision, kHeadKeys, "vision_config.", &plan.blockers);
    n.channels = read_count(vision, kChannelKeys, "vision_config.", &plan.blockers);
    n.merge = optional_count(vision, "spatial_merge_size");
    n.temporal = optional_count(vision, "temporal_patch_size");
    n.mlp_ratio = optional_count(vision, "mlp_ratio");
    n.positions = optional_count(vision, "num_position_embeddings");
    n.axis_positions = optional_count(vision, "position_embedding_size");
    n.head_dim = optional_count(vision, "head_dim");
    n.kv_heads = optional_count(vision, "num_key_value_heads");
    if (!arch->indexed.empty()) {
        // Each entry a layer of the tower, as the converter's is_deepstack_layers[idx] needs.
        const std::string field = "config.json: vision_config." + std::string(arch->index_key);
        // The converter reads a missing list as [] (hparams_vision.get(key, [])).
        const json& list = vision.contains(std::string(arch->index_key))
                               ? vision[std::string(arch->index_key)]
                               : json::array();
        bool ok = list.is_array() && list.size() <= 256;
        for (const json& index : ok ? list : json::array()) {
            ok = ok && index.is_number_integer() && index.get<int64_t>() >= 0 &&
                 (n.blocks == 0 || index.get<int64_t>() < n.blocks);
            if (ok) n.indexes.push_back(index.get<int64_t>());
        }
        if (!ok)
            plan.blockers.push_back({field,
                                     "is " + list.dump() + ", not a list of the tower's " +
                                         std::to_string(n.blocks) + " layer indexes",
                                     std::string(kFixConfig)});
    }
    // MmprojModel: the text model's width, text_config over the top level.
    json text = config;
    if (config.contains("text_config") && config["text_config"].is_object())
        text.update(config["text_config"]);
    n.text_hidden = read_count(text, std::array{std::string_view("hidden_size")}, "text_config.",
                               &plan.blockers);
    n.text_vocab = optional_count(text, "vocab_size");
    if (!arch->row_token.empty())
        n.token_row = added_token_id(source.dir, arch->row_token, &plan.blockers);
    if (n.hidden && n.heads && n.hidden % n.heads != 0)
        plan.blockers.push_back({"config.json: vision_config.num_attention_heads",
                                 std::to_string(n.heads) + " heads do not divide hidden_size " +
                                     std::to_string(n.hidden) + " (clip.cpp's head size)",
                                 std::string(kFixConfig)});
    if (n.patch_size && n.image_size && n.image_size % n.patch_size != 0)
        plan.blockers.push_back({"config.json: vision_config.patch_size",
                                 "patch_size " + std::to_string(n.patch_size) +
                                     " does not divide image_size " + std::to_string(n.image_size),
                                 std::string(kFixConfig)});
    const json preprocessor = read_preprocessor(source.dir);
    const auto mean = read_float_list(preprocessor, "image_mean", &plan.blockers);
    const auto std_dev = read_float_list(preprocessor, "image_std", &plan.blockers);
    if (!plan.blockers.empty()) return plan;

    // Each member named, checked and typed, in the table's order (first, layers, last).
    std::map<std::string, std::pair<size_t, VisionMatch>> named;
    std::set<std::string> refused;  // named by a source already refused: said once
    size_t skipped = 0;
    for (const auto& [index, name] : members) {
        const SourceTensor& tensor = source.tensors[index];
        bool skip = false;
        for (const std::string_view part : arch->skipped) skip |= name.find(part) != name.npos;
        if (skip) {
            ++skipped;
            continue;
        }
        std::vector<VisionMatch> matches = match_vision_name(*arch, name, n.indexes);
        const bool mlx_vlm =
            !arch->mlx_vlm_prefix.empty() && tensor.name.starts_with(arch->mlx_vlm_prefix);
        for (VisionMatch& match : matches) match.channel_last = mlx_vlm && match.spec->dims == 5;
        if (matches.empty()) {
            plan.blockers.push_back(
                {tensor.name,
                 "has no name in the " + std::string(arch->family) +
                     " mmproj (llama.cpp's converter stops: \"Can not map tensor\")",
                 "remove the tensor, or convert with --no-mmproj"});
            continue;
        }
        if (matches[0].layer >= n.blocks) {
            plan.blockers.push_back({tensor.name,
                                     "is layer " + std::to_string(matches[0].layer) +
                                         " of a tower of vision_config.num_hidden_layers " +
                                         std::to_string(n.blocks),
                                     std::string(kFixConfig)});
            continue;
        }
        if (!check_vision_shape(tensor, matches[0], n, &plan.blockers)) {
            for (const VisionMatch& match : matches) refused.insert(match.gguf_name);
            continue;
        }
        for (const VisionMatch& match : matches)
            if (!named.emplace(match.gguf_name, std::pair{index, match}).second)
                plan.blockers.push_back({tensor.name, "maps to " + match.gguf_name + " twice",
                                         "keep one of the two tensors"});
    }
    const auto take = [&](const std::string& gguf_name, bool optional) {
        const auto it = named.find(gguf_name);
        if (it == named.end() && (refused.count(gguf_name) || optional)) return;
        if (it == named.end()) {
            plan.blockers.push_back(
                {gguf_name,
                 "clip.cpp's " + std::string(arch->projector_type) + " projector requires " +
                     gguf_name + " and no source tensor maps to it",
                 "add the missing weight to the checkpoint, or convert with --no-mmproj"});
            return;
        }
        const auto& [index, match] = it->second;
        TensorPlan tp;
        if (plan_vision_tensor(source.tensors[index], index, match, options, arch->family, n, &tp,
                               &plan.blockers))
            plan.tensors.push_back(std::move(tp));
    };
    for (const VisionTensorSpec& spec : arch->first) take(std::string(spec.gguf), spec.optional);
    for (uint32_t layer = 0; layer < n.blocks; ++layer)
        for (const VisionTensorSpec& spec : arch->layer)
            take(with_layer(spec.gguf, layer), spec.optional);
    for (const int64_t layer : n.indexes)
        for (const VisionTensorSpec& spec : arch->indexed)
            take(with_layer(spec.gguf, layer), spec.optional);
    for (const VisionTensorSpec& spec : arch->last) take(std::string(spec.gguf), spec.optional);
    if (skipped > 0)
        plan.notes.push_back(
            std::to_string(skipped) +
            " vision tensor(s) llama.cpp's converter skips left out of the mmproj");
    if (left_out > 0)
        plan.notes.push_back(std::to_string(left_out) + " " + std::string(arch->left_out_note));

    VisionInputs inputs{&vision, &preprocessor, &config, n.text_hidden, n.image_size, n.patch_size};
    plan.kvs = mmproj_kvs(*arch, inputs, n, *mean, *std_dev, plan, source, options, &plan.blockers);
    return plan;
}

}  // namespace rebox
