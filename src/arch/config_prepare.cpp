// The per-architecture config.json rewrites (see config_prepare.hpp), dispatched by model_type to
// the architecture's own file.
#include "arch/config_prepare.hpp"

#include <nlohmann/json.hpp>

#include "arch_tables.hpp"

namespace rebox::arch {

void prepare_config(std::string_view model_type, nlohmann::json& root) {
    if (model_type == "nomic_bert") detail::prepare_nomic_bert_config(root);
    if (model_type == "gemma-embedding") detail::prepare_embedding_gemma_config(root);
    if (model_type == "modernbert") detail::prepare_modernbert_config(root);
}

}  // namespace rebox::arch
