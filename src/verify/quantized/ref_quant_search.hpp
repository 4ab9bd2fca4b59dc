// The scale searches behind ggml's lossy block types, rewritten for verify's re-quantizer
// (ggml-quants.c make_qx_quants, make_q3_quants, make_qkx2/qkx3_quants, make_qp_quants). Each
// takes one group of values and returns the group's scale and integer codes. Arithmetic is
// binary32 in ggml's order: sums run sequentially in index order, a*b*c is (a*b)*c, no FMA
// (-ffp-contract=off), never a double; that order is part of the result.
#pragma once

#include <cstdint>

namespace rebox::verify_ref::quant_search {

// ggml's nearest_int: round half to even through the 1.5 * 2^23 bit trick (exact for |f| <=
// 4194303; beyond that it gives the same garbage ggml does, which the callers then clamp).
int nearest_int(float f);

// x86's float -> int truncation as ggml's (int8_t)/(uint8_t) casts compile (cvttss2si, then the
// low byte): values outside int32 and NaN give INT32_MIN. Only reached with subnormal scales.
int32_t truncate_like_x86(float f);

// Symmetric codes l in [-nmax, nmax-1] stored as l + nmax, weighted least squares over 19 trial
// inverse scales (make_qx_quants, rmse_type 1). weights == nullptr weighs each value by x^2.
float symmetric_scale(int n, int nmax, const float* x, const float* weights, int8_t* codes);

// Symmetric codes stored as l + nmax, weights x^2, refined by up to 5 rounds of coordinate
// descent on each code (make_q3_quants with do_rmse, Q3_K without importance).
float symmetric_scale_refined(int n, int nmax, const float* x, int8_t* codes);

// The trial grid of the affine search: inverse scales (nmax + rmin + rdelta*step) / (max - min)
// for step 0..steps; mean absolute instead of squared error when absolute_error.
struct AffineGrid {
    float rmin;
    float rdelta;
    int steps;
    bool absolute_error;
};

// Affine codes in [0, nmax] with value ~ scale*code - negated_min (min clamped to <= 0), the best
// weighted fit over the grid (make_qkx2_quants; make_qkx3_quants is the same search when weights
// are given, as every caller does). Returns the scale; *negated_min = -min >= 0.
float affine_scale(int n, int nmax, const float* x, const float* weights, uint8_t* codes,
                   float* negated_min, const AffineGrid& grid);

// Non-negative values quantized to codes in [0, nmax] (no lower clamp: a negative value wraps in
// the uint8 code as in ggml), 8 trial scales then 5 refinement rounds (make_qp_quants): the
// super-block's quantized sub-block scales and mins with importance.
float positive_scale(int n, int nmax, const float* x, uint8_t* codes, const float* weights);

}  // namespace rebox::verify_ref::quant_search
