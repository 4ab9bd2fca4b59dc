// verify_mmproj: pairs each tensor verify expects (ref_vision.hpp) with the file's, checks its
// type rule and ne, and compares every value's bit pattern with the source's (widened exactly;
// gemma's soft_emb_norm + 1 by verify's own add_one_as_converter); then the KVs verify derives
// itself, in the converter's order (MmprojModel.set_gguf_parameters, then the family's), and no
// clip.* key it does not derive. general.file_type and the model card keys are reported
// unchecked.
#include "verify/mmproj/mmproj_verify.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "format/gguf_file.hpp"
#include "format/safetensors.hpp"
#include "model/json_file.hpp"
#include "ref_vision.hpp"
#include "verify/sources/mlx_source_index.hpp"
#include "verify/values/ref_compare.hpp"
#include "verify/values/ref_dequant.hpp"
#include "verify/values/ref_expected.hpp"
#include "verify/values/ref_norm_shift.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox {
namespace {

using nlohmann::json;
using verify_ref::RefVisionFamily;
using verify_ref::RefVisionNumbers;
using verify_ref::RefVisionTensor;
using verify_ref::RefVisionType;
using verify_ref::SourceFloat;

// The first of `keys` the object holds as a positive integer (MmprojModel's find_vparam lists).
int64_t first_count(const json& object, std::initializer_list<const char*> keys) {
    for (const char* key : keys)
        if (object.contains(key))
            return object[key].is_number_integer() ? object[key].get<int64_t>() : -1;
    return -1;
}

json merged_preprocessor(const std::filesystem::path& dir) {
    json out = json::object();
    for (const auto& [file, inner] : {std::pair{"preprocessor_config.json", "media_proc_cfg"},
                                      std::pair{"processor_config.json", "image_processor"}}) {
        if (!std::filesystem::exists(dir / file)) continue;
        json cfg = detail::read_json_object(dir / file);
        if (cfg.contains(inner) && cfg[inner].is_object()) cfg.update(cfg[inner]);
        out.update(cfg);
    }
    return out;
}

std::optional<SourceFloat> source_float(StDtype dtype) {
    if (dtype == StDtype::F32) return SourceFloat::F32;
    if (dtype == StDtype::F16) return SourceFloat::F16;
    if (dtype == StDtype::BF16) return SourceFloat::BF16;
    return std::nullopt;
}

// The GGUF tensor's row-major shape: the source's, or the part the converter cuts out.
std::vector<int64_t> part_shape(const RefVisionTensor& want) {
    if (want.scalar) return {1};
    if (want.pixels_to_channels && want.source_shape.size() == 2) {
        int64_t p = 0;
        while ((p + 1) * (p + 1) * 3 <= want.source_shape[1]) ++p;
        return {want.source_shape[0], 3, p, p};
    }
    std::vector<int64_t> shape = want.source_shape;
    if (want.slice_axis < 0) return shape;
    if (want.slice_drops_axis)
        shape.erase(shape.begin() + want.slice_axis);
    else
        shape[static_cast<size_t>(want.slice_axis)] = want.slice_count;
    return shape;
}

// The part's values, gathered from the whole source's (row-major): for each index before the
// axis, the slice's indices along it, each with everything after it.
std::vector<float> cut_part(const RefVisionTensor& want, const std::vector<float>& whole) {
    if (want.rope_heads > 0) {
        const auto rows = static_cast<uint64_t>(want.source_shape[0]);
        const uint64_t width = whole.size() / rows, head_rows = rows / want.rope_heads;
        std::vector<float> moved(whole.size());
        for (uint64_t r = 0; r < rows; ++r) {
            const uint64_t from = verify_ref::rope_source_row(r, head_rows);
            std::copy_n(whole.begin() + static_cast<int64_t>(from * width), width,
                        moved.begin() + static_cast<int64_t>(r * width));
        }
        return moved;
    }
    if (want.pixels_to_channels) {
        const int64_t out = want.source_shape[0], row = want.source_shape[1], pp = row / 3;
        std::vector<float> moved(whole.size());
        for (int64_t o = 0; o < out; ++o)
            for (int64_t c = 0; c < 3; ++c)
                for (int64_t i = 0; i < pp; ++i)
                    moved[static_cast<size_t>(o * row + c * pp + i)] =
                        whole[static_cast<size_t>(o * row + i * 3 + c)];
        return moved;
    }
    if (want.slice_axis < 0) return whole;
    const auto axis = static_cast<size_t>(want.slice_axis);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= want.source_shape[d];
    for (size_t d = axis + 1; d < want.source_shape.size(); ++d) inner *= want.source_shape[d];
    const int64_t span = want.source_shape[axis];
    std::vector<float> part;
    part.reserve(static_cast<size_t>(outer * want.slice_count * inner));
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = want.slice_begin; i < want.slice_begin + want.slice_count; ++i) {
            const auto at = whole.begin() + (o * span + i) * inner;
            part.insert(part.end(), at, at + inner);
        }
    return part;
}

