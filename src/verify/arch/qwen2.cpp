// verify's qwen2 (Qwen2ForCausalLM): the decoder shapes (q/k/v biases included), no transform,
// TextModel's KVs; an NVFP4 factor is applied on attention and the output only.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_qwen2() {
    static constexpr std::string_view kModelTypes[] = {"qwen2"};
    static const RefArch kArch{.gguf_arch = "qwen2",
                               .model_types = kModelTypes,
                               .kvs = kDecoderKvs,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
