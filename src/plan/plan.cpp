// make_plan: config.json, tokenizer and pooling from the model directory, a TensorPlan or Blocker
// for every source tensor (never skipped), the architecture's completeness and shape checks, output
// order, and the KV set (model metadata + rebox provenance). Nothing is written here.
#include "rebox/plan/plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "arch_tensors.hpp"
#include "rebox/error.hpp"
#include "rebox/format/ggml_type.hpp"
#include "rebox/format/safetensors.hpp"
#include "rebox/model/gguf_metadata.hpp"
#include "rebox/model/pooling.hpp"
#include "rebox/model/tensor_names.hpp"
#include "rebox/model/tokenizer_vocab.hpp"
#include "tensor_rules.hpp"

namespace rebox {
namespace {

using plan_detail::expected_ne;
using plan_detail::layer_of;
using plan_detail::output_rank;
using plan_detail::required_tensors;

constexpr const char* kReboxVersion = "0.1.0";

std::string ne_string(const std::vector<int64_t>& ne) {
    std::string s = "[";
    for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

// The last component of a path-like string ("Qwen/Qwen3-Embedding-0.6B/" ->
// "Qwen3-Embedding-0.6B").
std::string last_component(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string general_name(const SourceModel& source, const ModelConfig& config,
                         const PlanOptions& options) {
    if (!options.name.empty()) return options.name;
    if (!config.name_or_path.empty()) {
        std::string name = last_component(config.name_or_path);
        if (!name.empty() && name != "." && name != "/") return name;
    }
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::weakly_canonical(source.dir, ec);
    if (ec) dir = source.dir;
    return last_component(dir.lexically_normal().string());
}

std::optional<TokenizerVocab> read_vocab(const SourceModel& source, const ModelConfig& config,
                                         const PlanOptions& options, std::vector<Blocker>* blockers,
                                         std::vector<std::string>* notes) {
    if (!std::filesystem::exists(source.dir / "tokenizer.json") &&
        !std::filesystem::exists(source.dir / "tokenizer.model")) {
        blockers->push_back(Blocker{"tokenizer.json",
                                    "no tokenizer.json: the GGUF would not be runnable",
                                    "copy the model's tokenizer.json into " + source.dir.string()});
        return std::nullopt;
    }
    try {
        TokenizerVocab vocab =
            read_tokenizer(source.dir, TokenizerOptions{config.vocab_size, options.tokenizer_pre});
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
        // The message starts with "tokenizer.json: " already; the Blocker names the file once.
        std::string reason = e.what();
        constexpr std::string_view kPrefix = "tokenizer.json: ";
        if (reason.starts_with(kPrefix)) reason.erase(0, kPrefix.size());
        blockers->push_back(Blocker{"tokenizer.json", std::move(reason),
                                    "use the model's own tokenizer.json (--tokenizer-pre NAME when "
                                    "only the pre-tokenizer is unknown)"});
        return std::nullopt;
    }
}

// Config-dependent checks of one planned tensor; returns false (with a blocker) when it fails.
bool check_against_config(const std::string& arch, const ModelConfig& config,
                          const SourceTensor& source, const TensorPlan& plan,
                          std::vector<Blocker>* blockers) {
    if (const auto layer = layer_of(plan.gguf_name);
        layer && *layer >= static_cast<int64_t>(config.num_hidden_layers)) {
        blockers->push_back(Blocker{source.name,
                                    "layer " + std::to_string(*layer) +
                                        " is beyond config.json num_hidden_layers = " +
                                        std::to_string(config.num_hidden_layers),
                                    "use the config.json that belongs to these weights"});
        return false;
    }
    const auto expected = expected_ne(arch, config, plan.gguf_name);
    if (!expected) {
        blockers->push_back(Blocker{source.name,
                                    "llama.cpp's " + arch + " graph has no tensor " +
                                        plan.gguf_name + " (it refuses files with extra tensors)",
                                    "remove the tensor from the checkpoint"});
        return false;
    }
    if (*expected != plan.ne) {
        blockers->push_back(Blocker{source.name,
                                    plan.gguf_name + " has ne " + ne_string(plan.ne) +
                                        " but config.json implies " + ne_string(*expected),
                                    "use the config.json that belongs to these weights"});
        return false;
    }
    if (arch == "llama" &&
        (plan.gguf_name.ends_with("attn_q.weight") || plan.gguf_name.ends_with("attn_k.weight"))) {
        blockers->push_back(
            Blocker{source.name,
                    "llama's NORM rope needs q_proj/k_proj rows permuted; rebox does not permute",
                    "not supported yet for llama; qwen2/qwen3 need no permutation"});
        return false;
    }
    return true;
}

std::vector<GgufKV> provenance_kvs(const SourceModel& source, const Plan& plan) {
    std::vector<std::string> names;
    std::vector<GgufScalar> bits, groups;
    for (const TensorPlan& tensor : plan.tensors) {
        const SourceTensor& st = source.tensors[tensor.source_index];
        if (!st.is_quantized()) continue;
        names.push_back(tensor.gguf_name);
        bits.emplace_back(static_cast<uint64_t>(st.quant->bits));
        groups.emplace_back(static_cast<uint64_t>(st.quant->group));
    }
    return {
        {"rebox.version", GgufValue::str(kReboxVersion)},
        {"rebox.source.format", GgufValue::str(source.format.empty() ? "mcq-v1" : source.format)},
        {"rebox.quant.tensors", GgufValue::string_array(std::move(names))},
        {"rebox.quant.bits", GgufValue::array_of(GgufType::UINT32, std::move(bits))},
        {"rebox.quant.group", GgufValue::array_of(GgufType::UINT32, std::move(groups))},
    };
}

// general.file_type: the most frequent block type among the tensors (Q4_1 on a tie or when there
// is none); all F32 with --outtype f32.
LlamaFileType file_type(const SourceModel& source, const Plan& plan, const PlanOptions& options) {
    if (options.outtype == OutType::f32) return LlamaFileType::ALL_F32;
    size_t q4_1 = 0, q5_1 = 0;
    for (const TensorPlan& tensor : plan.tensors) {
        if (!source.tensors[tensor.source_index].is_quantized()) continue;
        if (tensor.type == static_cast<uint32_t>(GgmlType::Q4_1)) ++q4_1;
        if (tensor.type == static_cast<uint32_t>(GgmlType::Q5_1)) ++q5_1;
    }
    return q5_1 > q4_1 ? LlamaFileType::MOSTLY_Q5_1 : LlamaFileType::MOSTLY_Q4_1;
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
    plan.config = read_model_config(source.dir / "config.json");
    plan.arch = plan.config.model_type;
    plan.source_bytes = total_file_bytes(source);
    plan.blockers = source.blockers;
    const ModelConfig& config = plan.config;

    if (!is_supported_arch(plan.arch)) {
        plan.blockers.push_back(Blocker{
            "config.json: model_type",
            "model_type '" + plan.arch + "' is not supported (expected qwen3, qwen2 or llama)",
            "rebox writes qwen3, qwen2 and llama models only"});
        return plan;
    }
    const std::optional<PoolingType> pooling = read_pooling(source.dir);
    const std::optional<TokenizerVocab> vocab =
        read_vocab(source, config, options, &plan.blockers, &plan.notes);

    std::map<std::string, std::string> seen;  // gguf name -> source name
    for (size_t i = 0; i < source.tensors.size(); ++i) {
        const SourceTensor& tensor = source.tensors[i];
        const auto gguf_name = gguf_tensor_name(plan.arch, tensor.name);
        if (!gguf_name) {
            plan.blockers.push_back(Blocker{tensor.name, "no llama.cpp name for this tensor",
                                            "remove the tensor, or use a supported architecture"});
            continue;
        }
        const auto [it, inserted] = seen.emplace(*gguf_name, tensor.name);
        if (!inserted) {
            plan.blockers.push_back(Blocker{tensor.name,
                                            "maps to " + *gguf_name + " like '" + it->second + "'",
                                            "keep one of the two tensors"});
            continue;
        }
        TensorPlan tensor_plan;
        if (!plan_detail::plan_tensor(tensor, i, *gguf_name, options, &tensor_plan, &plan.blockers))
            continue;
        if (!check_against_config(plan.arch, config, tensor, tensor_plan, &plan.blockers)) continue;
        plan.tensors.push_back(std::move(tensor_plan));
    }
    for (const std::string& name : required_tensors(plan.arch, config)) {
        if (!seen.count(name))
            plan.blockers.push_back(Blocker{
                name,
                "the " + plan.arch + " graph requires " + name + " and no source tensor maps to it",
                "add the missing weight to the checkpoint"});
    }
    std::stable_sort(plan.tensors.begin(), plan.tensors.end(),
                     [](const TensorPlan& a, const TensorPlan& b) {
                         return output_rank(a.gguf_name) < output_rank(b.gguf_name);
                     });

    ModelMetadataInput input;
    input.config = &config;
    input.vocab = vocab ? &*vocab : nullptr;
    input.pooling = pooling;
    input.file_type = file_type(source, plan, options);
    input.name = general_name(source, config, options);
    plan.kvs = build_model_metadata(input);
    for (GgufKV& kv : provenance_kvs(source, plan)) plan.kvs.push_back(std::move(kv));
    return plan;
}

}  // namespace rebox
