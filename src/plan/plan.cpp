// make_plan: config.json, tokenizer and pooling from the model directory, a TensorPlan or Blocker
// for every source tensor (never skipped), the architecture's completeness and shape checks, output
// order, and the KV set (model metadata + rebox provenance). Nothing is written here.
#include "plan/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "arch/transforms.hpp"
#include "expert_stack.hpp"
#include "format/safetensors.hpp"
#include "format/shape_text.hpp"
#include "model/config_bounds.hpp"
#include "model/model_card_metadata.hpp"
#include "model/pooling.hpp"
#include "model/st_dense.hpp"
#include "model/tokenizer_tiktoken.hpp"
#include "model/tokenizer_vocab.hpp"
#include "plan/expert_fuse.hpp"
#include "plan/expert_transpose.hpp"
#include "plan/global_scale.hpp"
#include "plan/layer_scalars.hpp"
#include "plan/mla_split.hpp"
#include "plan/qkvz_split.hpp"
#include "plan/row_moves.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "rebox/version.hpp"
#include "source/mlx_dense.hpp"
#include "source/model_dir.hpp"
#include "tensor_rules.hpp"

namespace rebox {
namespace plan_detail {

// gemma norms (ValueTransform::add_one): an F32 tensor of value + 1 computed as llama.cpp's
// converter does (arch/transforms.hpp); a quantized source is a BLOCKER (the converter adds 1 to
// float values, and a norm is never a block type).
bool attach_value_transform(arch::ValueTransform transform, const SourceTensor& source,
                            TensorPlan* plan, std::vector<Blocker>* blockers) {
    if (transform == arch::ValueTransform::none) return true;
    if (transform == arch::ValueTransform::neg_exp) {
        if (source.is_quantized()) {
            blockers->push_back(Blocker{source.name,
                                        "A_log stored quantized: llama.cpp's converter writes "
                                        "-exp(A_log) in F32 from a float A_log",
                                        "keep A_log unquantized (BF16/F16/F32) in the checkpoint"});
            return false;
        }
        plan->type = GgmlType::F32;
        plan->encoding = Encoding::neg_exp_f32;
        plan->nbytes = 4 * source.element_count();
        plan->note = std::string(float_dtype_name(source.float_dtype)) + " A_log -> -exp -> F32" +
                     (source.float_dtype == FloatDtype::F16
                          ? " (exp rounded to fp16, as the converter computes in F16)"
                          : " (binary32, correctly rounded)");
        return true;
    }
    if (source.is_quantized()) {
        blockers->push_back(Blocker{
            source.name,
            "a gemma RMSNorm weight stored quantized (" + std::to_string(source.quant_bits()) +
                "-bit codes): llama.cpp's converter writes weight + 1 in F32 from a float weight",
            "keep the norm weights unquantized (BF16/F16/F32) in the checkpoint"});
        return false;
    }
    plan->type = GgmlType::F32;
    plan->encoding = Encoding::add_one_f32;
    plan->nbytes = 4 * source.element_count();
    plan->note = std::string(float_dtype_name(source.float_dtype)) + " weight + 1 -> F32" +
                 (source.float_dtype == FloatDtype::F16 ? " (the add rounded to fp16, as the "
                                                          "converter adds in F16)"
                                                        : " (a binary32 add)");
    return true;
}

// general.file_type as llama.cpp's converter names a file (docs/gguf.md §2.4). The float outtypes
// name their type, as convert_hf_to_gguf.py's --outtype does. Otherwise: a file holding NVFP4
// blocks is MOSTLY_NVFP4 and one holding MXFP4 blocks MOSTLY_MXFP4_MOE, whatever else it keeps in
// BF16 (the converter's prepare_metadata sets them for any NVFP4 / MXFP4 checkpoint, the embedding
// and head of a ModelOpt export included); else the most common integer block type, as llama.cpp's
// loader guesses a type (llama-model-loader.cpp; a tie goes to the type with fewer bytes per
// value); with no block type, the most common float type over the tensors of 2 or more dims (1-D
// ones are F32 in every file type, the "except 1d tensors" of llama.h).
LlamaFileType file_type(const Plan& plan, const PlanOptions& options) {
    if (options.outtype == OutType::f32) return LlamaFileType::ALL_F32;
    if (options.outtype == OutType::f16) return LlamaFileType::MOSTLY_F16;
    if (options.outtype == OutType::bf16) return LlamaFileType::MOSTLY_BF16;
    const auto holds = [&](GgmlType type) {
        for (const TensorPlan& tensor : plan.tensors)
            if (tensor.type == type) return true;
        return false;
    };
    if (holds(GgmlType::NVFP4)) return LlamaFileType::MOSTLY_NVFP4;
    if (holds(GgmlType::MXFP4)) return LlamaFileType::MOSTLY_MXFP4_MOE;
    // Counts per block type, in increasing bytes per value (the tie rule takes the smaller).
    constexpr GgmlType kBlockTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                                        GgmlType::Q5_1, GgmlType::Q8_0};
    constexpr LlamaFileType kBlockFileTypes[] = {
        LlamaFileType::MOSTLY_Q4_0, LlamaFileType::MOSTLY_Q4_1, LlamaFileType::MOSTLY_Q5_0,
        LlamaFileType::MOSTLY_Q5_1, LlamaFileType::MOSTLY_Q8_0};
    size_t blocks[5] = {}, f16 = 0, bf16 = 0, f32 = 0;
    for (const TensorPlan& tensor : plan.tensors) {
        const auto type = static_cast<GgmlType>(tensor.type);
        for (size_t k = 0; k < 5; ++k)
            if (type == kBlockTypes[k]) ++blocks[k];
        if (tensor.ne.size() < 2) continue;
        if (type == GgmlType::F16) ++f16;
        if (type == GgmlType::BF16) ++bf16;
        if (type == GgmlType::F32) ++f32;
    }
    size_t most = 0;
    for (size_t k = 1; k < 5; ++k)
        if (blocks[k] > blocks[most]) most = k;
    if (blocks[most] > 0) return kBlockFileTypes[most];
    if (f32 == 0 && f16 == 0 && bf16 == 0) return LlamaFileType::MOSTLY_Q4_1;  // nothing planned
    if (f32 >= f16 && f32 >= bf16) return LlamaFileType::ALL_F32;
    return bf16 > f16 ? LlamaFileType::MOSTLY_BF16 : LlamaFileType::MOSTLY_F16;
}

// The model-card metadata, over the tensors written (the size label and the name heuristics
// count their parameters).
std::vector<GgufKV> card_kvs(const SourceModel& source, const PlanOptions& options,
                             const std::vector<TensorPlan>& tensors) {
    CardMetadataSources card_sources;
    card_sources.model_dir = source.dir;
    card_sources.overrides_file = options.metadata_file;
    card_sources.name = options.name;
    for (const TensorPlan& tensor : tensors)
        card_sources.tensors.push_back({tensor.gguf_name, tensor.ne});
    return card_metadata_kvs(load_card_metadata(card_sources));
}

}  // namespace plan_detail

