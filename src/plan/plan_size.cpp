// plan_file_bytes: the exact single-file GGUF size of a plan, from the same GgufLayout the writer
// uses (KVs, tensor infos, 32-byte aligned data).
#include "format/gguf_layout.hpp"
#include "plan/plan.hpp"

namespace rebox {

uint64_t plan_file_bytes(const Plan& plan) {
    GgufLayout layout;
    for (const GgufKV& kv : plan.kvs) layout.add_kv(kv.key, kv.value);
    for (const TensorPlan& tensor : plan.tensors)
        layout.add_tensor(tensor.gguf_name, tensor.ne, tensor.type);
    return layout.file_size();
}

}  // namespace rebox
