// detect_source_format / read_source_model: one look at config.json's quant_method (gptq, awq,
// compressed-tensors) and the safetensors headers, then the matching adapter reads the directory.
#include "source/read_source.hpp"

#include "../model/json_file.hpp"
#include "format/safetensors.hpp"
#include "mlx_config.hpp"
#include "prequant_common.hpp"
#include "rebox/error.hpp"
#include "source/float_reader.hpp"
#include "source/mcq_reader.hpp"
#include "source/mlx_reader.hpp"
#include "source/prequant_readers.hpp"

namespace rebox {

std::string detect_source_format(const std::filesystem::path& model_dir) {
    const std::filesystem::path config_path = model_dir / "config.json";
    if (std::filesystem::exists(config_path)) {
        const std::string method = prequant::quant_method(detail::read_json_object(config_path));
        if (method == "gptq" || method == "awq" || method == "compressed-tensors") return method;
        if (!method.empty())  // mlx-lm writes no quant_method
            throw_input_error(config_path.string(), "quantization_config.quant_method",
                              "'" + method + "' is not supported",
                              "gptq, awq or compressed-tensors; MLX affine checkpoints have none");
    }
    const SafetensorsModel st = SafetensorsModel::open(model_dir);
    bool has_scales = false, has_biases = false, has_mcq_parts = false;
    for (const auto& file : st.files()) {
        if (file->metadata().count("mcq")) return "mcq-v1";
        for (const StTensorInfo& info : file->tensors()) {
            has_scales |= info.name.ends_with(".scales");
            has_biases |= info.name.ends_with(".biases");
            has_mcq_parts |= info.name.ends_with(".qcodes") || info.name.ends_with(".mins");
        }
    }
    if (has_scales && has_biases) return "mlx";
    const std::filesystem::path config = model_dir / "config.json";
    if (std::filesystem::exists(config) &&
        mlx::has_mlx_quant_config(detail::read_json_object(config)))
        return "mlx";
    // Stray quantized parts without metadata: the mcq-v1 reader names what is missing.
    if (has_mcq_parts || has_scales) return "mcq-v1";
    return "float";
}

SourceModel read_source_model(const std::filesystem::path& model_dir) {
    const std::string format = detect_source_format(model_dir);
    if (format == "mlx") return read_mlx_model(model_dir);
    if (format == "float") return read_float_model(model_dir);
    if (format == "gptq") return read_gptq_model(model_dir);
    if (format == "awq") return read_awq_model(model_dir);
    if (format == "compressed-tensors") return read_compressed_tensors_model(model_dir);
    return read_mcq_model(model_dir);
}

}  // namespace rebox
