// Tensor content generation for the fixtures (independent of rebox's encode/ and source/ code).
#include "tensor_content.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "bitpack.hpp"
#include "fp16.hpp"
#include "prng.hpp"

namespace mkfixture {

namespace {

// Corner groups (only in tensors with `corners`); codes for them are chosen in corner_code().
//  0: smallest subnormal scale 0x0001, largest subnormal min 0x03ff, random codes
//  1: largest subnormal scale 0x03ff, negative-zero min 0x8000, random codes
//  2: negative scale, positive min (values centred), random codes
//  3: largest finite scale 0x7bff, small negative min, all codes 0
//  4: small scale, most negative finite min 0xfbff, random codes
//  5: most negative finite scale 0xfbff, min -0 (0x8000), all codes 0 (value is -0.0)
//  6: ordinary scale/min, constant group: all codes 2^bits-1
//  7: scale +0, min +0: an all-zero group, random codes
//  8: scale 0x7bff, min 0xfbff, codes 0 or 1 only (values -65504 and 0)
//  9: negative-zero scale 0x8000, ordinary min, random codes
constexpr int kCornerGroups = 10;

float ordinary_scale(SplitMix64& rng, int64_t cols, double gain) {
    const double spread = gain / std::sqrt(static_cast<double>(cols) / 64.0);
    return static_cast<float>(rng.uniform(0.002, 0.03) * spread);
}

uint16_t centred_min(uint16_t scale_bits, int bits) {
    const double half_range = (std::pow(2.0, bits) - 1.0) / 2.0;
    return float_to_half(
        static_cast<float>(-static_cast<double>(half_to_float(scale_bits)) * half_range));
}

// The code of element `index` in group `group` of a corners tensor, or -1 for "random".
int corner_code(int64_t group, int64_t index, int bits) {
    switch (group) {
        case 3:
        case 5:
            return 0;
        case 6:
            return (1 << bits) - 1;
        case 8:
            return static_cast<int>(index & 1);
        default:
            return -1;
    }
}

}  // namespace

int corner_group_count() { return kCornerGroups; }

GroupParams make_group_params(const QuantTensor& t, uint64_t seed) {
    GroupParams p;
    const auto groups = static_cast<size_t>(t.group_count());
    p.scales.resize(groups);
    p.mins.resize(groups);
    SplitMix64 rng = stream_for(seed, t.name + ".scales");
    for (size_t g = 0; g < groups; ++g) {
        p.scales[g] = float_to_half(ordinary_scale(rng, t.cols, t.gain));
        p.mins[g] = centred_min(p.scales[g], t.bits);
    }
    if (t.corners && groups >= static_cast<size_t>(kCornerGroups)) {
        const uint16_t s = p.scales[2];
        const uint16_t neg = static_cast<uint16_t>(s | 0x8000u);
        const uint16_t set[kCornerGroups][2] = {
            {0x0001, 0x03ff},
            {0x03ff, 0x8000},
            {neg, static_cast<uint16_t>(centred_min(s, t.bits) ^ 0x8000u)},
            {0x7bff, float_to_half(-0.01f)},
            {p.scales[4], 0xfbff},
            {0xfbff, 0x8000},
            {p.scales[6], p.mins[6]},
            {0x0000, 0x0000},
            {0x7bff, 0xfbff},
            {0x8000, p.mins[9]},
        };
        for (int g = 0; g < kCornerGroups; ++g) {
            p.scales[static_cast<size_t>(g)] = set[g][0];
            p.mins[static_cast<size_t>(g)] = set[g][1];
        }
    }
    return p;
}

void write_qcodes(std::ostream& out, const QuantTensor& t, uint64_t seed) {
    SplitMix64 rng = stream_for(seed, t.name + ".qcodes");
    const int64_t total = t.code_count();
    // Blocks of whole groups and a multiple of 8 codes, so each block packs to whole bytes.
    const int64_t block = static_cast<int64_t>(t.group) * 8 * 512;
    std::vector<uint8_t> codes;
    for (int64_t start = 0; start < total; start += block) {
        const int64_t count = std::min(block, total - start);
        codes.resize(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
            const int64_t index = start + i;
            const uint8_t random_code = static_cast<uint8_t>(rng.uniform_bits(t.bits));
            int code = t.corners ? corner_code(index / t.group, index % t.group, t.bits) : -1;
            codes[static_cast<size_t>(i)] = code >= 0 ? static_cast<uint8_t>(code) : random_code;
        }
        std::vector<uint8_t> packed = pack_lsb0(codes, t.bits);
        const bool last = start + count >= total;
        if (last && t.dirty_padding) {
            const uint64_t used_bits = static_cast<uint64_t>(count) * t.bits % 8;
            if (used_bits != 0) packed.back() |= static_cast<uint8_t>(0xffu << used_bits);
        }
        if (last && t.drop_last_byte) packed.pop_back();
        out.write(reinterpret_cast<const char*>(packed.data()),
                  static_cast<std::streamsize>(packed.size()));
    }
}

void write_f16_le(std::ostream& out, const std::vector<uint16_t>& values) {
    std::vector<char> bytes(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
        bytes[2 * i] = static_cast<char>(values[i] & 0xff);
        bytes[2 * i + 1] = static_cast<char>(values[i] >> 8);
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_norm(std::ostream& out, const NormTensor& t, uint64_t seed) {
    SplitMix64 rng = stream_for(seed, t.name);
    std::vector<char> bytes(static_cast<size_t>(t.length) * 4);
    for (int64_t i = 0; i < t.length; ++i) {
        const float value = static_cast<float>(t.center + rng.uniform(-t.spread, t.spread));
        const uint32_t bits = std::bit_cast<uint32_t>(value);
        for (int b = 0; b < 4; ++b)
            bytes[static_cast<size_t>(4 * i + b)] = static_cast<char>((bits >> (8 * b)) & 0xff);
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace mkfixture
