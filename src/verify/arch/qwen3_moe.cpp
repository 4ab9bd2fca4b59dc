// verify's qwen3_moe (Qwen3MoeForCausalLM): the decoder and expert shapes, TextModel's KVs (the
// expert counts and moe_intermediate_size are checked for every mixture of experts); an NVFP4
// factor is applied on attention, the stacked experts and the output.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_qwen3_moe() {
    static constexpr std::string_view kModelTypes[] = {"qwen3_moe"};
    static const RefArch kArch{.gguf_arch = "qwen3moe",
                               .model_types = kModelTypes,
                               .kvs = kDecoderKvs,
                               .scale_roles = kScaleAttention | kScaleExperts | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
