// The type table and per-block dispatch of verify's re-quantizer (ref_quantize.hpp); the block
// arithmetic is in ref_quantize_legacy.cpp, ref_quantize_k.cpp, ref_quantize_nonlinear.cpp,
// ref_quantize_ternary.cpp and ref_quantize_iq.cpp.
#include "verify/quantized/ref_quantize.hpp"

#include "verify/quantized/ref_quantize_blocks.hpp"

namespace rebox::verify_ref {

namespace {

// ggml type ids (ggml.h)
constexpr uint32_t kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ2_K = 10, kQ3_K = 11,
                   kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kIQ4_NL = 20, kIQ4_XS = 23, kMXFP4 = 39,
                   kNVFP4 = 40, kTQ1_0 = 34, kTQ2_0 = 35, kQ1_0 = 41, kQ2_0 = 42, kIQ2_XXS = 16,
                   kIQ2_XS = 17, kIQ3_XXS = 18, kIQ1_S = 19, kIQ3_S = 21, kIQ2_S = 22, kIQ1_M = 29;

struct RefQuantType {
    uint32_t id;
    const char* name;  // as gguf-py names it
    uint32_t block_values;
    uint32_t block_bytes;
};

constexpr RefQuantType kRefQuantTypes[] = {
    {kQ4_0, "Q4_0", 32, 18},        {kQ4_1, "Q4_1", 32, 20},      {kQ5_0, "Q5_0", 32, 22},
    {kQ5_1, "Q5_1", 32, 24},        {kQ8_0, "Q8_0", 32, 34},      {kQ2_K, "Q2_K", 256, 84},
    {kQ3_K, "Q3_K", 256, 110},      {kQ4_K, "Q4_K", 256, 144},    {kQ5_K, "Q5_K", 256, 176},
    {kQ6_K, "Q6_K", 256, 210},      {kIQ4_NL, "IQ4_NL", 32, 18},  {kIQ4_XS, "IQ4_XS", 256, 136},
    {kMXFP4, "MXFP4", 32, 17},      {kNVFP4, "NVFP4", 64, 36},    {kTQ1_0, "TQ1_0", 256, 54},
    {kTQ2_0, "TQ2_0", 256, 66},     {kQ1_0, "Q1_0", 128, 18},     {kQ2_0, "Q2_0", 64, 18},
    {kIQ2_XXS, "IQ2_XXS", 256, 66}, {kIQ2_XS, "IQ2_XS", 256, 74}, {kIQ2_S, "IQ2_S", 256, 82},
    {kIQ3_XXS, "IQ3_XXS", 256, 98}, {kIQ3_S, "IQ3_S", 256, 110},  {kIQ1_S, "IQ1_S", 256, 50},
    {kIQ1_M, "IQ1_M", 256, 56}};

bool uses_row_sigma2(uint32_t type) {
    return type == kQ4_0 || type == kQ4_1 || type == kQ5_0 || type == kQ5_1;
}

}  // namespace

bool ref_quant_layout(uint32_t ggml_type_id, RefQuantLayout* layout) {
    for (const RefQuantType& type : kRefQuantTypes) {
        if (type.id != ggml_type_id) continue;
        if (layout) *layout = {type.block_values, type.block_bytes};
        return true;
    }
    return false;
}

const char* ref_quant_type_name(uint32_t ggml_type_id) {
    for (const RefQuantType& type : kRefQuantTypes)
        if (type.id == ggml_type_id) return type.name;
    return nullptr;
}

bool ref_quant_requires_importance(uint32_t ggml_type_id) {
    return ggml_type_id == kIQ2_XXS || ggml_type_id == kIQ2_XS || ggml_type_id == kIQ1_S;
}

QuantRow make_quant_row(uint32_t ggml_type_id, std::span<const float> values,
                        std::span<const float> importance) {
    QuantRow row{values, importance, 0.f};
    if (!importance.empty() && uses_row_sigma2(ggml_type_id)) {
        float sum = 0;  // sequential, in index order, as ggml sums it
        for (const float v : values) sum += v * v;
        row.row_sigma2 = sum / static_cast<float>(values.size());
    }
    return row;
}

void ref_quantize_block(uint32_t ggml_type_id, const QuantRow& row, uint64_t block_index,
                        std::span<uint8_t> out) {
    RefQuantLayout layout{};
    if (!ref_quant_layout(ggml_type_id, &layout)) return;
    const uint64_t first = block_index * layout.block_values;
    const float* x = row.values.data() + first;
    const float* w = row.importance.empty() ? nullptr : row.importance.data() + first;
    const float s2 = row.row_sigma2;
    uint8_t* y = out.data();
    switch (ggml_type_id) {
        case kQ4_0:
            quant_blocks::q4_0(x, w, s2, y);
            break;
        case kQ4_1:
            quant_blocks::q4_1(x, w, s2, y);
            break;
        case kQ5_0:
            quant_blocks::q5_0(x, w, s2, y);
            break;
        case kQ5_1:
            quant_blocks::q5_1(x, w, s2, y);
            break;
        case kQ8_0:
            quant_blocks::q8_0(x, y);
            break;
        case kQ2_K:
            quant_blocks::q2_k(x, w, y);
            break;
        case kQ3_K:
            quant_blocks::q3_k(x, w, y);
            break;
        case kQ4_K:
            quant_blocks::q4_k(x, w, y);
            break;
        case kQ5_K:
            quant_blocks::q5_k(x, w, y);
            break;
        case kQ6_K:
            quant_blocks::q6_k(x, w, y);
            break;
        case kIQ4_NL:
            quant_blocks::iq4_nl(x, w, y);
            break;
        case kIQ4_XS:
            quant_blocks::iq4_xs(x, w, y);
            break;
        case kMXFP4:
            quant_blocks::mxfp4(x, y);
            break;
        case kNVFP4:
            quant_blocks::nvfp4(x, y);
            break;
        case kTQ1_0:
            quant_blocks::tq1_0(x, y);
            break;
        case kTQ2_0:
            quant_blocks::tq2_0(x, y);
            break;
        case kQ1_0:
            quant_blocks::q1_0(x, y);
            break;
        case kQ2_0:
            quant_blocks::q2_0(x, y);
            break;
        case kIQ2_XXS:
            quant_blocks::iq2_xxs(x, w, y);
            break;
        case kIQ2_XS:
            quant_blocks::iq2_xs(x, w, y);
            break;
        case kIQ2_S:
            quant_blocks::iq2_s(x, w, y);
            break;
        case kIQ3_XXS:
            quant_blocks::iq3_xxs(x, w, y);
            break;
        case kIQ3_S:
            quant_blocks::iq3_s(x, w, y);
            break;
        case kIQ1_S:
            quant_blocks::iq1_s(x, w, y);
            break;
        case kIQ1_M:
            quant_blocks::iq1_m(x, w, y);
            break;
        default:
            break;
    }
}

}  // namespace rebox::verify_ref
