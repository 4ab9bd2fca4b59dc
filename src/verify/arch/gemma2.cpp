// verify's gemma2 (Gemma2ForCausalLM, Gemma2Model): gemma's norm shift and KVs, plus the logit
// softcappings and the sliding window when config.json has them.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_gemma2() {
    static constexpr std::string_view kModelTypes[] = {"gemma2"};
    static constexpr RefKv kKvs[] = {RefKv::rms_epsilon,
                                     RefKv::key_length,
                                     RefKv::value_length,
                                     RefKv::attn_logit_softcapping,
                                     RefKv::final_logit_softcapping,
                                     RefKv::sliding_window};
    static const RefArch kArch{.gguf_arch = "gemma2",
                               .model_types = kModelTypes,
                               .kvs = kKvs,
                               .norm_plus_one = true,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
