// verify_gguf: opens the GGUF (or split set) through GgufFile/GgufSet and the source through
// SafetensorsModel (mcq-v1; GPTQ / AWQ / compressed-tensors or MLX affine when config.json says so
// and no file has mcq metadata),
// pairs every GGUF tensor with its source tensor by the inverse name map, compares values bit for
// bit (own unpacking, own dequantizers), then checks the tensor set, KVs and layout. The report's
// max abs error covers the re-encoded (quantized-source) tensors; the summary line counts them and,
// apart, the copied (float-source) ones, so a float checkpoint's verdict says something too.
#include "verify/verify.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "arch/architecture.hpp"
#include "arch/tensor_names.hpp"
#include "format/gguf_file.hpp"
#include "format/gguf_shards.hpp"
#include "format/safetensors.hpp"
#include "progress_call.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "verify/arch/expected_shapes.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/arch/ref_transforms.hpp"
#include "verify/metadata/metadata_checks.hpp"
#include "verify/quantized/ref_imatrix.hpp"
#include "verify/quantized/ref_quantize.hpp"
#include "verify/quantized/requant_check.hpp"
#include "verify/sources/fp8_source_index.hpp"
#include "verify/sources/fused_experts_index.hpp"
#include "verify/sources/gpt_oss_source_index.hpp"
#include "verify/sources/mlx_source_index.hpp"
#include "verify/sources/nvidia_fp4_index.hpp"
#include "verify/sources/prequant_source_index.hpp"
#include "verify/sources/qkvz_index.hpp"
#include "verify/sources/ref_buffers.hpp"
#include "verify/sources/ref_config.hpp"
#include "verify/sources/ref_dense.hpp"
#include "verify/sources/source_index.hpp"
#include "verify/values/ref_dequant.hpp"
#include "verify/values/ref_expected.hpp"
#include "verify/values/ref_layer_scalars.hpp"
#include "verify/values/ref_rope.hpp"
#include "verify/values/value_checks.hpp"

