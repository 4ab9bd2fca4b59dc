// The per-type scalar quantizers (one file per type family), as ggml's quantize_<type> runs them:
// `ref` quantizes `nblocks` blocks back to back (no imatrix: ggml's quantize_row_<type>_ref),
// `weighted` quantizes one row of n_per_row values against imatrix[n_per_row] (ggml's _impl).
// Inputs are validated by the caller; `y` receives the blocks in ggml's byte layout.
#pragma once

#include <cstdint>

namespace rebox::quant {

void quantize_q4_0_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q4_0_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q4_1_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q4_1_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q5_0_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q5_0_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q5_1_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q5_1_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q8_0_ref(const float* x, uint8_t* y, int64_t nblocks);

void quantize_q2_k_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q2_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q3_k_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q3_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q4_k_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q4_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q5_k_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q5_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_q6_k_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q6_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);

// IQ4_NL and IQ4_XS take the same search with or without an imatrix (qw may be null).
void quantize_iq4_nl_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_iq4_xs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_mxfp4_ref(const float* x, uint8_t* y, int64_t nblocks);
// MXFP4's E8M0 exponent of a block whose largest |x| is amax (ggml's floorf(log2f(amax)) - 2 + 127,
// 0 for amax = 0), and in *d_half the scale its codes are searched against (half of 2^(e-127)). The
// scalar kernel and the lanes share it, so libm's log2f is called from one place.
uint8_t mxfp4_block_exponent(float amax, float* d_half);
void quantize_nvfp4_ref(const float* x, uint8_t* y, int64_t nblocks);
// NVFP4's UE4M3 scale of a 16-value sub-block whose largest |x| is amax (ggml's
// ggml_fp32_to_ue4m3(amax / 6)), and in *d_half the scale its codes are searched against (the
// scale read back, halved). Shared by the scalar kernel and the lanes.
uint8_t nvfp4_sub_block_scale(float amax, float* d_half);

// Ternary and 1/2-bit types: the reference quantizer only (ggml ignores the imatrix, or runs
// the same reference per row).
void quantize_tq1_0_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_tq2_0_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q1_0_ref(const float* x, uint8_t* y, int64_t nblocks);
void quantize_q2_0_ref(const float* x, uint8_t* y, int64_t nblocks);
// ggml's GGML_FP32_TO_FP16 of d into y[0..1] (NaN as 0x7e00 with its sign), out of line so the
// lane kernels' AVX2 / AVX-512 translation units compile no copy of it.
void store_ggml_fp16(uint8_t* y, float d);

// IQ2_XXS and IQ2_XS: ggml requires an imatrix for them (qw is never null here).
void quantize_iq2_xxs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_iq2_xs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
// IQ2_S takes an imatrix or none (qw null: weights sigma2/4 + x^2).
void quantize_iq2_s_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
// The 3-bit i-quants, with an imatrix or without one (qw null: weights x^2).
void quantize_iq3_xxs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_iq3_s_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
// IQ1_S needs an imatrix (as in ggml); IQ1_M takes one or none (weights x^2).
void quantize_iq1_s_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);
void quantize_iq1_m_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw);

}  // namespace rebox::quant
