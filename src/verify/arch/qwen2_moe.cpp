// verify's qwen2_moe (Qwen2MoeForCausalLM): the decoder, expert and shared-expert shapes,
// TextModel's KVs (the shared expert's width is checked for every mixture of experts that has
// one); an NVFP4 factor is applied on attention and the output only.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_qwen2_moe() {
    static constexpr std::string_view kModelTypes[] = {"qwen2_moe"};
    static const RefArch kArch{.gguf_arch = "qwen2moe",
                               .model_types = kModelTypes,
                               .kvs = kDecoderKvs,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
