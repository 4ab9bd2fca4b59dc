// verify's gpt-oss (GptOssForCausalLM, GptOssModel.set_gguf_parameters): the sliding window,
// expert_feed_forward_length = intermediate_size, and the yarn rope's type, factor, original
// context and betas. Its MXFP4 source layout is read by sources/gpt_oss_source_index.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_gpt_oss() {
    static constexpr std::string_view kModelTypes[] = {"gpt_oss"};
    static constexpr RefKv kKvs[] = {
        RefKv::rope_freq_base,    RefKv::rms_epsilon,    RefKv::key_length,
        RefKv::value_length,      RefKv::sliding_window, RefKv::expert_feed_forward_length_ffn,
        RefKv::rope_scaling_yarn,
    };
    static const RefArch kArch{.gguf_arch = "gpt-oss", .model_types = kModelTypes, .kvs = kKvs};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
