// verify_gguf: opens the GGUF (or split set) through GgufFile/GgufSet and the source through
// SafetensorsModel (mcq-v1, or MLX affine when config.json says so and no file has mcq metadata),
// pairs every GGUF tensor with its source tensor by the inverse name map, compares values bit for
// bit (own unpacking, own dequantizers), then checks the tensor set, KVs and layout. The report's
// max abs error covers the re-encoded (quantized-source) tensors; the summary line counts them and,
// apart, the copied (float-source) ones, so a float checkpoint's verdict says something too.
#include "rebox/verify/verify.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "expected_shapes.hpp"
#include "metadata_checks.hpp"
#include "mlx_source_index.hpp"
#include "rebox/arch/architecture.hpp"
#include "rebox/error.hpp"
#include "rebox/format/ggml_type.hpp"
#include "rebox/format/gguf_file.hpp"
#include "rebox/format/gguf_shards.hpp"
#include "rebox/format/safetensors.hpp"
#include "rebox/model/model_config.hpp"
#include "rebox/model/tensor_names.hpp"
#include "ref_dequant.hpp"
#include "ref_rope.hpp"
#include "source_index.hpp"
#include "value_checks.hpp"

namespace rebox {
namespace {

using verify_ref::SourceEntry;
using verify_ref::SourceIndex;
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

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

// Sets check.problem when the pair cannot be compared, else fills job.
bool prepare_job(const GgufSet& gguf, const GgufSet::Tensor& tensor, const SourceEntry& source,
                 const ModelConfig& config, TensorCheck& check, ValueJob& job) {
    const GgufTensorInfo& info = *tensor.info;
    const std::string& file = gguf.shard(tensor.shard).display_name();
    if (!source.problem.empty()) {
        check.problem = source.problem;
        return false;
    }
    // The architecture fixes the shape; the source's own metadata is not trusted for it.
    const std::string_view hf_name = strip_model_prefix(source.name);
    if (!verify_ref::layer_in_range(config, hf_name)) {
        check.problem = error_message(
            source.file, source.name, "layer index out of range",
            "< " + std::to_string(config.num_hidden_layers) + " (config.json num_hidden_layers)");
        return false;
    }
    if (const auto expected = verify_ref::expected_hf_shape(config, hf_name);
        expected && trimmed(*expected) != trimmed(source.shape)) {
        check.problem = error_message(
            source.file, source.name,
            "source shape " + shape_text(source.shape) + " disagrees with config.json",
            shape_text(*expected));
        return false;
    }
    verify_ref::DecodableType layout{};
    if (!verify_ref::decodable_type(info.type, &layout)) {
        check.problem =
            error_message(file, info.name, "type " + check.gguf_type + " cannot be decoded",
                          "Q4_1, Q5_1, Q4_0, Q5_0, Q8_0, F16, BF16 or F32");
        return false;
    }
    if (hf_order_shape(info.ne) != trimmed(source.shape)) {
        check.problem = error_message(file, info.name,
                                      "shape (ne reversed) " + shape_text(hf_order_shape(info.ne)),
                                      shape_text(source.shape) + " from " + source.name);
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
    job.gguf_type = info.type;
    job.gguf_data = data;
    job.gguf_shard = tensor.shard;
    job.gguf_file_offset = gguf.shard(tensor.shard).data_offset() + info.offset;
    job.source = &source;
    job.values = values;
    return true;
}

// The row layout of a tensor the architecture permutes (names from the registry; the permutation
// itself is verify's own, ref_rope.hpp). False with check.problem when the rows cannot be heads.
bool set_row_transform(const arch::Architecture& arch, const ModelConfig& config,
                       const std::string& file, const GgufTensorInfo& info, TensorCheck& check,
                       ValueJob& job) {
    const auto ref = arch::resolve_gguf(arch, info.name);
    if (!ref || ref->spec->rows == arch::RowTransform::none) return true;
    const uint64_t heads = ref->spec->rows == arch::RowTransform::rope_pairs_q_heads
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

// rope_freqs.weight: no source tensor; its values follow from config.json's llama3 rope_scaling.
void check_rope_freqs(const GgufSet& gguf, const GgufSet::Tensor& tensor, const ModelConfig& config,
                      TensorCheck& check) {
    const GgufTensorInfo& info = *tensor.info;
    const std::string& file = gguf.shard(tensor.shard).display_name();
    check.source_name = "config.json rope_scaling";
    check.generated = true;
    const std::vector<float> expected = verify_ref::expected_llama3_rope_freqs(config);
    const std::span<const uint8_t> data = gguf.tensor_data(tensor);
    if (info.type != 0 || info.ne != std::vector<int64_t>{int64_t(expected.size())} ||
        data.size() != 4 * expected.size()) {
        check.problem = error_message(file, info.name, "type/shape",
                                      "F32 [" + std::to_string(expected.size()) + "]");
        return;
    }
    std::vector<float> got(expected.size());
    std::memcpy(got.data(), data.data(), data.size());
    verify_ref::CompareResult result;
    verify_ref::compare_values(expected, got, 0, result);
    check.mismatches = result.mismatches;
    check.identical = result.mismatches == 0;
    check.max_abs_error = result.max_abs_error;
    if (result.mismatches > 0) {
        check.first_diff = result.first_diff;
        check.expected_bits = result.expected_bits;
        check.got_bits = result.got_bits;
    }
}

bool wants_llama3_rope_freqs(const arch::Architecture& arch, const ModelConfig& config) {
    if (!config.rope_scaling) return false;
    std::string type = config.rope_scaling->type;
    for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const arch::ExtraTensor extra : arch.extras)
        if (extra == arch::ExtraTensor::rope_freqs_llama3) return type == "llama3";
    return false;
}

}  // namespace

bool VerifyReport::ok() const {
    if (!problems.empty()) return false;
    for (const TensorCheck& t : tensors)
        if (!t.identical) return false;
    return true;
}

std::string VerifyReport::summary() const {
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
                      "/" + std::to_string(generated_total));
}

// Everything verify needs between pairing and the verdict: the opened files, the jobs and the
// report being filled.
struct VerifySession::State {
    GgufSet gguf;
    ModelConfig config;
    SafetensorsModel model;
    unsigned threads = 1;
    VerifyReport report;
    SourceIndex index;
    std::vector<ValueJob> jobs;
    std::vector<size_t> job_tensor;               // job -> report.tensors index
    const GgufSet::Tensor* rope_freqs = nullptr;  // checked in finish(): its bytes come late
    size_t rope_freqs_check = 0;
    std::vector<const MappedFile*> mappings;  // read pages leave the resident set as units finish
    std::unique_ptr<verify_ref::UnitScheduler> scheduler;

