// Q4_0 / Q5_0 / Q8_0 / Q4_1 blocks from an IntQuantView by shifting integer codes (docs/gguf.md
// §2.2 block layouts): per block, 32 codes are read from the checkpoint's packing, the group's zero
// point is subtracted and the type's offset added; d is the group's scale bits, never recomputed.
#include "encode/int_block_encode.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "encode/block_pack.hpp"
#include "format/half.hpp"
#include "rebox/error.hpp"
#include "source/int_quant_view.hpp"

namespace rebox {
namespace {

using encode_detail::store_u16;

// One block of a source: its row, group, 32 codes and q - z.
struct IntBlock {
    int64_t row = 0;
    int64_t group = 0;
    int32_t zero = 0;
    int16_t codes[32];
    int16_t deltas[32];
};

void read_block(const IntQuantView& v, uint64_t block, IntBlock* b) {
    const uint64_t per_row = static_cast<uint64_t>(v.cols) / 32;
    b->row = static_cast<int64_t>(block / per_row);
    const int64_t col0 = static_cast<int64_t>(block % per_row) * 32;
    b->group = int_group_of(v, col0);
    b->zero = int_zero(v, b->row, b->group);
    int_row_codes(v, b->row, col0, 32, b->codes);
    for (int j = 0; j < 32; ++j) b->deltas[j] = static_cast<int16_t>(b->codes[j] - b->zero);
}

// A block's 32 codes or deltas plus `offset`, as the stored unsigned values (the caller checked
// their range).
std::array<uint8_t, 32> offset_values(const int16_t* values, int offset) {
    std::array<uint8_t, 32> out;
    for (int j = 0; j < 32; ++j) out[j] = static_cast<uint8_t>(values[j] + offset);
    return out;
}

std::string where(const IntBlock& b) {
    return "row " + std::to_string(b.row) + " group " + std::to_string(b.group);
}

// d of a block: the scale as fp16 bits (see the header for the rule).
uint16_t block_d(const IntQuantView& v, const IntBlock& b, ScaleRule rule) {
    const uint8_t* p = int_scale_bytes(v, b.row, b.group);
    if (v.scale_dtype == FloatDtype::F16) return encode_detail::load_u16(p);
    const float s = int_scale(v, b.row, b.group);
    uint16_t half = 0;
    if (float_to_half_exact(s, &half)) return half;
    if (rule == ScaleRule::zero_when_codes_zero && std::isfinite(s) &&
        std::all_of(b.deltas, b.deltas + 32, [](int16_t d) { return d == 0; }))
        return std::signbit(s) ? 0x8000 : 0x0000;  // 0 * d = 0 * s, sign included
    throw Error(ExitClass::internal, "", "scale of " + where(b),
                "not exactly representable as fp16");
}

void check_range(const IntBlock& b, int lo, int hi, const char* type) {
    for (int j = 0; j < 32; ++j)
        if (b.deltas[j] < lo || b.deltas[j] > hi)
            throw Error(ExitClass::internal, "",
                        "q - z = " + std::to_string(b.deltas[j]) + " in " + where(b),
                        std::string("outside the range of ") + type);
}

}  // namespace

namespace {

// Blocks of a shifted type (Q4_0 / Q5_0 / Q8_0): each block's q - z checked against [lo, hi],
// d stored, then pack(block, out + 2) writes the shifted values.
template <size_t kBlockBytes, typename Pack>
void encode_shifted(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                    ScaleRule rule, int lo, int hi, const char* type, Pack pack) {
    IntBlock b;
    for (size_t i = 0; i < n_blocks; ++i, out += kBlockBytes) {
        read_block(v, first_block + i, &b);
        check_range(b, lo, hi, type);
        store_u16(out, block_d(v, b, rule));
        pack(b, out + 2);
    }
}

}  // namespace

void encode_q4_0_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                     ScaleRule rule) {
    encode_shifted<kQ4_0BlockBytes>(
        v, first_block, n_blocks, out, rule, -8, 7, "Q4_0", [](const IntBlock& b, uint8_t* qs) {
            encode_detail::pack_q4_qs(offset_values(b.deltas, 8).data(), qs);
        });
}

void encode_q5_0_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                     ScaleRule rule) {
    encode_shifted<kQ5_0BlockBytes>(
        v, first_block, n_blocks, out, rule, -16, 15, "Q5_0", [](const IntBlock& b, uint8_t* qhs) {
            encode_detail::pack_q5_qh_qs(offset_values(b.deltas, 16).data(), qhs);
        });
}

void encode_q8_0_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                     ScaleRule rule) {
    encode_shifted<kQ8_0BlockBytes>(
        v, first_block, n_blocks, out, rule, -128, 127, "Q8_0", [](const IntBlock& b, uint8_t* qs) {
            for (int j = 0; j < 32; ++j)
                qs[j] = static_cast<uint8_t>(static_cast<int8_t>(b.deltas[j]));
        });
}

namespace {

// d = s and m = -z*s of a _1 block, both fp16 values, and every code in [0, max_code].
void store_dm_int(const IntQuantView& v, const IntBlock& b, int max_code, uint8_t* out) {
    const float s = int_scale(v, b.row, b.group);
    uint16_t d = 0, m = 0;
    // z*s is exact in binary32 (z < 256, s has <= 11 significant bits); m must be an fp16 too.
    if (!float_to_half_exact(s, &d) || !float_to_half_exact(-(static_cast<float>(b.zero) * s), &m))
        throw Error(ExitClass::internal, "", "scale/zero of " + where(b),
                    "s or -z*s is not exactly representable as fp16");
    for (int j = 0; j < 32; ++j)
        if (b.codes[j] < 0 || b.codes[j] > max_code)
            throw Error(ExitClass::internal, "", "code in " + where(b),
                        "outside [0, " + std::to_string(max_code) + "]");
    store_u16(out, d);
    store_u16(out + 2, m);
}

// Blocks of a _1 type (Q4_1 / Q5_1): d and m, with every code checked against [0, max_code], then
// pack(codes, out + 4) writes the codes as they are.
template <size_t kBlockBytes>
void encode_unshifted(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                      int max_code, void (*pack)(const uint8_t*, uint8_t*)) {
    IntBlock b;
    for (size_t i = 0; i < n_blocks; ++i, out += kBlockBytes) {
        read_block(v, first_block + i, &b);
        store_dm_int(v, b, max_code, out);
        pack(offset_values(b.codes, 0).data(), out + 4);
    }
}

}  // namespace

void encode_q4_1_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    encode_unshifted<kQ4_1BlockBytes>(v, first_block, n_blocks, out, 15, encode_detail::pack_q4_qs);
}

void encode_q5_1_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    encode_unshifted<kQ5_1BlockBytes>(v, first_block, n_blocks, out, 31,
                                      encode_detail::pack_q5_qh_qs);
}

}  // namespace rebox