namespace {

using plan_detail::attach_value_transform;
using plan_detail::file_type;

using detail::shape_text;

using arch::Architecture;

// Kimi-K2's tiktoken.model (tokenizer_tiktoken.hpp), for the families whose converter class reads
// it; a malformed file is an input error, what cannot be carried one BLOCKER naming its file.
std::optional<TokenizerVocab> read_tiktoken_vocab(const SourceModel& source,
                                                  const ModelConfig& config,
                                                  const PlanOptions& options,
                                                  std::vector<Blocker>* blockers) {
    const Architecture* architecture = arch::find_architecture(config.model_type);
    if (architecture == nullptr || !architecture->tiktoken_vocab) {
        blockers->push_back(Blocker{
            "tiktoken.model",
            "a tiktoken vocabulary without tokenizer.json: llama.cpp's converter reads one for "
            "deepseek2 (Kimi-K2) only",
            "convert the tokenizer to a tokenizer.json (transformers' PreTrainedTokenizerFast) and "
            "put it into " +
                source.dir.string()});
        return std::nullopt;
    }
    try {
        TokenizerVocab vocab = read_tiktoken_tokenizer(
            source.dir, TokenizerOptions{config.vocab_size, options.tokenizer_pre,
                                         source.model_dir && source.model_dir->has_config()
                                             ? &source.model_dir->config()
                                             : nullptr});
        return vocab;
    } catch (const Error& e) {
        if (e.exit_class() != ExitClass::blocker) throw;
        blockers->push_back(
            Blocker{e.file(), error_message("", e.field(), e.problem()), e.expected()});
        return std::nullopt;
    }
}

std::optional<TokenizerVocab> read_vocab(const SourceModel& source, const ModelConfig& config,
                                         const PlanOptions& options, std::vector<Blocker>* blockers,
                                         std::vector<std::string>* notes) {
    if (!std::filesystem::exists(source.dir / "tokenizer.json") &&
        !std::filesystem::exists(source.dir / "tokenizer.model") &&
        !std::filesystem::exists(source.dir / "sentencepiece.bpe.model")) {
        // A tiktoken vocabulary (Kimi-K2's tiktoken.model), which llama.cpp's converter rebuilds
        // into byte-level BPE tokens and merges (tokenizer_tiktoken.hpp).
        if (std::filesystem::exists(source.dir / "tiktoken.model"))
            return read_tiktoken_vocab(source, config, options, blockers);
        else
            blockers->push_back(
                Blocker{"tokenizer.json", "no tokenizer.json: the GGUF would not be runnable",
                        "copy the model's tokenizer.json into " + source.dir.string()});
        return std::nullopt;
    }
    const Architecture* architecture = arch::find_architecture(config.model_type);
    if (architecture != nullptr && !architecture->tokenizer_blocker.empty()) {
        blockers->push_back(Blocker{"tokenizer.json", std::string(architecture->tokenizer_blocker),
                                    "none in rebox yet (llama.cpp's converter writes it)"});
        return std::nullopt;
    }
    try {
        TokenizerVocab vocab = read_tokenizer(
            source.dir,
            TokenizerOptions{
                config.vocab_size, options.tokenizer_pre,
                source.model_dir && source.model_dir->has_config() ? &source.model_dir->config()
                                                                   : nullptr,
                architecture != nullptr ? architecture->byte_level_pre : std::string_view{},
                architecture != nullptr && architecture->encoder,
                architecture != nullptr ? architecture->tokenizer_model : std::string_view{}});
        if (architecture != nullptr && architecture->finish_vocab)
            architecture->finish_vocab(vocab, options.tokenizer_pre.has_value());
        if (vocab.tokens.size() != config.vocab_size)
            blockers->push_back(Blocker{"tokenizer.json",
                                        "the tokenizer has " + std::to_string(vocab.tokens.size()) +
                                            " tokens but config.json vocab_size is " +
                                            std::to_string(config.vocab_size),
                                        "use the tokenizer.json that belongs to this checkpoint"});
        for (const std::string& token : vocab.dropped_added_tokens)
            notes->push_back("tokenizer.json: added token " + token + " is beyond vocab_size " +
                             std::to_string(config.vocab_size) + ": left out of the GGUF");
        return vocab;
    } catch (const Error& e) {
        if (e.exit_class() != ExitClass::blocker) throw;
        // The Blocker names tokenizer.json itself; another file (tokenizer.model) stays named.
        std::string reason = error_message(e.file() == "tokenizer.json" ? "" : e.file(), e.field(),
                                           e.problem(), e.expected());
        blockers->push_back(Blocker{"tokenizer.json", std::move(reason),
                                    "use the model's own tokenizer.json (--tokenizer-pre NAME when "
                                    "only the pre-tokenizer is unknown)"});
        return std::nullopt;
    }
}

// llama.cpp's vocabulary loader (llama-vocab.cpp) looks up </s>, <unk>, <s> and <|endoftext|> by
// text when general.name contains "phi-3" or "phi3" (any case) and throws when one is missing, so
// such a file would not load: a BLOCKER naming the missing tokens (docs/architectures.md).
void check_phi3_name_tokens(const std::string& name, const TokenizerVocab& vocab,
                            std::vector<Blocker>* blockers) {
    std::string lower;
    for (const char c : name) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower.find("phi-3") == std::string::npos && lower.find("phi3") == std::string::npos) return;
    const std::set<std::string> tokens(vocab.tokens.begin(), vocab.tokens.end());
    std::string missing;
    for (const char* token : {"</s>", "<unk>", "<s>", "<|endoftext|>"})
        if (!tokens.count(token)) missing += (missing.empty() ? "" : ", ") + std::string(token);
    if (missing.empty()) return;
    blockers->push_back(
        Blocker{"general.name",
                "'" + name + "' makes llama.cpp's vocabulary loader look up </s>, <unk>, <s> and " +
                    "<|endoftext|> (its Phi-3 rule); the vocabulary has no " + missing +
                    ", so llama.cpp would fail to load the file",
                "--name NAME without 'phi3' / 'phi-3', or the model's own tokenizer"});
}

// Config-dependent checks of one planned tensor; returns false (with a blocker) when it fails.
bool check_against_config(const Architecture& arch, const ModelConfig& config,
                          const SourceTensor& source, const TensorPlan& plan,
                          std::vector<Blocker>* blockers) {
    if (const auto layer = arch::layer_of(plan.gguf_name);
        layer && *layer >= static_cast<int64_t>(config.num_hidden_layers) + config.nextn_layers) {
        blockers->push_back(Blocker{
            source.name,
            "layer " + std::to_string(*layer) + " is beyond config.json num_hidden_layers = " +
                std::to_string(config.num_hidden_layers) +
                (config.nextn_layers != 0
                     ? " (+ " + std::to_string(config.nextn_layers) + " MTP layers)"
                     : std::string()),
            "use the config.json that belongs to these weights"});
        return false;
    }
    const auto expected = arch::expected_ne(arch, config, plan.gguf_name);
    if (!expected) {
        blockers->push_back(Blocker{source.name,
                                    "llama.cpp's " + std::string(arch.gguf_arch) +
                                        " graph has no tensor " + plan.gguf_name +
                                        " (it refuses files with extra tensors)",
                                    "remove the tensor from the checkpoint"});
        return false;
    }
    if (*expected != plan.ne) {
        // Name the config.json fields behind the dimension that disagrees (a fused qkv's rows:
        // heads * head_dim + 2 * kv_heads * head_dim).
        std::string why;
        const auto dims = arch::tensor_dims(arch, plan.gguf_name, &config);
        if (dims && expected->size() == plan.ne.size()) {
            for (size_t i = 0; i < plan.ne.size(); ++i) {
                if (plan.ne[i] == (*expected)[i]) continue;
                const char* what = plan.ne.size() == 1 ? "values"
                                   : i == 0            ? "columns"
                                   : i == 1            ? "rows"
                                                       : "experts";
                why += std::string(why.empty() ? "" : "; ") + std::to_string(plan.ne[i]) + " " +
                       what + ", config.json implies " +
                       arch::explain_dim((*dims)[plan.ne.size() == 1 ? 0 : i], config);
            }
        }
        blockers->push_back(Blocker{source.name,
                                    plan.gguf_name + " has ne " + shape_text(plan.ne) +
                                        " but config.json implies " + shape_text(*expected) +
                                        (why.empty() ? "" : " (" + why + ")"),
                                    "use the config.json that belongs to these weights"});
        return false;
    }
    return true;
}

