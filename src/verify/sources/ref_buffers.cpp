// The converter's skipped non-parameter buffers, as verify reads them (ref_buffers.hpp).
#include "verify/sources/ref_buffers.hpp"

namespace rebox::verify_ref {

bool is_skipped_buffer(bool bert_model_class, std::string_view source_name) {
    constexpr std::string_view kAnyClass[] = {".attention.masked_bias", ".attention.bias",
                                              ".rotary_emb.inv_freq"};
    for (const std::string_view suffix : kAnyClass)
        if (source_name.ends_with(suffix)) return true;
    if (!bert_model_class) return false;
    for (const std::string_view prefix : {"bert.", "roberta.", "model."})
        if (source_name.starts_with(prefix)) {
            source_name.remove_prefix(prefix.size());
            break;
        }
    return source_name == "embeddings.position_ids";
}

}  // namespace rebox::verify_ref
