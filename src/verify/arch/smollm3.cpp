// verify's smollm3 (SmolLM3ForCausalLM; converter class SmolLM3Model, a LlamaModel): q/k rows
// permuted (LlamaModel.permute), TextModel's KVs with key/value length only from a head_dim in
// config.json, then vocab_size and rope.dimension_count; no rope_freqs (the smollm3 loader takes
// none); an NVFP4 factor is applied on attention and the output only (src/models/smollm3.cpp).
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

constexpr RefKv kSmolLm3Kvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon,
                                 RefKv::head_dim_lengths_given, RefKv::vocab_size,
                                 RefKv::rope_dimension_count};

const RefArch& ref_smollm3() {
    static constexpr std::string_view kModelTypes[] = {"smollm3"};
    static const RefArch kArch{.gguf_arch = "smollm3",
                               .model_types = kModelTypes,
                               .kvs = kSmolLm3Kvs,
                               .rope_permute_qk = true,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
