// The values a GGUF tensor converted from a GPTQ, AWQ (gemm, gemv) or compressed-tensors tensor
// must hold: value(o, k) = (q - z) * s with integer code q, integer zero point z and the group's
// scale s, computed in fp64 and rounded once to binary32 (docs/formats.md §5). Values are addressed
// in the HF [out, in] row-major order whatever the stored layout; the group of input column k is
// g_idx[k] when the checkpoint has a g_idx, else k / group.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "verify/values/ref_expected.hpp"

namespace rebox::verify_ref {

enum class PrequantLayout {
    gptq,       // qweight [in*bits/32, out], qzeros [groups, out*bits/32], scales [groups, out]
    awq_gemm,   // qweight [in, out/8], qzeros [in/group, out/8], scales [in/group, out]
    awq_gemv,   // qweight [out, in/8], qzeros [out, W], scales [out, 8W] (W >= groups/8, padded)
    ct_packed,  // weight_packed [out, ceil(in/pf)], weight_scale [out, groups], zero [.., groups]
    ct_int8,    // weight I8 [out, in], weight_scale [out, groups], zero I8 [out, groups]
};

struct PrequantSource {
    PrequantLayout layout = PrequantLayout::gptq;
    unsigned bits = 0;
    uint64_t out = 0, in = 0;         // logical HF shape [out, in]
    uint64_t group = 0;               // input columns per group (when g_idx is empty)
    uint64_t groups = 0;              // number of groups (scale rows for GPTQ/AWQ, columns for CT)
    std::span<const uint8_t> weight;  // the packed codes (int32 words LE; ct_int8: int8)
    uint64_t weight_words_per_row = 0;  // ct_packed: words per output row
    std::span<const uint8_t> zeros;     // empty: no zero point tensor
    uint64_t zero_words_per_row = 0;    // gptq: qzeros words per group row; awq_gemv: W
    uint64_t scales_per_row = 0;        // [out, ...] scales (CT, awq_gemv): values per row
    int zero_add = 0;                   // GPTQ checkpoint_format "gptq": stored z - 1, so +1
    std::span<const uint8_t> scales;
    SourceFloat scale_dtype = SourceFloat::F16;
    std::span<const uint8_t> g_idx;  // int32 [in] (values checked in range), or empty
};

// The integer parts of value (o, k): code, zero point and the group index (for tests and reports).
struct PrequantParts {
    int64_t q = 0, z = 0;
    uint64_t g = 0;
};
PrequantParts prequant_parts(const PrequantSource& source, uint64_t o, uint64_t k);

// The scale of group g for output row o, widened exactly to fp64.
double prequant_scale(const PrequantSource& source, uint64_t g, uint64_t o);
// Value `index` of a little-endian F32 / BF16 / F16 scale array, widened exactly (also FP8's).
double stored_scale(SourceFloat dtype, std::span<const uint8_t> scales, uint64_t index);

struct PrequantInexact {
    uint64_t index = std::numeric_limits<uint64_t>::max();  // first value not a binary32 value
    double value = 0.0;                                     // its fp64 value
};

// Values first .. first+out.size()-1 (flat [out, in] index). A value whose fp64 (q - z) * s is
// not representable in binary32 (overflow, NaN, an F32 scale with too many bits) is still written
// rounded, and the first such index in the range is returned in `inexact`.
void expected_from_prequant(const PrequantSource& source, uint64_t first, std::span<float> out,
                            PrequantInexact& inexact);

}  // namespace rebox::verify_ref
