// Text -> GGUF values for `rebox meta --set`: type names, scalars by declared type, JSON arrays.
#include "gguf_tools/kv_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rebox/error.hpp"

namespace rebox {
namespace {

constexpr uint64_t kMaxJsonFileBytes = 1ull << 30;

std::optional<GgufType> scalar_type_from_name(std::string_view name) {
    for (uint32_t t = 0; t < kGgufTypeCount; ++t) {
        const auto type = static_cast<GgufType>(t);
        if (type != GgufType::ARRAY && gguf_type_name(type) == name) return type;
    }
    return std::nullopt;
}

bool is_unsigned(GgufType t) {
    return t == GgufType::UINT8 || t == GgufType::UINT16 || t == GgufType::UINT32 ||
           t == GgufType::UINT64;
}
bool is_signed(GgufType t) {
    return t == GgufType::INT8 || t == GgufType::INT16 || t == GgufType::INT32 ||
           t == GgufType::INT64;
}
uint64_t unsigned_max(GgufType t) {
    switch (t) {
        case GgufType::UINT8:
            return UINT8_MAX;
        case GgufType::UINT16:
            return UINT16_MAX;
        case GgufType::UINT32:
            return UINT32_MAX;
        default:
            return UINT64_MAX;
    }
}
std::pair<int64_t, int64_t> signed_range(GgufType t) {
    switch (t) {
        case GgufType::INT8:
            return {INT8_MIN, INT8_MAX};
        case GgufType::INT16:
            return {INT16_MIN, INT16_MAX};
        case GgufType::INT32:
            return {INT32_MIN, INT32_MAX};
        default:
            return {INT64_MIN, INT64_MAX};
    }
}

// Whole-string integer parse; nullopt on junk or overflow.
template <typename T>
std::optional<T> parse_integer(const std::string& text) {
    T value{};
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
    return value;
}

std::optional<double> parse_real(const std::string& text) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<GgufTypeSpec> parse_gguf_type_spec(std::string_view text) {
    if (text.starts_with("ARRAY[") && text.ends_with("]")) {
        const auto elem = scalar_type_from_name(text.substr(6, text.size() - 7));
        if (!elem) return std::nullopt;
        return GgufTypeSpec{GgufType::ARRAY, *elem};
    }
    const auto type = scalar_type_from_name(text);
    if (!type) return std::nullopt;
    return GgufTypeSpec{*type, GgufType::STRING};
}

std::string gguf_type_spec_name(const GgufValue& value) {
    if (!value.is_array()) return std::string(gguf_type_name(value.type));
    return "ARRAY[" + std::string(gguf_type_name(value.elem_type)) + "]";
}

GgufValue parse_gguf_scalar(const std::string& key, GgufType type, const std::string& text) {
    const std::string type_name(gguf_type_name(type));
    auto fail = [&](const std::string& expected) {
        throw_input_error("--set", key, "'" + text + "' is not a " + type_name + " value",
                          expected);
    };
    GgufValue value;
    value.type = type;
    if (is_unsigned(type)) {
        const auto v = parse_integer<uint64_t>(text);
        if (!v || *v > unsigned_max(type))
            fail("an integer from 0 to " + std::to_string(unsigned_max(type)));
        value.scalar = *v;
    } else if (is_signed(type)) {
        const auto v = parse_integer<int64_t>(text);
        const auto [lo, hi] = signed_range(type);
        if (!v || *v < lo || *v > hi)
            fail("an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
        value.scalar = *v;
    } else if (type == GgufType::FLOAT32 || type == GgufType::FLOAT64) {
        const auto v = parse_real(text);
        if (!v) fail("a decimal number such as 1e-06");
        value.scalar = type == GgufType::FLOAT32 ? static_cast<double>(static_cast<float>(*v)) : *v;
    } else if (type == GgufType::BOOL) {
        if (text != "true" && text != "false") fail("true or false");
        value.scalar = text == "true";
    } else if (type == GgufType::STRING) {
        value.scalar = text;
    } else {
        fail("a scalar type");
    }
    return value;
}

GgufValue read_gguf_array_json(const std::string& key, GgufType elem_type,
                               const std::filesystem::path& json_file) {
    const std::string file = json_file.string();
    std::error_code ec;
    const auto size = std::filesystem::file_size(json_file, ec);
    if (ec) throw_input_error(file, key, "cannot read the JSON array file: " + ec.message());
    if (size > kMaxJsonFileBytes) throw_input_error(file, key, "JSON file is larger than 1 GiB");
    std::ifstream in(json_file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw_input_error(file, key, "cannot read the JSON array file");
    nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
        throw_input_error(file, key, "not valid JSON", "a JSON array such as [1, 2, 3]");
    if (!doc.is_array())
        throw_input_error(file, key, std::string("JSON ") + doc.type_name() + " at the top level",
                          "a JSON array");
    std::vector<GgufScalar> items;
    items.reserve(doc.size());
    const std::string type_name(gguf_type_name(elem_type));
    for (size_t i = 0; i < doc.size(); ++i) {
        const nlohmann::json& item = doc[i];
        auto fail = [&](const std::string& what) {
            throw_input_error(file, key + "[" + std::to_string(i) + "]", what,
                              "a " + type_name + " element");
        };
        if (is_unsigned(elem_type)) {
            if (!item.is_number_unsigned() || item.get<uint64_t>() > unsigned_max(elem_type))
                fail(item.dump() + " is not in range");
            items.emplace_back(item.get<uint64_t>());
        } else if (is_signed(elem_type)) {
            const auto [lo, hi] = signed_range(elem_type);
            if (!item.is_number_integer() ||
                (item.is_number_unsigned() && item.get<uint64_t>() > static_cast<uint64_t>(hi)) ||
                item.get<int64_t>() < lo || item.get<int64_t>() > hi)
                fail(item.dump() + " is not in range");
            items.emplace_back(item.get<int64_t>());
        } else if (elem_type == GgufType::FLOAT32 || elem_type == GgufType::FLOAT64) {
            if (!item.is_number()) fail(item.dump() + " is not a number");
            const double v = item.get<double>();
            items.emplace_back(
                elem_type == GgufType::FLOAT32 ? static_cast<double>(static_cast<float>(v)) : v);
        } else if (elem_type == GgufType::BOOL) {
            if (!item.is_boolean()) fail(item.dump() + " is not true or false");
            items.emplace_back(item.get<bool>());
        } else if (elem_type == GgufType::STRING) {
            if (!item.is_string()) fail(item.dump() + " is not a string");
            items.emplace_back(item.get<std::string>());
        } else {
            fail("nested arrays are not supported");
        }
    }
    return GgufValue::array_of(elem_type, std::move(items));
}

}  // namespace rebox
