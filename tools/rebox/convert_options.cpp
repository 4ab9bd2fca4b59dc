// The per-model convert options shared by `rebox convert` and `rebox batch` (see
// convert_options.hpp).
#include "convert_options.hpp"

#include <string>
#include <vector>

#include "rebox/error.hpp"
#include "recipe/quant_ftype.hpp"

namespace rebox::cli {
namespace {

const std::vector<std::string> kOuttypes = {"auto", "q4_1", "f32", "f16", "bf16"};

}  // namespace

const char* const kOuttypeHelp =
    "auto (default): each quantized tensor as the smallest block type that holds it exactly (Q4_1 "
    "for <= 4-bit codes, Q5_1 for 5-bit; GPTQ/AWQ/compressed-tensors: Q4_0, Q4_1, Q5_0, Q5_1 or "
    "Q8_0 by their q - z), float tensors keep their dtype; q4_1: Q4_1 as the only "
    "block type; f32: every value as binary32; f16 / bf16: only where every value is exact in that "
    "type. Norms and 1-D tensors are always F32";
const char* const kFallbackHelp =
    "carry quantized tensors no allowed block type holds (6/8-bit, group 16, cols % 32 != 0, ...) "
    "as an exact F16 copy, or F32 when a value does not fit fp16 (without it they are BLOCKERs "
    "that say how much bigger the file would get)";

const char* const kInexactGlobalScaleHelp =
    "NOT EXACT: convert compressed-tensors NVFP4 although GGUF can only hold fl32(1/global_scale) "
    "as the tensor's .scale (up to 2^-24 relative off; those tensors are reported not "
    "bit-identical). Without it they are BLOCKERs";

const char* const kNameHelp =
    "general.name (default: from README.md's model card, config.json _name_or_path or the "
    "directory name, as llama.cpp's converter takes it)";
const char* const kMetadataHelp =
    "a JSON file of general.* keys overriding the model card, as convert_hf_to_gguf.py "
    "--metadata reads it (general.base_models / general.datasets as lists of objects; "
    "general.license is not overridable)";

const std::vector<std::string>& outtype_names() { return kOuttypes; }

CLI::Validator outtype_validator() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            for (const std::string& outtype : kOuttypes)
                if (value == outtype) return "";
            if (rebox::parse_quant_ftype(value))
                return "'" + value +
                       "' is a lossy quantization, which convert's exact outtypes never do: "
                       "--quantize " +
                       value +
                       " writes it in one pass (llama-quantize's file of the exact conversion, "
                       "byte for byte)";
            return "'" + value + "' is not one of auto, q4_1, f32, f16, bf16";
        },
        "auto|q4_1|f32|f16|bf16");
}

std::optional<QuantizeOptions> QuantizeRecipeArgs::options() const {
    if (!type) {
        const char* given = imatrix                 ? "--imatrix"
                            : output_tensor_type    ? "--output-tensor-type"
                            : token_embedding_type  ? "--token-embedding-type"
                            : !tensor_types.empty() ? "--tensor-type"
                            : pure                  ? "--pure"
                            : leave_output_tensor   ? "--leave-output-tensor"
                                                    : nullptr;
        if (given)
            throw_input_error(given, "", "is a quantization option, and no --quantize was given",
                              "--quantize TYPE (e.g. q4_k_m), or leave the option out");
        return std::nullopt;
    }
    QuantizeOptions o;
    o.type = *type;
    o.imatrix = imatrix;
    o.output_tensor_type = output_tensor_type;
    o.token_embedding_type = token_embedding_type;
    o.tensor_types = tensor_types;
    o.pure = pure;
    o.leave_output_tensor = leave_output_tensor;
    return o;
}

void add_quantize_recipe_options(CLI::App& command, QuantizeRecipeArgs& args, const char* what) {
    command.add_option("--quantize", args.type,
                       std::string(what) +
                           ": q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q2_k_s q3_k_s q3_k_m q3_k_l q4_k_s "
                           "q4_k_m q5_k_s q5_k_m q6_k iq4_nl iq4_xs (any case); tensors carried "
                           "exactly as blocks stay exact");
    command.add_option("--imatrix", args.imatrix,
                       "importance matrix for --quantize (llama.cpp's GGUF imatrix or a legacy "
                       "imatrix.dat; entries named by GGUF tensor names)");
    command.add_option("--output-tensor-type", args.output_tensor_type,
                       "--quantize: type of output.weight");
    command.add_option("--token-embedding-type", args.token_embedding_type,
                       "--quantize: type of token_embd.weight");
    command.add_option("--tensor-type", args.tensor_types,
                       "--quantize: PATTERN=TYPE for GGUF tensor names (repeatable; first match "
                       "wins)");
    command.add_flag("--pure", args.pure,
                     "--quantize: every quantized tensor in the file type's own type");
    command.add_flag("--leave-output-tensor", args.leave_output_tensor,
                     "--quantize: keep output.weight in its exact type");
}

void add_model_convert_options(CLI::App& command, ConvertArgs& args, bool& no_verify) {
    command.add_option("--outtype", args.outtype, kOuttypeHelp)->check(outtype_validator());
    command.add_flag("--no-verify", no_verify,
                     "skip the read-back verification (the report says so)");
    command.add_option("-t,--threads", args.threads,
                       "worker threads (default: all cores; the same bytes for any count)");
    command.add_option("--tokenizer-pre", args.tokenizer_pre,
                       "tokenizer.ggml.pre to use when the pre-tokenizer regex is unknown");
    command.add_option("--name", args.name, kNameHelp);
    command.add_option("--metadata", args.metadata, kMetadataHelp);
    command.add_option(
        "--split-max-size", args.split_max_size,
        "write shards of at most this size (N, NM or NG) as llama-gguf-split names them");
    command.add_flag("--allow-lossless-fallback", args.allow_lossless_fallback, kFallbackHelp);
    command.add_flag("--allow-inexact-global-scale", args.allow_inexact_global_scale,
                     kInexactGlobalScaleHelp);
    add_quantize_recipe_options(command, args.quantize,
                                "write llama-quantize's file of this conversion in one pass (no "
                                "intermediate file)");
}

}  // namespace rebox::cli