// The values per quantization group of a quantized source (0 for a float one or a per-channel
// integer one), for the row-move rule.
uint64_t source_group(const SourceTensor& source) {
    const int64_t group = source.quant_group();
    return group > 0 ? static_cast<uint64_t>(group) : 0;
}

// Attaches the row map of a tensor the architecture permutes (llama q/k and their biases); a
// BLOCKER when whole rows cannot be moved: heads that do not divide the rows, an odd head size,
// or an output block that would mix two rows (plan/row_moves.hpp: groups that run across rows are
// fine, each block carries its own group's scale and min).
bool attach_row_transform(arch::RowTransform transform, const ModelConfig& config,
                          const SourceTensor& source, TensorPlan* plan,
                          std::vector<Blocker>* blockers) {
    if (transform != arch::RowTransform::rope_pairs_q_heads &&
        transform != arch::RowTransform::rope_pairs_kv_heads)
        return true;
    const uint32_t heads = arch::transform_heads(transform, config);
    const char* heads_field = transform == arch::RowTransform::rope_pairs_q_heads
                                  ? "num_attention_heads"
                                  : "num_key_value_heads";
    const uint64_t rows = source.shape.empty() ? 0 : static_cast<uint64_t>(source.shape[0]);
    const uint64_t values = source.element_count();
    const std::string what = "the rope row permutation of " + plan->gguf_name + ": ";
    if (rows == 0 || heads == 0 || rows % heads != 0) {
        blockers->push_back(Blocker{source.name,
                                    what + std::to_string(rows) + " rows do not split into " +
                                        std::to_string(heads) + " heads (" + heads_field + ")",
                                    "use the config.json that belongs to these weights"});
        return false;
    }
    if ((rows / heads) % 2 != 0) {
        blockers->push_back(Blocker{source.name,
                                    what + "the head size " + std::to_string(rows / heads) +
                                        " is odd (rows pair up as first/second half of a head)",
                                    "an even head_dim; llama.cpp's converter cannot do it either"});
        return false;
    }
    const uint64_t row_values = values / rows;
    if (const auto problem =
            plan_detail::row_move_problem(plan->type, row_values, source_group(source))) {
        blockers->push_back(Blocker{source.name, what + *problem + ", so rows cannot move exactly",
                                    "--outtype f32 (every value moves on its own), or re-export "
                                    "with rows and groups that are whole blocks of 32"});
        return false;
    }
    plan->row_source = *arch::rope_pair_source_rows(rows, heads);
    plan->row_values = row_values;
    plan->note += (plan->note.empty() ? "" : "; ") + std::string("rows permuted for rope");
    return true;
}

// gemma3 token_embd (RowTransform::first_vocab_rows): a source with more rows than vocab_size keeps
// its first vocab_size rows, in order (Gemma3Model.modify_tensors: data_torch[:n_vocab_real]);
// exact whenever no output block mixes two rows (plan/row_moves.hpp).
// Runs before the shape check, which then sees the trimmed ne.
bool attach_vocab_slice(const ModelConfig& config, const SourceTensor& source, TensorPlan* plan,
                        std::vector<Blocker>* blockers) {
    const uint64_t rows = source.shape.size() == 2 ? static_cast<uint64_t>(source.shape[0]) : 0;
    if (rows <= config.vocab_size) return true;  // equal: copied as it is; fewer: shape check
    const uint64_t row_values = source.element_count() / rows;
    if (const auto problem =
            plan_detail::row_move_problem(plan->type, row_values, source_group(source))) {
        blockers->push_back(Blocker{source.name,
                                    "the first " + std::to_string(config.vocab_size) + " of " +
                                        std::to_string(rows) + " rows are kept, but " + *problem,
                                    "--outtype f32 (every value moves on its own), or re-export "
                                    "with rows and groups that are whole blocks of 32"});
        return false;
    }
    plan->row_source.resize(config.vocab_size);
    for (uint32_t r = 0; r < config.vocab_size; ++r) plan->row_source[r] = r;
    plan->row_values = row_values;
    plan->ne[1] = config.vocab_size;
    plan->nbytes = ggml_nbytes(plan->type, plan->ne).value_or(0);
    plan->note += (plan->note.empty() ? "" : "; ") + std::string("first ") +
                  std::to_string(config.vocab_size) + " of " + std::to_string(rows) +
                  " rows (the rows past config.json vocab_size are left out, as llama.cpp's "
                  "converter does)";
    return true;
}

// gpt-oss gate_up (RowTransform::even_rows / odd_rows): the source's dim 1 interleaves gate and
// up rows ([E, 2F, cols] weights, [E, 2F] biases); the GGUF keeps every other one in order, as
// GptOssModel slices [:, ::2] / [:, 1::2]. Over the flattened rows that is GGUF row r <- source
// row 2r (+1). transformers' fused gate_up_proj (first_half_rows / second_half_rows): each
// expert's 2F rows are its F gate rows, then its F up rows (Qwen2MoeModel's [..., :n_ff, :] /
// [..., n_ff:, :]): GGUF row e*F + j <- source row e*2F + j (+ F). Runs before the shape check,
// which then sees the halved ne.
bool attach_deinterleave(arch::RowTransform transform, const SourceTensor& source, TensorPlan* plan,
                         std::vector<Blocker>* blockers) {
    const bool halves = transform == arch::RowTransform::first_half_rows ||
                        transform == arch::RowTransform::second_half_rows;
    if (transform != arch::RowTransform::even_rows && transform != arch::RowTransform::odd_rows &&
        !halves)
        return true;
    const std::vector<int64_t>& shape = source.shape;
    const std::string what = halves ? "fused gate_up" : "interleaved gate/up";
    if (shape.size() < 2 || shape[1] % 2 != 0) {
        blockers->push_back(Blocker{
            source.name, "shape " + shape_text(shape) + " has no even dim 1 of " + what + " rows",
            "use the checkpoint's own gate_up_proj tensors"});
        return false;
    }
    uint64_t row_values = 1;
    for (size_t i = 2; i < shape.size(); ++i) row_values *= static_cast<uint64_t>(shape[i]);
    if (const auto problem =
            plan_detail::row_move_problem(plan->type, row_values, source_group(source))) {
        blockers->push_back(
            Blocker{source.name,
                    (halves ? "fused gate_up rows are split" : "gate/up rows are de-interleaved") +
                        std::string(", but ") + *problem,
                    "--outtype f32 (every value moves on its own)"});
        return false;
    }
    const uint64_t rows = source.element_count() / row_values / 2;
    const uint64_t half = static_cast<uint64_t>(shape[1]) / 2;  // F: one expert's gate rows
    const bool second = transform == arch::RowTransform::odd_rows ||
                        transform == arch::RowTransform::second_half_rows;
    plan->row_source.resize(rows);
    for (uint64_t r = 0; r < rows; ++r)
        plan->row_source[r] =
            static_cast<uint32_t>(halves ? r / half * 2 * half + r % half + (second ? half : 0)
                                         : 2 * r + (second ? 1 : 0));
    plan->row_values = row_values;
    plan->ne[plan->ne.size() - 2] /= 2;
    plan->nbytes = ggml_nbytes(plan->type, plan->ne).value_or(0);
    plan->note += (plan->note.empty() ? "" : "; ") +
                  std::string(halves ? (second ? "up (second) half" : "gate (first) half")
                                     : (second ? "odd (up)" : "even (gate)")) +
                  " rows of the " + (halves ? "fused gate_up" : "interleaved gate_up");
    return true;
}

