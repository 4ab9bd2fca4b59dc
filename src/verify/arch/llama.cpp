// verify's llama (LlamaForCausalLM, MistralForCausalLM): q/k rows permuted (LlamaModel.permute),
// rope_freqs computed for llama3 rope scaling, TextModel's KVs plus vocab_size; an NVFP4 factor is
// applied on every projection and the output.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_llama() {
    static constexpr std::string_view kModelTypes[] = {"llama", "mistral"};
    static const RefArch kArch{
        .gguf_arch = "llama",
        .model_types = kModelTypes,
        .kvs = kLlamaKvs,
        .rope_permute_qk = true,
        .llama3_rope_freqs = true,
        .scale_roles = kScaleAttention | kScaleFfn | kScaleExperts | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
