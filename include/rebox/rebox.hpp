// rebox's public API, the one header a program includes: plan, convert and verify a checkpoint,
// inspect GGUF and safetensors files, split and merge GGUF sets. Every call takes an options struct
// and returns a result struct; nothing here prints. Long calls report progress through a callback,
// which can also cancel them. Failures throw rebox::Error (error.hpp); a conversion refused because
// of BLOCKERs throws one Error listing them all (Error::blockers()), and plan_model() returns them
// as data. docs/library.md has the guide and a complete example.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "rebox/gguf_value.hpp"
#include "rebox/version.hpp"

namespace rebox {

// ---- Progress and cancellation ----------------------------------------------------------------

struct Progress {
    std::string_view stage;  // "convert" (bytes written) or "verify" (values checked)
    uint64_t done = 0;
    uint64_t total = 0;
};
// Called about every 100 ms from one thread of the call's own (never concurrently with itself),
// and once more with done == total at the end of a stage. Return false to cancel: the call then
// stops, removes every file it started, and throws Error with ExitClass::cancelled.
using ProgressCallback = std::function<bool(const Progress&)>;

// ---- Plan -------------------------------------------------------------------------------------

// What the quantized tensors become. automatic (the default): the smallest block type that holds
// each one exactly (Q4_1 for <= 4-bit codes, Q5_1 for 5-bit; integer-zero-point sources: Q4_0,
// Q4_1, Q5_0, Q5_1 or Q8_0 by their q - z); q4_1: Q4_1 only; f32/f16/bf16: every non-1-D tensor in
// that float type, only where every value is exact in it. Float source tensors keep their dtype
// except under f32/f16/bf16; 1-D tensors and norms are always F32.
enum class OutType { automatic, q4_1, f32, f16, bf16 };
const char* outtype_name(OutType outtype);  // "auto", "q4_1", "f32", "f16", "bf16"
// The inverse of outtype_name; nullopt for any other word.
std::optional<OutType> parse_outtype(const std::string& name);

struct PlanOptions {
    OutType outtype = OutType::automatic;
    std::optional<std::string> tokenizer_pre;  // override for an unknown pre-tokenizer regex
    // general.name (as convert_hf_to_gguf.py --model-name); default: from the model card,
    // config.json _name_or_path or the directory name (docs/gguf.md §4.5).
    std::string name;
    // A JSON file of general.* overrides, as convert_hf_to_gguf.py --metadata reads it.
    std::optional<std::filesystem::path> metadata_file;
    // Quantized tensors no block type holds exactly (6/7/8 bits, group or cols not a multiple of
    // 32, scales not exact in fp16) become an exact F16 copy when every value fits fp16, else F32.
    // Without it they are BLOCKERs.
    bool allow_lossless_fallback = false;
    // compressed-tensors NVFP4: its per-tensor factor 1/global_scale is written as the nearest
    // F32 (<tensor>.scale), off by up to 2^-24 relative; the tensors are then not bit-identical
    // (plan notes and verify say so). Without it they are BLOCKERs naming the measured error.
    bool allow_inexact_global_scale = false;
    // convert --quantize / plan --quantize on an FP8 checkpoint (the lossy path, never the
    // default): each FP8 value is e4m3 x scale in binary32, rounded to this float type as
    // llama.cpp's convert_hf_to_gguf.py writes its file (F32: the binary32 products), the values
    // llama-quantize then quantizes. nullopt: FP8 tensors are carried exactly or refused.
    // fp8_converter_outtype() gives the converter's choice.
    std::optional<GgmlType> fp8_rounded_to;
    // convert_hf_to_gguf.py --no-mtp (--no-nextn): the multi-token-prediction layers are left
    // out (block_count counts the main layers, no nextn_predict_layers KV), for the families whose
    // converter class takes it (Qwen3.5 / 3.6, Qwen3-Next, GLM-4.5+, GLM-4.7-Flash, Nemotron-H);
    // for any other an input error, as the converter refuses it. Default: MTP layers kept.
    bool no_mtp = false;
};

// One GGUF tensor of the plan and where it comes from.
struct PlannedTensor {
    std::string gguf_name;
    GgmlType type = GgmlType::F32;
    std::vector<int64_t> ne;  // ggml order: ne[0] is the contiguous dimension
    uint64_t nbytes = 0;
    std::string encoding;  // how the bytes are made: "q4_1_repack", "copy_bf16", ...
    std::string note;      // why this type was chosen
    // The source tensor (expert 0's for stacked experts); empty name: computed from config.json.
    std::string source_name;
    std::vector<int64_t> source_shape;  // as stored (row-major)
    std::string source_dtype;           // float sources: "BF16", ...; empty for quantized ones
    int bits = 0;                       // quantized sources: code width and group size
    int64_t group = 0;
    std::string scale_dtype;   // quantized sources: "F16", "BF16" or "F32"
    std::string quant_method;  // "gptq", "awq", "compressed-tensors"; empty for affine codes
    size_t experts = 0;        // > 0: this many source tensors stacked in order
    uint64_t expert_values = 0;
    // A group (block) whose codes are all zero gets scale 0 because its scale is not exact in fp16.
    bool zero_code_groups_get_zero_scale = false;
};

struct PlanReport {
    std::string format;  // "mcq-v1", "mlx", "float", "gptq", "awq", "compressed-tensors"
    std::string arch;    // general.architecture
    std::vector<PlannedTensor> tensors;  // in output order
    std::vector<Blocker> blockers;       // non-empty: convert would write nothing
    std::vector<std::string> notes;      // what is left out on purpose and does not block
    std::vector<GgufKV> kvs;             // the whole metadata set, in file order
    uint64_t source_bytes = 0;           // the input safetensors files together
    uint64_t file_bytes = 0;             // the single-file GGUF's exact size; 0 with BLOCKERs
    bool ok() const { return blockers.empty(); }
};

// Reads the checkpoint in `model_dir` (any supported input format) and plans every tensor without
// writing anything. Per-tensor problems are BLOCKERs in the report; unreadable or malformed input
// throws Error (input class).
PlanReport plan_model(const std::filesystem::path& model_dir, const PlanOptions& options = {});

// ---- Verify -----------------------------------------------------------------------------------

struct TensorCheck {
    std::string gguf_name;
    std::string source_name;
    std::string gguf_type;    // "Q4_1", "F32", ...
    bool re_encoded = false;  // source was quantized
    bool generated = false;   // no source tensor: computed from config.json (rope_freqs)
    bool identical = false;
    uint64_t values = 0;
    uint64_t mismatches = 0;
    uint64_t first_diff = 0;  // valid when mismatches > 0
    uint32_t expected_bits = 0;
    uint32_t got_bits = 0;
    double max_abs_error = 0.0;
    std::string problem;  // type/shape/missing problems (then identical = false)
    // A lossy GGUF tensor (Q4_K, Q8_0, ...) quantized from a float source: verify re-quantized the
    // source with its own quantizer; identical means "the bytes llama.cpp's quantizer writes",
    // never bit-identical values. rmse / max_abs_error: the GGUF's values against the source over
    // the checked blocks.
    bool requantized = false;
    uint64_t blocks_total = 0;
    uint64_t blocks_checked = 0;
    uint64_t blocks_identical = 0;
    double rmse = 0.0;
    // Non-empty: the values are what the conversion was asked to write, but not bit-identical to
    // the source's (compressed-tensors NVFP4 .scale = fl32(1/global_scale) under
    // --allow-inexact-global-scale); says why. identical is false; ok() accepts it.
    std::string not_bit_identical;
};

struct VerifyReport {
    std::vector<TensorCheck> tensors;
    std::vector<std::string> problems;  // tensor set, KV and layout problems, one line each
    // KVs verify does not derive from the source, "key: why" (general.name, rebox.*, a user's
    // own keys): reported, not failed; an underived key llama.cpp reads is a problem instead.
    std::vector<std::string> unchecked_kvs;
    size_t re_encoded_total = 0;
    size_t re_encoded_identical = 0;
    size_t copied_total = 0;  // float source tensors (copied, widened or recast exactly)
    size_t copied_identical = 0;
    size_t generated_total = 0;  // tensors computed from config.json (rope_freqs.weight)
    size_t generated_identical = 0;
    size_t requantized_total = 0;  // lossy tensors quantized from float sources
    size_t requantized_identical = 0;
    bool requantized_full = false;  // every block checked (verify --full), else the sample
    double max_abs_error = 0.0;
    bool ok() const;
    // "re-encoded tensors bit-identical: 197/197, max abs error 0.0; copied tensors
    // bit-identical: 113/113", then "; generated tensors bit-identical: 1/1" when there are any,
    // then "; re-quantized tensors identical to the reference quantizer: 84/84 (sampled)"
    std::string summary() const;
};

struct VerifyOptions {
    unsigned threads = 0;  // 0: all cores
    ProgressCallback progress;
    // The pre-tokenizer name the file was converted with (--tokenizer-pre), taken in place of the
    // one verify derives from tokenizer.json; nullopt: verify's own.
    std::optional<std::string> tokenizer_pre;
    // Lossy tensors: re-quantize every block instead of the deterministic sample.
    bool full = false;
    // The importance matrix the file was quantized with (llama.cpp's GGUF imatrix or the legacy
    // imatrix.dat): lossy tensors are re-quantized with its entries, as llama-quantize uses them.
    std::optional<std::filesystem::path> imatrix;
    // The file was converted with --no-mtp: the source's MTP layers are expected to be absent.
    bool no_mtp = false;
};

// The independent read-back proof: every GGUF tensor dequantized by verify's own code and compared
// bit for bit with the values computed from the source checkpoint, plus the tensor set, KVs and
// layout. Throws Error (input class) only when a file cannot be read at all; every mismatch is in
// the report. `gguf` may be the first shard of a split set (the others are found from its name).
VerifyReport verify_gguf(const std::filesystem::path& model_dir, const std::filesystem::path& gguf,
                         const VerifyOptions& options = {});

// ---- Convert ----------------------------------------------------------------------------------

struct SplitLimits {
    uint64_t max_bytes = 0;    // 0: no size limit (sum of PAD(nbytes, 32) of a shard's tensors)
    uint32_t max_tensors = 0;  // 0: no count limit
    bool no_tensor_first_split = false;  // first shard holds metadata only
};
// Parses "500M", "2G" (decimal units, as llama-gguf-split) or a plain byte count; throws Error.
uint64_t parse_split_size(const std::string& text);

// rebox quantize: what llama.cpp v0.4.0's llama-quantize writes for the same arguments, byte for
// byte (docs/quantize-command.md). Option names and value spellings are llama-quantize's.
struct QuantizeOptions {
    std::string type;  // Q4_0 ... Q6_K, Q4_K_M, IQ4_NL, IQ4_XS, Q8_0, F16, BF16, F32; any case
    std::optional<std::string> output_tensor_type;    // a ggml type name, any case ("q8_0")
    std::optional<std::string> token_embedding_type;  // likewise
    std::vector<std::string> tensor_types;            // "PATTERN=TYPE", first match wins
    // --imatrix: llama.cpp's GGUF imatrix or a legacy imatrix.dat (told apart by content). The
    // path is written as typed into quantize.imatrix.file, as llama-quantize does.
    std::optional<std::string> imatrix;
    // --include-weights / --exclude-weights: imatrix entries kept / dropped by a substring of
    // their name (llama-quantize's prepare_imatrix); only with imatrix, not both.
    std::vector<std::string> include_weights;
    std::vector<std::string> exclude_weights;
    // --override-kv KEY=TYPE:VALUE (int, float, bool, str), set in order after
    // general.file_type as llama-quantize sets them.
    std::vector<std::string> override_kvs;
    // --prune-layers "L0,L1,...": those blk.N layers dropped, the later ones renumbered,
    // {arch}.block_count set to the layers left.
    std::optional<std::string> prune_layers;
    bool pure = false;
    bool leave_output_tensor = false;
    // Quantized input tensors: kept as they are (false) or dequantized and requantized as
    // llama-quantize --allow-requantize does (true).
    bool allow_requantize = false;
    bool force = false;    // replace existing outputs
    bool dry_run = false;  // choose every type, check everything, write nothing
    unsigned threads = 0;  // 0: all cores (the bytes do not depend on it)
    SplitLimits split;     // any limit set: OUTPUT-without-.gguf-00001-of-0000N.gguf shards
    // --keep-split: one output per input shard, OUTPUT-without-.gguf-0000i-of-0000N.gguf, in the
    // input's tensor order, as llama-quantize --keep-split writes them (not with split limits).
    bool keep_split = false;
    ProgressCallback progress;
};

struct QuantizedTensor {
    std::string name;  // in the output (blk.N renumbered by prune_layers)
    std::vector<int64_t> ne;
    GgmlType from = GgmlType::F32;
    GgmlType to = GgmlType::F32;
    std::string reason;  // "recipe", "--pure", "kept (...)", "--tensor-type ...", fallback text
    uint64_t bytes = 0;  // in the output
    uint64_t from_bytes = 0;  // in the input (ggml_nbytes of its type)
};

struct QuantizeReport {
    std::string type;                      // canonical name, "Q4_K_M"
    uint32_t file_type = 0;                // general.file_type (llama_ftype)
    std::vector<QuantizedTensor> tensors;  // output order (llama's sorted order)
    std::vector<std::string> notes;        // e.g. quantized tensors kept as they are
    std::vector<std::filesystem::path> outputs;
    uint64_t input_bytes = 0;
    uint64_t output_bytes = 0;
    uint64_t input_elements = 0;  // of every input tensor, pruned ones included (BPW's divisor)
    bool needs_imatrix = false;   // a tensor's type needs one and none was given (dry_run only)
    bool written = false;         // false for dry_run
    double seconds = 0;
};

struct ConvertOptions {
    std::filesystem::path model_dir;
    std::filesystem::path output;
    PlanOptions plan;
    bool verify = true;    // verify while writing; a file that does not verify is never created
    bool force = false;    // replace an existing output
    unsigned threads = 0;  // 0: all cores
    SplitLimits split;     // any limit set: write OUTPUT-without-.gguf-00001-of-0000N.gguf shards
    ProgressCallback progress;
    // convert --quantize: the file `rebox quantize` would make of the exact conversion, in one
    // pass (docs/quantize-command.md). Its type, imatrix (entries named by GGUF tensor names) and
    // recipe options count; force, dry_run, threads, split and progress are taken from above, and
    // allow_requantize is ignored: tensors convert carries exactly as blocks stay as they are;
    // override_kvs and prune_layers too (the file stays the exact conversion, which verify
    // derives).
    std::optional<QuantizeOptions> quantize;
    // The mmproj file (the vision tower and projector llama.cpp's mtmd loads beside the text
    // model; docs/architectures.md "Vision"): when the checkpoint has a vision tower rebox
    // converts, it is written as mmproj-NAME.gguf beside OUTPUT (or at `mmproj`), and the two
    // files are renamed into place together or not at all. `mmproj` set for a checkpoint without
    // one is an input error; no_mmproj writes the text model only (a note says what was left out).
    std::optional<std::filesystem::path> mmproj;
    bool no_mmproj = false;
    // --fp8-as-q8, llama.cpp's converter's choice of that name (lossy, never the default; not with
    // `quantize`): each FP8 tensor of two or more dims is written as Q8_0 quantized from its
    // binary32 products e4m3 x scale, every other tensor as the converter's output type (--outtype,
    // or its auto heuristic) holds it. The file says rebox.fp8.rounded_to = F32; verify
    // re-quantizes the Q8_0 tensors from its own products.
    bool fp8_as_q8 = false;
};

struct ConvertReport {
    PlanReport plan;
    std::vector<std::filesystem::path> outputs;  // the files (one unless split)
    uint64_t output_bytes = 0;                   // all of them together
    bool written = false;  // the outputs exist (false: verification failed, nothing was created)
    std::optional<VerifyReport> verify;  // nullopt when options.verify is false
    double seconds_total = 0, seconds_write = 0, seconds_verify = 0;
    std::optional<QuantizeReport> quantize;  // convert --quantize: every tensor's type and why
    // The mmproj file written beside the text model (empty path: none), its bytes and its plan.
    std::filesystem::path mmproj;
    uint64_t mmproj_bytes = 0;
    std::optional<PlanReport> mmproj_plan;
};

// Plans, writes and (by default) verifies. Throws Error: blocker class with every BLOCKER
// (Error::blockers()) before anything is written; input class for unreadable or malformed input
// and I/O errors; cancelled when the progress callback says so. A file that does not verify is not
// an exception: the report has written == false and the failing verification.
ConvertReport convert_model(const ConvertOptions& options);

// `rebox plan --quantize`: the exact plan, then each tensor's type as convert --quantize would
// write it (written false, no outputs). Throws Error (blocker class) when the plan has BLOCKERs,
// input class for bad quantize options.
QuantizeReport plan_quantized_model(const std::filesystem::path& model_dir, const PlanOptions& plan,
                                    const QuantizeOptions& quantize);

// ---- Inspect ----------------------------------------------------------------------------------

struct GgufTensorInfo {
    std::string name;
    std::vector<int64_t> ne;        // ggml order: ne[0] is the contiguous dimension
    GgmlType type = GgmlType::F32;  // any id read from a file (ggml_type_name says if it is known)
    uint64_t offset = 0;            // relative to the data section
    uint64_t nbytes = 0;            // ggml_nbytes
    uint64_t element_count() const;
    bool operator==(const GgufTensorInfo& other) const = default;
};

struct GgufInfo {
    std::vector<std::filesystem::path> files;  // one, or every shard of a split set in order
    uint32_t version = 0;
    uint32_t alignment = 0;
    uint64_t bytes = 0;       // all files together
    std::vector<GgufKV> kvs;  // the first file's, split.* keys left out
    struct Tensor {
        GgufTensorInfo info;
        size_t file = 0;  // index into files
    };
    std::vector<Tensor> tensors;  // file order
};
// Opens and checks a GGUF file as llama.cpp's loader would (a first shard opens its whole set).
GgufInfo inspect_gguf(const std::filesystem::path& path);

struct SafetensorsTensorInfo {
    std::string name;
    std::string dtype;           // "F16", "BF16", "U32", ...
    std::vector<int64_t> shape;  // as stored (row-major)
    uint64_t begin = 0;          // data_offsets, relative to the data area
    uint64_t end = 0;
};
struct SafetensorsInfo {
    uint64_t header_bytes = 0;
    std::vector<SafetensorsTensorInfo> tensors;   // header order
    std::map<std::string, std::string> metadata;  // __metadata__
};
// Validates the whole header (spans, dtypes, shapes, overlaps) before returning.
SafetensorsInfo inspect_safetensors(const std::filesystem::path& path);

// ---- Split and merge (llama-gguf-split compatible) -------------------------------------------

// What split / merge writes (or with dry_run would write): each output, its size and tensor count.
struct PlannedOutput {
    std::filesystem::path path;
    uint64_t bytes = 0;
    size_t tensors = 0;
};
struct SplitOptions {
    SplitLimits limits;
    bool force = false;    // replace existing shard files
    bool dry_run = false;  // run every check, create nothing
};
// Shards "<out_prefix>-00001-of-0000N.gguf", ...; every shard appears whole or not at all.
std::vector<PlannedOutput> split_gguf(const std::filesystem::path& input,
                                      const std::string& out_prefix, const SplitOptions& options);
struct MergeOptions {
    bool force = false;
    bool dry_run = false;
};
// One GGUF from a split set given by its first shard.
PlannedOutput merge_gguf(const std::filesystem::path& first_shard,
                         const std::filesystem::path& output, const MergeOptions& options = {});

// ---- Quantize (llama-quantize's files) --------------------------------------------------------

// Reads a GGUF model (F32/F16/BF16 tensors, quantized ones kept or requantized; a first shard
// opens its whole set), chooses each tensor's type as llama-quantize does and writes the result
// through temporary files renamed into place. Throws Error (input class) with one line naming the
// file, tensor or option for: an unknown type, NaN/Inf in a source tensor, a type forced onto rows
// it cannot hold, an existing output without force, an output that is the input.
QuantizeReport quantize_gguf(const std::filesystem::path& input,
                             const std::filesystem::path& output, const QuantizeOptions& options);

// ---- Quantization kernels (ggml's block quantizers, byte for byte) -----------------------------

// Quantizes nrows rows of n_per_row floats into `type` blocks, producing the same bytes as ggml's
// ggml_quantize_chunk(type, src, dst, 0, nrows, n_per_row, imatrix) (llama.cpp v0.4.0 / ggml
// 0.23.0, x86-64 build). imatrix: one weight per column (n_per_row floats) or nullptr, which takes
// ggml's reference path (not the same as an all-ones imatrix); Q8_0 and MXFP4 ignore it, as ggml
// does. Types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4,
// NVFP4, TQ1_0, TQ2_0, Q1_0, Q2_0 and the i-quants IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S.
// Returns nrows x row size bytes. Throws Error (input class) for another type, n_per_row not a
// multiple of the block size, a negative count, no imatrix for IQ2_XXS / IQ2_XS / IQ1_S (ggml
// requires one), or a row whose grid search meets a NaN (values or imatrix whose squares overflow),
// where ggml aborts.
std::size_t quantize_rows(GgmlType type, const float* src, void* dst, int64_t nrows,
                          int64_t n_per_row, const float* imatrix = nullptr);

// The floats ggml's dequantize_row_<type> gives for n values (n a multiple of the block size) of
// `src` blocks, bit for bit. Types: those of quantize_rows, plus NVFP4 (read, never written), F16,
// BF16 and F32. Throws Error as quantize_rows does.
void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace rebox
