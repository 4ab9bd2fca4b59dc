// verify's seed_oss (SeedOssForCausalLM, converter class SeedOssModel: a plain TextModel): the
// decoder shapes (q/k/v biases, post_attention_layernorm), no transform, TextModel's KVs (no
// rope.dimension_count) with SeedOssConfig's head_dim 128 when config.json has none; an NVFP4
// factor is applied on attention and the output only (src/models/seed-oss.cpp).
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

// TextModel's: head_dim as key/value length, no rope.dimension_count.
constexpr RefKv kSeedOssKvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon, RefKv::key_length,
                                 RefKv::value_length};

const RefArch& ref_seed_oss() {
    static constexpr std::string_view kModelTypes[] = {"seed_oss"};
    static const RefArch kArch{.gguf_arch = "seed_oss",
                               .model_types = kModelTypes,
                               .prepare_config =
                                   [](nlohmann::json& root) {
                                       if (!root.contains("head_dim") || root["head_dim"].is_null())
                                           root["head_dim"] = 128;
                                   },
                               .kvs = kSeedOssKvs,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