// An added token's id as the converter's get_token_id finds it: tokenizer_config.json's
// added_tokens_decoder first, then tokenizer.json's added_tokens; -1 when neither has it.
int64_t token_id(const std::filesystem::path& dir, const std::string& token) {
    if (std::filesystem::exists(dir / "tokenizer_config.json")) {
        const json cfg = detail::read_json_object(dir / "tokenizer_config.json");
        if (cfg.contains("added_tokens_decoder") && cfg["added_tokens_decoder"].is_object())
            for (const auto& [id, entry] : cfg["added_tokens_decoder"].items())
                if (entry.is_object() && entry.contains("content") && entry["content"] == token &&
                    !id.empty() && id.size() < 10 &&
                    id.find_first_not_of("0123456789") == std::string::npos)
                    return std::stoll(id);
    }
    if (std::filesystem::exists(dir / "tokenizer.json")) {
        const json tok = detail::read_json_object(dir / "tokenizer.json");
        if (tok.contains("added_tokens") && tok["added_tokens"].is_array())
            for (const json& entry : tok["added_tokens"])
                if (entry.is_object() && entry.contains("content") && entry["content"] == token &&
                    entry.contains("id") && entry["id"].is_number_integer())
                    return entry["id"].get<int64_t>();
    }
    return -1;
}

bool exact_in_fp16(float value) {
    return static_cast<double>(value) == verify_ref::round_to_fp16(value);
}

// The source tensor for a reference name: as named, under "model." (transformers >= 4.50), the
// text model's "model.language_model.*" for "language_model.model.*" (transformers >= 4.52), or
// mlx-vlm's "vision_tower.*" for the published "visual.*" (its sanitize's rename; *mlx_vlm set).
const StLocated* find_source(const SafetensorsModel& source, const std::string& name,
                             bool* mlx_vlm = nullptr) {
    if (mlx_vlm) *mlx_vlm = false;
    if (const StLocated* src = source.find(name)) return src;
    if (const StLocated* src = source.find("model." + name)) return src;
    constexpr std::string_view kText = "language_model.model.";
    if (name.starts_with(kText))
        return source.find("model.language_model." + name.substr(kText.size()));
    constexpr std::string_view kVisual = "visual.";
    if (name.starts_with(kVisual)) {
        const StLocated* src = source.find("vision_tower." + name.substr(kVisual.size()));
        if (src && mlx_vlm) *mlx_vlm = true;
        return src;
    }
    return nullptr;
}

// mlx-vlm's sanitize stores a Conv3D [out, in, T, kh, kw] as transpose(0, 2, 3, 4, 1):
// [out, T, kh, kw, in]. The values back in [out, in, T, kh, kw] order.
std::vector<float> from_channel_last(const std::vector<int64_t>& shape,
                                     const std::vector<float>& stored) {
    const int64_t out = shape[0], in = shape[1], depth = shape[2], kh = shape[3], kw = shape[4];
    std::vector<float> values(stored.size());
    for (int64_t o = 0; o < out; ++o)
        for (int64_t c = 0; c < in; ++c)
            for (int64_t t = 0; t < depth; ++t)
                for (int64_t y = 0; y < kh; ++y)
                    for (int64_t x = 0; x < kw; ++x)
                        values[static_cast<size_t>((((o * in + c) * depth + t) * kh + y) * kw +
                                                   x)] =
                            stored[static_cast<size_t>((((o * depth + t) * kh + y) * kw + x) * in +
                                                       c)];
    return values;
}

