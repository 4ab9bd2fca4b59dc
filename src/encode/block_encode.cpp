// Q4_1 / Q5_1 block packing of a QuantView (docs/gguf.md §2.2, §2.3).
// Q4_1 from 3- and 4-bit streams folds each block's own stream bytes straight into nibbles (SSE2
// shuffles; 3-bit codes spread to nibbles by mask-and-shift steps first); other
// widths unpack a chunk at a time into a stack buffer. Each block's d and m are the fp16 bits of
// its group's scale and min (looked up once per group), copied, never recomputed.
#include "encode/block_encode.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "encode/block_pack.hpp"
#include "format/half.hpp"
#include "format/half_exact.hpp"
#include "rebox/error.hpp"
#include "source/lsb0_unpack.hpp"
#include "source/source_values.hpp"

namespace rebox {
namespace {

constexpr size_t kChunkBlocks = 256;  // codes unpacked per step: 8192 bytes of stack
constexpr size_t kChunkValues = kChunkBlocks * kQBlockValues;

using encode_detail::load_u16;
using encode_detail::store_u16;

inline uint32_t load_u32(const uint8_t* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Value g of a BF16 or F32 parameter array exactly as fp16 (false when it is not one), from its
// bits.
inline bool stored_half_exact(FloatDtype dtype, std::span<const uint8_t> values, uint64_t g,
                              uint16_t* out) {
    if (dtype == FloatDtype::BF16) return bf16_half_exact(load_u16(values.data() + 2 * g), out);
    return half_exact_bits(load_u32(values.data() + 4 * g), out);
}

uint16_t stored_half(FloatDtype dtype, std::span<const uint8_t> values, uint64_t g,
                     const char* what) {
    if (dtype == FloatDtype::F16) return load_u16(values.data() + 2 * g);
    uint16_t half = 0;
    if (!stored_half_exact(dtype, values, g, &half))
        throw Error(ExitClass::internal, "", std::string(what) + "[" + std::to_string(g) + "]",
                    "not exactly representable as fp16");
    return half;
}

// Writes d and m of block b (group = 32b / group); shared by Q4_1 and Q5_1.
inline void store_dm(const QuantView& q, uint64_t block, ScaleRule rule, uint8_t* out) {
    const uint64_t g = block * kQBlockValues / static_cast<uint64_t>(q.group);
    store_u16(out, group_scale_half(q, g, rule));
    store_u16(out + 2, group_min_half(q, g));
}

}  // namespace

uint16_t group_scale_half(const QuantView& q, uint64_t group_index, ScaleRule rule) {
    if (q.scale_dtype == FloatDtype::F16) return load_u16(q.scales.data() + 2 * group_index);
    uint16_t half = 0;
    if (stored_half_exact(q.scale_dtype, q.scales, group_index, &half)) return half;
    const float scale = stored_float(q.scale_dtype, q.scales, group_index);
    if (rule == ScaleRule::zero_when_codes_zero && std::isfinite(scale) &&
        group_codes_all_zero(q, group_index))
        return std::signbit(scale) ? 0x8000 : 0x0000;  // 0*(+-0) = 0*scale, sign included
    throw Error(ExitClass::internal, "", "scales[" + std::to_string(group_index) + "]",
                "not exactly representable as fp16");
}

bool group_codes_all_zero(const QuantView& q, uint64_t group_index) {
    uint8_t codes[kChunkValues];
    const uint64_t group = static_cast<uint64_t>(q.group);
    for (uint64_t done = 0; done < group;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkValues, group - done));
        unpack_lsb0(q.codes, q.bits, group_index * group + done, n, codes);
        for (size_t i = 0; i < n; ++i)
            if (codes[i] != 0) return false;
        done += n;
    }
    return true;
}

uint16_t group_min_half(const QuantView& q, uint64_t group_index) {
    return stored_half(q.scale_dtype, q.mins, group_index, "mins");
}

namespace {

// Walks blocks in order and yields each block's group without a division per block.
class GroupCursor {
  public:
    GroupCursor(const QuantView& q, uint64_t first_block)
        : per_group_(static_cast<uint64_t>(q.group) / kQBlockValues),
          group_(first_block / per_group_),
          in_group_(first_block % per_group_) {}
    uint64_t group() const { return group_; }
    bool starts_group() const { return in_group_ == 0; }
    void next() {
        if (++in_group_ == per_group_) in_group_ = 0, ++group_;
    }

  private:
    uint64_t per_group_, group_, in_group_;
};

// 4-bit source: a block's 32 codes are its 16 stream bytes (byte k holds codes 2k and 2k+1), so
// qs[j] = c[j] | c[j+16] << 4 is a nibble shuffle of bytes k and k+8: qs[2k] takes the low nibbles
// of bytes k and k+8, qs[2k+1] their high nibbles (SSE2, part of x86-64: a few instructions a
// block).
#if defined(__SSE2__)
inline void fold_4bit_bytes(__m128i bytes, uint8_t* qs) {
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i upper = _mm_srli_si128(bytes, 8);  // bytes 8..15 at 0..7: codes 16..31
    const __m128i even =
        _mm_or_si128(_mm_and_si128(bytes, nibble), _mm_slli_epi16(_mm_and_si128(upper, nibble), 4));
    const __m128i odd = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(bytes, 4), nibble),
                                     _mm_andnot_si128(nibble, upper));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm_unpacklo_epi8(even, odd));
}
#endif

inline void fold_4bit_block(const uint8_t* s, uint8_t* qs) {
#if defined(__SSE2__)
    fold_4bit_bytes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)), qs);
