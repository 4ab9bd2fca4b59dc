// read_gpt_oss_model (gpt_oss_reader.hpp): pairs each `*_blocks` with its `*_scales`, checks
// dtypes, shapes and every scale byte, and renames the expert and sink tensors for the registry.
#include "source/gpt_oss_reader.hpp"

#include <cstdio>
#include <map>

#include "format/safetensors.hpp"
#include "format/shape_text.hpp"
#include "rebox/error.hpp"
#include "source/mlx_fp4_module.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

using detail::shape_text;

constexpr std::string_view kBlocks = "_blocks";
constexpr std::string_view kScales = "_scales";

struct Part {
    const SafetensorsFile* file = nullptr;
    const StTensorInfo* info = nullptr;
};
struct Pair {
    Part blocks, scales;
};

std::string replace_tail(const std::string& name, std::string_view tail, std::string_view with) {
    return name.substr(0, name.size() - tail.size()) + std::string(with);
}

[[noreturn]] void refuse(const Part& part, const std::string& what, const std::string& fix) {
    throw_input_error(part.file->display_name(), part.info->name, what, fix);
}

// The MXFP4 view of one pair, checked; shape [E, rows, cols].
SourceTensor fp4_tensor(const std::string& base, const Pair& pair) {
    if (pair.blocks.info == nullptr || pair.scales.info == nullptr) {
        const bool has_blocks = pair.blocks.info != nullptr;
        refuse(has_blocks ? pair.blocks : pair.scales,
               std::string("has no ") + (has_blocks ? "_scales" : "_blocks") + " partner",
               base + (has_blocks ? "_scales" : "_blocks") + " beside it");
    }
    const StTensorInfo& blocks = *pair.blocks.info;
    const StTensorInfo& scales = *pair.scales.info;
    if (blocks.dtype != StDtype::U8)
        refuse(pair.blocks, "dtype " + std::string(st_dtype_name(blocks.dtype)), "U8");
    if (scales.dtype != StDtype::U8)
        refuse(pair.scales, "dtype " + std::string(st_dtype_name(scales.dtype)), "U8");
    if (blocks.shape.size() != 4 || blocks.shape[3] != 16 || blocks.shape[0] < 1 ||
        blocks.shape[1] < 1 || blocks.shape[2] < 1)
        refuse(pair.blocks, "shape " + shape_text(blocks.shape), "[E, rows, cols/32, 16]");
    const std::vector<int64_t> want(blocks.shape.begin(), blocks.shape.end() - 1);
    if (scales.shape != want)
        refuse(pair.scales,
               "shape " + shape_text(scales.shape) + " disagrees with " + blocks.name + " " +
                   shape_text(blocks.shape),
               shape_text(want));
    Fp4View view;
    view.kind = Fp4Kind::mxfp4;
    view.group = 32;
    view.codes = pair.blocks.file->data(blocks);
    view.scales = pair.scales.file->data(scales);
    if (const auto bad = mlx::first_bad_fp4_scale(view)) {
        char at[96];
        std::snprintf(at, sizeof at, "scale byte 0x%02x at index %llu: ", view.scales[*bad],
                      static_cast<unsigned long long>(*bad));
        refuse(pair.scales,
               at + std::string(mlx::fp4_scale_problem(Fp4Kind::mxfp4, view.scales[*bad])),
               "E8M0 bytes 0x00..0xfe (re-export the checkpoint)");
    }
    SourceTensor tensor;
    tensor.name = base;
    tensor.shape = {blocks.shape[0], blocks.shape[1], blocks.shape[2] * 32};
    tensor.file = pair.blocks.file->display_name();
    tensor.fp4 = view;
    return tensor;
}

}  // namespace

SourceModel read_gpt_oss_model(const ModelDir& model_dir) {
    SourceModel model;
    model.dir = model_dir.path();
    model.format = "mxfp4";
    std::map<std::string, Pair> pairs;  // by the name before _blocks / _scales
    for (const auto& file : model_dir.safetensors().files()) {
        model.files.push_back(file);
        for (const StTensorInfo& info : file->tensors()) {
            const std::string& name = info.name;
            if (name.ends_with(kBlocks)) {
                pairs[replace_tail(name, kBlocks, "")].blocks = {file.get(), &info};
                continue;
            }
            if (name.ends_with(kScales)) {
                pairs[replace_tail(name, kScales, "")].scales = {file.get(), &info};
                continue;
            }
            const std::optional<FloatDtype> dtype = source_detail::float_dtype(info.dtype);
            if (!dtype) {
                model.blockers.push_back(Blocker{
                    name,
                    file->display_name() + ": dtype " + std::string(st_dtype_name(info.dtype)) +
                        " has no exact GGUF float type (expected F32, F16 or BF16)",
                    "store the tensor as F32, F16 or BF16"});
                continue;
            }
            SourceTensor tensor = source_detail::float_tensor(*file, info, *dtype);
            // GptOssModel.filter_tensors: the sinks get ".weight"; the expert biases are named
            // like the weights they follow; gate_up's bias feeds both halves.
            if (name.ends_with("self_attn.sinks")) {
                tensor.name += ".weight";
            } else if (name.ends_with("mlp.experts.gate_up_proj_bias")) {
                SourceTensor up = tensor;
                tensor.name = replace_tail(name, "gate_up_proj_bias", "gate_proj.bias");
                up.name = replace_tail(name, "gate_up_proj_bias", "up_proj.bias");
                model.tensors.push_back(std::move(up));
            } else if (name.ends_with("mlp.experts.down_proj_bias")) {
                tensor.name = replace_tail(name, "down_proj_bias", "down_proj.bias");
            }
            model.tensors.push_back(std::move(tensor));
        }
    }
    for (const auto& [base, pair] : pairs) {
        SourceTensor tensor = fp4_tensor(base, pair);
        if (base.ends_with("mlp.experts.gate_up_proj")) {
            SourceTensor up = tensor;
            tensor.name = replace_tail(base, "gate_up_proj", "gate_proj.weight");
            up.name = replace_tail(base, "gate_up_proj", "up_proj.weight");
            model.tensors.push_back(std::move(tensor));
            model.tensors.push_back(std::move(up));
        } else {
            tensor.name = base + ".weight";
            model.tensors.push_back(std::move(tensor));
        }
    }
    return model;
}

}  // namespace rebox