namespace rebox {
namespace {

using verify_ref::RefConfig;
using verify_ref::shape_text;
using verify_ref::SourceIndex;
using verify_ref::SourceTensor;
using verify_ref::ValueJob;

// Shapes compare equal up to size-1 outer dims (ggml drops trailing 1s of ne, HF may keep them).
std::vector<int64_t> hf_order_shape(const std::vector<int64_t>& ne) {
    std::vector<int64_t> shape(ne.rbegin(), ne.rend());
    while (shape.size() > 1 && shape.front() == 1) shape.erase(shape.begin());
    return shape;
}

std::vector<int64_t> trimmed(std::vector<int64_t> shape) {
    while (shape.size() > 1 && shape.front() == 1) shape.erase(shape.begin());
    return shape;
}

// Sets check.problem when the pair cannot be compared, else fills job. vocab_slice (gemma3
// token_embd): the GGUF holds the first vocab_size rows of a source that may have more.
// skip_rows (xlm-roberta position_embd): the GGUF holds the source's rows after the first
// skip_rows, of a source that must have max_position_embeddings rows.
bool prepare_job(const GgufSet& gguf, const GgufSet::Tensor& tensor, const SourceTensor& source,
                 const RefConfig& config, bool vocab_slice, uint64_t skip_rows, TensorCheck& check,
                 ValueJob& job, bool squeeze = false,
                 const std::vector<int64_t>* part_shape = nullptr) {
    const GgufTensorInfo& info = *tensor.info;
    const std::string& file = gguf.shard(tensor.shard).display_name();
    if (!source.problem.empty()) {
        check.problem = source.problem;
        return false;
    }
    // The architecture fixes the shape; the source's own metadata is not trusted for it.
    const std::string hf_name = strip_model_prefix(source.name);
    if (!verify_ref::layer_in_range(config, hf_name)) {
        check.problem = error_message(
            source.file, source.name, "layer index out of range",
            "< " + std::to_string(config.num_hidden_layers) + " (config.json num_hidden_layers)");
        return false;
    }
    // The rows the GGUF must hold of the source: all, or for vocab_slice the first vocab_size.
    std::vector<int64_t> kept_shape = source.shape;
    if (vocab_slice && kept_shape.size() == 2 && kept_shape[0] > int64_t{config.vocab_size})
        kept_shape[0] = config.vocab_size;
    if (skip_rows != 0) {
        if (source.shape.size() != 2 ||
            source.shape[0] != int64_t{config.max_position_embeddings}) {
            check.problem =
                error_message(source.file, source.name, "source shape " + shape_text(source.shape),
                              std::to_string(config.max_position_embeddings) +
                                  " rows (config.json max_position_embeddings), the first " +
                                  std::to_string(skip_rows) + " of them left out");
            return false;
        }
        kept_shape[0] -= static_cast<int64_t>(skip_rows);
    }
    // A squeezed tensor (ssm_conv1d) may hold its size-1 dim anywhere: HF [channels, 1, kernel],
    // mlx-lm's sanitize [channels, kernel, 1]; the converter's squeeze drops it either way.
    const auto compared = [squeeze](std::vector<int64_t> shape) {
        if (squeeze) std::erase(shape, int64_t{1});
        return trimmed(std::move(shape));
    };
    if (const auto expected = verify_ref::expected_hf_shape(config, hf_name);
        expected && compared(*expected) != compared(kept_shape)) {
        check.problem = error_message(
            source.file, source.name,
            "source shape " + shape_text(source.shape) + " disagrees with config.json",
            shape_text(*expected));
        return false;
    }
    // ssm_conv1d: the converter squeezes [channels, 1, kernel] to [channels, kernel].
    if (squeeze) std::erase(kept_shape, int64_t{1});
    // A part of a split source (deepseek2's attn_k_b / attn_v_b): its own shape.
    if (part_shape != nullptr) kept_shape = *part_shape;
    // A lossy type (Q4_K, Q8_0, ...) holding a float source was quantized by the user's choice:
    // verify re-quantizes the source (check_quantized_tensor checks the data size itself). So is
    // an FP8 source on the lossy path (its values rounded as the converter rounds them).
    const bool fp8_rounded = source.fp8 && source.fp8_source.rounded_to.has_value();
    // A quantized source whose exact carriage is an F16 / F32 copy, which convert --quantize then
    // quantizes like a float tensor: an FP4 source in any block type but its own, the transposed
    // attn_k_b of a quantized kv_b_proj (no block type holds transposed groups), and any source in
    // a K or i-quant type (exact carriage uses Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 blocks only).
    const uint32_t type_id = ggml_type_id(info.type);
    const bool legacy_block = info.type == GgmlType::Q4_0 || info.type == GgmlType::Q4_1 ||
                              info.type == GgmlType::Q5_0 || info.type == GgmlType::Q5_1 ||
                              info.type == GgmlType::Q8_0;
    const bool fp4_block = info.type == GgmlType::MXFP4 || info.type == GgmlType::NVFP4;
    const bool from_exact_copy =
        source.quantized && !source.fp8 &&
        (source.fp4 ? !fp4_block : job.mla_part == 1 || (!legacy_block && !fp4_block));
    if (((!source.quantized && !source.prequant) || fp8_rounded || from_exact_copy) &&
        verify_ref::ref_quant_type_name(type_id) != nullptr) {
        if (hf_order_shape(info.ne) != trimmed(kept_shape)) {
            check.problem = error_message(
                file, info.name, "shape (ne reversed) " + shape_text(hf_order_shape(info.ne)),
                shape_text(kept_shape) + " from " + source.name);
            return false;
        }
        job.requantize = true;
        job.gguf_type = ggml_type_id(info.type);
        job.gguf_data = gguf.tensor_data(tensor);
        job.gguf_shard = tensor.shard;
        job.gguf_file_offset = gguf.shard(tensor.shard).data_offset() + info.offset;
        job.source = &source;
        job.values = info.element_count();
        return true;
    }
    verify_ref::DecodableType layout{};
    if (!verify_ref::decodable_type(ggml_type_id(info.type), &layout)) {
        check.problem =
            error_message(file, info.name, "type " + check.gguf_type + " cannot be decoded",
                          "Q4_1, Q5_1, Q4_0, Q5_0, Q8_0, MXFP4, NVFP4, F16, BF16 or F32");
        return false;
    }
    if (hf_order_shape(info.ne) != trimmed(kept_shape)) {
        check.problem = error_message(file, info.name,
                                      "shape (ne reversed) " + shape_text(hf_order_shape(info.ne)),
                                      shape_text(kept_shape) + " from " + source.name);
        return false;
    }
    const uint64_t values = info.element_count();
    const std::span<const uint8_t> data = gguf.tensor_data(tensor);
    if (values % layout.block_size != 0 ||
        data.size() != values / layout.block_size * layout.block_bytes) {
        check.problem = error_message(
            file, info.name, "data size " + std::to_string(data.size()),
            std::to_string(values / layout.block_size * layout.block_bytes) + " bytes");
        return false;
    }
    if (skip_rows != 0) job.source_skip = skip_rows * static_cast<uint64_t>(source.shape[1]);
    job.gguf_type = ggml_type_id(info.type);
    job.gguf_data = data;
    job.gguf_shard = tensor.shard;
    job.gguf_file_offset = gguf.shard(tensor.shard).data_offset() + info.offset;
    job.source = &source;
    job.values = values;
    return true;
}

// Linear attention's value-head reorder (ref_linear_attention.hpp), done by the converter only
// when the key and value head counts differ: which rows (row_values values each) or which column
// blocks move, in units of what. False with check.problem when the tensor is not those heads.
bool set_v_head_moves(verify_ref::RefRows rows, const RefConfig& config, const std::string& file,
                      const GgufTensorInfo& info, TensorCheck& check, ValueJob& job) {
    const RefConfig::LinearAttention l = config.linear.value_or(RefConfig::LinearAttention{});
    if (l.key_heads == 0 || l.value_heads % l.key_heads != 0) {
        check.problem = error_message(file, info.name, "value heads do not group under key heads",
                                      "linear_num_value_heads a multiple of linear_num_key_heads");
        return false;
    }
    if (l.key_heads == l.value_heads) return true;
    const uint64_t row_values = info.ne.empty() || info.ne.size() == 1 ? 1 : info.ne[0];
    const uint64_t row_count = job.values / row_values;
    uint64_t first = 0, unit = l.value_head_dim, span = row_count;
    if (rows == verify_ref::RefRows::v_heads_after_qk)
        first = 2 * uint64_t{l.key_heads} * l.key_head_dim;
    if (rows == verify_ref::RefRows::v_heads_single) unit = 1;
    if (rows == verify_ref::RefRows::v_heads_columns) span = row_values;
    if (span != first + uint64_t{l.value_heads} * unit) {
        check.problem =
            error_message(file, info.name,
                          std::to_string(span) +
                              (rows == verify_ref::RefRows::v_heads_columns ? " columns" : " rows"),
                          std::to_string(first) + " + " + std::to_string(l.value_heads) +
                              " value heads of " + std::to_string(unit));
        return false;
    }
    job.row_values = row_values;
    job.vhead_first = first;
    job.vhead_unit = unit;
    job.vhead_key_heads = l.key_heads;
    job.vhead_value_heads = l.value_heads;
    job.vhead_columns = rows == verify_ref::RefRows::v_heads_columns;
    return true;
}

// The row layout of a tensor the architecture permutes and the gemma norm shift (verify's own
// table, ref_transforms.hpp; the permutation itself ref_rope.hpp). False with check.problem when
// the rows cannot be heads.
bool set_row_transform(const verify_ref::RefArch& arch, const RefConfig& config,
                       const std::string& file, const GgufTensorInfo& info, TensorCheck& check,
                       ValueJob& job, bool mlx_source) {
    const verify_ref::RefTransform transform = verify_ref::ref_transform(arch.gguf_arch, info.name);
    if (transform.plus_one && !(mlx_source && arch.mlx_norms_shifted)) {
        if (job.source->quantized) {
            check.problem = error_message(file, info.name, "source is quantized",
                                          "a float norm weight (its GGUF value is weight + 1)");
            return false;
        }
        job.norm_plus_one = true;
    }
    if (transform.neg_exp) {
        if (job.source->quantized) {
            check.problem = error_message(file, info.name, "source is quantized",
                                          "a float A_log (its GGUF value is -exp(A_log))");
            return false;
        }
        job.neg_exp = true;
    }
    if (transform.rows == verify_ref::RefRows::v_heads_after_qk ||
        transform.rows == verify_ref::RefRows::v_heads_rows ||
        transform.rows == verify_ref::RefRows::v_heads_single ||
        transform.rows == verify_ref::RefRows::v_heads_columns)
        return set_v_head_moves(transform.rows, config, file, info, check, job);
    if (transform.rows != verify_ref::RefRows::rope_q_heads &&
        transform.rows != verify_ref::RefRows::rope_kv_heads)
        return true;
    const uint64_t heads = transform.rows == verify_ref::RefRows::rope_q_heads
                               ? config.num_attention_heads
                               : config.num_key_value_heads;
    const uint64_t rows = info.ne.size() == 1 ? info.ne[0] : info.ne[1];
    if (heads == 0 || rows == 0 || rows % heads != 0 || (rows / heads) % 2 != 0) {
        check.problem = error_message(file, info.name,
                                      std::to_string(rows) + " rows are not heads of an even size",
                                      std::to_string(heads) + " heads");
        return false;
    }
    job.rope_head_rows = rows / heads;
    job.row_values = job.values / rows;
    return true;
}

// A tensor with no source tensor: its values follow from config.json (llama3 rope_freqs, phi3
// rope_factors_long/short), computed by verify's own code (ref_rope.hpp).
struct GeneratedTensor {
    std::vector<float> values;
    std::string source;   // what the values come from, for the report
    std::string problem;  // non-empty: config.json cannot give the values
    bool seen = false;
    // compressed-tensors NVFP4 .scale: fl32(1/g) is off from 1/g by this much (relative); or a
    // folded factor's F32 products off from the exact ones (`inexact_what` says which).
    double inexact_error = 0;
    std::string inexact_what = "fl32(1/global_scale) is off from 1/global_scale";
};

// A comparison's outcome in the tensor's check: the mismatch count, the largest error and the
// first differing value's bits.
void record_comparison(const verify_ref::CompareResult& result, TensorCheck& check) {
    check.mismatches = result.mismatches;
    check.identical = result.mismatches == 0;
    check.max_abs_error = result.max_abs_error;
    if (result.mismatches > 0) {
        check.first_diff = result.first_diff;
        check.expected_bits = result.expected_bits;
        check.got_bits = result.got_bits;
    }
}

void check_generated(const GgufSet& gguf, const GgufSet::Tensor& tensor,
                     const GeneratedTensor& generated, TensorCheck& check) {
    const GgufTensorInfo& info = *tensor.info;
    const std::string& file = gguf.shard(tensor.shard).display_name();
    check.source_name = generated.source;
    check.generated = true;
    if (!generated.problem.empty()) {
        check.problem = error_message(file, info.name, generated.problem);
        return;
    }
    const std::vector<float>& expected = generated.values;
    const std::span<const uint8_t> data = gguf.tensor_data(tensor);
    if (info.type != GgmlType::F32 || info.ne != std::vector<int64_t>{int64_t(expected.size())} ||
        data.size() != 4 * expected.size()) {
        check.problem = error_message(file, info.name, "type/shape",
                                      "F32 [" + std::to_string(expected.size()) + "]");
        return;
    }
    std::vector<float> got(expected.size());
    std::memcpy(got.data(), data.data(), data.size());
    verify_ref::CompareResult result;
    verify_ref::compare_values(expected, got, 0, result);
    record_comparison(result, check);
    if (check.identical && generated.inexact_error > 0) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "not bit-identical: %s by %.3g relative (--allow-inexact-global-scale)",
                      generated.inexact_what.c_str(), generated.inexact_error);
        check.identical = false;
        check.not_bit_identical = text;
    }
}