// One tensor: type rule, ne, values.
// mlx: verify's own index of an MLX source (nullptr otherwise): a tower Linear quantized by
// legacy mlx-vlm (affine codes, scales, biases) is read through it, its values w = q * scale + bias
// in binary32 as mlx computes them.
TensorCheck check_tensor(const RefVisionTensor& want, const GgufFile& file,
                         const SafetensorsModel& source, const verify_ref::SourceIndex* mlx) {
    TensorCheck check;
    check.gguf_name = want.gguf_name;
    check.source_name = want.source_name;
    const GgufTensorInfo* got = file.find_tensor(want.gguf_name);
    bool mlx_vlm = false;
    const StLocated* src = find_source(source, want.source_name, &mlx_vlm);
    if (got == nullptr || src == nullptr) {
        check.problem = got == nullptr ? "missing from the mmproj file" : "no such source tensor";
        return check;
    }
    check.gguf_type = ggml_type_name(got->type);
    // A quantized MLX module: its logical [rows, cols] from verify's own index.
    const verify_ref::SourceTensor* quantized = nullptr;
    if (mlx != nullptr)
        for (const verify_ref::SourceTensor& entry : mlx->entries)
            if (entry.name == src->info->name && entry.quantized && !entry.fp4) quantized = &entry;
    if (quantized != nullptr && !quantized->problem.empty()) {
        check.problem = quantized->problem;
        return check;
    }
    const std::vector<int64_t>& stored_shape = quantized ? quantized->shape : src->info->shape;
    const bool one_value =
        want.scalar && stored_shape == std::vector<int64_t>{1};  // stored as [1]: the same
    // mlx-vlm's channel-last Conv3D.
    const std::vector<int64_t>& w = want.source_shape;
    const bool channel_last = mlx_vlm && w.size() == 5 &&
                              stored_shape == std::vector<int64_t>{w[0], w[2], w[3], w[4], w[1]};
    if (stored_shape != want.source_shape && !one_value && !channel_last) {
        check.problem = "the source's shape is not the one the configs imply";
        return check;
    }
    const std::vector<int64_t> shape = part_shape(want);
    const std::vector<int64_t> ne(shape.rbegin(), shape.rend());
    if (got->ne != ne) {
        check.problem = want.slice_axis < 0 ? "ne is not the source's shape reversed"
                                            : "ne is not the converter's part's shape reversed";
        return check;
    }
    const auto dtype = source_float(src->info->dtype);
    if (!dtype && quantized == nullptr) {
        check.problem =
            "the source is not F32 / F16 / BF16 nor MLX affine-quantized (verify reads no other)";
        return check;
    }
    std::vector<float> whole;
    if (quantized != nullptr) {
        whole.resize(quantized->element_count);
        std::vector<uint8_t> codes(whole.size());
        verify_ref::expected_from_quantized(quantized->quant, 0, codes, whole);
    } else {
        whole.resize(src->info->element_count());
        verify_ref::expected_from_float(*dtype, src->file->data(*src->info), 0, whole);
    }
    if (channel_last) whole = from_channel_last(want.source_shape, whole);
    if (want.add_one) verify_ref::add_one_as_converter(*dtype, whole);
    const std::vector<float> expected = cut_part(want, whole);
    const uint64_t count = expected.size();
    std::vector<float> values(count);
    const bool f32 = got->type == GgmlType::F32, f16 = got->type == GgmlType::F16,
               bf16 = got->type == GgmlType::BF16;
    bool type_ok = f32;
    if (want.type == RefVisionType::exact_float) type_ok = f32 || f16 || bf16;
    if (want.type == RefVisionType::f32_or_f16) type_ok = f32 || f16;
    if (want.type == RefVisionType::f16_or_exact) {
        bool all_fp16 = true;
        for (const float v : expected) all_fp16 = all_fp16 && exact_in_fp16(v);
        type_ok = all_fp16 ? f16 : f32;
    }
    // A quantized source (legacy mlx-vlm): carried in a block type; the values below are the proof.
    verify_ref::DecodableType layout{};
    const auto type_id = static_cast<uint32_t>(got->type);
    const bool blocks = quantized != nullptr && !f32 && !f16 && !bf16 &&
                        verify_ref::decodable_type(type_id, &layout) &&
                        count % layout.block_size == 0;
    if (quantized != nullptr && want.type == RefVisionType::exact_float)
        type_ok = type_ok || blocks;
    if (!type_ok) {
        check.problem =
            "type " + check.gguf_type + " is not the one llama.cpp's converter writes" +
            (want.type == RefVisionType::f16_or_exact ? " (F16, or exact F32 where F16 would round)"
                                                      : "");
        return check;
    }
    const auto bytes = file.tensor_data(*got);
    if (f32) verify_ref::dequantize_f32(bytes, values);
    if (f16) verify_ref::dequantize_f16(bytes, values);
    if (bf16) verify_ref::dequantize_bf16(bytes, values);
    if (blocks) verify_ref::dequantize_range(type_id, bytes, 0, values);
    verify_ref::CompareResult result;
    verify_ref::compare_values(expected, values, 0, result);
    check.values = count;
    check.mismatches = result.mismatches;
    if (result.mismatches) {
        check.first_diff = result.first_diff;
        check.expected_bits = result.expected_bits;
        check.got_bits = result.got_bits;
    }
    check.max_abs_error = result.max_abs_error;
    check.identical = result.mismatches == 0;
    return check;
}

