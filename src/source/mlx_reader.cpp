// read_mlx_model: config.json quantization block + safetensors files -> SourceModel. Quantized
// modules are found by their .scales tensor; every config and shape rule of the MLX affine layout
// becomes a Blocker naming the tensor (the module is left out). The words of a U32 weight are
// little-endian, rows are whole words and cols*bits is a multiple of 32, so the tensor's bytes are
// one flat lsb0 stream: code j of row r is code r*cols+j of the QuantView.
#include "source/mlx_reader.hpp"

#include <string_view>

#include "format/safetensors.hpp"
#include "format/shape_text.hpp"
#include "mlx_config.hpp"
#include "mlx_fp4_module.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

using Located = StLocated;

using detail::shape_text;
using source_detail::float_dtype;

std::optional<std::string> strip_suffix(std::string_view name, std::string_view suffix) {
    if (name.size() > suffix.size() && name.ends_with(suffix))
        return std::string(name.substr(0, name.size() - suffix.size()));
    return std::nullopt;
}

bool valid_bits(int bits) {
    return bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8;
}
bool valid_group(int64_t group) { return group == 32 || group == 64 || group == 128; }

constexpr const char* kConfigFix =
    "fix config.json quantization (bits and group are never inferred from shapes)";

class MlxReader {
  public:
    MlxReader(const ModelDir& dir, SourceModel& model) : dir_(dir), model_(model) {}

    void run() {
        quant_ = mlx::find_quant_config(dir_.config());
        const SafetensorsModel& st = dir_.safetensors();
        for (const auto& file : st.files()) model_.files.push_back(file);
        check_global();
        for (const auto& file : st.files())
            for (const StTensorInfo& info : file->tensors()) visit(*file, info);
    }

  private:
    // Problems of the global setting are reported once; modules using it are left out silently.
    void check_global() {
        const std::string field = quant_ ? "config.json: " + quant_->field : "config.json";
        bool any_scales = false;
        for (const auto& file : dir_.safetensors().files())
            for (const StTensorInfo& info : file->tensors())
                any_scales |= info.name.ends_with(".scales");
        std::string reason;
        if (!quant_) {
            if (any_scales)
                reason =
                    "the checkpoint has .scales tensors but config.json has no "
                    "\"quantization\" or \"quantization_config\" block (bits and group "
                    "cannot be inferred from shapes)";
        } else if (!quant_->quant_method.empty()) {
            all_blocked_ = true;
            reason = "quant_method '" + quant_->quant_method +
                     "' is not MLX affine (only mlx-lm affine checkpoints are read)";
        } else if (quant_->quantize_activations) {
            all_blocked_ = true;
            reason = "quantize_activations is true (activation quantization has no GGUF form)";
        } else {
            reason = setting_problem(quant_->global);
        }
        if (reason.empty()) return;
        global_blocked_ = true;
        model_.blockers.push_back(Blocker{field, field + ": " + reason, kConfigFix});
    }

    // What makes a setting unusable for an affine module, or "".
    static std::string setting_problem(const mlx::QuantSetting& s) {
        if (!s.problem.empty()) return s.problem;
        if (const auto kind = mlx::fp4_kind(s.mode)) {
            const int64_t group = mlx::fp4_group(*kind);
            if (s.bits != 0 && s.bits != 4)
                return "bits " + std::to_string(s.bits) + " with mode " + s.mode + " (expected 4)";
            if (s.group != 0 && s.group != group)
                return "group_size " + std::to_string(s.group) + " with mode " + s.mode +
                       " (expected " + std::to_string(group) + ")";
            return "";
        }
        if (!s.mode.empty() && s.mode != "affine")
            return "mode '" + s.mode + "' is not supported (expected affine, mxfp4 or nvfp4)";
        if (s.bits == 0) return "bits is missing";
        if (s.group == 0) return "group_size is missing";
        if (!valid_bits(s.bits))
            return "bits " + std::to_string(s.bits) +
                   " is not an MLX affine width (expected 2, 3, "
                   "4, 5, 6 or 8)";
        if (!valid_group(s.group))
            return "group_size " + std::to_string(s.group) +
                   " is not an MLX affine group size "
                   "(expected 32, 64 or 128)";
        return "";
    }

    const Located* find(const std::string& name) const { return dir_.safetensors().find(name); }

    void block(const std::string& tensor, const SafetensorsFile& file, std::string reason,
               std::string fix = kConfigFix) {
        model_.blockers.push_back(
            Blocker{tensor, file.display_name() + ": " + std::move(reason), std::move(fix)});
    }

    void visit(const SafetensorsFile& file, const StTensorInfo& info) {
        if (auto base = strip_suffix(info.name, ".scales")) {
            if (!find(*base + ".weight"))
                block(info.name, file, "has no '" + *base + ".weight' (the packed codes)",
                      "store the module's weight, scales and biases together");
            return;
        }
        if (auto base = strip_suffix(info.name, ".biases")) {
            // With the module's packed weight there, the weight's own line names the missing
            // scales.
            if (!find(*base + ".scales") && !find(*base + ".weight"))
                block(info.name, file, "quantization biases without '" + *base + ".scales'",
                      "store the module's scales, or remove the stray biases");
            return;
        }
        if (auto base = strip_suffix(info.name, ".weight"); base && find(*base + ".scales")) {
            read_quantized(*base, file, info);
            return;
        }
        const std::optional<FloatDtype> dtype = float_dtype(info.dtype);
        if (auto base = strip_suffix(info.name, ".weight");
            !dtype && base && find(*base + ".biases")) {
            block(info.name, file,
                  "packed codes (" + std::string(st_dtype_name(info.dtype)) + ") with '" + *base +
                      ".biases' but no '" + *base + ".scales'",
                  "store the module's scales beside its weight and biases");
            return;
        }
        if (!dtype) {
            block(info.name, file,
                  "dtype " + std::string(st_dtype_name(info.dtype)) +
                      " is not F32, F16 or BF16 and the tensor has no .scales",
                  "store it as a float tensor, or as an MLX quantized module");
            return;
        }
        model_.tensors.push_back(source_detail::float_tensor(file, info, *dtype));
    }

