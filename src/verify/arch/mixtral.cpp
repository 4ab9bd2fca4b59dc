// verify's mixtral (MixtralForCausalLM, written as GGUF "llama"): llama's permutation and rope
// tensors and KVs, the experts stacked into ffn_*_exps (block_sparse_moe names, in the decoder
// table).
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_mixtral() {
    static constexpr std::string_view kModelTypes[] = {"mixtral"};
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