// MmprojModel.set_gguf_parameters' keys (after general.file_type), then the family's.
std::vector<GgufKV> expected_kvs(const RefVisionFamily& family, const RefVisionNumbers& n,
                                 const json& vision, const json& preprocessor, const json& config,
                                 std::vector<std::string>* problems) {
    std::vector<GgufKV> kvs = {
        {"general.architecture", GgufValue::str("clip")},
        {"general.type", GgufValue::str("mmproj")},
        {"clip.has_vision_encoder", GgufValue::boolean(true)},
    };
    const auto u32 = [&](const char* key, int64_t v) {
        kvs.push_back({key, GgufValue::u32(static_cast<uint32_t>(v))});
    };
    u32("clip.vision.projection_dim", n.text_hidden);
    u32("clip.vision.image_size", n.image_size);
    u32("clip.vision.patch_size", n.patch_size);
    u32("clip.vision.embedding_length", n.hidden);
    u32("clip.vision.feed_forward_length", n.ffn);
    u32("clip.vision.block_count", n.layers);
    u32("clip.vision.attention.head_count", n.heads);
    for (const char* key : {"image_mean", "image_std"}) {
        std::vector<float> values;
        if (preprocessor.contains(key) && preprocessor[key].is_array())
            for (const json& v : preprocessor[key])
                if (v.is_number()) values.push_back(static_cast<float>(v.get<double>()));
        if (values.empty())
            problems->push_back(std::string("preprocessor_config.json: ") + key +
                                ": missing, the mmproj cannot hold it");
        kvs.push_back({std::string("clip.vision.") + key, GgufValue::f32_array(values)});
    }
    kvs.push_back({family.projector_key, GgufValue::str(family.projector_type)});
    for (GgufKV& kv : family.family_kvs(n, vision, preprocessor, config))
        kvs.push_back(std::move(kv));
    kvs.push_back({"general.quantization_version", GgufValue::u32(2)});  // prepare_metadata's last
    return kvs;
}

}  // namespace

void fold_report(VerifyReport& into, const VerifyReport& other) {
    into.tensors.insert(into.tensors.end(), other.tensors.begin(), other.tensors.end());
    into.problems.insert(into.problems.end(), other.problems.begin(), other.problems.end());
    into.unchecked_kvs.insert(into.unchecked_kvs.end(), other.unchecked_kvs.begin(),
                              other.unchecked_kvs.end());
    into.copied_total += other.copied_total;
    into.copied_identical += other.copied_identical;
    into.max_abs_error = std::max(into.max_abs_error, other.max_abs_error);
}

