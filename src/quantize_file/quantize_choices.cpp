// choose_quantized_output: options parsed as llama-quantize parses them, the type choice, the KVs
// (input order without split.*, general.quantization_version and general.file_type moved to the
// end, as gguf_set_val does), llama's tensor order and the output layouts.
#include "quantize_file/quantize_choices.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "format/gguf_layout.hpp"
#include "quantize_file/keep_split.hpp"
#include "quantize_file/kv_override.hpp"
#include "quantize_file/layer_prune.hpp"
#include "rebox/error.hpp"
#include "recipe/llama_tensor_order.hpp"
#include "recipe/model_shape.hpp"

namespace rebox {
namespace {

constexpr uint32_t kQuantizationVersion = 2;  // GGML_QNT_VERSION

GgmlType parse_type_option(const std::string& option, const std::string& text) {
    const auto type = parse_ggml_type_name(text);
    if (!type)
        throw_input_error(option, text, "not a ggml type name",
                          "a type such as q8_0, q6_k, q4_k, f16 (any case)");
    return *type;
}

// --tensor-type PATTERN=TYPE, as llama-quantize's parse_tensor_type: the pattern lower-cased.
TensorTypeOverride parse_tensor_type(const std::string& text) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        throw_input_error("--tensor-type", text, "not PATTERN=TYPE",
                          "for example attn_v=q8_0 or blk\\.0\\.ffn_down=q6_k");
    TensorTypeOverride result;
    result.pattern = text.substr(0, eq);
    std::transform(result.pattern.begin(), result.pattern.end(), result.pattern.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    result.type = parse_type_option("--tensor-type", text.substr(eq + 1));
    return result;
}

QuantRecipe make_recipe(const QuantizeOptions& options, const QuantFtypeInfo& ftype) {
    QuantRecipe recipe;
    recipe.ftype = ftype.ftype;
    if (options.output_tensor_type)
        recipe.output_tensor_type =
            parse_type_option("--output-tensor-type", *options.output_tensor_type);
    if (options.token_embedding_type)
        recipe.token_embedding_type =
            parse_type_option("--token-embedding-type", *options.token_embedding_type);
    for (const std::string& text : options.tensor_types)
        recipe.tensor_types.push_back(parse_tensor_type(text));
    recipe.pure = options.pure;
    recipe.quantize_output = !options.leave_output_tensor;
    return recipe;
}

// Input KVs in order without split.* and without the two keys set at the end; then
// general.quantization_version and general.file_type (gguf_set_val_u32 removes and appends).
// gguf_set_val: an existing key is removed, the new one appended.
void set_last(std::vector<GgufKV>& kvs, std::string key, GgufValue value) {
    std::erase_if(kvs, [&](const GgufKV& kv) { return kv.key == key; });
    kvs.push_back({std::move(key), std::move(value)});
}

// Input KVs in order (split.* already left out by GgufSet); then general.quantization_version and
// general.file_type; then the --override-kv keys in order and, with an imatrix, the
// quantize.imatrix.* keys llama-quantize passes as KV overrides after them (strings cut to 127
// bytes as its strncpy does).
// keep_file_type: no tensor is quantized by the recipe (every one kept as it was, float or
// block): the input's general.file_type still describes the tensors, so it stays.
std::vector<GgufKV> output_kvs(const std::vector<GgufKV>& input_kvs, const QuantFtypeInfo& ftype,
                               const std::vector<GgufKV>& overrides, const Imatrix& imatrix,
                               const std::string& imatrix_file, bool keep_file_type) {
    std::vector<GgufKV> kvs = input_kvs;
    set_last(kvs, "general.quantization_version", GgufValue::u32(kQuantizationVersion));
    if (!keep_file_type)
        set_last(kvs, "general.file_type", GgufValue::u32(static_cast<uint32_t>(ftype.ftype)));
    for (const GgufKV& kv : overrides) set_last(kvs, kv.key, kv.value);
    if (imatrix.entries.empty()) return kvs;
    auto cut = [](const std::string& text) {
        return text.substr(0, std::min<size_t>(127, strnlen(text.c_str(), 127)));
    };
    set_last(kvs, "quantize.imatrix.file", GgufValue::str(cut(imatrix_file)));
    if (!imatrix.datasets.empty())
        set_last(kvs, "quantize.imatrix.dataset", GgufValue::str(cut(imatrix.datasets.front())));
    set_last(kvs, "quantize.imatrix.entries_count",
             GgufValue::u32(static_cast<uint32_t>(imatrix.entries.size())));
    if (imatrix.chunk_count > 0)
        set_last(kvs, "quantize.imatrix.chunks_count",
                 GgufValue::u32(static_cast<uint32_t>(imatrix.chunk_count)));
    return kvs;
}

// The imatrix entry llama-quantize uses for a tensor it quantizes: none when absent (it logs "did
// not find weights"); an error when its size is not ne[0] * ne[2], except for token_embd (then
// none).
const std::vector<float>* imatrix_entry(const Imatrix& imatrix, const QuantizeInputTensor& t,
                                        const std::string& file) {
    const auto it = imatrix.entries.find(t.name);
    if (it == imatrix.entries.end()) return nullptr;
    const uint64_t expected = static_cast<uint64_t>(t.ne[0]) * (t.ne.size() > 2 ? t.ne[2] : 1);
    if (it->second.size() == expected) return &it->second;
    if (t.name == "token_embd.weight" || t.name == "per_layer_token_embd.weight") return nullptr;
    throw_input_error(file, t.name,
                      "imatrix entry has " + std::to_string(it->second.size()) +
                          " values, the tensor needs " + std::to_string(expected) +
                          " (ne[0] x experts)",
                      "an imatrix computed for this model");
}

ShardedLayout make_layout(const std::vector<GgufKV>& kvs, const std::vector<GgufTensorInfo>& infos,
                          const SplitLimits& limits, uint32_t alignment, const std::string& file) {
    const bool split =
        limits.max_bytes > 0 || limits.max_tensors > 0 || limits.no_tensor_first_split;
    const bool has_alignment_key = std::any_of(
        kvs.begin(), kvs.end(), [](const GgufKV& kv) { return kv.key == "general.alignment"; });
    if (!has_alignment_key) return make_sharded_layout(kvs, infos, limits);
    if (split)
        throw_input_error(file, "general.alignment",
                          "an input with its own alignment cannot be written as shards",
                          "no --split-max-size (or `rebox split` of the result)");
    ShardedLayout result;
    result.shards.emplace_back(alignment);
    for (const GgufKV& kv : kvs) result.shards[0].add_kv(kv.key, kv.value);
    for (size_t i = 0; i < infos.size(); ++i) {
        result.places.push_back({0, i});
        result.shards[0].add_tensor(infos[i].name, infos[i].ne, infos[i].type);
    }
    return result;
}

// --override-kv: parsed, and refused when it changes what llama-quantize's type choice reads
// (its loader reads the overridden values: general.architecture, block count, heads, experts).
std::vector<GgufKV> parse_overrides(const std::vector<GgufKV>& input_kvs,
                                    const QuantModelShape& shape, const QuantizeOptions& options,
                                    const std::string& file) {
    std::vector<GgufKV> overrides;
    std::vector<GgufKV> overridden = input_kvs;
    for (const std::string& text : options.override_kvs) {
        overrides.push_back(parse_kv_override(text));
        set_last(overridden, overrides.back().key, overrides.back().value);
        bool same_shape = false;
        try {
            const QuantModelShape changed = quant_model_shape(overridden, file);
            same_shape = changed.arch == shape.arch && changed.n_layer == shape.n_layer &&
                         changed.n_head == shape.n_head && changed.n_head_kv == shape.n_head_kv &&
                         changed.n_expert == shape.n_expert && changed.type_70b == shape.type_70b;
        } catch (const Error&) {
        }
        if (!same_shape)
            throw_input_error("--override-kv", text,
                              "changes the architecture, layer, head or expert count "
                              "llama-quantize's type choice reads",
                              "a key it does not read, e.g. general.name");
    }
    return overrides;
}

ImatrixFilter imatrix_filter(const QuantizeOptions& options) {
    const bool filtered = !options.include_weights.empty() || !options.exclude_weights.empty();
    if (filtered && !options.imatrix)
        throw_input_error(
            options.include_weights.empty() ? "--exclude-weights" : "--include-weights", "",
            "selects imatrix entries, and there is no --imatrix",
            "--imatrix FILE, or leave the option out");
    if (!options.include_weights.empty() && !options.exclude_weights.empty())
        throw_input_error("--include-weights", "",
                          "cannot be used together with --exclude-weights (as in llama-quantize)",
                          "one of the two");
    return {options.include_weights, options.exclude_weights};
}

}  // namespace

QuantizeChoices choose_quantized_output(const std::vector<GgufKV>& input_kvs,
                                        const std::vector<QuantizeInputTensor>& tensors,
                                        uint32_t alignment, const QuantizeOptions& options,
                                        const std::string& file) {
    const auto ftype = parse_quant_ftype(options.type);
    if (!ftype)
        throw_input_error("TYPE", options.type, "not a quantization type",
                          "one of " + quant_ftype_names() +
                              " (any case; Q4_K, Q5_K, Q3_K alias "
                              "the _M types)");
    check_keep_split_options(options);
    QuantRecipe recipe = make_recipe(options, *ftype);
    QuantizeChoices job{*ftype, {}, {}, {}, {}, false};
    const ImatrixFilter filter = imatrix_filter(options);
    const QuantModelShape shape = quant_model_shape(input_kvs, file);
    const std::vector<GgufKV> overrides = parse_overrides(input_kvs, shape, options, file);
    std::vector<int> pruned;
    if (options.prune_layers) pruned = parse_prune_layers(*options.prune_layers, shape.n_layer);
    if (options.imatrix) job.imatrix = load_imatrix(*options.imatrix, filter);
    recipe.has_imatrix = !job.imatrix.entries.empty();

    // llama's order of the input names; pruned layers dropped and the later ones renumbered in
    // that order. The recipe sees the new names and the input's layer count (n_layer_all), as
    // llama-quantize's does; imatrix entries are looked up by the input names (remap_imatrix).
    std::vector<std::string> names;
    for (const QuantizeInputTensor& t : tensors) names.push_back(t.name);
    std::vector<RecipeTensor> sorted;
    std::vector<size_t> order;
    LayerPruner pruner(pruned);
    for (size_t index : llama_tensor_order(names)) {
        const std::optional<std::string> renamed = pruner.rename(tensors[index].name);
        if (!renamed) continue;
        order.push_back(index);
        sorted.push_back({*renamed, tensors[index].ne, tensors[index].type});
    }
    // --keep-split: llama-quantize sorts the renamed tensors by input shard and offset before
    // its counters and writes see them.
    if (options.keep_split) sort_by_input_place(order, sorted, tensors);
    const std::vector<TensorTypeChoice> choices = choose_tensor_types(sorted, shape, recipe);

    std::vector<GgufTensorInfo> infos;
    size_t kept = 0, changed = 0;
    for (size_t i = 0; i < order.size(); ++i) {
        const QuantizeInputTensor& source = tensors[order[i]];
        QuantizeTensorChoice jt;
        jt.input_index = order[i];
        jt.name = sorted[i].name;
        jt.choice = choices[i];
        jt.target = choices[i].type;
        if (source.forced) {
            jt.target = *source.forced;
            jt.choice.type = *source.forced;
            jt.choice.allows_quantization = true;
            jt.choice.reason = "--fp8-as-q8: dequantized from FP8, " +
                               ggml_type_name(*source.forced) +
                               " as the converter's tensor_force_quant writes it";
        }
        const GgmlType from = source.type;
        if (jt.target != from && ggml_type_is_quantized(from)) {
            if (options.allow_requantize) {
                jt.requantize = true;
            } else {
                jt.kept_quantized = true;
                jt.choice.reason = "kept as " + ggml_type_name(from) + " (already quantized; " +
                                   ggml_type_name(jt.target) + " with --allow-requantize)";
                jt.target = from;
                ++kept;
            }
        }
        const auto traits = ggml_type_traits(jt.target);
        if (!traits || static_cast<uint64_t>(source.ne[0]) % traits->block_size != 0)
            throw_input_error(file, source.name,
                              ggml_type_name(jt.target) + " (" + jt.choice.reason +
                                  ") needs rows that are a multiple of " +
                                  std::to_string(traits ? traits->block_size : 0) +
                                  " values, this tensor's rows have " +
                                  std::to_string(source.ne[0]) +
                                  " (llama-quantize would abort mid-write)",
                              "a type whose block divides the row, e.g. q8_0 or f16");
        if (jt.target != from)
            jt.imatrix = imatrix_entry(job.imatrix, source, options.imatrix.value_or(""));
        const bool no_imatrix = job.imatrix.entries.empty();
        if (jt.choice.requires_imatrix && options.dry_run && no_imatrix) job.needs_imatrix = true;
        if (jt.choice.requires_imatrix && !options.dry_run &&
            (no_imatrix || (jt.target != from && jt.imatrix == nullptr)))
            throw_input_error(file, source.name,
                              ggml_type_name(jt.target) + " in a " + std::string(ftype->name) +
                                  " file needs an importance matrix" +
                                  (no_imatrix ? "" : ", and the imatrix has no entry for it"),
                              no_imatrix ? "--imatrix FILE (llama-quantize refuses it too), or "
                                           "another type"
                                         : "an imatrix computed for this model");
        if (jt.target != from) ++changed;
        // llama-quantize writes the dims gguf.cpp writes (ggml_n_dims): a [64, 1] input tensor
        // (Qwen3.5-MoE's ffn_gate_inp_shexp, as the converter writes it) comes out as [64].
        const std::vector<int64_t> written(
            source.ne.begin(),
            source.ne.begin() + static_cast<std::ptrdiff_t>(ggml_n_dims(source.ne)));
        infos.push_back({jt.name, written, jt.target, 0, *ggml_nbytes(jt.target, source.ne)});
        job.tensors.push_back(std::move(jt));
    }
    if (kept > 0)
        job.notes.push_back(std::to_string(kept) +
                            " already quantized tensor(s) kept as they are (llama-quantize "
                            "refuses such a file; --allow-requantize requantizes them)");
    const bool keep_file_type = kept > 0 && changed == 0;
    if (keep_file_type)
        job.notes.push_back(std::string("no tensor changes type, so general.file_type stays the "
                                        "input's (it describes the tensors; ") +
                            std::string(ftype->name) + " would not)");
    if (alignment != kGgufDefaultAlignment)
        job.notes.push_back("the input's general.alignment " + std::to_string(alignment) +
                            " is kept and the data padded to it (llama-quantize copies the key "
                            "but pads to 32)");
    std::vector<GgufKV> kvs = output_kvs(input_kvs, *ftype, overrides, job.imatrix,
                                         options.imatrix.value_or(""), keep_file_type);
    if (!pruned.empty()) {
        set_last(kvs, shape.arch + ".block_count",
                 GgufValue::u32(static_cast<uint32_t>(pruner.block_count())));
        job.notes.push_back("--prune-layers " + *options.prune_layers + ": " +
                            std::to_string(tensors.size() - order.size()) + " tensors left out, " +
                            std::to_string(pruner.block_count()) + " layers left");
    }
    if (options.imatrix && job.imatrix.entries.empty())
        job.notes.push_back(
            "--include-weights / --exclude-weights left no imatrix entry: "
            "quantized as without an imatrix");
    job.layout = options.keep_split ? keep_split_layout(kvs, infos, order, tensors, alignment, file)
                                    : make_layout(kvs, infos, options.split, alignment, file);
    return job;
}

}  // namespace rebox
