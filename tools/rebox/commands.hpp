// The rebox subcommands: each takes its parsed arguments, prints its output, and returns the exit
// code; user-caused failures are thrown as rebox::Error and mapped to exit codes by main().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rebox/rebox.hpp"

namespace rebox::cli {

struct InspectArgs {
    std::string file;
    bool json = false;    // one JSON object on stdout
    bool header = false;  // annotated hex of the first 24 bytes (GGUF)
};
int run_inspect(const InspectArgs& args);

// --quantize TYPE and the recipe options convert and plan share with `rebox quantize`.
struct QuantizeRecipeArgs {
    std::optional<std::string> type;
    std::optional<std::string> imatrix;
    std::optional<std::string> output_tensor_type;
    std::optional<std::string> token_embedding_type;
    std::vector<std::string> tensor_types;
    bool pure = false;
    bool leave_output_tensor = false;
    // The options when --quantize was given; a recipe option without it is an input Error.
    std::optional<QuantizeOptions> options() const;
};

struct ConvertArgs {
    std::string model_dir;
    std::string output;
    std::string outtype = "auto";  // auto | q4_1 | f32 | f16 | bf16
    bool verify = true;
    bool force = false;
    unsigned threads = 0;
    bool quiet = false;
    std::optional<std::string> json_report;
    std::optional<std::string> tokenizer_pre;
    std::optional<std::string> name;
    std::optional<std::string> metadata;        // --metadata FILE.json: general.* overrides
    std::optional<std::string> split_max_size;  // write shards directly, e.g. "500M"
    bool allow_lossless_fallback = false;       // exact F16/F32 for tensors no block type holds
    bool allow_inexact_global_scale = false;    // compressed-tensors NVFP4 1/g rounded to F32
    bool modelfile = false;                     // also write OUT.Modelfile for Ollama
    std::optional<std::string> mmproj;          // --mmproj PATH: where the vision tower goes
    bool no_mmproj = false;                     // --no-mmproj: the text model only
    bool no_mtp = false;                        // --no-mtp: the MTP layers left out
    bool fp8_as_q8 = false;                     // --fp8-as-q8: FP8 tensors as Q8_0 (lossy)
    QuantizeRecipeArgs quantize;                // --quantize: llama-quantize's file, one pass
};
// What a finished conversion reports back to a caller that records it (rebox batch).
struct ConvertOutcome {
    std::string failure_message;  // exit 3: the verification summary
    unsigned long long output_bytes = 0;
    double seconds = 0;
};
int run_convert(const ConvertArgs& args, ConvertOutcome* outcome = nullptr);

struct BatchArgs {
    std::string manifest;
    std::optional<std::string> out_dir;      // convert line INDEX into this folder
    std::optional<std::string> summary_dir;  // or: one line per model of this folder
    std::optional<std::string> index;        // else $JOB_COMPLETION_INDEX, $SLURM_ARRAY_TASK_ID
};
// Exit: convert's code for the line (0-3), 4 when the index names no line; --summary: 0 when
// every model is done, 1 while any failed or is missing.
int run_batch(const BatchArgs& args);

struct PlanArgs {
    std::string model_dir;
    bool json = false;
    std::string outtype = "auto";  // auto | q4_1 | f32 | f16 | bf16
    bool allow_lossless_fallback = false;
    bool allow_inexact_global_scale = false;
    bool no_mtp = false;
    std::optional<std::string> tokenizer_pre;
    QuantizeRecipeArgs quantize;
    std::optional<std::string> name;
    std::optional<std::string> metadata;  // --metadata FILE.json: general.* overrides
};
int run_plan(const PlanArgs& args);

struct VerifyArgs {
    std::string model_dir;
    std::string gguf;
    unsigned threads = 0;
    std::optional<std::string> json_report;
    std::optional<std::string> tokenizer_pre;  // the name the file was converted with
    bool full = false;                         // lossy tensors: every block, not the sample
    std::optional<std::string> imatrix;        // the imatrix the file was quantized with
    std::optional<std::string> mmproj;         // the mmproj beside it (default: found beside)
    bool no_mtp = false;                       // converted with --no-mtp
};
int run_verify(const VerifyArgs& args);

struct SplitArgs {
    std::string input;
    std::string out_prefix;
    std::optional<std::string> max_size;  // "500M", "2G", or bytes
    unsigned max_tensors = 0;
    bool no_tensor_first_split = false;
    bool force = false;
    bool dry_run = false;  // print the shards that would be written, write nothing
};
int run_split(const SplitArgs& args);

struct MergeArgs {
    std::string first_shard;
    std::string output;
    bool force = false;
    bool dry_run = false;            // print what would be written, write nothing
    std::vector<std::string> extra;  // positionals beyond OUT (a shell glob): refused
};
int run_merge(const MergeArgs& args);

}  // namespace rebox::cli