VerifyReport verify_mmproj(const std::filesystem::path& model_dir,
                           const std::filesystem::path& mmproj_gguf) {
    VerifyReport report;
    const json config = detail::read_json_object(model_dir / "config.json");
    const RefVisionFamily* family = verify_ref::find_ref_vision_family(config);
    if (family == nullptr) {
        report.problems.push_back(mmproj_gguf.string() +
                                  ": config.json names no vision tower verify knows");
        return report;
    }
    json vision = config["vision_config"];
    for (const auto& [key, value] : family->defaults)
        if (!vision.contains(key)) vision[key] = json::parse(value);
    if (family->prepare) family->prepare(vision);
    if (family->prepare_with_config) family->prepare_with_config(vision, config);
    json text = config;
    if (config.contains("text_config") && config["text_config"].is_object())
        text.update(config["text_config"]);
    RefVisionNumbers n;
    n.image_size = first_count(vision, {"image_size"});
    n.patch_size = first_count(vision, {"patch_size"});
    n.hidden = first_count(vision, {"hidden_size", "width", "vt_hidden_size"});
    n.ffn = first_count(vision, {"intermediate_size", "vt_intermediate_size"});
    n.layers = first_count(vision, {"n_layers", "num_hidden_layers", "n_layer", "num_layers",
                                    "depth", "layers", "encoder_layers", "vt_num_hidden_layers"});
    n.heads = first_count(vision,
                          {"num_attention_heads", "num_heads", "heads", "vt_num_attention_heads"});
    n.channels = first_count(vision, {"num_channels", "in_channels"});
    n.merge = std::max<int64_t>(first_count(vision, {"spatial_merge_size"}), 0);
    n.temporal = std::max<int64_t>(first_count(vision, {"temporal_patch_size"}), 0);
    n.mlp_ratio = std::max<int64_t>(first_count(vision, {"mlp_ratio"}), 0);
    n.text_hidden = first_count(text, {"hidden_size"});
    n.text_vocab = std::max<int64_t>(first_count(text, {"vocab_size"}), 0);
    if (family->row_token != nullptr) {
        n.token_row = token_id(model_dir, family->row_token);
        if (n.token_row <= 0) {
            report.problems.push_back(std::string("tokenizer files: no added token ") +
                                      family->row_token + " with an id above 0 for the mmproj");
            return report;
        }
    }
    n.positions = std::max<int64_t>(first_count(vision, {"num_position_embeddings"}), 0);
    n.head_dim = std::max<int64_t>(first_count(vision, {"head_dim"}), 0);
    n.kv_heads = std::max<int64_t>(first_count(vision, {"num_key_value_heads"}), 0);
    n.axis_positions = std::max<int64_t>(first_count(vision, {"position_embedding_size"}), 0);
    if (const auto list = vision.find("deepstack_visual_indexes");
        list != vision.end() && list->is_array())
        for (const json& index : *list) {
            if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
                index.get<int64_t>() >= n.layers) {
                report.problems.push_back(
                    "config.json: vision_config.deepstack_visual_indexes holds " + index.dump() +
                    ", not a layer of the tower");
                return report;
            }
            n.deepstack.push_back(index.get<int64_t>());
        }
    for (const int64_t v : {n.image_size, n.patch_size, n.hidden, n.ffn, n.layers, n.heads,
                            n.channels, n.text_hidden})
        if (v <= 0) {
            report.problems.push_back(
                "config.json: a vision_config / text_config size verify "
                "needs is missing or not a positive integer");
            return report;
        }
    const json preprocessor = merged_preprocessor(model_dir);
    const auto file = GgufFile::open(mmproj_gguf);
    const SafetensorsModel source = SafetensorsModel::open(model_dir);
    std::optional<verify_ref::SourceIndex> mlx;
    if (verify_ref::is_mlx_source(source, model_dir / "config.json"))
        mlx = verify_ref::index_mlx_source(source, model_dir / "config.json");

    // Tensors: exactly the expected set, each checked.
    const std::vector<RefVisionTensor> wanted = family->tensors(n);
    std::set<std::string> expected_names;
    for (const RefVisionTensor& want : wanted) {
        if (want.optional && find_source(source, want.source_name) == nullptr)
            continue;  // the checkpoint has none, nor may the file
        expected_names.insert(want.gguf_name);
        TensorCheck check = check_tensor(want, *file, source, mlx ? &*mlx : nullptr);
        ++report.copied_total;
        if (check.identical) ++report.copied_identical;
        report.max_abs_error = std::max(report.max_abs_error, check.max_abs_error);
        report.tensors.push_back(std::move(check));
    }
    for (const GgufTensorInfo& t : file->tensors())
        if (!expected_names.count(t.name))
            report.problems.push_back(t.name + ": llama.cpp's converter writes no such tensor");

    // KVs: each derived key with its type and value, in this order.
    const std::vector<GgufKV> kvs =
        expected_kvs(*family, n, vision, preprocessor, config, &report.problems);
    size_t last_position = 0;
    std::set<std::string> derived;
    for (const GgufKV& want : kvs) {
        derived.insert(want.key);
        size_t position = 0;
        const GgufKV* got = nullptr;
        for (; position < file->kvs().size(); ++position)
            if (file->kvs()[position].key == want.key) {
                got = &file->kvs()[position];
                break;
            }
        if (got == nullptr) {
            report.problems.push_back("KV " + want.key + ": missing");
            continue;
        }
        if (!(got->value == want.value))
            report.problems.push_back("KV " + want.key + ": not the value or type verify derives");
        if (position < last_position)
            report.problems.push_back("KV " + want.key + ": out of the converter's order");
        last_position = position;
    }
    for (const GgufKV& kv : file->kvs()) {
        if (derived.count(kv.key)) continue;
        if (kv.key.starts_with("clip."))
            report.problems.push_back("KV " + kv.key +
                                      ": llama.cpp's converter writes no such key");
        else
            report.unchecked_kvs.push_back(kv.key +
                                           ": not derived from the source (the outtype "
                                           "or the model card)");
    }
    return report;
}

}  // namespace rebox
