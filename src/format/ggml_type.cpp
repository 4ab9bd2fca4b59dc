// The ggml type table (ggml/include/ggml.h + ggml-common.h; gguf-py GGML_QUANT_SIZES), 43 ids.
#include "rebox/ggml_type.hpp"

#include <array>
#include <limits>

namespace rebox {
namespace {

struct Row {
    std::string_view name;
    uint32_t block_size;  // 0: removed id
    uint32_t type_size;
};

// Index = ggml type id. Q8_1 uses the C struct size (36); it is never written by rebox.
constexpr std::array<Row, kGgmlTypeCount> kTable = {{
    {"F32", 1, 4},        {"F16", 1, 2},       {"Q4_0", 32, 18},     {"Q4_1", 32, 20},
    {"", 0, 0},           {"", 0, 0},          {"Q5_0", 32, 22},     {"Q5_1", 32, 24},
    {"Q8_0", 32, 34},     {"Q8_1", 32, 36},    {"Q2_K", 256, 84},    {"Q3_K", 256, 110},
    {"Q4_K", 256, 144},   {"Q5_K", 256, 176},  {"Q6_K", 256, 210},   {"Q8_K", 256, 292},
    {"IQ2_XXS", 256, 66}, {"IQ2_XS", 256, 74}, {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50},
    {"IQ4_NL", 32, 18},   {"IQ3_S", 256, 110}, {"IQ2_S", 256, 82},   {"IQ4_XS", 256, 136},
    {"I8", 1, 1},         {"I16", 1, 2},       {"I32", 1, 4},        {"I64", 1, 8},
    {"F64", 1, 8},        {"IQ1_M", 256, 56},  {"BF16", 1, 2},       {"", 0, 0},
    {"", 0, 0},           {"", 0, 0},          {"TQ1_0", 256, 54},   {"TQ2_0", 256, 66},
    {"", 0, 0},           {"", 0, 0},          {"", 0, 0},           {"MXFP4", 32, 17},
    {"NVFP4", 64, 36},    {"Q1_0", 128, 18},   {"Q2_0", 64, 18},
}};

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(GgmlType type) {
    const uint32_t type_id = ggml_type_id(type);
    if (type_id >= kGgmlTypeCount || kTable[type_id].block_size == 0) return std::nullopt;
    const Row& row = kTable[type_id];
    return GgmlTypeTraits{row.name, row.block_size, row.type_size};
}

size_t ggml_n_dims(const std::vector<int64_t>& ne) {
    if (ne.empty()) return 0;
    size_t n = 1;
    for (size_t i = 1; i < ne.size(); ++i)
        if (ne[i] > 1) n = i + 1;
    return n;
}

std::string ggml_type_name(GgmlType type) {
    if (auto traits = ggml_type_traits(type)) return std::string(traits->name);
    return "type#" + std::to_string(ggml_type_id(type));
}

std::optional<uint64_t> ggml_nbytes(GgmlType type, const std::vector<int64_t>& ne) {
    const auto traits = ggml_type_traits(type);
    if (!traits || ne.empty()) return std::nullopt;
    for (int64_t d : ne)
        if (d < 1) return std::nullopt;
    if (static_cast<uint64_t>(ne[0]) % traits->block_size != 0) return std::nullopt;
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    uint64_t bytes = static_cast<uint64_t>(ne[0]) / traits->block_size;
    if (bytes > kMax / traits->type_size) return std::nullopt;
    bytes *= traits->type_size;
    for (size_t i = 1; i < ne.size(); ++i) {
        const uint64_t d = static_cast<uint64_t>(ne[i]);
        if (bytes > kMax / d) return std::nullopt;
        bytes *= d;
    }
    return bytes;
}

}  // namespace rebox
