// verify's bert (BertModel, BertForSequenceClassification rerankers): an encoder (layer_norm_eps,
// causal false, token types, classifier labels), no transform; an NVFP4 factor is applied on
// attention only.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_bert() {
    static constexpr std::string_view kModelTypes[] = {"bert"};
    static const RefArch kArch{.gguf_arch = "bert",
                               .model_types = kModelTypes,
                               .encoder = true,
                               .bert_model_class = true,
                               .scale_roles = kScaleAttention};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