// ModelOpt / compressed-tensors NVFP4: each weight's per-tensor factor other than 1 must be in
// the GGUF as F32 <weight>.scale ([1], or [num_experts] for stacked experts), and only where
// llama.cpp's graph of the architecture multiplies it in (verify's own table).
// Gemma4Model._generate_nvfp4_tensors: router.per_expert_scale of layer N multiplied into each of
// layer N's down_proj experts' factors (an F32 product, s() * r()[i]); the factor source is then
// no tensor of its own (its name goes to `folded`). Returns the largest relative distance of a
// product from the exact one (0: every product exact).
double fold_down_exps_factor(const verify_ref::RefArch& ref_arch, const SourceIndex& index,
                             const std::string& weight, std::vector<float>& values,
                             std::set<std::string>& folded, bool& done) {
    done = false;
    constexpr std::string_view kDown = ".ffn_down_exps.weight";
    if (ref_arch.nvfp4_down_exps_factor.empty() || !weight.starts_with("blk.") ||
        !weight.ends_with(kDown))
        return 0;
    const std::string layer = weight.substr(4, weight.size() - 4 - kDown.size());
    const std::string name = "layers." + layer + "." + std::string(ref_arch.nvfp4_down_exps_factor);
    const auto found = index.by_stripped_name.find(name);
    if (found == index.by_stripped_name.end()) return 0;
    const SourceTensor& entry = index.entries[found->second];
    if (!entry.problem.empty() || entry.quantized || entry.prequant || entry.fp4 || entry.fp8 ||
        entry.element_count != values.size())
        return 0;  // reported as that tensor's own problem
    std::vector<float> r(values.size());
    verify_ref::expected_from_float(entry.float_dtype, entry.float_data, 0, r);
    double worst = 0;
    for (size_t e = 0; e < values.size(); ++e) {
        const float product = values[e] * r[e];
        const double exact = static_cast<double>(values[e]) * static_cast<double>(r[e]);
        if (static_cast<double>(product) != exact)
            worst =
                std::max(worst, std::abs(static_cast<double>(product) - exact) / std::abs(exact));
        values[e] = product;
    }
    folded.insert(entry.name);
    done = true;
    return worst;
}

void add_wanted_scales(const arch::Architecture& arch, const verify_ref::RefArch& ref_arch,
                       const RefConfig& config, const SourceIndex& index, const GgufSet& gguf,
                       std::map<std::string, GeneratedTensor>& wanted,
                       std::set<std::string>& folded) {
    std::map<std::string, std::pair<std::vector<float>, double>> scales;  // by GGUF weight
    std::map<std::string, std::string> first_source;
    for (const SourceTensor& entry : index.entries) {
        if (!entry.has_scale2 || !entry.problem.empty()) continue;
        if (ref_arch.drops_mtp_layers &&
            verify_ref::hf_layer_at_or_past(strip_model_prefix(entry.name),
                                            config.num_hidden_layers))
            continue;  // an MTP layer DeepseekV2Model leaves out, its factor with it
        const auto ref = arch::resolve_hf(arch, entry.name, config.num_hidden_layers);
        if (!ref) continue;  // reported as an unmapped source tensor
        auto& [values, error] = scales[ref->gguf_name];
        const size_t slot = ref->expert ? *ref->expert : 0;
        if (values.empty()) values.assign(ref->expert ? config.num_experts : 1, 1.0f);
        if (slot < values.size()) values[slot] = entry.scale2;
        error = std::max(error, entry.scale2_error);
        first_source.emplace(ref->gguf_name, entry.name);
    }
    for (auto& [weight, pair] : scales) {
        auto& [values, error] = pair;
        bool done = false;
        const double fold_error =
            fold_down_exps_factor(ref_arch, index, weight, values, folded, done);
        bool all_one = true;
        for (const float v : values) all_one &= v == 1.0f;
        if (all_one) continue;  // llama.cpp's converter writes no trivial scale
        const std::string name = weight.substr(0, weight.size() - 7) + ".scale";
        GeneratedTensor g;
        g.values = values;
        g.source = first_source[weight] + " per-tensor factor";
        g.inexact_error = std::max(error, fold_error);
        if (done) {
            g.source += " times " + std::string(ref_arch.nvfp4_down_exps_factor);
            if (error == 0)
                g.inexact_what = "fl32(weight_scale_2 * " +
                                 std::string(ref_arch.nvfp4_down_exps_factor) +
                                 "[e]) is off from the exact product";
        }
        const GgufSet::Tensor* stored = gguf.find_tensor(weight);
        if (!verify_ref::ref_graph_applies_scale(ref_arch.gguf_arch, weight))
            g.problem = "the source's per-tensor factor is not 1 and llama.cpp's " +
                        std::string(ref_arch.gguf_arch) + " graph ignores " + name +
                        " (the model computes something else)";
        else if (weight == "output.weight" && stored && stored->info->type != GgmlType::NVFP4)
            g.problem = "the source's per-tensor factor is not 1 and llama.cpp reads " + name +
                        " only beside an NVFP4 output.weight (this one is " +
                        ggml_type_name(stored->info->type) + ")";
        wanted[name] = std::move(g);
    }
}