    void read_quantized(const std::string& module, const SafetensorsFile& file,
                        const StTensorInfo& weight) {
        const std::string name = module + ".weight";
        if (!quant_ || all_blocked_ || (global_blocked_ && !quant_->overrides.count(module)))
            return;
        const mlx::QuantSetting& setting = quant_->setting_for(module);
        const std::string field = "config.json " + quant_->field +
                                  (quant_->overrides.count(module) ? "[\"" + module + "\"]" : "");
        if (!setting.quantized) {
            block(name, file,
                  field + " is false (not quantized) but '" + module + ".scales' exists");
            return;
        }
        mlx::QuantSetting effective = setting;
        if (effective.mode.empty()) effective.mode = quant_->global.mode;
        if (const std::string problem = setting_problem(effective); !problem.empty()) {
            block(name, file, field + ": " + problem);
            return;
        }
        const Located& scales = *find(module + ".scales");
        const Located* biases = find(module + ".biases");
        if (const auto kind = mlx::fp4_kind(effective.mode)) {
            mlx::read_fp4_module(module, *kind, field, file, weight, *scales.file, *scales.info,
                                 biases != nullptr, model_);
            return;
        }
        const int bits = effective.bits;
        const int64_t group = effective.group;
        if (!biases) {
            block(name, file, "no '" + module + ".biases' (MLX affine stores scales and biases)",
                  "store the biases; non-affine modes (no biases) are not supported");
            return;
        }
        if (weight.dtype != StDtype::U32) {
            block(name, file,
                  "dtype " + std::string(st_dtype_name(weight.dtype)) +
                      " (expected U32 packed words beside .scales)");
            return;
        }
        // [rows, packed] or mlx-lm's stacked experts [E, rows, packed] (switch_mlp): the rows of
        // all experts one after the other, so the bytes stay one flat lsb0 stream.
        if (weight.shape.size() != 2 && weight.shape.size() != 3) {
            block(name, file,
                  "shape " + shape_text(weight.shape) +
                      " is neither 2-D nor stacked experts [E, rows, packed]");
            return;
        }
        const std::vector<int64_t> lead(weight.shape.begin(), weight.shape.end() - 1);
        int64_t rows = 1;
        for (const int64_t d : lead) rows = d < 1 || d > (int64_t{1} << 31) ? 0 : rows * d;
        const int64_t packed = weight.shape.back();
        const std::string bits_text = "bits " + std::to_string(bits) + " from " + field;
        if (rows < 1 || packed < 1 || (packed * 32) % bits != 0) {
            block(name, file,
                  "shape " + shape_text(weight.shape) + " does not hold whole " +
                      std::to_string(bits) + "-bit codes per row (" + bits_text + ")");
            return;
        }
        const int64_t cols = packed * 32 / bits;
        if (cols % group != 0) {
            block(name, file,
                  std::to_string(cols) + " columns (" + bits_text +
                      ") are not a multiple of group_size " + std::to_string(group));
            return;
        }
        std::vector<int64_t> param_shape = lead;
        param_shape.push_back(cols / group);
        const std::optional<FloatDtype> scale_dtype = float_dtype(scales.info->dtype);
        if (!scale_dtype) {
            block(module + ".scales", *scales.file,
                  "dtype " + std::string(st_dtype_name(scales.info->dtype)) +
                      " (expected F16, BF16 or F32)",
                  "store scales and biases as float");
            return;
        }
        if (biases->info->dtype != scales.info->dtype) {
            block(module + ".biases", *biases->file,
                  "dtype " + std::string(st_dtype_name(biases->info->dtype)) + " (expected " +
                      std::string(st_dtype_name(scales.info->dtype)) + ", the scales' dtype)",
                  "store scales and biases in one dtype");
            return;
        }
        for (const Located* part : {&scales, biases}) {
            if (part->info->shape != param_shape) {
                block(part->info->name, *part->file,
                      "shape " + shape_text(part->info->shape) + " (expected " +
                          shape_text(param_shape) + " for weight " + shape_text(weight.shape) +
                          " at " + bits_text + ", group_size " + std::to_string(group) + ")");
                return;
            }
        }
        SourceTensor tensor;
        tensor.name = name;
        tensor.shape = lead;
        tensor.shape.push_back(cols);
        tensor.file = file.display_name();
        QuantView view;
        view.bits = bits;
        view.group = group;
        view.codes = file.data(weight);
        view.scale_dtype = *scale_dtype;
        view.scales = scales.file->data(*scales.info);
        view.mins = biases->file->data(*biases->info);
        tensor.quant = view;
        model_.tensors.push_back(std::move(tensor));
    }

    const ModelDir& dir_;
    SourceModel& model_;
    std::optional<mlx::QuantConfig> quant_;
    bool global_blocked_ = false;  // modules without an override are left out
    bool all_blocked_ = false;     // every quantized module is left out
};

}  // namespace

SourceModel read_mlx_model(const ModelDir& model_dir) {
    return source_detail::read_with<MlxReader>(model_dir, "mlx");
}

}  // namespace rebox
