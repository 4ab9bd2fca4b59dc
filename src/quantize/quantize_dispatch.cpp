// Runs a whole tensor through the per-type scalar kernels the way ggml_quantize_chunk does:
// without an imatrix every block back to back through the reference quantizer; with one, row by
// row through the weighted quantizer (Q8_0, MXFP4, NVFP4, TQ1_0, TQ2_0 ignore it; Q1_0 and Q2_0 run
// their reference quantizer per row, the same bytes); and the path dispatcher.
#include "quantize/block_kernels.hpp"
#include "quantize/quantize.hpp"
#include "quantize/simd/simd_kernels.hpp"

namespace rebox::quant {

namespace {

using RefKernel = void (*)(const float*, uint8_t*, int64_t nblocks);
using RowKernel = void (*)(const float*, uint8_t*, int64_t n_per_row, const float* qw);

struct TypeKernels {
    RefKernel ref;  // null: the row kernel also runs without an imatrix (IQ4_NL, IQ4_XS, IQ3_*)
    RowKernel weighted;  // null: the imatrix is ignored (or changes nothing)
};

TypeKernels kernels_for(GgmlType type) {
    switch (type) {
        case GgmlType::Q4_0:
            return {quantize_q4_0_ref, quantize_q4_0_weighted};
        case GgmlType::Q4_1:
            return {quantize_q4_1_ref, quantize_q4_1_weighted};
        case GgmlType::Q5_0:
            return {quantize_q5_0_ref, quantize_q5_0_weighted};
        case GgmlType::Q5_1:
            return {quantize_q5_1_ref, quantize_q5_1_weighted};
        case GgmlType::Q8_0:
            return {quantize_q8_0_ref, nullptr};
        case GgmlType::Q2_K:
            return {quantize_q2_k_ref, quantize_q2_k_weighted};
        case GgmlType::Q3_K:
            return {quantize_q3_k_ref, quantize_q3_k_weighted};
        case GgmlType::Q4_K:
            return {quantize_q4_k_ref, quantize_q4_k_weighted};
        case GgmlType::Q5_K:
            return {quantize_q5_k_ref, quantize_q5_k_weighted};
        case GgmlType::Q6_K:
            return {quantize_q6_k_ref, quantize_q6_k_weighted};
        case GgmlType::IQ4_NL:
            return {nullptr, quantize_iq4_nl_row};
        case GgmlType::IQ4_XS:
            return {nullptr, quantize_iq4_xs_row};
        case GgmlType::MXFP4:
            return {quantize_mxfp4_ref, nullptr};
        case GgmlType::NVFP4:
            return {quantize_nvfp4_ref, nullptr};
        case GgmlType::TQ1_0:
            return {quantize_tq1_0_ref, nullptr};
        case GgmlType::TQ2_0:
            return {quantize_tq2_0_ref, nullptr};
        case GgmlType::Q1_0:
            return {quantize_q1_0_ref, nullptr};
        case GgmlType::Q2_0:
            return {quantize_q2_0_ref, nullptr};
        case GgmlType::IQ2_XXS:
            return {nullptr, quantize_iq2_xxs_row};
        case GgmlType::IQ2_XS:
            return {nullptr, quantize_iq2_xs_row};
        case GgmlType::IQ2_S:
            return {nullptr, quantize_iq2_s_row};
        case GgmlType::IQ1_S:
            return {nullptr, quantize_iq1_s_row};
        case GgmlType::IQ1_M:
            return {nullptr, quantize_iq1_m_row};
        case GgmlType::IQ3_XXS:
            return {nullptr, quantize_iq3_xxs_row};
        case GgmlType::IQ3_S:
            return {nullptr, quantize_iq3_s_row};
        default:
            return {nullptr, nullptr};
    }
}

}  // namespace

std::size_t quantize_rows_scalar(GgmlType type, const float* src, void* dst, int64_t nrows,
                                 int64_t n_per_row, const float* imatrix) {
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    const auto row_size =
        static_cast<std::size_t>(n_per_row / traits.block_size) * traits.type_size;
    auto* out = static_cast<uint8_t*>(dst);
    const TypeKernels k = kernels_for(type);
    if (k.ref != nullptr && (imatrix == nullptr || k.weighted == nullptr)) {
        k.ref(src, out, nrows * (n_per_row / traits.block_size));
    } else {
        for (int64_t row = 0; row < nrows; ++row) {
            k.weighted(src + row * n_per_row, out + static_cast<std::size_t>(row) * row_size,
                       n_per_row, imatrix);
        }
    }
    return static_cast<std::size_t>(nrows) * row_size;
}

std::size_t quantize_rows_with(KernelPath path, GgmlType type, const float* src, void* dst,
                               int64_t nrows, int64_t n_per_row, const float* imatrix) {
    const std::size_t bytes = checked_quantized_size(type, nrows, n_per_row);
    check_imatrix_given(type, imatrix);
    if (nrows == 0) return 0;
    if (path != KernelPath::scalar &&
        quantize_rows_simd(path, type, src, dst, nrows, n_per_row, imatrix)) {
        return bytes;
    }
    return quantize_rows_scalar(type, src, dst, nrows, n_per_row, imatrix);
}

}  // namespace rebox::quant