// The per-expert sources of a stacked GGUF tensor (pattern with "{e}", e = 0..E-1 from
// config.json num_experts), each checked alone (usable, layer in range, shape from config.json,
// the same shape as expert 0). Fills `stacked` as the entry of the whole [E, rows, cols] tensor
// the GGUF tensor is compared against; false with check.problem otherwise.
bool gather_experts(const SourceIndex& index, const std::string& pattern, const RefConfig& config,
                    std::vector<size_t>& times_used, std::vector<const SourceTensor*>& experts,
                    SourceTensor& stacked, TensorCheck& check) {
    for (uint32_t e = 0; e < config.num_experts; ++e) {
        const std::string name = arch::expert_name(pattern, e);
        const auto found = index.by_stripped_name.find(name);
        if (found == index.by_stripped_name.end()) {
            if (check.problem.empty())
                check.problem = error_message(
                    name, "expert " + std::to_string(e), "missing from the source",
                    std::to_string(config.num_experts) + " experts (config.json num_experts)");
            continue;
        }
        ++times_used[found->second];
        const SourceTensor& entry = index.entries[found->second];
        experts.push_back(&entry);
        if (!check.problem.empty()) continue;
        const std::string hf_name = strip_model_prefix(entry.name);
        const auto expected = verify_ref::expected_hf_shape(config, hf_name);
        if (!entry.problem.empty()) {
            check.problem = entry.problem;
        } else if (!verify_ref::layer_in_range(config, hf_name)) {
            check.problem = error_message(entry.file, entry.name, "layer index out of range",
                                          "< " + std::to_string(config.num_hidden_layers));
        } else if (expected && trimmed(*expected) != trimmed(entry.shape)) {
            check.problem = error_message(
                entry.file, entry.name,
                "source shape " + shape_text(entry.shape) + " disagrees with config.json",
                shape_text(*expected));
        } else if (entry.shape != experts.front()->shape ||
                   entry.quantized != experts.front()->quantized) {
            check.problem = error_message(entry.file, entry.name,
                                          "expert differs in shape or kind from expert 0",
                                          shape_text(experts.front()->shape));
        }
    }
    if (!check.problem.empty() || experts.empty()) {
        if (check.problem.empty())
            check.problem = error_message(pattern, "experts", "none (config.json num_experts 0)",
                                          "at least one");
        return false;
    }
    stacked = *experts.front();
    stacked.name = pattern;
    stacked.shape.insert(stacked.shape.begin(), static_cast<int64_t>(experts.size()));
    stacked.element_count = experts.front()->element_count * experts.size();
    return true;
}

// gemma4 from MLX: the fused experts.gate_up_proj [E, 2F, cols] the converter writes, read from
// mlx-lm's switch_glu gate and up halves ([E, F, cols] each, sanitize's split of dim -2): GGUF
// expert e is the gate's expert e, then the up's. `fused` becomes the stand-in entry (the gate's
// storage under the fused name and shape), `job` gets the pieces.
bool pair_switch_glu(const SourceIndex& index, const std::string& fused_name,
                     const verify_ref::SwitchGluNames& names, const RefConfig& config,
                     std::vector<size_t>& times_used, SourceTensor& fused, ValueJob& job,
                     TensorCheck& check) {
    const SourceTensor* halves[2] = {nullptr, nullptr};
    const std::string* wanted[2] = {&names.gate_or_down, &names.up};
    for (size_t k = 0; k < 2; ++k) {
        const auto found = index.by_stripped_name.find(*wanted[k]);
        if (found == index.by_stripped_name.end()) {
            check.problem =
                error_message(*wanted[k], fused_name + "'s " + (k ? "up" : "gate") + " half",
                              "missing from the source",
                              "experts.switch_glu.gate_proj and up_proj both, as "
                              "mlx-lm's sanitize splits gate_up_proj");
            return false;
        }
        ++times_used[found->second];
        halves[k] = &index.entries[found->second];
    }
    for (const SourceTensor* half : halves) {
        if (!half->problem.empty()) {
            check.problem = half->problem;
            return false;
        }
        const auto expected = verify_ref::expected_hf_shape(config, strip_model_prefix(half->name));
        if (!expected || half->shape.size() != 3 || trimmed(*expected) != trimmed(half->shape)) {
            check.problem = error_message(
                half->file, half->name,
                "source shape " + shape_text(half->shape) + " disagrees with config.json",
                expected ? shape_text(*expected) : "[num_experts, moe_intermediate_size, hidden]");
            return false;
        }
    }
    const SourceTensor& gate = *halves[0];
    const SourceTensor& up = *halves[1];
    if (gate.quantized != up.quantized || gate.prequant != up.prequant || gate.fp4 != up.fp4 ||
        gate.fp8 != up.fp8 || (!gate.quantized && gate.float_dtype != up.float_dtype)) {
        check.problem = error_message(up.file, up.name, "stored unlike " + gate.name,
                                      "the same storage for both halves");
        return false;
    }
    const uint64_t experts = static_cast<uint64_t>(gate.shape[0]);
    const uint64_t half_values = gate.element_count / experts;
    fused = gate;
    fused.name = fused_name;
    fused.shape = {gate.shape[0], 2 * gate.shape[1], gate.shape[2]};
    fused.element_count = 2 * gate.element_count;
    for (uint64_t e = 0; e < experts; ++e)
        for (const SourceTensor* half : halves) {
            job.experts.push_back(half);
            job.expert_firsts.push_back(e * half_values);
        }
    job.expert_values = half_values;
    return true;
}

// The tensors config.json asks the architecture to generate, by GGUF name (verify's own table of
// which architecture computes which, ref_transforms.hpp).
std::map<std::string, GeneratedTensor> wanted_generated(const verify_ref::RefArch& arch,
                                                        const RefConfig& config) {
    std::map<std::string, GeneratedTensor> wanted;
    if (config.rope_scaling && arch.llama3_rope_freqs) {
        std::string type = config.rope_scaling->type;
        for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (type == "llama3")
            wanted["rope_freqs.weight"] = {
                verify_ref::expected_llama3_rope_freqs(config), "config.json rope_scaling", {}};
    }
    if (arch.proportional_rope_freqs && config.full_layers)
        wanted["rope_freqs.weight"] = {verify_ref::expected_proportional_rope_freqs(config),
                                       "config.json rope_parameters.full_attention",
                                       {}};
    if (arch.phi3_rope_factors)
        if (const auto rope = verify_ref::expected_phi3_long_rope(config)) {
            wanted["rope_factors_long.weight"] = {
                rope->long_factors, "config.json rope_scaling.long_factor", rope->problem};
            wanted["rope_factors_short.weight"] = {
                rope->short_factors, "config.json rope_scaling.short_factor", rope->problem};
        }
    return wanted;
}

