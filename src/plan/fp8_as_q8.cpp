// fp8_forced_q8_0 (fp8_as_q8.hpp): conversion/base.py's tensor_force_quant under --fp8-as-q8.
#include "plan/fp8_as_q8.hpp"

namespace rebox::plan_detail {

bool fp8_forced_q8_0(const SourceModel& source, const TensorPlan& tp) {
    if (tp.is_computed() || tp.ne.size() < 2) return false;
    if (source.tensors[tp.source_index].fp8) return true;
    for (const size_t expert : tp.expert_sources)
        if (source.tensors[expert].fp8) return true;
    return false;
}

}  // namespace rebox::plan_detail
