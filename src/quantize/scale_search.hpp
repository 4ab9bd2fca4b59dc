// The scale searches behind ggml's K-quants and imatrix paths (ggml-quants.c's make_qx_quants,
// make_q3_quants, make_qkx2/qkx3_quants, make_qp_quants), each the same float operations in the
// same order as ggml's, so the chosen scales and codes are the same bits.
#pragma once

#include <cstdint>

namespace rebox::quant {

// Symmetric codes L in [0, 2*nmax) (stored l + nmax) for n values, weighted by qw (x^2 when
// qw is null); returns the scale (may be negative). ggml's make_qx_quants with rmse_type 1.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* qw);

// Q3_K's reference search: make_qx's start, then coordinate descent on the codes (weights x^2).
float make_q3_quants(int n, int nmax, const float* x, int8_t* L);

// Asymmetric codes L in [0, nmax] and a min (*the_min = -min) for n weighted values, trying
// nstep+1 scales (rmin + rdelta*is + nmax)/(max - min). ggml's make_qkx2_quants, and also its
// make_qkx3_quants (which differs only for a null `weights`, never passed here).
float make_qkx_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                      float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                      bool use_mad);

// Non-negative codes L in [0, nmax] for the sub-block scales or mins of an imatrix super-block,
// weighted by quant_weights. ggml's make_qp_quants.
float make_qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* quant_weights);

// a*b + c written as one expression in a kernel translation unit: with -ffp-contract=off it is
// two roundings even where the function may use FMA instructions (target "fma"), so a test can
// prove the flag is in effect. Only call it when the CPU has FMA.
float contraction_probe(float a, float b, float c);

}  // namespace rebox::quant
