// Short text summaries of a plan shared by `rebox plan` and `rebox convert`.
#include "plan_summary.hpp"

#include <map>

#include "rebox/format/ggml_type.hpp"

namespace rebox::cli {

std::string type_counts(const Plan& plan) {
    std::map<std::string, size_t> counts;
    for (const TensorPlan& tp : plan.tensors) ++counts[ggml_type_name(tp.type)];
    std::string text;
    for (const auto& [name, n] : counts)
        text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return text;
}

}  // namespace rebox::cli
