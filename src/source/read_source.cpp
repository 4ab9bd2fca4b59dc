// detect_source_format / read_source_model: one look at config.json's quant_method (gptq, awq,
// compressed-tensors, fp8) and the safetensors headers, then the matching adapter reads the
// directory.
#include "source/read_source.hpp"

#include "arch/architecture.hpp"
#include "format/safetensors.hpp"
#include "mlx_config.hpp"
#include "model/model_config.hpp"
#include "model/st_dense.hpp"
#include "prequant_common.hpp"
#include "rebox/error.hpp"
#include "source/float_reader.hpp"
#include "source/fp4_checkpoint_reader.hpp"
#include "source/fp8_reader.hpp"
#include "source/gpt_oss_reader.hpp"
#include "source/mcq_reader.hpp"
#include "source/mlx_dense.hpp"
#include "source/mlx_reader.hpp"
#include "source/prequant_readers.hpp"
#include "source_helpers.hpp"

namespace rebox {

std::string detect_source_format(const ModelDir& model_dir) {
    if (const auto algo = modelopt_quant_algo(model_dir))
        return *algo == "FP8" ? "fp8" : "modelopt";
    if (model_dir.has_config()) {
        const std::string method = prequant::quant_method(model_dir.config());
        if (method == "compressed-tensors" && ct_fp4_format(model_dir.config()))
            return "compressed-tensors-fp4";
        if (method == "compressed-tensors" && is_ct_fp8(model_dir.config())) return "fp8";
        if (method == "gptq" || method == "awq" || method == "compressed-tensors") return method;
        if (method == "mxfp4") return method;  // gpt-oss: OCP MXFP4 experts
        if (method == "fp8") return method;    // E4M3 with block scales (weight_scale_inv)
        if (!method.empty())                   // mlx-lm writes no quant_method
            throw_input_error((model_dir.path() / "config.json").string(),
                              "quantization_config.quant_method",
                              "'" + method + "' is not supported",
                              "gptq, awq, compressed-tensors, modelopt (NVFP4), mxfp4 "
                              "(gpt-oss) or fp8 (block scales); MLX checkpoints have none");
    }
    bool has_scales = false, has_biases = false, has_mcq_parts = false;
    for (const auto& file : model_dir.safetensors().files()) {
        if (file->metadata().count("mcq")) return "mcq-v1";
        for (const StTensorInfo& info : file->tensors()) {
            has_scales |= info.name.ends_with(".scales");
            has_biases |= info.name.ends_with(".biases");
            has_mcq_parts |= info.name.ends_with(".qcodes") || info.name.ends_with(".mins");
        }
    }
    if (has_scales && has_biases) return "mlx";
    if (model_dir.has_config() && mlx::has_mlx_quant_config(model_dir.config())) return "mlx";
    // Stray quantized parts without metadata: the mcq-v1 reader names what is missing.
    if (has_mcq_parts || has_scales) return "mcq-v1";
    return "float";
}

std::string detect_source_format(const std::filesystem::path& model_dir) {
    return detect_source_format(*ModelDir::open(model_dir));
}

namespace {

// EmbeddingGemma: each Dense module's linear.weight as "<folder>.linear.weight" (the arch table's
// name for dense_2 / dense_3), from its folder or from mlx-embeddings' dense.0 / dense.1 in the
// model's file (source/mlx_dense.hpp). Whatever else a module's file holds is refused: llama.cpp's
// converter keeps only the weight and its graph has no bias.
void add_dense_modules(const ModelDir& model_dir, SourceModel& model) {
    if (!model_dir.has_config()) return;
    const arch::Architecture* architecture = arch::claiming_architecture(model_dir.config());
    if (architecture == nullptr || !architecture->sentence_embedder) return;
    mlx_dense::add_dense_projections(model_dir, read_dense_modules(model_dir.path()), model);
}

}  // namespace

SourceModel read_source_model(std::shared_ptr<const ModelDir> model_dir) {
    const std::string format = detect_source_format(*model_dir);
    SourceModel model = format == "mlx"                  ? read_mlx_model(*model_dir)
                        : format == "float"              ? read_float_model(*model_dir)
                        : format == "mxfp4"              ? read_gpt_oss_model(*model_dir)
                        : format == "fp8"                ? read_fp8_model(*model_dir)
                        : format == "gptq"               ? read_gptq_model(*model_dir)
                        : format == "awq"                ? read_awq_model(*model_dir)
                        : format == "compressed-tensors" ? read_compressed_tensors_model(*model_dir)
                        : format == "modelopt"           ? read_modelopt_nvfp4_model(*model_dir)
                        : format == "compressed-tensors-fp4"
                            ? read_ct_fp4_model(*model_dir, *ct_fp4_format(model_dir->config()))
                            : read_mcq_model(*model_dir);
    add_dense_modules(*model_dir, model);
    model.model_dir = std::move(model_dir);
    return model;
}

SourceModel read_source_model(const std::filesystem::path& model_dir) {
    return read_source_model(ModelDir::open(model_dir));
}

}  // namespace rebox