#else
    for (size_t k = 0; k < 8; ++k) {
        qs[2 * k] = static_cast<uint8_t>((s[k] & 0x0F) | (s[k + 8] << 4));
        qs[2 * k + 1] = static_cast<uint8_t>((s[k] >> 4) | (s[k + 8] & 0xF0));
    }
#endif
}

// 16 codes of 3 bits (bits 0..47 of x) moved to one nibble each, code j at bits 4j..4j+2: halves
// of 8, 4, 2 and 1 codes are moved apart in four mask-and-shift steps.
inline uint64_t spread_3bit_codes(uint64_t x) {
    x = (x & 0x0000000000FFFFFFull) | (x & 0x0000FFFFFF000000ull) << 8;
    x = (x & 0x00000FFF00000FFFull) | (x & 0x00FFF00000FFF000ull) << 4;
    x = (x & 0x003F003F003F003Full) | (x & 0x0FC00FC00FC00FC0ull) << 2;
    return (x & 0x0707070707070707ull) | (x & 0x3838383838383838ull) << 1;
}

// 3-bit source: a block's 32 codes are its 12 stream bytes; codes 0..15 are the low 48 bits,
// codes 16..31 the high 48 bits (both read inside the block's own bytes). Spread to nibbles they
// are the block's 4-bit stream, folded as above.
inline void fold_3bit_block(const uint8_t* s, uint8_t* qs) {
    uint64_t low = 0, high = 0;
    std::memcpy(&low, s, 8);
    std::memcpy(&high, s + 4, 8);
    if constexpr (std::endian::native == std::endian::big) {
        low = __builtin_bswap64(low);
        high = __builtin_bswap64(high);
    }
    const uint64_t first16 = spread_3bit_codes(low & 0xFFFFFFFFFFFFull);
    const uint64_t last16 = spread_3bit_codes(high >> 16);
#if defined(__SSE2__)
    // Straight into a register: bytes written one by one and read back as 16 would stall on the
    // store-to-load forward (measured: 40% of encode's cycles).
    fold_4bit_bytes(_mm_set_epi64x(static_cast<long long>(last16), static_cast<long long>(first16)),
                    qs);
#else
    uint8_t stream[16];
    for (size_t k = 0; k < 8; ++k) {
        stream[k] = static_cast<uint8_t>(first16 >> (8 * k));
        stream[k + 8] = static_cast<uint8_t>(last16 >> (8 * k));
    }
    fold_4bit_block(stream, qs);
#endif
}

// Unpacks the codes of blocks [first_block, first_block + n_blocks) a chunk at a time and calls
// fn(b, codes) for each, b counted from 0, codes its 32 values.
template <typename Fn>
void for_each_block_codes(const QuantView& q, uint64_t first_block, size_t n_blocks, Fn&& fn) {
    uint8_t codes[kChunkValues];
    for (size_t done = 0; done < n_blocks;) {
        const size_t chunk = std::min(kChunkBlocks, n_blocks - done);
        unpack_lsb0(q.codes, q.bits, (first_block + done) * kQBlockValues, chunk * kQBlockValues,
                    codes);
        for (size_t b = 0; b < chunk; ++b) fn(done + b, codes + b * kQBlockValues);
        done += chunk;
    }
}

}  // namespace

void encode_q4_1(const QuantView& q, uint64_t first_block, size_t n_blocks, uint8_t* out,
                 ScaleRule rule) {
    GroupCursor cursor(q, first_block);
    uint16_t d = 0, m = 0;
    // d and m are looked up once per group; the caller guarantees q.group % 32 == 0.
    // fp16 parameters (mcq-v1 always) are the block's d and m as they are: read inline.
    const bool half_params = q.scale_dtype == FloatDtype::F16;
    const auto store_block_dm = [&](uint8_t* block, bool first) {
        if (first || cursor.starts_group()) {
            const uint64_t g = cursor.group();
            if (half_params) {
                d = load_u16(q.scales.data() + 2 * g);
                m = load_u16(q.mins.data() + 2 * g);
            } else if (!stored_half_exact(q.scale_dtype, q.scales, g, &d) ||
                       !stored_half_exact(q.scale_dtype, q.mins, g, &m)) {
                // Not both exact: the zero-scale rule, or the error naming the value.
                d = group_scale_half(q, g, rule);
                m = group_min_half(q, g);
            }
        }
        store_u16(block, d);
        store_u16(block + 2, m);
        cursor.next();
    };
    if (q.bits == 4 || q.bits == 3) {
        const size_t stream_bytes = static_cast<size_t>(q.bits) * 4;  // per block of 32 codes
        const uint8_t* s = q.codes.data() + first_block * stream_bytes;
        for (size_t b = 0; b < n_blocks; ++b, s += stream_bytes) {
            uint8_t* block = out + b * kQ4_1BlockBytes;
            store_block_dm(block, b == 0);
            if (q.bits == 4)
                fold_4bit_block(s, block + 4);
            else
                fold_3bit_block(s, block + 4);
        }
        return;
    }
    for_each_block_codes(q, first_block, n_blocks, [&](size_t b, const uint8_t* codes) {
        uint8_t* block = out + b * kQ4_1BlockBytes;
        store_block_dm(block, b == 0);
        encode_detail::pack_q4_qs(codes, block + 4);
    });
}

void encode_q5_1(const QuantView& q, uint64_t first_block, size_t n_blocks, uint8_t* out,
                 ScaleRule rule) {
    for_each_block_codes(q, first_block, n_blocks, [&](size_t b, const uint8_t* codes) {
        uint8_t* block = out + b * kQ5_1BlockBytes;
        store_dm(q, first_block + b, rule, block);
        encode_detail::pack_q5_qh_qs(codes, block + 4);
    });
}

}  // namespace rebox
