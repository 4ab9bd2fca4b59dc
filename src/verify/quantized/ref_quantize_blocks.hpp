// verify's block quantizers, one function per ggml type (internal to ref_quantize.cpp's dispatch).
// Each writes one block: `x` is the block's values (32, or 256 for the K types, IQ4_XS and the
// lattice i-quants),
// `importance` its imatrix slice (nullptr: none, ggml's path without an imatrix), `row_sigma2`
// the whole-row mean square the 32-value types weigh with when they have importance.
#pragma once

#include <cstdint>

namespace rebox::verify_ref::quant_blocks {

// ref_quantize_legacy.cpp (32 values)
void q4_0(const float* x, const float* importance, float row_sigma2, uint8_t* out);  // 18 B
void q4_1(const float* x, const float* importance, float row_sigma2, uint8_t* out);  // 20 B
void q5_0(const float* x, const float* importance, float row_sigma2, uint8_t* out);  // 22 B
void q5_1(const float* x, const float* importance, float row_sigma2, uint8_t* out);  // 24 B
void q8_0(const float* x, uint8_t* out);                                             // 34 B
// ref_quantize_k.cpp (256 values)
void q2_k(const float* x, const float* importance, uint8_t* out);  // 84 B
void q3_k(const float* x, const float* importance, uint8_t* out);  // 110 B
void q4_k(const float* x, const float* importance, uint8_t* out);  // 144 B
void q5_k(const float* x, const float* importance, uint8_t* out);  // 176 B
void q6_k(const float* x, const float* importance, uint8_t* out);  // 210 B
// ref_quantize_nonlinear.cpp
void iq4_nl(const float* x, const float* importance, uint8_t* out);  // 32 values, 18 B
void iq4_xs(const float* x, const float* importance, uint8_t* out);  // 256 values, 136 B
void mxfp4(const float* x, uint8_t* out);                            // 32 values, 17 B
void nvfp4(const float* x, uint8_t* out);                            // 64 values, 36 B
// ref_quantize_ternary.cpp (importance ignored)
void tq1_0(const float* x, uint8_t* out);  // 256 values, 54 B
void tq2_0(const float* x, uint8_t* out);  // 256 values, 66 B
void q1_0(const float* x, uint8_t* out);   // 128 values, 18 B
void q2_0(const float* x, uint8_t* out);   // 64 values, 18 B
// ref_quantize_iq.cpp (256 values; importance nullptr: ggml's plain weights, which IQ2_XXS,
// IQ2_XS and IQ1_S have no path for, so verify asks for the imatrix before it gets here)
void iq2_xxs(const float* x, const float* importance, uint8_t* out);  // 66 B
void iq2_xs(const float* x, const float* importance, uint8_t* out);   // 74 B
void iq2_s(const float* x, const float* importance, uint8_t* out);    // 82 B
void iq3_xxs(const float* x, const float* importance, uint8_t* out);  // 98 B
void iq3_s(const float* x, const float* importance, uint8_t* out);    // 110 B
void iq1_s(const float* x, const float* importance, uint8_t* out);    // 50 B
void iq1_m(const float* x, const float* importance, uint8_t* out);    // 56 B

// Little-endian stores shared by the five files.
inline void store_u16le(uint8_t* out, uint16_t value) {
    out[0] = static_cast<uint8_t>(value & 0xff);
    out[1] = static_cast<uint8_t>(value >> 8);
}

}  // namespace rebox::verify_ref::quant_blocks
