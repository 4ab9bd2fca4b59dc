// The options of one conversion (--outtype, --no-verify, -t, --tokenizer-pre, --name, --metadata,
// --split-max-size, --allow-lossless-fallback, --quantize and its recipe options): the one
// definition that `rebox convert` and the options column of a `rebox batch` manifest both parse
// with.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.hpp"

namespace rebox::cli {

// The --outtype values, and the help texts that `rebox plan` shares too.
const std::vector<std::string>& outtype_names();
extern const char* const kOuttypeHelp;
extern const char* const kFallbackHelp;
extern const char* const kInexactGlobalScaleHelp;
extern const char* const kNoMtpHelp;
extern const char* const kNameHelp;
extern const char* const kMetadataHelp;
// --outtype takes convert's exact types only. A quantization type (what convert_hf_to_gguf users
// type: q8_0, q4_k_m) gets a line saying how to get that file instead of CLI11's list.
CLI::Validator outtype_validator();

// Adds --tensor-type PATTERN=TYPE and --tensor-type-file FILE (llama-quantize's options), both
// appending to `tensor_types` in command-line order; `help_prefix` starts their help texts.
// Before the list is used, expand_tensor_type_files reads the files' entries into their places
// (a missing, oversized or unreadable file is an input error naming it).
void add_tensor_type_options(CLI::App& command, std::vector<std::string>& tensor_types,
                             const std::string& help_prefix);
void expand_tensor_type_files(std::vector<std::string>& tensor_types);

// Adds --quantize TYPE and the recipe options (--imatrix, --pure, --output-tensor-type,
// --token-embedding-type, --tensor-type, --tensor-type-file, --leave-output-tensor), named as
// llama-quantize names them; `what` is --quantize's help text.
void add_quantize_recipe_options(CLI::App& command, QuantizeRecipeArgs& args, const char* what);

// Adds the per-model convert options to `command`, bound to `args` (no_verify is set by
// --no-verify; the caller stores !no_verify into args.verify after parsing).
void add_model_convert_options(CLI::App& command, ConvertArgs& args, bool& no_verify);

}  // namespace rebox::cli
