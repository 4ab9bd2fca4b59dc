// Short text summaries of a plan shared by `rebox plan` and `rebox convert`.
#include "plan_summary.hpp"

#include <map>

#include "rebox/ggml_type.hpp"

namespace rebox::cli {

std::string type_counts(const PlanReport& plan) {
    std::map<std::string, size_t> counts;
    for (const PlannedTensor& t : plan.tensors) ++counts[ggml_type_name(t.type)];
    std::string text;
    for (const auto& [name, n] : counts)
        text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return text;
}

}  // namespace rebox::cli
