// verify's gemma (GemmaForCausalLM, GemmaModel): every norm.weight written as weight + 1,
// GemmaModel's KVs (no rope.freq_base); an NVFP4 factor is applied on attention and the output.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_gemma() {
    static constexpr std::string_view kModelTypes[] = {"gemma"};
    static const RefArch kArch{.gguf_arch = "gemma",
                               .model_types = kModelTypes,
                               .kvs = kGemmaKvs,
                               .norm_plus_one = true,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
