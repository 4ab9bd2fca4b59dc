// parse_kv_override: llama-quantize's KEY=TYPE:VALUE syntax and value types, strictly read.
#include "quantize_file/kv_override.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "rebox/error.hpp"

namespace rebox {
namespace {

constexpr size_t kMaxKeyBytes = 127;    // llama_model_kv_override::key[128]
constexpr size_t kMaxValueBytes = 127;  // val_str[128]

[[noreturn]] void refuse(const std::string& text, const std::string& what) {
    throw_input_error("--override-kv", text, what,
                      "KEY=TYPE:VALUE with TYPE int, float, bool or str, e.g. "
                      "general.name=str:my-model");
}

uint32_t parse_u32(const std::string& text, const std::string& digits) {
    const bool all_digits =
        !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
    if (!all_digits) refuse(text, "int: takes a non-negative decimal integer");
    errno = 0;
    const unsigned long long value = std::strtoull(digits.c_str(), nullptr, 10);
    if (errno == ERANGE || value > UINT32_MAX)
        refuse(text, "int: is written as UINT32 and must be below 2^32");
    return static_cast<uint32_t>(value);
}

float parse_f32(const std::string& text, const std::string& number) {
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value) ||
        !std::isfinite(static_cast<float>(value)))
        refuse(text, "float: takes a finite number that F32 can hold");
    return static_cast<float>(value);  // llama-quantize: atof, then gguf_set_val_f32
}

}  // namespace

GgufKV parse_kv_override(const std::string& text) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos) refuse(text, "no '='");
    if (eq == 0 || eq > kMaxKeyBytes) refuse(text, "the key must have 1 to 127 bytes");
    GgufKV kv{text.substr(0, eq), {}};
    if (kv.key == "general.alignment")
        refuse(text,
               "general.alignment cannot be overridden (llama-quantize pads to 32 whatever "
               "the key says)");
    const std::string rest = text.substr(eq + 1);
    auto value_after = [&](const std::string& tag) -> std::optional<std::string> {
        if (rest.compare(0, tag.size(), tag) != 0) return std::nullopt;
        return rest.substr(tag.size());
    };
    if (const auto v = value_after("int:")) {
        kv.value = GgufValue::u32(parse_u32(text, *v));
    } else if (const auto v = value_after("float:")) {
        kv.value = GgufValue::f32(parse_f32(text, *v));
    } else if (const auto v = value_after("bool:")) {
        if (*v != "true" && *v != "false") refuse(text, "bool: takes true or false");
        kv.value = GgufValue::boolean(*v == "true");
    } else if (const auto v = value_after("str:")) {
        if (v->size() > kMaxValueBytes) refuse(text, "str: values have at most 127 bytes");
        if (v->find('\0') != std::string::npos) refuse(text, "str: values cannot hold NUL");
        kv.value = GgufValue::str(*v);
    } else {
        refuse(text, "the type must be int, float, bool or str");
    }
    return kv;
}

}  // namespace rebox
