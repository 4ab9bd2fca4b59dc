// verify's one list of the architectures it knows (ref_arch.hpp), each defined in its own file of
// this folder, and the look-ups over it. The order is the writer's: a GGUF name two families share
// ("llama": llama and mixtral; "bert": bert and xlm-roberta) finds the first.
#include <algorithm>

#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref {
namespace detail {
const RefArch& ref_qwen3();
const RefArch& ref_qwen2();
const RefArch& ref_llama();
const RefArch& ref_qwen3_moe();
const RefArch& ref_qwen2_moe();
const RefArch& ref_mixtral();
const RefArch& ref_phi3();
const RefArch& ref_gemma();
const RefArch& ref_gemma2();
const RefArch& ref_gemma3();
const RefArch& ref_gemma_embedding();
const RefArch& ref_bert();
const RefArch& ref_nomic_bert();
const RefArch& ref_xlm_roberta();
const RefArch& ref_gpt_oss();
const RefArch& ref_modernbert();
const RefArch& ref_seed_oss();
const RefArch& ref_olmo2();
const RefArch& ref_smollm3();
const RefArch& ref_mistral3();
const RefArch& ref_qwen2vl();
const RefArch& ref_qwen3vl();
const RefArch& ref_qwen3vlmoe();
const RefArch& ref_apertus();
const RefArch& ref_qwen35();
const RefArch& ref_qwen35moe();
const RefArch& ref_qwen3next();
const RefArch& ref_glm4moe();
const RefArch& ref_deepseek2();
const RefArch& ref_glm4_moe_lite();
const RefArch& ref_gemma4();
const RefArch& ref_nemotron_h();
const RefArch& ref_nemotron_h_moe();
}  // namespace detail

namespace {

std::span<const RefArch* const> all_ref_archs() {
    static const RefArch* const kArchs[] = {
        &detail::ref_qwen3(),         &detail::ref_qwen2(),           &detail::ref_llama(),
        &detail::ref_qwen3_moe(),     &detail::ref_qwen2_moe(),       &detail::ref_mixtral(),
        &detail::ref_phi3(),          &detail::ref_gemma(),           &detail::ref_gemma2(),
        &detail::ref_gemma3(),        &detail::ref_gemma_embedding(), &detail::ref_bert(),
        &detail::ref_xlm_roberta(),   &detail::ref_nomic_bert(),      &detail::ref_gpt_oss(),
        &detail::ref_modernbert(),    &detail::ref_seed_oss(),        &detail::ref_olmo2(),
        &detail::ref_smollm3(),       &detail::ref_mistral3(),        &detail::ref_apertus(),
        &detail::ref_qwen35(),        &detail::ref_qwen35moe(),       &detail::ref_qwen3next(),
        &detail::ref_glm4moe(),       &detail::ref_gemma4(),          &detail::ref_deepseek2(),
        &detail::ref_glm4_moe_lite(), &detail::ref_qwen2vl(),         &detail::ref_qwen3vl(),
        &detail::ref_qwen3vlmoe(),    &detail::ref_nemotron_h(),      &detail::ref_nemotron_h_moe(),
    };
    return kArchs;
}

}  // namespace

const RefArch* find_ref_arch(std::string_view model_type) {
    for (const RefArch* arch : all_ref_archs())
        if (arch->gguf_arch == model_type ||
            std::find(arch->model_types.begin(), arch->model_types.end(), model_type) !=
                arch->model_types.end())
            return arch;
    return nullptr;
}

const RefArch* select_ref_arch(const nlohmann::json& root, std::string_view model_type) {
    for (const RefArch* arch : all_ref_archs())
        if (arch->selects != nullptr && arch->selects(root, model_type)) return arch;
    return find_ref_arch(model_type);
}

}  // namespace rebox::verify_ref
