// verify's phi3 (Phi3ForCausalLM, Phi3MiniModel.set_gguf_parameters): fused qkv / gate_up shapes
// (decoder table), the long-rope factor tensors computed from config.json, the partial rotary
// dimension count, sliding_window written as 0 for none, the original context; an NVFP4 factor is
// applied on attention and the output only.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_phi3() {
    static constexpr std::string_view kModelTypes[] = {"phi3"};
    static constexpr RefKv kKvs[] = {
        RefKv::rope_scaling_original_context_length,
        RefKv::rms_epsilon,
        RefKv::rope_dimension_count_rotary,
        RefKv::rope_freq_base,
        RefKv::sliding_window_or_zero,
    };
    static const RefArch kArch{.gguf_arch = "phi3",
                               .model_types = kModelTypes,
                               .kvs = kKvs,
                               .phi3_rope_factors = true,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
