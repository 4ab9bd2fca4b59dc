// JSON renderings of plan, conversion and verification results for --json reports.
#include "report_json.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "format/atomic_output.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::cli {

nlohmann::json verify_report_to_json(const VerifyReport& report) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorCheck& t : report.tensors) {
        char expected[16], got[16];
        std::snprintf(expected, sizeof expected, "0x%08x", t.expected_bits);
        std::snprintf(got, sizeof got, "0x%08x", t.got_bits);
        nlohmann::json row = {{"gguf_name", t.gguf_name},   {"source_name", t.source_name},
                              {"type", t.gguf_type},        {"re_encoded", t.re_encoded},
                              {"identical", t.identical},   {"values", t.values},
                              {"mismatches", t.mismatches}, {"max_abs_error", t.max_abs_error}};
        if (t.mismatches > 0) {
            row["first_diff"] = t.first_diff;
            row["expected_bits"] = expected;
            row["got_bits"] = got;
        }
        if (t.requantized) {
            row["requantized"] = true;
            row["blocks_total"] = t.blocks_total;
            row["blocks_checked"] = t.blocks_checked;
            row["blocks_identical"] = t.blocks_identical;
            row["rmse"] = t.rmse;
        }
        if (!t.problem.empty()) row["problem"] = t.problem;
        if (!t.not_bit_identical.empty()) row["not_bit_identical"] = t.not_bit_identical;
        tensors.push_back(std::move(row));
    }
    return {{"ok", report.ok()},
            {"summary", report.summary()},
            {"re_encoded_total", report.re_encoded_total},
            {"re_encoded_identical", report.re_encoded_identical},
            {"copied_total", report.copied_total},
            {"copied_identical", report.copied_identical},
            {"generated_total", report.generated_total},
            {"generated_identical", report.generated_identical},
            {"requantized_total", report.requantized_total},
            {"requantized_identical", report.requantized_identical},
            {"requantized_full", report.requantized_full},
            {"max_abs_error", report.max_abs_error},
            {"problems", report.problems},
            {"unchecked_kvs", report.unchecked_kvs},
            {"tensors", std::move(tensors)}};
}

nlohmann::json plan_to_json(const PlanReport& plan) {
    nlohmann::json tensors = nlohmann::json::array();
    uint64_t gguf_tensor_bytes = 0;
    nlohmann::json type_counts = nlohmann::json::object();
    for (const PlannedTensor& t : plan.tensors) {
        nlohmann::json row = {{"gguf_name", t.gguf_name}, {"type", ggml_type_name(t.type)},
                              {"encoding", t.encoding},   {"ne", t.ne},
                              {"nbytes", t.nbytes},       {"note", t.note}};
        if (t.zero_code_groups_get_zero_scale) row["zero_code_groups_get_zero_scale"] = true;
        if (t.experts > 0) {  // stacked: source_name is expert 0's
            row["experts"] = t.experts;
            row["expert_values"] = t.expert_values;
        }
        if (!t.source_name.empty()) {
            row["source_name"] = t.source_name;
            row["source_shape"] = t.source_shape;
            if (t.bits > 0) {
                row["bits"] = t.bits;
                row["group"] = t.group;
            } else {
                row["source_dtype"] = t.source_dtype;
            }
        }
        gguf_tensor_bytes += t.nbytes;
        nlohmann::json& count = type_counts[ggml_type_name(t.type)];
        count = count.is_null() ? 1 : count.get<int>() + 1;
        tensors.push_back(std::move(row));
    }
    nlohmann::json blockers = nlohmann::json::array();
    for (const Blocker& b : plan.blockers)
        blockers.push_back({{"tensor", b.tensor}, {"reason", b.reason}, {"fix", b.fix}});
    nlohmann::json json = {{"arch", plan.arch},
                           {"plannable", plan.ok()},
                           {"tensors", std::move(tensors)},
                           {"type_counts", std::move(type_counts)},
                           {"blockers", std::move(blockers)},
                           {"notes", plan.notes},
                           {"source_bytes", plan.source_bytes},
                           {"tensor_bytes", gguf_tensor_bytes}};
    // The whole single-file size (header, KVs, infos, padding) only for a plan that can be written.
    if (plan.ok()) {
        json["file_bytes"] = plan.file_bytes;
        if (plan.source_bytes > 0)
            json["size_ratio"] = double(plan.file_bytes) / double(plan.source_bytes);
    }
    return json;
}

void write_json_file(const std::string& path, const nlohmann::json& json) {
    const std::string text =
        json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    AtomicOutput out(path, /*force=*/true);
    out.resize(text.size());
    out.pwrite({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, 0);
    out.commit();
}

nlohmann::json quantize_report_to_json(const QuantizeReport& report) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const QuantizedTensor& t : report.tensors)
        tensors.push_back({{"name", t.name},
                           {"ne", t.ne},
                           {"from", ggml_type_name(t.from)},
                           {"type", ggml_type_name(t.to)},
                           {"reason", t.reason},
                           {"bytes", t.bytes},
                           {"from_bytes", t.from_bytes}});
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& path : report.outputs) outputs.push_back(path.string());
    return {{"type", report.type},
            {"file_type", report.file_type},
            {"written", report.written},
            {"outputs", outputs},
            {"input_bytes", report.input_bytes},
            {"output_bytes", report.output_bytes},
            {"input_elements", report.input_elements},
            {"needs_imatrix", report.needs_imatrix},
            {"notes", report.notes},
            {"tensors", tensors},
            {"seconds", report.seconds}};
}

// Per tensor its types, its sizes (MiB, as llama-quantize prints them) and why; then the notes,
// llama-quantize's two totals (tensor data in MiB, bits per weight over every input tensor's
// values) and the summary line.
void print_quantize_report(const QuantizeReport& report) {
    constexpr double kMiB = 1024.0 * 1024.0;
    uint64_t from_total = 0, to_total = 0;
    for (const QuantizedTensor& t : report.tensors) {
        std::printf("%-40s %-6s -> %-6s %8.2f MiB -> %8.2f MiB  %s\n", t.name.c_str(),
                    ggml_type_name(t.from).c_str(), ggml_type_name(t.to).c_str(),
                    t.from_bytes / kMiB, t.bytes / kMiB, t.reason.c_str());
        from_total += t.from_bytes;
        to_total += t.bytes;
    }
    for (const std::string& note : report.notes) std::printf("note: %s\n", note.c_str());
    if (report.needs_imatrix)
        std::printf("warning: a real run of %s needs an importance matrix (--imatrix FILE)\n",
                    report.type.c_str());
    const double elements = report.input_elements ? double(report.input_elements) : 1.0;
    std::printf("model size = %8.2f MiB (%.2f BPW)\n", from_total / kMiB,
                from_total * 8.0 / elements);
    std::printf("quant size = %8.2f MiB (%.2f BPW)\n", to_total / kMiB, to_total * 8.0 / elements);
    std::printf("%s %s: %zu tensors, %llu -> %llu bytes%s\n",
                report.written ? "wrote" : "would write", report.type.c_str(),
                report.tensors.size(), static_cast<unsigned long long>(report.input_bytes),
                static_cast<unsigned long long>(report.output_bytes),
                report.outputs.size() > 1
                    ? (" in " + std::to_string(report.outputs.size()) + " shards").c_str()
                    : "");
}

}  // namespace rebox::cli
