// HF <-> llama.cpp tensor names through the architecture registry (include/rebox/arch): `arch` is
// a config.json model_type or a GGUF architecture name.
#include "arch/tensor_names.hpp"

#include "arch/architecture.hpp"

namespace rebox {

std::string strip_model_prefix(std::string_view hf_name) {
    return arch::strip_model_prefix(hf_name);
}

std::optional<std::string> gguf_tensor_name(std::string_view arch_name, std::string_view hf_name,
                                            uint32_t main_layers) {
    const arch::Architecture* arch = arch::find_architecture(arch_name);
    if (arch == nullptr) return std::nullopt;
    auto ref = arch::resolve_hf(*arch, hf_name, main_layers);
    if (!ref) return std::nullopt;
    return std::move(ref->gguf_name);
}

std::optional<std::string> hf_tensor_name(std::string_view arch_name, std::string_view gguf_name,
                                          uint32_t main_layers) {
    const arch::Architecture* arch = arch::find_architecture(arch_name);
    if (arch == nullptr) return std::nullopt;
    auto ref = arch::resolve_gguf(*arch, gguf_name, main_layers);
    if (!ref) return std::nullopt;
    return std::move(ref->hf_name);
}

bool is_supported_arch(std::string_view model_type) {
    return arch::find_architecture(model_type) != nullptr;
}

}  // namespace rebox