    State(GgufSet set, const std::filesystem::path& model_dir)
        : gguf(std::move(set)),
          config(read_model_config(model_dir / "config.json")),
          model(SafetensorsModel::open(model_dir)) {}
};

VerifySession::VerifySession(const std::filesystem::path& model_dir, GgufSet gguf_set,
                             const VerifyOptions& options)
    : model_dir_(model_dir), state_(std::make_unique<State>(std::move(gguf_set), model_dir)) {
    State& s = *state_;
    const GgufSet& gguf = s.gguf;
    const ModelConfig& config = s.config;
    const SafetensorsModel& model = s.model;
    const std::string& file = gguf.shard(0).display_name();
    const arch::Architecture* arch = arch::find_architecture(config.model_type);
    if (arch == nullptr)
        throw Error(ExitClass::input, error_message("config.json", "model_type",
                                                    "'" + config.model_type + "' is not supported",
                                                    arch::supported_model_types()));
    const std::string rope_freqs_name(
        arch::extra_tensor_name(arch::ExtraTensor::rope_freqs_llama3));
    const bool rope_freqs_wanted = wants_llama3_rope_freqs(*arch, config);
    bool rope_freqs_seen = false;

    VerifyReport& report = s.report;
    s.index = verify_ref::is_mlx_source(model, model_dir / "config.json")
                  ? verify_ref::index_mlx_source(model, model_dir / "config.json")
                  : verify_ref::index_source(model);
    SourceIndex& index = s.index;
    report.problems = std::move(index.problems);
    for (const SourceEntry& entry : index.entries) {
        if (entry.quantized)
            ++report.re_encoded_total;
        else
            ++report.copied_total;
    }

    // Pair each GGUF tensor with its source.
    std::vector<size_t> times_used(index.entries.size(), 0);
    std::vector<ValueJob>& jobs = s.jobs;
    std::vector<size_t>& job_tensor = s.job_tensor;
    report.tensors.reserve(gguf.tensors().size());
    for (const GgufSet::Tensor& tensor : gguf.tensors()) {
        const GgufTensorInfo& info = *tensor.info;
        TensorCheck check;
        check.gguf_name = info.name;
        check.gguf_type = ggml_type_name(info.type);
        check.values = info.element_count();
        if (rope_freqs_wanted && info.name == rope_freqs_name) {
            if (rope_freqs_seen) {
                check.problem = error_message(file, info.name, "appears twice", "once");
            } else {
                s.rope_freqs = &tensor;
                s.rope_freqs_check = report.tensors.size();
            }
            rope_freqs_seen = true;
            report.tensors.push_back(std::move(check));
            continue;
        }
        const auto hf_name = hf_tensor_name(config.model_type, info.name);
        const auto found =
            hf_name ? index.by_stripped_name.find(std::string(strip_model_prefix(*hf_name)))
                    : index.by_stripped_name.end();
        if (found == index.by_stripped_name.end()) {
            check.problem = error_message(gguf.shard(tensor.shard).display_name(), info.name,
                                          "GGUF tensor has no source tensor",
                                          hf_name ? *hf_name + " (or its .qcodes/.scales/.mins)"
                                                  : "a tensor name known for " + config.model_type);
            report.tensors.push_back(std::move(check));
            continue;
        }
        const SourceEntry& source = index.entries[found->second];
        ++times_used[found->second];
        check.source_name = source.name;
        check.re_encoded = source.quantized;
        ValueJob job;
        if (prepare_job(gguf, tensor, source, config, check, job) &&
            set_row_transform(*arch, config, gguf.shard(tensor.shard).display_name(), info, check,
                              job)) {
            jobs.push_back(job);
            job_tensor.push_back(report.tensors.size());
        }
        report.tensors.push_back(std::move(check));
    }
    for (const auto& [key, i] : index.by_stripped_name) {
        const SourceEntry& entry = index.entries[i];
        if (times_used[i] == 0) {
            const auto expected = gguf_tensor_name(config.model_type, entry.name);
            report.problems.push_back(
                error_message(entry.file, entry.name, "source tensor missing from " + file,
                              expected ? "GGUF tensor " + *expected : "a GGUF tensor for it"));
        } else if (times_used[i] > 1) {
            report.problems.push_back(error_message(
                entry.file, entry.name,
                "source tensor appears " + std::to_string(times_used[i]) + " times in " + file,
                "exactly once"));
        }
    }

    if (rope_freqs_wanted && !rope_freqs_seen)
        report.problems.push_back(
            error_message(file, rope_freqs_name, "missing",
                          "F32 rope factors for config.json's llama3 rope_scaling"));

    s.threads =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    for (const auto& source_file : model.files()) s.mappings.push_back(source_file->mapping());
    for (size_t i = 0; i < gguf.shard_count(); ++i) s.mappings.push_back(gguf.shard(i).mapping());
    s.scheduler = std::make_unique<verify_ref::UnitScheduler>(jobs, s.mappings);
}

VerifySession::~VerifySession() = default;

void VerifySession::region_written(size_t shard, uint64_t offset, uint64_t length) {
    state_->scheduler->region_written(shard, offset, length);
}

bool VerifySession::run_ready_unit() { return state_->scheduler->run_ready_unit(); }

VerifyReport VerifySession::finish() {
    State& s = *state_;
    const GgufSet& gguf = s.gguf;
    const ModelConfig& config = s.config;
    const std::filesystem::path& model_dir = model_dir_;
    VerifyReport& report = s.report;
    std::vector<ValueJob>& jobs = s.jobs;
    const std::vector<size_t>& job_tensor = s.job_tensor;
    s.scheduler->run_all(s.threads);
    if (s.rope_freqs != nullptr)
        check_rope_freqs(gguf, *s.rope_freqs, config, report.tensors[s.rope_freqs_check]);
    for (size_t j = 0; j < jobs.size(); ++j) {
        TensorCheck& check = report.tensors[job_tensor[j]];
        const verify_ref::CompareResult& result = jobs[j].result;
        check.mismatches = result.mismatches;
        check.identical = result.mismatches == 0;
        check.max_abs_error = result.max_abs_error;
        if (result.mismatches > 0) {
            check.first_diff = result.first_diff;
            check.expected_bits = result.expected_bits;
            check.got_bits = result.got_bits;
        }
    }
    for (const TensorCheck& check : report.tensors) {
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

    verify_ref::check_kvs(gguf, config, model_dir, report.problems);
    for (size_t i = 0; i < gguf.shard_count(); ++i)
        verify_ref::check_layout(gguf.shard(i), report.problems);
    return std::move(report);
}

VerifyReport verify_gguf(const std::filesystem::path& model_dir, const std::filesystem::path& gguf,
                         const VerifyOptions& options) {
    return verify_gguf_set(model_dir, GgufSet::open(gguf), options);
}

VerifyReport verify_gguf_set(const std::filesystem::path& model_dir, GgufSet gguf,
                             const VerifyOptions& options) {
    return VerifySession(model_dir, std::move(gguf), options).finish();
}

}  // namespace rebox
