// verify's gemma-embedding (EmbeddingGemma: a gemma3_text config whose architectures[0] is
// "Gemma3TextModel", as llama.cpp's converter chooses it; verify then calls the model type by its
// GGUF name). Gemma3TextConfig's defaults but sliding_window read as written (the converter
// requires it), gemma3's norm shift and embedding cut, and the sentence-transformers Dense
// modules: dense_2 {n_embd, out} and dense_3 {in, n_embd} as llama.cpp's loader creates them, in
// HF order [out, in], with their in/out features as KVs.
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {
namespace gemma_embedding_ref {

bool selects(const nlohmann::json& root, std::string_view model_type) {
    return model_type == "gemma3_text" && ref_first_architecture(root) == "Gemma3TextModel";
}

std::optional<std::vector<int64_t>> dense_shape(const RefConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size;
    if (name == "2_Dense.linear.weight" && c.dense_2)
        return std::vector<int64_t>{c.dense_2->out, hidden};
    if (name == "3_Dense.linear.weight" && c.dense_3)
        return std::vector<int64_t>{hidden, c.dense_3->in};
    return std::nullopt;
}

}  // namespace gemma_embedding_ref

const RefArch& ref_gemma_embedding() {
    using namespace gemma_embedding_ref;
    static constexpr RefKv kKvs[] = {
        RefKv::rope_freq_base,
        RefKv::rope_freq_base_swa,
        RefKv::rms_epsilon,
        RefKv::key_length,
        RefKv::value_length,
        RefKv::final_logit_softcapping,
        RefKv::sliding_window_required,
        RefKv::dense_2_feat_in,
        RefKv::dense_3_feat_in,
    };
    static const RefArch kArch{
        .gguf_arch = "gemma-embedding",
        .selects = selects,
        .prepare_config = [](nlohmann::json& root) { fill_gemma3_text_defaults(root, true); },
        .shape = dense_shape,
        .kvs = kKvs,
        .norm_plus_one = true,
        .vocab_rows_cut = true,
        .dense_modules = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
