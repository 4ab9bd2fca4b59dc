// Which types the quantizers take and the argument checks in front of them: one clear Error
// (input class) for an unsupported type, a row length that is not a multiple of the block size,
// a negative count, or a size that would overflow; never undefined behaviour further in.
#include <limits>
#include <string>

#include "quantize/quantize.hpp"
#include "rebox/error.hpp"

namespace rebox::quant {

bool is_quantized_type(GgmlType type) {
    switch (type) {
        case GgmlType::Q4_0:
        case GgmlType::Q4_1:
        case GgmlType::Q5_0:
        case GgmlType::Q5_1:
        case GgmlType::Q8_0:
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
        case GgmlType::IQ4_NL:
        case GgmlType::IQ4_XS:
        case GgmlType::MXFP4:
        case GgmlType::NVFP4:
        case GgmlType::TQ1_0:
        case GgmlType::TQ2_0:
        case GgmlType::Q1_0:
        case GgmlType::Q2_0:
        case GgmlType::IQ2_XXS:
        case GgmlType::IQ2_XS:
        case GgmlType::IQ2_S:
        case GgmlType::IQ1_S:
        case GgmlType::IQ1_M:
        case GgmlType::IQ3_XXS:
        case GgmlType::IQ3_S:
            return true;
        default:
            return false;
    }
}

bool is_dequantizable_type(GgmlType type) {
    return is_quantized_type(type) || type == GgmlType::F32 || type == GgmlType::F16 ||
           type == GgmlType::BF16;
}

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& problem,
                       const std::string& expected) {
    throw Error(ExitClass::input, what, "", problem, expected);
}

}  // namespace

std::size_t checked_quantized_size(GgmlType type, int64_t nrows, int64_t n_per_row) {
    const std::string what = "quantize_rows(" + ggml_type_name(type) + ")";
    if (!is_quantized_type(type)) {
        fail(what, "type " + ggml_type_name(type) + " has no quantizer",
             "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, "
             "IQ3_XXS, IQ3_S, "
             "IQ4_NL, IQ4_XS, MXFP4, NVFP4, TQ1_0, TQ2_0, Q1_0 or Q2_0");
    }
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    if (nrows < 0) fail(what, "nrows is " + std::to_string(nrows), "nrows >= 0");
    if (n_per_row <= 0 || n_per_row % traits.block_size != 0) {
        fail(what, "n_per_row is " + std::to_string(n_per_row),
             "a positive multiple of the block size " + std::to_string(traits.block_size));
    }
    const auto row_size = static_cast<uint64_t>(n_per_row / traits.block_size) * traits.type_size;
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (nrows != 0 && (row_size > limit / static_cast<uint64_t>(nrows) ||
                       static_cast<uint64_t>(n_per_row) > limit / static_cast<uint64_t>(nrows))) {
        fail(what,
             std::to_string(nrows) + " rows of " + std::to_string(n_per_row) +
                 " values overflow a 64-bit size",
             "a tensor that fits in memory");
    }
    return static_cast<std::size_t>(row_size * static_cast<uint64_t>(nrows));
}

bool requires_imatrix(GgmlType type) {
    return type == GgmlType::IQ2_XXS || type == GgmlType::IQ2_XS || type == GgmlType::IQ1_S;
}

void check_imatrix_given(GgmlType type, const float* imatrix) {
    if (imatrix != nullptr || !requires_imatrix(type)) return;
    fail("quantize_rows(" + ggml_type_name(type) + ")",
         "this quantization requires an importance matrix (" + ggml_type_name(type) +
             " has no search without one, as in ggml)",
         "an imatrix (rebox quantize --imatrix FILE, as llama-quantize --imatrix)");
}

void check_dequantize_args(GgmlType type, int64_t n) {
    const std::string what = "dequantize_row(" + ggml_type_name(type) + ")";
    if (!is_dequantizable_type(type)) {
        fail(what, "type " + ggml_type_name(type) + " has no dequantizer",
             "a type quantize_rows writes, or NVFP4, F32, F16, BF16");
    }
    const uint32_t block = ggml_type_traits(type)->block_size;
    if (n < 0 || n % block != 0) {
        fail(what, "n is " + std::to_string(n),
             "a non-negative multiple of the block size " + std::to_string(block));
    }
    const uint64_t type_size = ggml_type_traits(type)->type_size;
    if (static_cast<uint64_t>(n / block) >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / type_size) {
        fail(what, "n = " + std::to_string(n) + " overflows a 64-bit size",
             "a row that fits in memory");
    }
}

}  // namespace rebox::quant
