// verify's gemma4 (Gemma4ForCausalLM, Gemma4ForConditionalGeneration's text model): not written
// yet. rebox convert refuses every Gemma 4 checkpoint for now (its tokenizer is not written), so
// verify has no file of its own to read back; a Gemma 4 GGUF made elsewhere is refused with a
// BLOCKER here rather than checked against expectations verify does not have (the per-layer
// attention shapes, the KV arrays, the proportional rope_freqs).
#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {

const RefArch& ref_gemma4() {
    static constexpr std::string_view kModelTypes[] = {"gemma4_text", "gemma4"};
    static const RefArch kArch{
        .gguf_arch = "gemma4",
        .model_types = kModelTypes,
        .prepare_config =
            [](nlohmann::json&) {
                throw Error(ExitClass::blocker, "config.json", "model_type",
                            "verify's expectations for gemma4 (Gemma 4) are not written yet",
                            "an architecture verify knows");
            },
        .scale_roles = kScaleAttention | kScaleFfn | kScaleExperts | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
