// verify's qwen3 (Qwen3ForCausalLM): the decoder shapes, no transform, TextModel's KVs; an NVFP4
// factor is applied on attention, the dense feed-forward and the output.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_qwen3() {
    static constexpr std::string_view kModelTypes[] = {"qwen3"};
    static const RefArch kArch{.gguf_arch = "qwen3",
                               .model_types = kModelTypes,
                               .kvs = kDecoderKvs,
                               .scale_roles = kScaleAttention | kScaleFfn | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
