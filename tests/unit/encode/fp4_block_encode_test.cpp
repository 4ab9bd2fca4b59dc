// The FP4 repack kernels against hand-worked vectors: MXFP4's qs[j] = c[j] | c[j+16] << 4 and
// NVFP4's per-sub-block qs[8s+j] = c[16s+j] | c[16s+j+8] << 4 from MLX's "element 2i in the low
// nibble" bytes, scale bytes copied; E2M1 * E8M0 / E4M3 values worked out by hand.
#include "encode/fp4_block_encode.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "source/source_values.hpp"

namespace rebox {
namespace {

// MLX bytes of the codes c[k] = k % 16: byte i = c[2i] | c[2i+1] << 4.
std::vector<uint8_t> mlx_bytes_of_k_mod_16(size_t values) {
    std::vector<uint8_t> bytes(values / 2);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<uint8_t>((2 * i) % 16 | ((2 * i + 1) % 16) << 4);
    return bytes;
}

TEST(Fp4BlockEncode, Mxfp4BlockPairsElementJWithJPlus16) {
    const std::vector<uint8_t> codes = mlx_bytes_of_k_mod_16(64);
    const std::vector<uint8_t> scales = {0x7f, 0x05};
    const Fp4View v{Fp4Kind::mxfp4, 32, codes, scales};
    uint8_t out[2 * 17];
    encode_mxfp4(v, 0, 2, out);
    for (int b = 0; b < 2; ++b) {
        EXPECT_EQ(out[17 * b], scales[b]);
        // c[j] = j, c[j+16] = j: qs[j] = j | j << 4 = 0x11 * j.
        for (int j = 0; j < 16; ++j) EXPECT_EQ(out[17 * b + 1 + j], 0x11 * j) << b << " " << j;
    }
    uint8_t second[17];
    encode_mxfp4(v, 1, 1, second);  // a chunk starting at block 1
    EXPECT_EQ(second[0], 0x05);
}

TEST(Fp4BlockEncode, Nvfp4SubBlocksPairElementJWithJPlus8) {
    const std::vector<uint8_t> codes = mlx_bytes_of_k_mod_16(64);
    const std::vector<uint8_t> scales = {0x38, 0x40, 0x00, 0x7e};
    const Fp4View v{Fp4Kind::nvfp4, 16, codes, scales};
    uint8_t out[36];
    encode_nvfp4(v, 0, 1, out);
    for (int s = 0; s < 4; ++s) EXPECT_EQ(out[s], scales[s]);
    // In every sub-block c[16s+j] = j, c[16s+j+8] = j + 8: qs = j | (j+8) << 4 = 0x80 + 0x11 * j.
    for (int s = 0; s < 4; ++s)
        for (int j = 0; j < 8; ++j) EXPECT_EQ(out[4 + 8 * s + j], 0x80 + 0x11 * j) << s << " " << j;
}

TEST(Fp4BlockEncode, ValuesAreE2M1TimesTheScale) {
    // Byte 0: codes 1 (0.5) and 15 (-6); byte 1: codes 8 (-0) and 7 (6).
    const std::vector<uint8_t> codes = {0xf1, 0x78};
    const std::vector<uint8_t> mx_scales = {0x7f};  // 2^0
    float out[4];
    dequantize_fp4_f32(Fp4View{Fp4Kind::mxfp4, 32, codes, mx_scales}, 0, 4, out);
    EXPECT_EQ(out[0], 0.5f);
    EXPECT_EQ(out[1], -6.0f);
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_TRUE(std::signbit(out[2]));  // the source's -0 stays -0 in binary32
    EXPECT_EQ(out[3], 6.0f);
    const std::vector<uint8_t> tiny = {0x00};  // E8M0 0: 2^-127, times 0.5 = 2^-128
    dequantize_fp4_f32(Fp4View{Fp4Kind::mxfp4, 32, codes, tiny}, 0, 1, out);
    EXPECT_EQ(out[0], std::ldexp(1.0f, -128));
    // E4M3: 0x7e = 2^8 * 1.75 = 448 (code 15: -2688); 0x01 = 2^-9 (subnormal; code 1: 2^-10).
    const std::vector<uint8_t> nv_scales = {0x7e};
    dequantize_fp4_f32(Fp4View{Fp4Kind::nvfp4, 16, codes, nv_scales}, 1, 1, out);
    EXPECT_EQ(out[0], -2688.0f);
    const std::vector<uint8_t> nv_small = {0x01};
    dequantize_fp4_f32(Fp4View{Fp4Kind::nvfp4, 16, codes, nv_small}, 0, 1, out);
    EXPECT_EQ(out[0], std::ldexp(1.0f, -10));
    EXPECT_EQ(e4m3_value(0x38), 1.0f);
    EXPECT_EQ(e4m3_value(0x08), std::ldexp(1.0f, -6));
}

}  // namespace
}  // namespace rebox
