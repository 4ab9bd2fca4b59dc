// llama-quantize's file type names, aliases and numbers, and ggml type names in any case.
#include "recipe/quant_ftype.hpp"

#include <cctype>
#include <charconv>

#include "rebox/error.hpp"

namespace rebox {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

struct Alias {
    std::string_view name;
    QuantFtype ftype;
};
// QUANT_OPTIONS' "alias for ..." rows.
constexpr Alias kAliases[] = {
    {"Q3_K", QuantFtype::MOSTLY_Q3_K_M},
    {"Q4_K", QuantFtype::MOSTLY_Q4_K_M},
    {"Q5_K", QuantFtype::MOSTLY_Q5_K_M},
};

}  // namespace

const std::vector<QuantFtypeInfo>& quant_ftypes() {
    static const std::vector<QuantFtypeInfo> table = {
        {QuantFtype::MOSTLY_Q1_0, "Q1_0", GgmlType::Q1_0},
        {QuantFtype::MOSTLY_Q2_0, "Q2_0", GgmlType::Q2_0},
        {QuantFtype::MOSTLY_Q4_0, "Q4_0", GgmlType::Q4_0},
        {QuantFtype::MOSTLY_Q4_1, "Q4_1", GgmlType::Q4_1},
        {QuantFtype::MOSTLY_MXFP4_MOE, "MXFP4_MOE", GgmlType::MXFP4},
        {QuantFtype::MOSTLY_Q5_0, "Q5_0", GgmlType::Q5_0},
        {QuantFtype::MOSTLY_Q5_1, "Q5_1", GgmlType::Q5_1},
        {QuantFtype::MOSTLY_IQ2_XXS, "IQ2_XXS", GgmlType::IQ2_XXS},
        {QuantFtype::MOSTLY_IQ2_XS, "IQ2_XS", GgmlType::IQ2_XS},
        {QuantFtype::MOSTLY_IQ2_S, "IQ2_S", GgmlType::IQ2_XS},
        {QuantFtype::MOSTLY_IQ2_M, "IQ2_M", GgmlType::IQ2_S},
        {QuantFtype::MOSTLY_IQ1_S, "IQ1_S", GgmlType::IQ1_S},
        {QuantFtype::MOSTLY_IQ1_M, "IQ1_M", GgmlType::IQ1_M},
        {QuantFtype::MOSTLY_TQ1_0, "TQ1_0", GgmlType::TQ1_0},
        {QuantFtype::MOSTLY_TQ2_0, "TQ2_0", GgmlType::TQ2_0},
        {QuantFtype::MOSTLY_Q2_K, "Q2_K", GgmlType::Q2_K},
        {QuantFtype::MOSTLY_Q2_K_S, "Q2_K_S", GgmlType::Q2_K},
        {QuantFtype::MOSTLY_IQ3_XXS, "IQ3_XXS", GgmlType::IQ3_XXS},
        {QuantFtype::MOSTLY_IQ3_S, "IQ3_S", GgmlType::IQ3_S},
        {QuantFtype::MOSTLY_IQ3_M, "IQ3_M", GgmlType::IQ3_S},
        {QuantFtype::MOSTLY_IQ3_XS, "IQ3_XS", GgmlType::IQ3_S},
        {QuantFtype::MOSTLY_Q3_K_S, "Q3_K_S", GgmlType::Q3_K},
        {QuantFtype::MOSTLY_Q3_K_M, "Q3_K_M", GgmlType::Q3_K},
        {QuantFtype::MOSTLY_Q3_K_L, "Q3_K_L", GgmlType::Q3_K},
        {QuantFtype::MOSTLY_IQ4_NL, "IQ4_NL", GgmlType::IQ4_NL},
        {QuantFtype::MOSTLY_IQ4_XS, "IQ4_XS", GgmlType::IQ4_XS},
        {QuantFtype::MOSTLY_Q4_K_S, "Q4_K_S", GgmlType::Q4_K},
        {QuantFtype::MOSTLY_Q4_K_M, "Q4_K_M", GgmlType::Q4_K},
        {QuantFtype::MOSTLY_Q5_K_S, "Q5_K_S", GgmlType::Q5_K},
        {QuantFtype::MOSTLY_Q5_K_M, "Q5_K_M", GgmlType::Q5_K},
        {QuantFtype::MOSTLY_Q6_K, "Q6_K", GgmlType::Q6_K},
        {QuantFtype::MOSTLY_Q8_0, "Q8_0", GgmlType::Q8_0},
        {QuantFtype::MOSTLY_F16, "F16", GgmlType::F16},
        {QuantFtype::MOSTLY_BF16, "BF16", GgmlType::BF16},
        {QuantFtype::ALL_F32, "F32", GgmlType::F32},
    };
    return table;
}

const QuantFtypeInfo& quant_ftype_info(QuantFtype ftype) {
    for (const QuantFtypeInfo& info : quant_ftypes())
        if (info.ftype == ftype) return info;
    throw Error(ExitClass::internal, "quant_ftype_info: ftype " +
                                         std::to_string(static_cast<uint32_t>(ftype)) +
                                         " has no entry");
}

std::optional<QuantFtypeInfo> parse_quant_ftype(std::string_view text) {
    for (const QuantFtypeInfo& info : quant_ftypes())
        if (equals_ignoring_case(info.name, text)) return info;
    for (const Alias& alias : kAliases)
        if (equals_ignoring_case(alias.name, text)) return quant_ftype_info(alias.ftype);
    uint32_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty())
        for (const QuantFtypeInfo& info : quant_ftypes())
            if (static_cast<uint32_t>(info.ftype) == number) return info;
    return std::nullopt;
}

std::string quant_ftype_names() {
    std::string names;
    for (const QuantFtypeInfo& info : quant_ftypes()) {
        if (!names.empty()) names += ' ';
        names += info.name;
    }
    return names;
}

std::optional<GgmlType> parse_ggml_type_name(std::string_view text) {
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const auto traits = ggml_type_traits(static_cast<GgmlType>(id));
        if (traits && equals_ignoring_case(traits->name, text)) return static_cast<GgmlType>(id);
    }
    return std::nullopt;
}

bool ggml_type_is_quantized(GgmlType type) {
    const auto traits = ggml_type_traits(type);
    return traits && traits->block_size > 1;
}

}  // namespace rebox