// xlm-roberta position_embd (RowTransform::skip_position_offset): the source table must have
// max_position_embeddings rows; the GGUF keeps the rows from position_offset (pad_token_id + 1)
// on, in order (XLMRobertaModel.modify_tensors: data_torch[pad_token_id + 1:, :]). The table is
// written exact F32, so any source encoding moves exactly. Runs before the shape check, which then
// sees the trimmed ne.
bool attach_position_slice(const ModelConfig& config, const SourceTensor& source, TensorPlan* plan,
                           std::vector<Blocker>* blockers) {
    const uint64_t rows = source.shape.size() == 2 ? static_cast<uint64_t>(source.shape[0]) : 0;
    if (rows != config.max_position_embeddings) {
        blockers->push_back(Blocker{
            source.name,
            plan->gguf_name + ": the position table has " + std::to_string(rows) +
                " rows but config.json max_position_embeddings is " +
                std::to_string(config.max_position_embeddings) + " (the first pad_token_id + 1 = " +
                std::to_string(config.position_offset) + " rows are left out of exactly that many)",
            "use the config.json that belongs to these weights"});
        return false;
    }
    const uint64_t row_values = source.element_count() / rows;
    const uint32_t kept = config.max_position_embeddings - config.position_offset;
    plan->row_source.resize(kept);
    for (uint32_t r = 0; r < kept; ++r) plan->row_source[r] = config.position_offset + r;
    plan->row_values = row_values;
    plan->ne[1] = kept;
    plan->nbytes = ggml_nbytes(plan->type, plan->ne).value_or(0);
    plan->note += (plan->note.empty() ? "" : "; ") + std::string("rows ") +
                  std::to_string(config.position_offset) + ".." + std::to_string(rows - 1) +
                  " (RoBERTa positions start at pad_token_id + 1; the rows before are left out, as "
                  "llama.cpp's converter does)";
    return true;
}

// Linear attention's V-head reorder (RowTransform::v_heads_*, arch/transforms.hpp): whole rows, or
// whole value-head blocks of out_proj's rows, move; only when the key and value head counts
// differ (as _LinearAttentionVReorderBase). A BLOCKER when the counts do not fit the tensor or an
// output block (or a quantization group) would straddle two moved units.
bool attach_v_head_moves(arch::RowTransform transform, const ModelConfig& config,
                         const SourceTensor& source, TensorPlan* plan,
                         std::vector<Blocker>* blockers) {
    using arch::RowTransform;
    if (transform != RowTransform::v_heads_after_qk && transform != RowTransform::v_heads_rows &&
        transform != RowTransform::v_heads_single && transform != RowTransform::v_heads_columns)
        return true;
    const ModelConfig::LinearAttention l =
        config.linear_attention.value_or(ModelConfig::LinearAttention{});
    if (l.key_heads == l.value_heads) return true;
    const uint64_t values = source.element_count();
    const uint64_t rows = plan->ne.size() == 1 ? values : static_cast<uint64_t>(plan->ne.back());
    uint64_t unit_values = rows == 0 ? 0 : values / rows;  // one moved unit
    std::optional<std::vector<uint32_t>> map;
    if (transform == RowTransform::v_heads_columns) {
        unit_values = l.value_head_dim;
        map = arch::v_head_source_column_blocks(rows, l.key_heads, l.value_heads);
        if (plan->ne.empty() || plan->ne[0] != int64_t{l.value_heads} * l.value_head_dim)
            map.reset();
    } else if (plan->ne.size() == 1) {
        unit_values = 1;
        map = arch::v_head_source_rows(values, 0, l.key_heads, l.value_heads, 1);
    } else {
        const uint64_t first = transform == RowTransform::v_heads_after_qk
                                   ? 2 * uint64_t{l.key_heads} * l.key_head_dim
                                   : 0;
        const uint64_t unit = transform == RowTransform::v_heads_single ? 1 : l.value_head_dim;
        map = arch::v_head_source_rows(rows, first, l.key_heads, l.value_heads, unit);
    }
    const std::string what = "the V-head reorder of " + plan->gguf_name + ": ";
    if (!map) {
        blockers->push_back(
            Blocker{source.name,
                    what + "shape " + shape_text(source.shape) + " is not linear_num_value_heads " +
                        std::to_string(l.value_heads) + " heads of linear_value_head_dim " +
                        std::to_string(l.value_head_dim) + " grouped under linear_num_key_heads " +
                        std::to_string(l.key_heads),
                    "use the config.json that belongs to these weights"});
        return false;
    }
    if (const auto problem =
            plan_detail::row_move_problem(plan->type, unit_values, source_group(source))) {
        const uint64_t group = source_group(source);
        blockers->push_back(Blocker{
            source.name,
            what + *problem + " (linear_value_head_dim " + std::to_string(l.value_head_dim) +
                (group != 0 ? ", quantization group " + std::to_string(group) : std::string()) +
                "), so the value heads cannot move exactly",
            "--outtype f32 (every value moves on its own), or a group "
            "size that divides linear_value_head_dim"});
        return false;
    }
    plan->row_source = std::move(*map);
    plan->row_values = unit_values;
    plan->note += (plan->note.empty() ? "" : "; ") + std::string("value heads reordered");
    return true;
}

// rope_freqs.weight: F32 [head_dim/2] computed from config.json (no source tensor): llama3's
// scaling factors, or gemma4's proportional-rope ones.
TensorPlan computed_rope_freqs(const ModelConfig& config, arch::ExtraTensor kind) {
    const bool proportional = kind == arch::ExtraTensor::rope_freqs_proportional;
    TensorPlan tensor;
    tensor.source_index = TensorPlan::kComputed;
    tensor.gguf_name = std::string(arch::extra_tensor_name(kind));
    tensor.computed =
        proportional ? arch::proportional_rope_freqs(config) : arch::llama3_rope_freqs(config);
    tensor.type = GgmlType::F32;
    tensor.ne = {static_cast<int64_t>(tensor.computed.size())};
    tensor.nbytes = 4 * tensor.computed.size();
    tensor.encoding = Encoding::copy_f32;
    tensor.note = proportional ? "computed from config.json rope_parameters (proportional)"
                               : "computed from config.json rope_scaling (llama3)";
    return tensor;
}

// rope_factors_long/short.weight: F32 [rotary dims/2] from config.json's long rope lists.
TensorPlan computed_rope_factors(const ModelConfig& config, arch::ExtraTensor extra) {
    const bool is_long = extra == arch::ExtraTensor::rope_factors_long;
    TensorPlan tensor;
    tensor.source_index = TensorPlan::kComputed;
    tensor.gguf_name = std::string(arch::extra_tensor_name(extra));
    tensor.computed = arch::phi3_rope_factors(config, is_long);
    tensor.type = GgmlType::F32;
    tensor.ne = {static_cast<int64_t>(tensor.computed.size())};
    tensor.nbytes = 4 * tensor.computed.size();
    tensor.encoding = Encoding::copy_f32;
    tensor.note = std::string("computed from config.json rope_scaling.") +
                  (is_long ? "long_factor" : "short_factor");
    return tensor;
}

std::vector<GgufKV> provenance_kvs(const SourceModel& source, const Plan& plan) {
    std::vector<std::string> names;
    std::vector<GgufScalar> bits, groups;
    for (const TensorPlan& tensor : plan.tensors) {
        if (tensor.is_computed()) continue;
        const SourceTensor& st = source.tensors[tensor.source_index];
        if (!st.is_quantized()) continue;
        names.push_back(tensor.gguf_name);
        bits.emplace_back(static_cast<uint64_t>(st.quant_bits()));
        groups.emplace_back(static_cast<uint64_t>(st.quant_group()));
    }
    return {
        {"rebox.version", GgufValue::str(rebox::version())},
        {"rebox.source.format", GgufValue::str(source.format.empty() ? "mcq-v1" : source.format)},
        {"rebox.quant.tensors", GgufValue::string_array(std::move(names))},
        {"rebox.quant.bits", GgufValue::array_of(GgufType::UINT32, std::move(bits))},
        {"rebox.quant.group", GgufValue::array_of(GgufType::UINT32, std::move(groups))},
    };
}

