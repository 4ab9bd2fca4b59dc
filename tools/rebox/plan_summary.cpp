// Short text summaries of a plan shared by `rebox plan` and `rebox convert`.
#include "plan_summary.hpp"

#include <map>

#include "rebox/ggml_type.hpp"

namespace rebox::cli {

namespace {

std::string count_text(const std::map<std::string, size_t>& counts) {
    std::string text;
    for (const auto& [name, n] : counts)
        text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return text;
}

}  // namespace

std::string type_counts(const PlanReport& plan) {
    std::map<std::string, size_t> counts;
    for (const PlannedTensor& t : plan.tensors) ++counts[ggml_type_name(t.type)];
    return count_text(counts);
}

std::string quantized_type_counts(const QuantizeReport& report) {
    std::map<std::string, size_t> counts;
    for (const QuantizedTensor& t : report.tensors) ++counts[ggml_type_name(t.to)];
    return count_text(counts);
}

}  // namespace rebox::cli
