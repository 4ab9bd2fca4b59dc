// The IntQuantView unpackers against words worked out by hand from docs/formats.md §5: GPTQ's
// input-packed column streams (3-bit codes crossing int32 words) and output-packed qzeros with
// checkpoint_format gptq's z - 1, AWQ's nibble order [0,2,4,6,1,3,5,7], compressed-tensors'
// offset codes (no word crossing at 3 bits) and dim-0 packed zero points.
#include "source/int_quant_view.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rebox {
namespace {

std::vector<uint8_t> words_le(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes;
    for (uint32_t w : words)
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
    return bytes;
}

std::vector<int> row_codes(const IntQuantView& v, int64_t row) {
    std::vector<int16_t> codes(static_cast<size_t>(v.cols));
    int_row_codes(v, row, 0, codes.size(), codes.data());
    return std::vector<int>(codes.begin(), codes.end());
}

// 32 codes of one GPTQ column at 3 bits: code 0 = 7, code 10 = 5 (crosses words 0/1), code 11 = 3,
// code 21 = 6 (crosses words 1/2), code 31 = 4, others 0. By hand:
//   word 0 = 7 | (5 & 3) << 30                    = 0x40000007
//   word 1 = (5 >> 2) | 3 << 1 | (6 & 1) << 31     = 0x00000007
//   word 2 = (6 >> 1) | 4 << 29                    = 0x80000003
const std::vector<uint32_t> kThreeBitColumn = {0x40000007, 0x00000007, 0x80000003};
std::vector<int> three_bit_codes() {
    std::vector<int> c(32, 0);
    c[0] = 7, c[10] = 5, c[11] = 3, c[21] = 6, c[31] = 4;
    return c;
}

TEST(IntQuantView, GptqThreeBitCodesCrossWordsDownEachColumn) {
    // qweight [3, 2]: word (w, n) at w*2 + n; column 1 holds only code 1 = 7 (0x38 = 7 << 3).
    const std::vector<uint8_t> qweight =
        words_le({kThreeBitColumn[0], 0x38, kThreeBitColumn[1], 0, kThreeBitColumn[2], 0});
    IntQuantView v;
    v.bits = 3;
    v.rows = 2;
    v.cols = 32;
    v.group = 32;
    v.n_groups = 1;
    v.code_layout = IntCodeLayout::input_packed_columns;
    v.codes = qweight;
    EXPECT_EQ(row_codes(v, 0), three_bit_codes());
    std::vector<int> column1(32, 0);
    column1[1] = 7;
    EXPECT_EQ(row_codes(v, 1), column1);
    // A segment starting inside the row: codes 9..12.
    int16_t part[4];
    int_row_codes(v, 0, 9, 4, part);
    EXPECT_EQ(std::vector<int>(part, part + 4), (std::vector<int>{0, 5, 3, 0}));
}

TEST(IntQuantView, GptqQzerosAreOneStreamAlongTheOutputDimAndV1AddsOne) {
    // qzeros [1, 3]: 32 output columns' 3-bit zero fields, the same three words.
    const std::vector<uint8_t> qzeros = words_le(kThreeBitColumn);
    IntQuantView v;
    v.bits = 3;
    v.rows = 32;
    v.cols = 32;
    v.group = 32;
    v.n_groups = 1;
    v.zero_layout = IntZeroLayout::output_packed_rows;
    v.zeros = qzeros;
    const std::vector<int> stored = three_bit_codes();
    for (int n = 0; n < 32; ++n) EXPECT_EQ(int_zero(v, n, 0), stored[n]) << "gptq_v2 column " << n;
    v.zero_add = 1;  // checkpoint_format gptq stores z - 1
    for (int n = 0; n < 32; ++n) EXPECT_EQ(int_zero(v, n, 0), stored[n] + 1) << "gptq column " << n;
}

TEST(IntQuantView, AwqNibbleOrder) {
    // Codes 0..7 for output columns 0..7 pack into 0x75316420 (nibble i holds column
    // [0,2,4,6,1,3,5,7][i]). qweight [2, 2] (in 2, out 16): word (k, w) at k*2 + w; only (1, 1)
    // is set, so output columns 8..15 of input row 1 read 0..7 and everything else 0.
    const std::vector<uint8_t> qweight = words_le({0, 0, 0, 0x75316420});
    IntQuantView v;
    v.bits = 4;
    v.rows = 16;
    v.cols = 2;
    v.group = 2;
    v.n_groups = 1;
    v.code_layout = IntCodeLayout::awq_output_packed;
    v.codes = qweight;
    for (int n = 0; n < 16; ++n)
        EXPECT_EQ(row_codes(v, n), (std::vector<int>{0, n < 8 ? 0 : n - 8})) << "column " << n;
    const std::vector<uint8_t> qzeros = words_le({0x75316420, 0});  // [1, 2]
    v.zero_layout = IntZeroLayout::awq_output_packed;
    v.zeros = qzeros;
    for (int n = 0; n < 16; ++n) EXPECT_EQ(int_zero(v, n, 0), n < 8 ? n : 0);
}

TEST(IntQuantView, CompressedTensorsOffsetCodesAndZeroPoints) {
    // 4-bit weight_packed, one word: fields LSB first 8,7,4,3,2,1,0,15 = 0xF0123478; symmetric, so
    // z = 2^(4-1) = 8 and q - z is the signed code: 0,-1,-4,-5,-6,-7,-8,7.
    const std::vector<uint8_t> packed = words_le({0xF0123478});
    IntQuantView v;
    v.bits = 4;
    v.rows = 1;
    v.cols = 8;
    v.group = 8;
    v.n_groups = 1;
    v.code_layout = IntCodeLayout::row_words;
    v.codes = packed;
    v.zero_layout = IntZeroLayout::constant;
    v.zero_constant = 8;
    int16_t deltas[8];
    int_deltas(v, 0, 8, deltas);
    EXPECT_EQ(std::vector<int>(deltas, deltas + 8),
              (std::vector<int>{0, -1, -4, -5, -6, -7, -8, 7}));
    // weight_zero_point [ceil(9/8), 2] packed along dim 0: word (r/8, g), field r%8.
    const std::vector<uint8_t> zp = words_le({0x88888888, 0x76543210, 0, 0xA});
    IntQuantView z = v;
    z.rows = 9;
    z.n_groups = 2;
    z.zero_layout = IntZeroLayout::column_words;
    z.zeros = zp;
    for (int r = 0; r < 8; ++r) {
        EXPECT_EQ(int_zero(z, r, 0), 8);
        EXPECT_EQ(int_zero(z, r, 1), r);
    }
    EXPECT_EQ(int_zero(z, 8, 0), 0);
    EXPECT_EQ(int_zero(z, 8, 1), 10);
}

TEST(IntQuantView, CompressedTensorsThreeBitFieldsNeverCrossWords) {
    // pf = 10 fields per word, bits 30-31 unused (set here to prove they are ignored): code 0 = 7,
    // code 9 = 5 (bits 27-29), code 10 = field 0 of the next word = 3.
    const std::vector<uint8_t> packed = words_le({0xC0000000u | 7u | 5u << 27, 3});
    IntQuantView v;
    v.bits = 3;
    v.rows = 1;
    v.cols = 11;
    v.group = 11;
    v.n_groups = 1;
    v.code_layout = IntCodeLayout::row_words;
    v.codes = packed;
    EXPECT_EQ(row_codes(v, 0), (std::vector<int>{7, 0, 0, 0, 0, 0, 0, 0, 0, 5, 3}));
}

TEST(IntQuantView, ScalesGroupMajorOrRowMajorAndGIdx) {
    const std::vector<uint8_t> scales = {0x00, 0x3C, 0x00, 0x40,
                                         0x00, 0x42, 0x00, 0x44};  // 1 2 3 4
    IntQuantView v;
    v.rows = 2;
    v.cols = 64;
    v.group = 32;
    v.n_groups = 2;
    v.scales = scales;
    v.scales_group_major = true;  // [n_groups, rows]: (g, r) at g*2 + r
    EXPECT_EQ(int_scale(v, 1, 0), 2.0f);
    EXPECT_EQ(int_scale(v, 0, 1), 3.0f);
    v.scales_group_major = false;  // [rows, n_groups]: (r, g) at r*2 + g
    EXPECT_EQ(int_scale(v, 1, 0), 3.0f);
    EXPECT_EQ(int_scale(v, 0, 1), 2.0f);
    EXPECT_EQ(int_group_of(v, 31), 0u);
    EXPECT_EQ(int_group_of(v, 32), 1u);
    std::vector<int32_t> g(64);
    for (int k = 0; k < 64; ++k) g[k] = k < 32 ? 1 : 0;  // block-wise swapped groups
    std::vector<uint8_t> g_bytes(reinterpret_cast<uint8_t*>(g.data()),
                                 reinterpret_cast<uint8_t*>(g.data()) + 256);
    v.g_idx = g_bytes;
    EXPECT_EQ(int_group_of(v, 0), 1u);
    EXPECT_EQ(int_group_of(v, 63), 0u);
}

}  // namespace
}  // namespace rebox