// The lossy path's provenance: the float type FP8 values were rounded to before quantizing
// (PlanOptions::fp8_rounded_to), which verify reads back to derive them the same way.
std::vector<GgufKV> fp8_rounding_kvs(const SourceModel& source, const PlanOptions& options) {
    const bool fp8 = std::any_of(source.tensors.begin(), source.tensors.end(),
                                 [](const SourceTensor& t) { return t.fp8.has_value(); });
    if (!fp8 || !options.fp8_rounded_to) return {};
    return {{"rebox.fp8.rounded_to", GgufValue::str(ggml_type_name(*options.fp8_rounded_to))}};
}

// The note naming the non-parameter buffers left out (the first three, then how many in all).
std::string buffers_note(const std::set<std::string>& buffers) {
    std::string names;
    size_t listed = 0;
    for (const std::string& name : buffers) {
        if (listed == 3) {
            names += ", ...";
            break;
        }
        names += (listed++ == 0 ? "" : ", ") + name;
    }
    return std::to_string(buffers.size()) +
           " non-parameter buffer(s) left out, as llama.cpp's converter skips them: " + names;
}

// Appends to each Blocker that an exact fallback could lift how much the fallback grows the whole
// file: its extra bytes against the tensors' bytes as planned (blocked tensors counted at their
// packed size), so the user sees the price of --allow-lossless-fallback before paying it.
void add_fallback_growth(const SourceModel& source, Plan& plan) {
    uint64_t base = 0, growth = 0;
    for (const TensorPlan& tensor : plan.tensors) base += tensor.nbytes;
    for (const SourceTensor& tensor : source.tensors)
        for (const Blocker& blocker : plan.blockers)
            if (blocker.fallback_growth_bytes > 0 && blocker.tensor == tensor.name) {
                if (tensor.fp4)
                    base += tensor.fp4->codes.size() + tensor.fp4->scales.size();
                else if (tensor.quant)
                    base += tensor.quant->codes.size() + tensor.quant->scales.size() +
                            tensor.quant->mins.size();
                else if (tensor.int_quant)
                    base += tensor.int_quant->packed_bytes;
                else if (tensor.fp8)
                    base += tensor.fp8->codes.size() + tensor.fp8->scales.size();
            }
    for (const Blocker& blocker : plan.blockers) growth += blocker.fallback_growth_bytes;
    if (growth == 0 || base == 0) return;
    for (Blocker& blocker : plan.blockers) {
        if (blocker.fallback_growth_bytes == 0) continue;
        char text[192];
        std::snprintf(text, sizeof text,
                      ", +%.1f%% on the file's tensor data (all such fallbacks together: +%llu "
                      "bytes, +%.1f%%)",
                      100.0 * double(blocker.fallback_growth_bytes) / double(base),
                      static_cast<unsigned long long>(growth),
                      100.0 * double(growth) / double(base));
        blocker.fix += text;
    }
}

// EmbeddingGemma: the Dense modules' feature sizes (their config.json files, not config.json);
// for mlx-embeddings' projections in the model's file (no folder), the source tensor's [out, in].
void add_dense_features(const SourceModel& source, ModelConfig& config) {
    const Architecture* arch = arch::find_architecture(config.model_type);
    if (arch == nullptr || !arch->sentence_embedder) return;
    for (const DenseModule& module : read_dense_modules(source.dir)) {
        if (!module.has_folder) continue;
        (module.gguf_stem == "dense_2" ? config.dense_2 : config.dense_3) =
            ModelConfig::DenseFeatures{module.in_features, module.out_features,
                                       module.path + "/config.json"};
    }
    for (const SourceTensor& tensor : source.tensors) {
        const std::optional<mlx_dense::InFile> in_file = mlx_dense::in_file_origin(tensor);
        if (!in_file || tensor.shape.size() != 2) continue;
        const auto count = [](int64_t d) {
            return d > 0 && d <= std::numeric_limits<uint32_t>::max() ? static_cast<uint32_t>(d)
                                                                      : 0u;
        };
        (in_file->second ? config.dense_3 : config.dense_2) = ModelConfig::DenseFeatures{
            count(tensor.shape[1]), count(tensor.shape[0]), in_file->first};
    }
}

// The MTP layer count as _QwenMtpMixin settles it: config.json's mtp_num_hidden_layers, or when
// it has none (Qwen3-Next's config.json) the layers the checkpoint holds ("mtp.layers.K.*": the
// largest K + 1). mlx-lm's sanitize drops every MTP tensor while config.json keeps
// mtp_num_hidden_layers: a checkpoint holding none of them is written without MTP layers, as the
// converter's --no-mtp writes it (llama.cpp's qwen35 loader requires the layers block_count
// counts).
void settle_mtp_layers(const SourceModel& source, Plan& plan) {
    ModelConfig& config = plan.config;
    const Architecture* arch = arch::find_architecture(config.model_type);
    if (arch == nullptr || arch->mtp_layer_prefix.empty()) return;
    bool any = false;
    uint64_t counted = 0;
    for (const SourceTensor& tensor : source.tensors) {
        const std::string name = arch::strip_model_prefix(tensor.name);
        for (const auto& rename : arch->mtp_renames)
            any = any || name.starts_with(std::string(rename.first) + ".");
        if (!name.starts_with(arch->mtp_layer_prefix)) continue;
        any = true;
        const std::string_view rest = std::string_view(name).substr(arch->mtp_layer_prefix.size());
        uint64_t layer = 0;
        size_t digits = 0;
        while (digits < rest.size() && digits < 3 && rest[digits] >= '0' && rest[digits] <= '9')
            layer = layer * 10 + uint64_t(rest[digits++] - '0');
        if (digits > 0 && digits < rest.size() && rest[digits] == '.')
            counted = std::max(counted, layer + 1);
    }
    // (NemotronHModel folds its mtp.layers.0 and .1 into one block: only config.json counts them)
    if (config.nextn_layers == 0 && counted > 0 && counted <= 64 && !arch->mtp_fold) {
        plan.notes.push_back("config.json has no mtp_num_hidden_layers: the checkpoint's " +
                             std::to_string(counted) +
                             " MTP layer(s) counted from its mtp.layers.* tensors, as llama.cpp's "
                             "converter counts them");
        config.nextn_layers = static_cast<uint32_t>(counted);
        if (arch->set_layer_kinds) arch->set_layer_kinds(config);
        return;
    }
    if (config.nextn_layers == 0 || any) return;
    plan.notes.push_back(std::string("config.json: ") +
                         (arch->mtp_fold ? "num_nextn_predict_layers " : "mtp_num_hidden_layers ") +
                         std::to_string(config.nextn_layers) +
                         ", but the checkpoint holds no MTP tensor (mlx-lm drops them): written "
                         "without MTP layers, as llama.cpp's converter writes them with --no-mtp");
    config.nextn_layers = 0;
    if (arch->set_layer_kinds) arch->set_layer_kinds(config);
}

