// verify's xlm-roberta (XLMRobertaModel and its rerankers, written as GGUF "bert"): bert's encoder
// KVs; RoBERTa numbers positions from pad_token_id + 1 (transformers' default pad 1), and
// llama.cpp's converter leaves that many rows out of the position table and the context length.
#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {
namespace xlm_roberta_ref {

void position_offset(const nlohmann::json& root, RefConfig& c) {
    uint32_t pad = 1;  // transformers' XLMRobertaConfig default; 0 is a valid token id
    if (const auto value = root.find("pad_token_id"); value != root.end() && !value->is_null()) {
        if (!value->is_number_unsigned() || value->get<uint64_t>() >= kMaxVocab)
            throw_input_error("config.json", "pad_token_id", "expected a token id");
        pad = static_cast<uint32_t>(value->get<uint64_t>());
    }
    c.position_offset = pad + 1;
    if (c.max_position_embeddings <= c.position_offset)
        throw_input_error("config.json", "max_position_embeddings",
                          "leaves no position after pad_token_id + 1");
}

}  // namespace xlm_roberta_ref

const RefArch& ref_xlm_roberta() {
    using namespace xlm_roberta_ref;
    static constexpr std::string_view kModelTypes[] = {"xlm-roberta"};
    static const RefArch kArch{.gguf_arch = "bert",
                               .model_types = kModelTypes,
                               .finish_config = position_offset,
                               .encoder = true,
                               .bert_model_class = true,
                               .scale_roles = kScaleAttention};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
