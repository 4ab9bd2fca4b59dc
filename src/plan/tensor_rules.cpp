// The exactness rules per tensor. Quantized, --outtype q4_1: Q4_1 iff bits <= 4, group % 32 == 0
// and cols % 32 == 0 (every failed condition is its own Blocker); --outtype f32: exact binary32
// values. Float sources: 1-D and *norm.weight -> F32 (norms stay F32, notes/gguf.md §3.2), other
// tensors keep their dtype (or F32 with --outtype f32).
#include "tensor_rules.hpp"

#include <algorithm>
#include <cstring>

#include "rebox/format/ggml_type.hpp"
#include "rebox/format/half.hpp"

namespace rebox::plan_detail {
namespace {

constexpr int64_t kBlock = 32;  // QK4_1 = QK5_1 = 32

std::vector<int64_t> reversed(const std::vector<int64_t>& shape) {
    return std::vector<int64_t>(shape.rbegin(), shape.rend());
}

// Non-F16 scales/mins (a future adapter) must be exactly representable as fp16 for a block copy.
std::optional<std::string> scales_not_half(const QuantView& q) {
    if (q.scale_dtype == FloatDtype::F16) return std::nullopt;
    const size_t width = float_dtype_size(q.scale_dtype);
    for (const auto& [values, what] : {std::pair{q.scales, "scale"}, std::pair{q.mins, "min"}}) {
        for (size_t i = 0; i + width <= values.size(); i += width) {
            float f;
            if (q.scale_dtype == FloatDtype::F32) {
                std::memcpy(&f, values.data() + i, 4);
            } else {
                f = bf16_to_float(static_cast<uint16_t>(values[i] | values[i + 1] << 8));
            }
            uint16_t half;
            if (!float_to_half_exact(f, &half))
                return std::string(what) + " of group " + std::to_string(i / width) + " (" +
                       std::to_string(f) + ", " + float_dtype_name(q.scale_dtype) +
                       ") is not exactly representable as fp16";
        }
    }
    return std::nullopt;
}

bool plan_quantized(const SourceTensor& source, OutType outtype, TensorPlan* plan,
                    std::vector<Blocker>* blockers) {
    const QuantView& q = *source.quant;
    const int64_t cols = source.shape.at(1);
    plan->ne = reversed(source.shape);
    if (outtype == OutType::f32) {
        plan->type = static_cast<uint32_t>(GgmlType::F32);
        plan->encoding = Encoding::dequant_f32;
        return true;
    }
    const size_t before = blockers->size();
    auto refuse = [&](std::string reason, std::string fix) {
        blockers->push_back(Blocker{source.name, std::move(reason), std::move(fix)});
    };
    if (q.bits == 5) {
        refuse("bits 5: a 5-bit code does not fit a Q4_1 nibble",
               "a lossless Q5_1 path is planned; not yet enabled (or use --outtype f32)");
    } else if (q.bits > 4) {
        refuse("bits " + std::to_string(q.bits) +
                   ": the codes do not fit a Q4_1 nibble (expected <= 4)",
               "re-export at <= 4 bits, or use --outtype f32 (exact binary32 values)");
    }
    if (q.group % kBlock != 0)
        refuse("group " + std::to_string(q.group) +
                   " is not a multiple of 32: a Q4_1 block would span two groups",
               "re-export with group a multiple of 32");
    if (cols % kBlock != 0)
        refuse("cols " + std::to_string(cols) +
                   " is not a multiple of 32: GGUF rows must be whole Q4_1 blocks",
               "use --outtype f32 (exact binary32 values)");
    if (const auto problem = scales_not_half(q))
        refuse(*problem, "re-export with fp16 scales and mins");
    if (blockers->size() != before) return false;
    plan->type = static_cast<uint32_t>(GgmlType::Q4_1);
    plan->encoding = Encoding::q4_1_repack;
    return true;
}

bool plan_float(const SourceTensor& source, const std::string& gguf_name, OutType outtype,
                TensorPlan* plan, std::vector<Blocker>* blockers) {
    if (source.shape.empty() || source.shape.size() > 4) {
        blockers->push_back(Blocker{source.name,
                                    "a " + std::to_string(source.shape.size()) +
                                        "-D tensor cannot be a GGUF tensor (expected 1 to 4 dims)",
                                    "reshape or remove the tensor"});
        return false;
    }
    plan->ne = reversed(source.shape);
    const bool keep_f32 =
        source.shape.size() == 1 || gguf_name.ends_with("norm.weight") || outtype == OutType::f32;
    if (keep_f32 || source.float_dtype == FloatDtype::F32) {
        plan->type = static_cast<uint32_t>(GgmlType::F32);
        plan->encoding =
            source.float_dtype == FloatDtype::F32 ? Encoding::copy_f32 : Encoding::widen_f32;
    } else if (source.float_dtype == FloatDtype::F16) {
        plan->type = static_cast<uint32_t>(GgmlType::F16);
        plan->encoding = Encoding::copy_f16;
    } else {
        plan->type = static_cast<uint32_t>(GgmlType::BF16);
        plan->encoding = Encoding::copy_bf16;
    }
    return true;
}

}  // namespace

bool plan_tensor(const SourceTensor& source, size_t source_index, const std::string& gguf_name,
                 OutType outtype, TensorPlan* plan, std::vector<Blocker>* blockers) {
    plan->source_index = source_index;
    plan->gguf_name = gguf_name;
    const bool ok = source.is_quantized() ? plan_quantized(source, outtype, plan, blockers)
                                          : plan_float(source, gguf_name, outtype, plan, blockers);
    if (!ok) return false;
    const auto nbytes = ggml_nbytes(plan->type, plan->ne);
    if (!nbytes) {
        blockers->push_back(
            Blocker{source.name,
                    "no valid GGUF size for " + ggml_type_name(plan->type) + " with this shape",
                    "check the tensor's shape"});
        return false;
    }
    plan->nbytes = *nbytes;
    return true;
}

}  // namespace rebox::plan_detail