// --no-mtp: the main layers only, as the converter's class writes them with it; an input error
// for a class that does not take the option (the converter exits with an error). The MTP source
// tensors are left out in make_plan.
void leave_out_mtp_layers(const PlanOptions& options, Plan& plan) {
    if (!options.no_mtp) return;
    ModelConfig& config = plan.config;
    const Architecture* arch = arch::find_architecture(config.model_type);
    if (arch == nullptr) return;  // the unsupported model_type is the BLOCKER
    if (!arch->supports_no_mtp)
        throw Error(ExitClass::input, "--no-mtp", "",
                    "llama.cpp's converter takes it only for the families whose MTP layers it "
                    "writes (Qwen3.5 / 3.6, Qwen3-Next, GLM-4.5+, GLM-4.7-Flash, Nemotron-H), "
                    "not for this " +
                        std::string(arch->gguf_arch) + " checkpoint",
                    "one of those families, or no --no-mtp");
    config.nextn_layers = 0;
    config.nextn_layers_given = false;
    if (arch->set_layer_kinds) arch->set_layer_kinds(config);
}

// An MTP layer's source tensor: "mtp.*" (Qwen3.5, Qwen3-Next, Nemotron-H) or a layer at or past
// num_hidden_layers (GLM-4.5+, GLM-4.7-Flash).
bool is_mtp_source(const Architecture& arch, std::string_view hf_name, uint32_t num_hidden_layers) {
    if (arch::strip_model_prefix(hf_name).starts_with("mtp.")) return true;
    const auto layer = arch::hf_layer_index(arch, hf_name);
    return layer && *layer >= num_hidden_layers;
}

// True when a source tensor is the architecture's classifier head (cls.output).
bool has_classifier(const Architecture& arch, const SourceModel& source) {
    for (const SourceTensor& tensor : source.tensors)
        if (const auto ref = arch::resolve_hf(arch, tensor.name);
            ref && ref->spec->role == arch::SourceRole::classifier && !ref->is_bias)
            return true;
    return false;
}

uint64_t total_file_bytes(const SourceModel& source) {
    uint64_t total = 0;
    for (const auto& file : source.files) {
        if (file->mapping()) {
            total += file->mapping()->size();
        } else {
            std::error_code ec;
            const auto size = std::filesystem::file_size(file->path(), ec);
            if (!ec) total += size;
        }
    }
    return total;
}

}  // namespace

