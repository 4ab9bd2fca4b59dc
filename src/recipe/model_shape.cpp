// QuantModelShape from GGUF KVs, with llama.cpp's defaults for absent keys.
#include "recipe/model_shape.hpp"

#include <optional>

#include "rebox/error.hpp"

namespace rebox {
namespace {

const GgufValue* find_kv(const std::vector<GgufKV>& kvs, const std::string& key) {
    for (const GgufKV& kv : kvs)
        if (kv.key == key) return &kv.value;
    return nullptr;
}

// An integer KV, or element 0 of an integer array (get_key_or_arr); nullopt when absent.
std::optional<int64_t> first_integer(const std::vector<GgufKV>& kvs, const std::string& key,
                                     const std::string& file) {
    const GgufValue* value = find_kv(kvs, key);
    if (value == nullptr) return std::nullopt;
    std::optional<int64_t> number;
    if (value->is_array()) {
        if (!value->array.empty()) {
            GgufValue first;
            first.type = value->elem_type;
            first.scalar = value->array.front();
            number = first.as_integer();
        }
    } else {
        number = value->as_integer();
    }
    if (!number || *number < 0 || *number > UINT32_MAX)
        throw_input_error(file, key, "not a non-negative 32-bit integer (or array of them)",
                          "the value llama.cpp's loader reads");
    return number;
}

// llama.cpp's architectures that name an 80-layer (jais2: 68-layer) model LLM_TYPE_70B
// (src/models/<arch>.cpp load_arch_hparams); llama only with grouped-query attention and
// not as an 8-expert model.
bool is_type_70b(const QuantModelShape& shape) {
    if (shape.arch == "llama")
        return shape.n_expert != 8 && shape.n_layer == 80 && shape.n_head != shape.n_head_kv;
    if (shape.arch == "qwen2" || shape.arch == "deci" || shape.arch == "olmo")
        return shape.n_layer == 80;
    if (shape.arch == "jais2") return shape.n_layer == 68;
    return false;
}

}  // namespace

uint32_t QuantModelShape::n_gqa() const {
    if (arch == "clip")
        throw_input_error(
            "TYPE", "clip",
            "llama-quantize v0.4.0 aborts on this type for an mmproj file (it reads "
            "the head count of a model without layers)",
            "Q8_0, Q4_K_M or another type without the n_gqa rule (docs/quantize-command.md)");
    return n_head_kv == 0 ? 0 : n_head / n_head_kv;
}

QuantModelShape quant_model_shape(const std::vector<GgufKV>& kvs, const std::string& file) {
    QuantModelShape shape;
    const GgufValue* arch = find_kv(kvs, "general.architecture");
    if (arch == nullptr || arch->as_string() == nullptr)
        throw_input_error(file, "general.architecture", "missing or not a string",
                          "a GGUF model file (llama-quantize needs the architecture)");
    shape.arch = *arch->as_string();
    // llama.cpp's dummy LLM_ARCH_CLIP (an mmproj file) loads tensors only, no hparams: its recipe
    // sees 0 layers, 0 heads and no experts (llama_model_base::load_hparams returns early).
    if (shape.arch == "clip") return shape;
    const std::string prefix = shape.arch + ".";
    const auto blocks = first_integer(kvs, prefix + "block_count", file);
    if (!blocks || *blocks < 1 || *blocks > 4096)
        throw_input_error(file, prefix + "block_count", "missing or not in [1, 4096]",
                          "the model's layer count");
    shape.n_layer = static_cast<int>(*blocks);
    shape.n_head = static_cast<uint32_t>(
        first_integer(kvs, prefix + "attention.head_count", file).value_or(0));
    shape.n_head_kv = static_cast<uint32_t>(
        first_integer(kvs, prefix + "attention.head_count_kv", file).value_or(shape.n_head));
    shape.n_expert =
        static_cast<uint32_t>(first_integer(kvs, prefix + "expert_count", file).value_or(0));
    shape.type_70b = is_type_70b(shape);
    return shape;
}

}  // namespace rebox