// Runs what is left of the value checks; the caller's callback sees units done / all units from
// one ticker thread, and returning false cancels.
void run_with_progress(verify_ref::UnitScheduler& scheduler, unsigned threads,
                       const ProgressCallback& progress) {
    if (!progress) return scheduler.run_all(threads);
    const auto cancelled = [] {
        return std::make_exception_ptr(
            Error(ExitClass::cancelled, "", "", "cancelled by the progress callback"));
    };
    std::atomic<bool> running{true};
    std::thread ticker([&] {
        try {
            while (running.load()) {
                if (!call_progress(progress, Progress{"verify", scheduler.units_done(),
                                                      scheduler.unit_count()})) {
                    scheduler.cancel(cancelled());
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        } catch (...) {  // the callback threw: call_progress made it an Error
            scheduler.cancel(std::current_exception());
        }
    });
    try {
        scheduler.run_all(threads);
    } catch (...) {
        running = false;
        ticker.join();
        throw;
    }
    running = false;
    ticker.join();
    if (!call_progress(progress,
                       Progress{"verify", scheduler.unit_count(), scheduler.unit_count()}))
        std::rethrow_exception(cancelled());
}

}  // namespace

bool VerifyReport::ok() const {
    if (!problems.empty()) return false;
    for (const TensorCheck& t : tensors)
        if (!t.identical && (t.not_bit_identical.empty() || !t.problem.empty() || t.mismatches))
            return false;
    return true;
}

std::string VerifyReport::summary() const {
    std::string inexact;
    for (const TensorCheck& t : tensors)
        if (!t.not_bit_identical.empty()) inexact += (inexact.empty() ? "" : ", ") + t.gguf_name;
    char error_text[32];
    if (max_abs_error == 0.0)
        std::snprintf(error_text, sizeof error_text, "0.0");
    else
        std::snprintf(error_text, sizeof error_text, "%g", max_abs_error);
    return "re-encoded tensors bit-identical: " + std::to_string(re_encoded_identical) + "/" +
           std::to_string(re_encoded_total) + ", max abs error " + error_text +
           "; copied tensors bit-identical: " + std::to_string(copied_identical) + "/" +
           std::to_string(copied_total) +
           (generated_total == 0
                ? std::string()
                : "; generated tensors bit-identical: " + std::to_string(generated_identical) +
                      "/" + std::to_string(generated_total)) +
           (requantized_total == 0
                ? std::string()
                : "; re-quantized tensors identical to the reference quantizer: " +
                      std::to_string(requantized_identical) + "/" +
                      std::to_string(requantized_total) +
                      (requantized_full ? " (every block)" : " (sampled)")) +
           (inexact.empty() ? std::string()
                            : "; NOT bit-identical by request (--allow-inexact-global-scale, "
                              "a per-tensor factor GGUF holds only rounded to F32): " +
                                  inexact);
}

// config.json as verify reads it, with the Dense modules' features of a gemma-embedding model.
RefConfig read_config(const std::filesystem::path& model_dir) {
    RefConfig config = verify_ref::read_ref_config(model_dir / "config.json");
    verify_ref::read_ref_dense(model_dir, config);
    return config;
}

// Everything verify needs between pairing and the verdict: the opened files, the jobs and the
// report being filled.
struct VerifySession::State {
    GgufSet gguf;
    RefConfig config;
    SafetensorsModel model;
    unsigned threads = 1;
    ProgressCallback progress;
    std::optional<std::string> tokenizer_pre;
    bool reranker = false;  // an encoder source with a classifier head
    std::vector<verify_ref::RefLayerScalarKv> layer_scalars;  // the array KVs the source gives
    VerifyReport report;
    SourceIndex index;
    bool mlx_source = false;  // an MLX checkpoint (config.json "quantization")
    std::vector<ValueJob> jobs;
    std::vector<size_t> job_tensor;                 // job -> report.tensors index
    std::vector<ValueJob> requant_jobs;             // lossy tensors of float sources
    std::vector<size_t> requant_tensor;             // requant job -> report.tensors index
    std::vector<uint64_t> requant_row_values;       // requant job -> the GGUF tensor's ne[0]
    std::vector<uint64_t> requant_experts;          // requant job -> its ne[2] (1 for 2-D)
    std::optional<verify_ref::RefImatrix> imatrix;  // VerifyOptions::imatrix, read by verify
    bool full = false;                              // VerifyOptions::full
    std::deque<SourceTensor> stacked_entries;       // whole-stack entries of per-expert sources
    std::map<std::string, GeneratedTensor> generated;
    struct GeneratedCheck {
        const GgufSet::Tensor* tensor;
        const GeneratedTensor* wanted;
        size_t check;  // report.tensors index
    };
    std::vector<GeneratedCheck> generated_checks;  // checked in finish(): their bytes come late
    std::vector<const MappedFile*> mappings;  // read pages leave the resident set as units finish
    // The lossy tensors' re-quantization: its units run by the scheduler beside the value units.
    std::vector<verify_ref::RequantTask> requant_tasks;
    std::unique_ptr<verify_ref::RequantChecker> requant;
    std::unique_ptr<verify_ref::UnitScheduler> scheduler;
    // gemma-embedding's Dense module files (index entries point into them).
    std::vector<std::shared_ptr<const SafetensorsFile>> dense_files;

    State(GgufSet set, RefConfig model_config, SafetensorsModel safetensors)
        : gguf(std::move(set)), config(std::move(model_config)), model(std::move(safetensors)) {}
};

VerifySession::VerifySession(const std::filesystem::path& model_dir, GgufSet gguf_set,
                             const VerifyOptions& options)
    : model_dir_(model_dir) {
    RefConfig config = read_config(model_dir);
    state_ = std::make_unique<State>(std::move(gguf_set), std::move(config),
                                     SafetensorsModel::open(model_dir));
    pair_tensors(options);
}

VerifySession::VerifySession(const ModelDir& model_dir, GgufSet gguf_set,
                             const VerifyOptions& options)
    : model_dir_(model_dir.path()),
      state_(std::make_unique<State>(std::move(gguf_set), read_config(model_dir.path()),
                                     model_dir.safetensors())) {
    pair_tensors(options);
}

void VerifySession::pair_tensors(const VerifyOptions& options) {
    const std::filesystem::path& model_dir = model_dir_;
    State& s = *state_;
    const GgufSet& gguf = s.gguf;
    const RefConfig& config = s.config;
    const SafetensorsModel& model = s.model;
    const std::string& file = gguf.shard(0).display_name();
    const arch::Architecture* arch = arch::find_architecture(config.model_type);
    if (arch == nullptr)
        throw Error(ExitClass::input, "config.json", "model_type",
                    "'" + config.model_type + "' is not supported", arch::supported_model_types());
    // verify's own record of the architecture (verify/arch/): shapes, transforms, KVs.
    const verify_ref::RefArch* ref_arch = verify_ref::find_ref_arch(config.model_type);
    if (ref_arch == nullptr)
        throw Error(ExitClass::input, "config.json", "model_type",
                    "'" + config.model_type + "' has no verify record",
                    arch::supported_model_types());
    VerifyReport& report = s.report;
    // The imatrix first: a file verify cannot read is one line before any tensor is looked at.
    if (options.imatrix) s.imatrix = verify_ref::read_ref_imatrix(*options.imatrix);
    const verify_ref::PrequantConfig prequant =
        verify_ref::read_prequant_config(model_dir / "config.json");
    const auto nvidia_fp4 = verify_ref::nvidia_fp4_layout(model_dir);
    const auto fp8_layout = verify_ref::fp8_layout(model_dir / "config.json");
    s.index = fp8_layout   ? verify_ref::index_fp8_source(model, *fp8_layout)
              : nvidia_fp4 ? verify_ref::index_nvidia_fp4_source(model, *nvidia_fp4)
              : verify_ref::is_gpt_oss_source(model_dir / "config.json")
                  ? verify_ref::index_gpt_oss_source(model)
              : verify_ref::is_prequant_source(model, prequant)
                  ? verify_ref::index_prequant_source(model, prequant)
              : (s.mlx_source = verify_ref::is_mlx_source(model, model_dir / "config.json"))
                  ? verify_ref::index_mlx_source(model, model_dir / "config.json")
                  : verify_ref::index_source(model);
    SourceIndex& index = s.index;
    // convert --quantize's lossy path from FP8 (rebox.fp8.rounded_to): every FP8 product rounded
    // as llama.cpp's converter rounds it into the file llama-quantize quantizes.
    if (const GgufValue* rounded = gguf.find("rebox.fp8.rounded_to");
        rounded && rounded->as_string()) {
        const std::string& type = *rounded->as_string();
        std::optional<verify_ref::SourceFloat> to;
        if (type == "F16") to = verify_ref::SourceFloat::F16;
        if (type == "BF16") to = verify_ref::SourceFloat::BF16;
        if (type == "F32") to = verify_ref::SourceFloat::F32;
        if (!to)
            report.problems.push_back(error_message(gguf.shard(0).display_name(),
                                                    "rebox.fp8.rounded_to", "is '" + type + "'",
                                                    "F32, F16 or BF16"));
        for (SourceTensor& entry : index.entries)
            if (entry.fp8) entry.fp8_source.rounded_to = to;
    }
    // mlx-lm's sanitize drops every "mtp.*" tensor while config.json keeps mtp_num_hidden_layers:
    // a checkpoint holding none is written without MTP layers (the converter's --no-mtp).
    if (!ref_arch->mtp_prefix.empty() && s.config.mtp_layers != 0 &&
        std::none_of(index.entries.begin(), index.entries.end(), [&](const SourceTensor& entry) {
            return strip_model_prefix(entry.name).starts_with(ref_arch->mtp_prefix);
        }))
        s.config.mtp_layers = 0;
    // _QwenMtpMixin: config.json without mtp_num_hidden_layers (Qwen3-Next's) counts the
    // checkpoint's "mtp.layers.K" (the largest K + 1).
    if (!ref_arch->mtp_prefix.empty() && s.config.mtp_layers == 0 && !ref_arch->mtp_fold)
        s.config.mtp_layers = verify_ref::counted_mtp_layers(index, ref_arch->mtp_prefix);
    // convert --no-mtp: the main layers only, no nextn_predict_layers.
    if (options.no_mtp) {
        s.config.mtp_layers = 0;
        s.config.nextn_given = false;
    }
    if (ref_arch->fused_experts)
        verify_ref::split_fused_experts(index, ref_arch->fused_experts_transposed);
    if (ref_arch->qkvz_split) verify_ref::split_qkvz(index, s.config);
    s.dense_files = verify_ref::index_ref_dense(model_dir, s.config, index);
    {  // config.json's counts against the source's own shapes, before anything is sized by them
        std::vector<std::vector<int64_t>> shapes;
        for (const SourceTensor& entry : index.entries) shapes.push_back(entry.shape);
        verify_ref::check_ref_config_against_shapes(config, shapes);
    }
    s.generated = wanted_generated(*ref_arch, config);
    std::set<std::string> folded;  // sources multiplied into a generated factor
    add_wanted_scales(*arch, *ref_arch, config, index, gguf, s.generated, folded);
    std::map<std::string, GeneratedTensor>& generated = s.generated;
    report.problems = std::move(index.problems);
    s.layer_scalars = verify_ref::expected_layer_scalars(*ref_arch, config.num_hidden_layers, index,
                                                         report.problems);
    // An encoder's pooler is part of the file only next to a classifier head (a reranker).
    bool& reranker = s.reranker;
    for (const SourceTensor& entry : index.entries)
        if (const auto ref = arch::resolve_hf(*arch, entry.name, config.num_hidden_layers);
            ref_arch->encoder && ref && ref->spec->role == arch::SourceRole::classifier)
            reranker = true;
    const auto dropped = [&](const SourceTensor& entry) {
        if (folded.count(entry.name)) return true;  // part of a generated .scale
        if (verify_ref::is_skipped_buffer(ref_arch->bert_model_class, entry.name)) return true;
        if (arch::is_left_out(*arch, entry.name)) return true;
        if (verify_ref::match_ref_layer_scalar(*ref_arch, entry.name)) return true;  // a KV
        if (ref_arch->drops_mtp_layers &&
            verify_ref::hf_layer_at_or_past(strip_model_prefix(entry.name),
                                            config.num_hidden_layers))
            return true;  // an MTP layer DeepseekV2Model leaves out
        // --no-mtp: "mtp.*" (Qwen3.5, Qwen3-Next, Nemotron-H), or a layer at or past
        // num_hidden_layers (GLM).
        if (options.no_mtp && (strip_model_prefix(entry.name).starts_with("mtp.") ||
                               verify_ref::hf_layer_at_or_past(strip_model_prefix(entry.name),
                                                               config.num_hidden_layers)))
            return true;
        const auto ref = arch::resolve_hf(*arch, entry.name, config.num_hidden_layers);
        return ref && ref->spec->role == arch::SourceRole::reranker_pooler && !reranker;
    };
    // deepseek2's kv_b_proj is read by two GGUF tensors (attn_k_b, attn_v_b).
    const auto read_twice = [&](std::string_view name) {
        return ref_arch->mla_kv_b_split && name.ends_with("self_attn.kv_b_proj.weight");
    };
    for (const SourceTensor& entry : index.entries) {
        if (dropped(entry)) continue;
        (entry.quantized ? report.re_encoded_total : report.copied_total) +=
            read_twice(entry.name) ? 2 : 1;
    }

    // Pair each GGUF tensor with its source.
    std::vector<size_t> times_used(index.entries.size(), 0);
    std::vector<ValueJob>& jobs = s.jobs;
    std::vector<size_t>& job_tensor = s.job_tensor;
    std::deque<SourceTensor>& stacked_entries = s.stacked_entries;
    // A lossy tensor of a float source is counted as re-quantized, not as copied.
    const auto add_job = [&](const ValueJob& job, size_t tensor_index, const GgufTensorInfo& info) {
        if (!job.requantize) {
            jobs.push_back(job);
            job_tensor.push_back(tensor_index);
            return;
        }
        s.requant_jobs.push_back(job);
        s.requant_tensor.push_back(tensor_index);
        s.requant_row_values.push_back(info.ne.empty() ? 0 : static_cast<uint64_t>(info.ne[0]));
        s.requant_experts.push_back(info.ne.size() > 2 ? static_cast<uint64_t>(info.ne[2]) : 1);
        // (an FP8 source on the lossy path was counted as re-encoded)
        (job.source->quantized ? report.re_encoded_total : report.copied_total) -= 1;
        ++report.requantized_total;
    };
    report.tensors.reserve(gguf.tensors().size());
    for (const GgufSet::Tensor& tensor : gguf.tensors()) {
        const GgufTensorInfo& info = *tensor.info;
        TensorCheck check;
        check.gguf_name = info.name;
        check.gguf_type = ggml_type_name(info.type);
        check.values = info.element_count();
        if (const auto wanted = generated.find(info.name); wanted != generated.end()) {
            if (wanted->second.seen)
                check.problem = error_message(file, info.name, "appears twice", "once");
            else  // checked in finish(): its bytes may not be written yet
                s.generated_checks.push_back({&tensor, &wanted->second, report.tensors.size()});
            wanted->second.seen = true;
            report.tensors.push_back(std::move(check));
            continue;
        }
        // Stacked experts without an MLX pre-stacked source: verify stacks the per-expert sources
        // itself (value i of the GGUF tensor is value i % V of expert i / V).
        // Whether the tensor stacks experts is verify's (its GGUF name); the per-expert source
        // names are the registry's.
        // An MTP layer's experts are spelled as the checkpoint has them ("mtp.layers.K.").
        auto ref = verify_ref::ref_is_stacked_experts(info.name)
                       ? arch::resolve_gguf(*arch, info.name, config.num_hidden_layers)
                       : std::nullopt;
        bool experts = ref && ref->spec->role == arch::SourceRole::experts && ref->layer;
        // gemma4 from ModelOpt NVFP4: per-expert modules in verify's own spelling, when the
        // checkpoint holds them.
        if (ref && ref->layer && !experts && ref_arch->split_experts)
            if (const auto pattern = ref_arch->split_experts(info.name);
                pattern && index.by_stripped_name.count(arch::expert_name(*pattern, 0))) {
                ref->hf_name = *pattern;
                experts = true;
            }
        // transformers' fused experts, split by verify's own reading (fused_experts_index.hpp).
        const std::optional<std::string> merged =
            experts && ref_arch->fused_experts
                ? std::optional<std::string>(verify_ref::merged_experts_name(ref->hf_name))
                : std::nullopt;
        const bool have_merged = merged && index.by_stripped_name.count(*merged);
        // An MLX pre-stacked source, also under a checkpoint's prefix (nemotron_h's "backbone.").
        bool have_stacked = false;
        if (experts && !have_merged) {
            const std::string stacked = arch::stacked_name(*ref->spec, *ref->layer);
            have_stacked = index.by_stripped_name.count(stacked) != 0;
            for (const std::string_view prefix : arch->hf_head_prefixes)
                have_stacked =
                    have_stacked || index.by_stripped_name.count(std::string(prefix) + stacked);
        }
        if (experts && !have_merged && !have_stacked) {
            std::vector<const SourceTensor*> experts;
            SourceTensor& stacked = stacked_entries.emplace_back();
            // A checkpoint that spells its names with a prefix (nemotron_h's "backbone.").
            std::string pattern = ref->hf_name;
            for (const std::string_view prefix : arch->hf_head_prefixes)
                if (!index.by_stripped_name.count(arch::expert_name(pattern, 0)) &&
                    index.by_stripped_name.count(std::string(prefix) +
                                                 arch::expert_name(ref->hf_name, 0)))
                    pattern = std::string(prefix) + ref->hf_name;
            const bool gathered =
                gather_experts(index, pattern, config, times_used, experts, stacked, check);
            check.source_name = ref->hf_name;
            check.re_encoded = !experts.empty() && experts.front()->quantized;
            // The report counted each expert as a source tensor; the GGUF tensor is one check.
            if (!experts.empty())
                (check.re_encoded ? report.re_encoded_total : report.copied_total) -=
                    experts.size() - 1;
            ValueJob job;
            if (gathered && prepare_job(gguf, tensor, stacked, config, false, 0, check, job)) {
                job.experts = experts;
                job.expert_values = experts.front()->element_count;
                add_job(job, report.tensors.size(), info);
            }
            report.tensors.push_back(std::move(check));
            continue;
        }
        // Stacked experts with an MLX pre-stacked source: that one [E, rows, cols] tensor.
        const auto hf_name =
            have_merged ? merged
            : experts   ? std::optional<std::string>(arch::stacked_name(*ref->spec, *ref->layer))
                        : hf_tensor_name(config.model_type, info.name, config.num_hidden_layers);
        // gemma4 from MLX: mlx-lm's switch_glu tensors where the fused names are absent.
        const std::optional<verify_ref::SwitchGluNames> glu =
            ref_arch->mlx_switch_glu && hf_name &&
                    !index.by_stripped_name.count(std::string(strip_model_prefix(*hf_name)))
                ? verify_ref::switch_glu_names(strip_model_prefix(*hf_name))
                : std::nullopt;
        if (glu && !glu->up.empty()) {  // gate_up: the two halves, paired expert by expert
            SourceTensor& fused = stacked_entries.emplace_back();
            ValueJob pieces;
            check.source_name = glu->gate_or_down + " + " + glu->up;
            if (pair_switch_glu(index, strip_model_prefix(*hf_name), *glu, config, times_used,
                                fused, pieces, check)) {
                check.re_encoded = fused.quantized;
                // The report counted each half as a source tensor; the GGUF tensor is one check.
                (check.re_encoded ? report.re_encoded_total : report.copied_total) -= 1;
                ValueJob job;
                if (prepare_job(gguf, tensor, fused, config, false, 0, check, job)) {
                    job.experts = std::move(pieces.experts);
                    job.expert_firsts = std::move(pieces.expert_firsts);
                    job.expert_values = pieces.expert_values;
                    add_job(job, report.tensors.size(), info);
                }
            }
            report.tensors.push_back(std::move(check));
            continue;
        }
        // Qwen3-Next's in_proj_qkvz, split by verify's own reading (qkvz_index.hpp).
        const std::optional<std::string> qkvz_part =
            ref_arch->qkvz_split && hf_name ? verify_ref::qkvz_part_name(*hf_name, info.name)
                                            : std::nullopt;
        const std::string lookup = qkvz_part ? *qkvz_part
                                   : glu     ? glu->gate_or_down
                                             : hf_name.value_or(std::string());
        auto found = hf_name ? index.by_stripped_name.find(std::string(strip_model_prefix(lookup)))
                             : index.by_stripped_name.end();
        // A task head's checkpoint spells the base model's names with its prefix ("bert.").
        for (const std::string_view prefix : arch->hf_head_prefixes)
            if (hf_name && found == index.by_stripped_name.end())
                found = index.by_stripped_name.find(std::string(prefix) + *hf_name);
        // A part of kv_b_proj an MLX checkpoint stores already split (verify's own record).
        verify_ref::RefTransform transform =
            verify_ref::ref_transform(ref_arch->gguf_arch, info.name);
        const std::string_view presplit =
            transform.rows == verify_ref::RefRows::mla_k_b   ? ref_arch->mla_k_b_presplit
            : transform.rows == verify_ref::RefRows::mla_v_b ? ref_arch->mla_v_b_presplit
                                                             : std::string_view{};
        if (hf_name && found == index.by_stripped_name.end() && !presplit.empty()) {
            std::string name = strip_model_prefix(*hf_name);
            if (const size_t at = name.find("self_attn.kv_b_proj"); at != std::string::npos) {
                name.replace(at, std::string_view("self_attn.kv_b_proj").size(), presplit);
                found = index.by_stripped_name.find(name);
                if (found != index.by_stripped_name.end())
                    transform.rows = verify_ref::RefRows::none;
            }
        }
        if (found == index.by_stripped_name.end()) {
            check.problem = error_message(gguf.shard(tensor.shard).display_name(), info.name,
                                          "GGUF tensor has no source tensor",
                                          hf_name ? *hf_name + " (or its .qcodes/.scales/.mins)"
                                                  : "a tensor name known for " + config.model_type);
            report.tensors.push_back(std::move(check));
            continue;
        }
        const SourceTensor& source = index.entries[found->second];
        ++times_used[found->second];
        check.source_name = source.name;
        check.re_encoded = source.quantized && !(source.fp8 && source.fp8_source.rounded_to);
        ValueJob job;
        const bool vocab_slice = transform.rows == verify_ref::RefRows::first_vocab_rows;
        // RoBERTa positions (verify's RefConfig: xlm-roberta, pad_token_id + 1).
        const uint64_t skip_rows = info.name == "position_embd.weight" ? config.position_offset : 0;
        // deepseek2's kv_b_proj parts, HF order: attn_k_b [heads, kv_lora, nope], attn_v_b
        // [heads, v, kv_lora].
        std::optional<std::vector<int64_t>> part_shape;
        if (transform.rows == verify_ref::RefRows::mla_k_b ||
            transform.rows == verify_ref::RefRows::mla_v_b) {
            const RefConfig::Mla m = config.mla.value_or(RefConfig::Mla{});
            const bool k_b = transform.rows == verify_ref::RefRows::mla_k_b;
            job.mla_part = k_b ? 1 : 2;
            job.mla_heads = config.num_attention_heads;
            job.mla_nope = m.nope;
            job.mla_v = m.v;
            job.mla_rank = m.kv_lora_rank;
            part_shape =
                k_b ? std::vector<int64_t>{config.num_attention_heads, m.kv_lora_rank, m.nope}
                    : std::vector<int64_t>{config.num_attention_heads, m.v, m.kv_lora_rank};
        }
        // Mamba2's reshaped A, D and norm (nemotron_h): the record's own shape, HF order.
        if (transform.reshape && ref_arch->mamba2_shape != nullptr)
            part_shape = ref_arch->mamba2_shape(config, info.name);
        if (prepare_job(gguf, tensor, source, config, vocab_slice, skip_rows, check, job,
                        transform.squeeze, part_shape ? &*part_shape : nullptr) &&
            set_row_transform(*ref_arch, config, gguf.shard(tensor.shard).display_name(), info,
                              check, job, s.mlx_source)) {
            if (job.requantize && (job.norm_plus_one || job.neg_exp)) {
                // llama-quantize never quantizes these 1-D tensors.
                check.problem = error_message(gguf.shard(tensor.shard).display_name(), info.name,
                                              "a norm or ssm_a in a lossy type",
                                              "an exact type (llama-quantize keeps 1-D tensors)");
            } else {
                add_job(job, report.tensors.size(), info);
            }
        }
        report.tensors.push_back(std::move(check));
    }
    for (const auto& [key, i] : index.by_stripped_name) {
        const SourceTensor& entry = index.entries[i];
        // a vision tower, a masked-LM head, a buffer the converter skips
        if (times_used[i] == 0 && dropped(entry)) continue;
        if (times_used[i] == 0) {
            const auto expected =
                gguf_tensor_name(config.model_type, entry.name, config.num_hidden_layers);
            report.problems.push_back(
                error_message(entry.file, entry.name, "source tensor missing from " + file,
                              expected ? "GGUF tensor " + *expected : "a GGUF tensor for it"));
        } else if (const size_t wanted = read_twice(key) ? 2 : 1; times_used[i] != wanted) {
            report.problems.push_back(error_message(
                entry.file, entry.name,
                "source tensor appears " + std::to_string(times_used[i]) + " times in " + file,
                wanted == 2 ? "twice (attn_k_b and attn_v_b)" : "exactly once"));
        }
    }

    for (const auto& [name, wanted] : generated)
        if (!wanted.seen)
            report.problems.push_back(
                error_message(file, name, "missing", "F32 values from " + wanted.source));

    s.threads =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    s.progress = options.progress;
    s.tokenizer_pre = options.tokenizer_pre;
    s.full = options.full;
    report.requantized_full = options.full;
    for (const auto& source_file : model.files()) s.mappings.push_back(source_file->mapping());
    for (const auto& dense_file : s.dense_files) s.mappings.push_back(dense_file->mapping());
    for (size_t i = 0; i < gguf.shard_count(); ++i) s.mappings.push_back(gguf.shard(i).mapping());
    // The lossy tensors: re-quantized each with its imatrix entry if any, a unit as soon as the
    // GGUF rows it compares are written (during convert --quantize's writing, not after it).
    s.requant_tasks.resize(s.requant_jobs.size());
    for (size_t j = 0; j < s.requant_jobs.size(); ++j) {
        verify_ref::RequantTask& task = s.requant_tasks[j];
        task.job = &s.requant_jobs[j];
        task.values_per_row = s.requant_row_values[j];
        task.check = &report.tensors[s.requant_tensor[j]];
        if (s.imatrix) {
            verify_ref::RefImatrixEntry entry = verify_ref::ref_imatrix_entry(
                *s.imatrix, task.check->gguf_name, task.values_per_row, s.requant_experts[j]);
            task.importance = entry.weights;
            task.imatrix_problem = std::move(entry.problem);
        }
    }
    s.requant = std::make_unique<verify_ref::RequantChecker>(s.requant_tasks, s.full, s.mappings);
    std::vector<verify_ref::UnitScheduler::ExtraUnit> extra;
    for (size_t u = 0; u < s.requant->unit_count(); ++u) {
        const verify_ref::RequantChecker::ByteRange range = s.requant->unit_range(u);
        verify_ref::RequantChecker* checker = s.requant.get();
        extra.push_back(
            {range.shard, range.begin, range.end, [checker, u] { checker->run_unit(u); }});
    }
    s.scheduler = std::make_unique<verify_ref::UnitScheduler>(jobs, s.mappings, std::move(extra));
}

VerifySession::~VerifySession() = default;

void VerifySession::region_written(size_t shard, uint64_t offset, uint64_t length) {
    state_->scheduler->region_written(shard, offset, length);
}

bool VerifySession::run_ready_unit() { return state_->scheduler->run_ready_unit(); }

VerifyReport VerifySession::finish() {
    State& s = *state_;
    const GgufSet& gguf = s.gguf;
    const RefConfig& config = s.config;
    const std::filesystem::path& model_dir = model_dir_;
    VerifyReport& report = s.report;
    std::vector<ValueJob>& jobs = s.jobs;
    const std::vector<size_t>& job_tensor = s.job_tensor;
    run_with_progress(*s.scheduler, s.threads, s.progress);
    for (const auto& g : s.generated_checks)
        check_generated(gguf, *g.tensor, *g.wanted, report.tensors[g.check]);
    for (size_t j = 0; j < jobs.size(); ++j) {
        TensorCheck& check = report.tensors[job_tensor[j]];
        const verify_ref::CompareResult& result = jobs[j].result;
        record_comparison(result, check);
        if (result.source_inexact_index != std::numeric_limits<uint64_t>::max()) {
            const SourceTensor& source = *jobs[j].source;
            char value[32];
            std::snprintf(value, sizeof value, "%.17g", result.source_inexact_value);
            const uint64_t cols = source.fp8 ? source.fp8_source.cols : source.pq.in;
            check.identical = false;
            check.problem = error_message(
                source.file, source.name,
                std::string(source.fp8 ? "e4m3 * scale" : "(q - z) * s") + " at row " +
                    std::to_string(result.source_inexact_index / cols) + ", column " +
                    std::to_string(result.source_inexact_index % cols) + " is " + value +
                    ", not a binary32 value, so no GGUF type holds it exactly",
                "scales whose products with the codes stay binary32 values");
        }
    }
    s.requant->finish();  // its units ran with the value units
    for (const TensorCheck& check : report.tensors) {
        if (check.requantized) {
            if (check.identical) ++report.requantized_identical;
            continue;
        }
        if (check.generated) {
            ++report.generated_total;
            if (check.identical) ++report.generated_identical;
            continue;
        }
        if (!check.re_encoded) {
            if (check.identical && !check.source_name.empty()) ++report.copied_identical;
            continue;
        }
        if (check.identical) ++report.re_encoded_identical;
        report.max_abs_error = std::max(report.max_abs_error, check.max_abs_error);
    }

    verify_ref::check_kvs(
        gguf, config, model_dir,
        {s.tokenizer_pre, s.reranker, report.requantized_total, std::move(s.layer_scalars)},
        report.problems, report.unchecked_kvs);
    for (size_t i = 0; i < gguf.shard_count(); ++i)
        verify_ref::check_layout(gguf.shard(i), report.problems);
    return std::move(report);
}

VerifyReport verify_gguf_set(const std::filesystem::path& model_dir, GgufSet gguf,
                             const VerifyOptions& options) {
    return VerifySession(model_dir, std::move(gguf), options).finish();
}

}  // namespace rebox