Plan make_plan(const SourceModel& source, const PlanOptions& options) {
    Plan plan;
    // config.json as the source reader read it (one parse per run); a SourceModel assembled in
    // memory has no ModelDir and reads the file.
    plan.config = source.model_dir && source.model_dir->has_config()
                      ? parse_model_config(source.model_dir->config())
                      : read_model_config(source.dir / "config.json");
    add_dense_features(source, plan.config);
    settle_mtp_layers(source, plan);
    plan.source_bytes = total_file_bytes(source);
    plan.blockers = source.blockers;
    leave_out_mtp_layers(options, plan);
    const ModelConfig& config = plan.config;
    {  // before anything is sized from a count of config.json
        std::vector<std::vector<int64_t>> shapes;
        for (const SourceTensor& tensor : source.tensors) shapes.push_back(tensor.shape);
        check_config_against_tensors(config, tensor_bounds(shapes));
    }
    if (config.num_hidden_layers > kLlamaMaxLayers || config.num_experts > kLlamaMaxExperts) {
        const bool layers = config.num_hidden_layers > kLlamaMaxLayers;
        plan.notes.push_back(
            std::string("config.json: ") + (layers ? "num_hidden_layers " : "num_experts ") +
            std::to_string(layers ? config.num_hidden_layers : config.num_experts) +
            " is more than stock llama.cpp loads (" +
            std::to_string(layers ? kLlamaMaxLayers : kLlamaMaxExperts) + ", " +
            (layers ? "LLAMA_MAX_LAYERS" : "LLAMA_MAX_EXPERTS") +
            "): the file is exact, but llama.cpp aborts when it loads it");
    }

    const Architecture* arch = arch::find_architecture(config.model_type);
    if (arch == nullptr) {
        plan.arch = config.model_type;
        plan.blockers.push_back(
            Blocker{"config.json: model_type",
                    "model_type '" + config.model_type +
                        "' is not supported (supported: " + arch::supported_model_types() + ")",
                    "convert a model of a supported architecture"});
        return plan;
    }
    plan.arch = std::string(arch->gguf_arch);
    // The non-parameter buffers llama.cpp's converter skips are left out whatever their dtype, so
    // a reader's refusal of one (an I64 embeddings.position_ids) blocks nothing.
    std::set<std::string> buffers;
    std::erase_if(plan.blockers, [&](const Blocker& blocker) {
        if (!arch::is_converter_buffer(*arch, blocker.tensor)) return false;
        buffers.insert(blocker.tensor);
        return true;
    });
    const std::vector<std::string> config_problems = arch::config_problems(*arch, config);
    for (const std::string& problem : config_problems)
        plan.blockers.push_back(
            Blocker{"config.json", problem, "use the config.json that belongs to these weights"});
    if (!config_problems.empty()) return plan;
    const arch::RopeScalingPlan rope = arch::plan_rope_scaling(*arch, config);
    if (rope.blocker)
        plan.blockers.push_back(Blocker{
            rope.blocker_field.empty() ? "config.json: rope_scaling" : rope.blocker_field,
            *rope.blocker,
            rope.blocker_fix.empty() ? "rebox carries only what llama.cpp's converter writes"
                                     : rope.blocker_fix});
    // An encoder with a classifier head is a reranker: its pooler is kept and it pools RANK.
    const bool reranker = arch->encoder && has_classifier(*arch, source);
    std::optional<PoolingType> pooling =
        reranker ? std::optional(PoolingType::RANK) : read_pooling(source.dir);
    if ((arch->encoder || arch->sentence_embedder) && !pooling)
        plan.blockers.push_back(Blocker{
            "modules.json",
            "no pooling type: the " + plan.arch + " checkpoint has no sentence-transformers " +
                "Pooling module" + (arch->encoder ? " and no classifier head" : "") +
                " (llama.cpp would silently take the last token's state)",
            "add the model's modules.json and 1_Pooling/config.json (pooling_mode_cls_token or "
            "pooling_mode_mean_tokens true), as its sentence-transformers release has them"});
    const std::optional<TokenizerVocab> vocab =
        read_vocab(source, config, options, &plan.blockers, &plan.notes);
    std::map<std::string, std::string> seen;                        // gguf name -> source name
    std::map<std::string, plan_detail::ExpertGroup> expert_groups;  // by gguf name
    std::map<std::string, plan_detail::FuseGroup> fuse_groups;      // by gguf name
    size_t left_out = 0, mtp_left_out = 0, no_mtp_left_out = 0;
    std::string mtp_unfolded;  // the first mtp.* tensor of a fold config.json counts no block for
    plan_detail::LayerScalars layer_scalars(*arch, config.num_hidden_layers);
    for (size_t i = 0; i < source.tensors.size(); ++i) {
        const SourceTensor& tensor = source.tensors[i];
        if (arch::is_converter_buffer(*arch, tensor.name)) {
            buffers.insert(tensor.name);
            continue;
        }
        if (const auto scalar = arch::match_layer_scalar(*arch, tensor.name)) {
            layer_scalars.take(tensor, *scalar, &plan.blockers);
            continue;
        }
        if (options.no_mtp && is_mtp_source(*arch, tensor.name, config.num_hidden_layers)) {
            ++no_mtp_left_out;
            continue;
        }
        if (const auto layer = arch::hf_layer_index(*arch, tensor.name);
            arch->drops_mtp_layers && layer && *layer >= config.num_hidden_layers) {
            ++mtp_left_out;
            continue;
        }
        // NemotronHModel folds the mtp.* tensors only when config.json counts the block.
        if (arch->mtp_fold && config.nextn_layers == 0 &&
            arch::strip_model_prefix(tensor.name).starts_with(arch->mtp_layer_prefix)) {
            if (mtp_unfolded.empty()) mtp_unfolded = tensor.name;
            continue;
        }
        const auto ref = arch::resolve_hf(*arch, tensor.name, config.num_hidden_layers);
        if ((!ref && arch::is_left_out(*arch, tensor.name)) ||
            (ref && ref->spec->role == arch::SourceRole::reranker_pooler && !reranker)) {
            ++left_out;
            continue;
        }
        if (!ref) {
            plan.blockers.push_back(Blocker{tensor.name, "no llama.cpp name for this tensor",
                                            "remove the tensor, or use a supported architecture"});
            continue;
        }

        const std::string& gguf_name = ref->gguf_name;
        // mlx-lm's split gate or up experts: planned once both halves are gathered.
        if (ref->spec->rows == arch::RowTransform::fused_gate_rows ||
            ref->spec->rows == arch::RowTransform::fused_up_rows) {
            plan_detail::FuseGroup& group = fuse_groups[gguf_name];
            group.gguf_name = gguf_name;
            std::optional<size_t>& slot =
                ref->spec->rows == arch::RowTransform::fused_gate_rows ? group.gate : group.up;
            if (slot) {
                plan.blockers.push_back(Blocker{
                    tensor.name,
                    "the same half of " + gguf_name + " as '" + source.tensors[*slot].name + "'",
                    "keep one of the two tensors"});
                continue;
            }
            slot = i;
            continue;
        }
        if (ref->expert) {  // one expert of a stacked tensor: planned once all are gathered
            if (*ref->expert >= config.num_experts) {
                plan.blockers.push_back(
                    Blocker{tensor.name,
                            "expert " + std::to_string(*ref->expert) +
                                " is beyond config.json num_experts = " +
                                std::to_string(config.num_experts),
                            "use the config.json that belongs to these weights"});
                continue;
            }
            plan_detail::ExpertGroup& group = expert_groups[gguf_name];
            if (group.sources.empty()) {
                group.gguf_name = gguf_name;
                // Spelled like the source's own names (with or without "model.").
                group.hf_pattern = std::string(tensor.name.starts_with("model.") ? "model." : "") +
                                   "layers." + std::to_string(*ref->layer) + "." +
                                   std::string(ref->spec->hf) + ".weight";
                group.sources.resize(config.num_experts);
            }
            std::optional<size_t>& slot = group.sources[*ref->expert];
            if (slot) {
                plan.blockers.push_back(
                    Blocker{tensor.name, "the same expert as '" + source.tensors[*slot].name + "'",
                            "keep one of the two tensors"});
                continue;
            }
            slot = i;
            continue;
        }
        // One GGUF tensor, or each part of a split one (deepseek2's kv_b_proj).
        const auto plan_part = [&](const arch::TensorRef& part) {
            const auto [it, inserted] = seen.emplace(part.gguf_name, tensor.name);
            if (!inserted) {
                plan.blockers.push_back(
                    Blocker{tensor.name, "maps to " + part.gguf_name + " like '" + it->second + "'",
                            "keep one of the two tensors"});
                return;
            }
            TensorPlan tensor_plan;
            // An MLX source's float norms already hold the + 1 when the architecture says so (a
            // quantized one keeps the transform, and so its BLOCKER: a norm is never a block type).
            const arch::ValueTransform values =
                part.spec->values == arch::ValueTransform::add_one && arch->mlx_norms_shifted &&
                        source.format == "mlx" && !tensor.is_quantized()
                    ? arch::ValueTransform::none
                    : part.spec->values;
            // A quantized gemma norm is refused for what it is, before any block-type reason.
            if (values != arch::ValueTransform::none && tensor.is_quantized()) {
                attach_value_transform(values, tensor, &tensor_plan, &plan.blockers);
                return;
            }
            const bool exact_f32 = part.spec->role == arch::SourceRole::router_f32 ||
                                   part.spec->role == arch::SourceRole::table_f32;
            const bool planned =
                exact_f32 ? plan_detail::plan_exact_f32(
                                tensor, i, part.gguf_name, plan.arch,
                                part.spec->role == arch::SourceRole::router_f32 ? "router"
                                : part.spec->squeeze                            ? "ssm_conv1d"
                                                     : "position / token-type table",
                                &tensor_plan, &plan.blockers, options.fp8_rounded_to.has_value())
                          : plan_detail::plan_tensor(tensor, i, part.gguf_name, options,
                                                     &tensor_plan, &plan.blockers);
            if (!planned) return;
            if (part.stacked_source && tensor_plan.ne.size() == 3 &&
                tensor_plan.ne[2] != static_cast<int64_t>(config.num_experts)) {
                plan.blockers.push_back(
                    Blocker{tensor.name,
                            "stacks " + std::to_string(tensor_plan.ne[2]) +
                                " experts but config.json num_experts is " +
                                std::to_string(config.num_experts),
                            "use the config.json that belongs to these weights"});
                return;
            }
            if (!attach_value_transform(values, tensor, &tensor_plan, &plan.blockers)) return;
            if (part.spec->rows == arch::RowTransform::first_vocab_rows &&
                !attach_vocab_slice(config, tensor, &tensor_plan, &plan.blockers))
                return;
            if (!attach_deinterleave(part.spec->rows, tensor, &tensor_plan, &plan.blockers)) return;
            if (!plan_detail::attach_qkvz_split(part.spec->rows, config, tensor,
                                                source_group(tensor), &tensor_plan, &plan.blockers))
                return;
            if (!plan_detail::attach_expert_transpose(part.spec->rows, tensor, &tensor_plan,
                                                      &plan.blockers))
                return;
            if (part.spec->rows == arch::RowTransform::skip_position_offset &&
                !attach_position_slice(config, tensor, &tensor_plan, &plan.blockers))
                return;
            if (!plan_detail::attach_mla_split(part.spec->rows, config, tensor, options,
                                               &tensor_plan, &plan.blockers))
                return;
            if (part.spec->squeeze) std::erase(tensor_plan.ne, int64_t{1});
            // The converter's reshape (Mamba2's A, D, norm): the same values in the GGUF's ne.
            if (part.spec->reshape) {
                const auto want = arch::expected_ne(*arch, config, part.gguf_name);
                int64_t have = 1, need = 1;
                for (const int64_t n : tensor_plan.ne) have *= n;
                for (const int64_t n : want.value_or(std::vector<int64_t>{})) need *= n;
                if (tensor.is_quantized()) {
                    plan.blockers.push_back(
                        Blocker{tensor.name,
                                "is quantized, and llama.cpp's converter reshapes it to " +
                                    part.gguf_name + " (no block type survives that)",
                                "use a checkpoint that keeps this tensor in floating point"});
                    return;
                }
                if (want && have == need) tensor_plan.ne = *want;
            }
            if (!check_against_config(*arch, config, tensor, tensor_plan, &plan.blockers)) return;
            if (!attach_row_transform(part.spec->rows, config, tensor, &tensor_plan,
                                      &plan.blockers))
                return;
            if (!attach_v_head_moves(part.spec->rows, config, tensor, &tensor_plan, &plan.blockers))
                return;
            plan.tensors.push_back(std::move(tensor_plan));
        };
        plan_part(*ref);
        for (const arch::TensorRef& part : arch::split_parts(*arch, *ref)) plan_part(part);
    }
    for (const auto& [gguf_name, group] : expert_groups) {
        const std::string first_name = arch::expert_name(group.hf_pattern, 0);
        const auto [it, inserted] = seen.emplace(gguf_name, first_name);
        if (!inserted) {
            plan.blockers.push_back(Blocker{first_name,
                                            "maps to " + gguf_name + " like '" + it->second + "'",
                                            "keep either the per-expert or the stacked tensors"});
            continue;
        }
        TensorPlan tensor_plan;
        if (!plan_detail::plan_expert_stack(source, group, options, &tensor_plan, &plan.blockers))
            continue;
        if (!check_against_config(*arch, config, source.tensors[tensor_plan.source_index],
                                  tensor_plan, &plan.blockers))
            continue;
        plan.tensors.push_back(std::move(tensor_plan));
    }
    for (const auto& [gguf_name, group] : fuse_groups) {
        const size_t first = group.gate ? *group.gate : *group.up;
        const auto [it, inserted] = seen.emplace(gguf_name, source.tensors[first].name);
        if (!inserted) {
            plan.blockers.push_back(Blocker{source.tensors[first].name,
                                            "maps to " + gguf_name + " like '" + it->second + "'",
                                            "keep either the fused or the split experts"});
            continue;
        }
        TensorPlan tensor_plan;
        if (!plan_detail::plan_expert_fuse(source, group, config.num_experts, options, &tensor_plan,
                                           &plan.blockers))
            continue;
        if (!check_against_config(*arch, config, source.tensors[tensor_plan.source_index],
                                  tensor_plan, &plan.blockers))
            continue;
        plan.tensors.push_back(std::move(tensor_plan));
    }
    if (left_out > 0 && arch->encoder)
        plan.notes.push_back(std::to_string(left_out) +
                             " tensor(s) llama.cpp's converter drops left out (masked-LM / "
                             "next-sentence heads" +
                             (reranker ? std::string(")") : std::string(", the pooler)")));
    else if (left_out > 0)
        plan.notes.push_back(std::to_string(left_out) +
                             " vision tower / multimodal projector tensor(s) left out: the " +
                             plan.arch +
                             " GGUF holds the text model only (llama.cpp's converter writes "
                             "them to a separate mmproj file)");
    if (!mtp_unfolded.empty())
        plan.blockers.push_back(Blocker{
            mtp_unfolded,
            "is an MTP tensor, but config.json has no num_nextn_predict_layers (or 0): " +
                plan.arch + "'s converter folds the mtp.* tensors only when it is 1",
            "use the config.json that belongs to these weights (num_nextn_predict_layers 1), or "
            "leave every mtp.* tensor out"});
    {  // rows the converter writes on an MTP layer that the loader creates on the trunk only
        std::vector<std::string> trunk_only;
        for (const TensorPlan& tensor : plan.tensors)
            if (const auto layer = arch::layer_of(tensor.gguf_name);
                layer && *layer >= config.num_hidden_layers)
                if (const auto ref = arch::resolve_gguf(*arch, tensor.gguf_name);
                    ref && ref->spec->trunk_only)
                    trunk_only.push_back(tensor.gguf_name);
        if (!trunk_only.empty())
            plan.notes.push_back(
                trunk_only.front() +
                (trunk_only.size() > 1 ? " and " + std::to_string(trunk_only.size() - 1) + " more"
                                       : std::string()) +
                " written on the MTP block as llama.cpp's converter writes them; llama.cpp's " +
                plan.arch +
                " loader creates no such tensor there and refuses the file (\"wrong number of "
                "tensors\"): convert with --no-mtp for a file it loads (the MTP block left "
                "out, as convert_hf_to_gguf.py --no-mtp writes it)");
    }
    if (no_mtp_left_out > 0)
        plan.notes.push_back(std::to_string(no_mtp_left_out) +
                             " multi-token-prediction tensor(s) left out (--no-mtp): block_count "
                             "counts the " +
                             std::to_string(config.num_hidden_layers) +
                             " main layers and no nextn_predict_layers is written, as "
                             "convert_hf_to_gguf.py --no-mtp writes the file");
    if (mtp_left_out > 0)
        plan.notes.push_back(std::to_string(mtp_left_out) +
                             " multi-token-prediction layer tensor(s) (layers from "
                             "num_hidden_layers on) left out, as llama.cpp's converter leaves "
                             "them out for " +
                             plan.arch);
    if (!buffers.empty()) plan.notes.push_back(buffers_note(buffers));
    // A tensor the reader refused (its blocker names it) is not reported missing a second time.
    for (const Blocker& blocker : source.blockers)
        if (const auto ref = arch::resolve_hf(*arch, blocker.tensor, config.num_hidden_layers))
            seen.emplace(ref->gguf_name, blocker.tensor);
    // A fused ffn_gate_up_exps may be stood in for by ffn_gate_exps beside ffn_up_exps.
    const auto stood_in = [&](const std::string& name) {
        const std::vector<std::string> alternatives = arch::required_alternatives(name);
        return !alternatives.empty() &&
               std::all_of(alternatives.begin(), alternatives.end(),
                           [&](const std::string& a) { return seen.count(a) != 0; });
    };
    for (const std::string& name : arch::required_tensors(*arch, config)) {
        if (!seen.count(name) && !stood_in(name))
            plan.blockers.push_back(Blocker{
                name,
                "the " + plan.arch + " graph requires " + name + " and no source tensor maps to it",
                "add the missing weight to the checkpoint"});
    }
    // A loader that takes the MTP layers all or nothing: with its probe tensor there, all of them.
    const std::string probe = "blk." + std::to_string(config.num_hidden_layers) + "." +
                              std::string(arch->mtp_probe) + ".weight";
    if (!arch->mtp_probe.empty() && config.nextn_layers != 0 && seen.count(probe))
        for (const std::string& name : arch::required_mtp_tensors(*arch, config))
            if (!seen.count(name))
                plan.blockers.push_back(Blocker{
                    name,
                    "the " + plan.arch + " loader loads the MTP layers once " + probe +
                        " is there, and then requires " + name + "; no source tensor maps to it",
                    "add the missing weight, or leave every MTP layer tensor out (a trunk-only "
                    "file loads)"});
    auto layer_scalar_kvs = layer_scalars.finish(&plan.blockers);
    plan_detail::plan_global_scales(source, options, plan);
    add_fallback_growth(source, plan);
    if (rope.rope_freqs) plan.tensors.push_back(computed_rope_freqs(config, rope.rope_freqs_kind));
    if (rope.rope_factors)
        for (const arch::ExtraTensor extra :
             {arch::ExtraTensor::rope_factors_long, arch::ExtraTensor::rope_factors_short})
            plan.tensors.push_back(computed_rope_factors(config, extra));
    std::stable_sort(
        plan.tensors.begin(), plan.tensors.end(), [arch](const TensorPlan& a, const TensorPlan& b) {
            return arch::output_rank(*arch, a.gguf_name) < arch::output_rank(*arch, b.gguf_name);
        });

    std::vector<GgufKV> card_kvs = plan_detail::card_kvs(source, options, plan.tensors);
    for (const GgufKV& kv : card_kvs)
        if (kv.key == "general.name" && vocab)
            check_phi3_name_tokens(*kv.value.as_string(), *vocab, &plan.blockers);

    ModelMetadataInput input;
    input.config = &config;
    input.vocab = vocab ? &*vocab : nullptr;
    input.pooling = pooling;
    input.file_type = file_type(plan, options);
    input.card_kvs = std::move(card_kvs);
    input.reranker = reranker;
    input.layer_scalar_kvs = std::move(layer_scalar_kvs);
    plan.kvs = build_model_metadata(input);
    for (GgufKV& kv : provenance_kvs(source, plan)) plan.kvs.push_back(std::move(kv));
    for (GgufKV& kv : fp8_rounding_kvs(source, options)) plan.kvs.push_back(std::move(kv));
    return plan;
}

}  // namespace rebox
