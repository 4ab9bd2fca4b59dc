// The per-model convert options shared by `rebox convert` and `rebox batch` (see
// convert_options.hpp).
#include "convert_options.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rebox/error.hpp"
#include "recipe/quant_ftype.hpp"

namespace rebox::cli {
namespace {

const std::vector<std::string> kOuttypes = {"auto", "q4_1", "f32", "f16", "bf16"};

// A --tensor-type-file: PATTERN=TYPE entries separated by spaces or newlines, as llama-quantize
// reads it (each entry is checked where --tensor-type's are). Bounded: a list of tensors is
// kilobytes, so a file past 16 MiB is refused before it is read.
std::vector<std::string> read_tensor_type_file(const std::string& path) {
    constexpr std::streamoff kMaxBytes = 16 << 20;
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        throw_input_error(path, "", "is not a regular file",
                          "a --tensor-type-file of PATTERN=TYPE entries");
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file)
        throw_input_error(path, "", std::string("cannot be opened: ") + std::strerror(errno),
                          "a readable --tensor-type-file of PATTERN=TYPE entries");
    const std::streamoff size = file.tellg();
    if (size < 0 || size > kMaxBytes)
        throw_input_error(path, "", "is " + std::to_string(size) + " bytes",
                          "a --tensor-type-file of at most 16 MiB of PATTERN=TYPE entries");
    file.seekg(0);
    std::vector<std::string> entries;
    for (std::string entry; file >> entry;) entries.push_back(entry);
    if (file.bad())
        throw_input_error(path, "", "could not be read", "a readable --tensor-type-file");
    return entries;
}

}  // namespace

void add_tensor_type_options(CLI::App& command, std::vector<std::string>& tensor_types,
                             const std::string& help_prefix) {
    // Both fire as they are parsed, so entries keep their command-line order across the two
    // options (the first matching pattern wins). A file is read when the command runs
    // (expand_tensor_type_files), where a bad one gets rebox's one-line error: until then it
    // stands in the list as its path behind a NUL, which no command-line argument can hold.
    command
        .add_option_function<std::string>(
            "--tensor-type", [&tensor_types](const std::string& v) { tensor_types.push_back(v); },
            help_prefix +
                "PATTERN=TYPE (repeatable; regex searched in the lower-cased GGUF "
                "name, first match wins)")
        ->trigger_on_parse();
    command
        .add_option_function<std::string>(
            "--tensor-type-file",
            [&tensor_types](const std::string& path) {
                tensor_types.push_back(std::string(1, '\0') + path);
            },
            help_prefix +
                "FILE of PATTERN=TYPE entries separated by spaces or newlines, as "
                "llama-quantize reads it (repeatable; in order with --tensor-type)")
        ->trigger_on_parse();
}

void expand_tensor_type_files(std::vector<std::string>& tensor_types) {
    std::vector<std::string> expanded;
    for (std::string& entry : tensor_types) {
        if (entry.empty() || entry[0] != '\0') {
            expanded.push_back(std::move(entry));
            continue;
        }
        for (std::string& e : read_tensor_type_file(entry.substr(1)))
            expanded.push_back(std::move(e));
    }
    tensor_types = std::move(expanded);
}

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

const char* const kNoMtpHelp =
    "leave the multi-token-prediction layers out, as convert_hf_to_gguf.py --no-mtp writes the "
    "file (Qwen3.5 / 3.6, Qwen3-Next, GLM-4.5+, GLM-4.7-Flash, Nemotron-H; default: kept)";
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
                            : !tensor_types.empty() ? "--tensor-type / --tensor-type-file"
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
    expand_tensor_type_files(o.tensor_types);
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
    add_tensor_type_options(command, args.tensor_types, "--quantize: ");
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
    command.add_flag("--no-mmproj", args.no_mmproj,
                     "write the text model only, leaving a vision tower out (default: also "
                     "mmproj-NAME.gguf beside the output)");
    command.add_flag("--no-mtp,--no-nextn", args.no_mtp, kNoMtpHelp);
    command.add_flag("--fp8-as-q8", args.fp8_as_q8,
                     "an FP8 checkpoint's FP8 tensors as Q8_0 quantized from their binary32 "
                     "products, as llama.cpp's converter --fp8-as-q8 writes them (lossy; the rest "
                     "as --outtype / its auto type; not with --quantize)");
    add_quantize_recipe_options(command, args.quantize,
                                "write llama-quantize's file of this conversion in one pass (no "
                                "intermediate file)");
}

}  // namespace rebox::cli
