// Q4_1 / Q5_1 block packing and binary32 dequantization of a QuantView (notes/gguf.md §2.2, §2.3).
// Codes are unpacked a chunk at a time into a stack buffer; each block's d and m are the fp16 bits
// of its group's scale and min, copied, never recomputed.
#include "rebox/encode/block_encode.hpp"

#include <algorithm>
#include <cstring>

#include "rebox/encode/lsb0_unpack.hpp"
#include "rebox/error.hpp"
#include "rebox/format/half.hpp"

namespace rebox {
namespace {

constexpr size_t kChunkBlocks = 256;  // codes unpacked per step: 8192 bytes of stack
constexpr size_t kChunkValues = kChunkBlocks * kQBlockValues;

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline void store_u16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}
inline uint32_t load_u32(const uint8_t* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Value g of a scale/min array of `dtype` as binary32 (exact for every dtype).
float stored_float(FloatDtype dtype, std::span<const uint8_t> values, uint64_t g) {
    switch (dtype) {
        case FloatDtype::F16:
            return half_to_float(load_u16(values.data() + 2 * g));
        case FloatDtype::BF16:
            return bf16_to_float(load_u16(values.data() + 2 * g));
        case FloatDtype::F32: {
            const uint32_t bits = load_u32(values.data() + 4 * g);
            float f;
            std::memcpy(&f, &bits, 4);
            return f;
        }
    }
    return 0.0f;
}

uint16_t stored_half(FloatDtype dtype, std::span<const uint8_t> values, uint64_t g,
                     const char* what) {
    if (dtype == FloatDtype::F16) return load_u16(values.data() + 2 * g);
    uint16_t half = 0;
    if (!float_to_half_exact(stored_float(dtype, values, g), &half))
        throw Error(ExitClass::blocker,
                    error_message("", std::string(what) + "[" + std::to_string(g) + "]",
                                  "not exactly representable as fp16"));
    return half;
}

// Writes d and m of block b (group = 32b / group) and returns nothing; shared by Q4_1 and Q5_1.
inline void store_dm(const QuantView& q, uint64_t block, uint8_t* out) {
    const uint64_t g = block * kQBlockValues / static_cast<uint64_t>(q.group);
    store_u16(out, group_scale_half(q, g));
    store_u16(out + 2, group_min_half(q, g));
}

}  // namespace

uint16_t group_scale_half(const QuantView& q, uint64_t group_index) {
    return stored_half(q.scale_dtype, q.scales, group_index, "scales");
}

uint16_t group_min_half(const QuantView& q, uint64_t group_index) {
    return stored_half(q.scale_dtype, q.mins, group_index, "mins");
}

void encode_q4_1(const QuantView& q, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    uint8_t codes[kChunkValues];
    for (size_t done = 0; done < n_blocks;) {
        const size_t chunk = std::min(kChunkBlocks, n_blocks - done);
        const uint64_t block0 = first_block + done;
        unpack_lsb0(q.codes, q.bits, block0 * kQBlockValues, chunk * kQBlockValues, codes);
        for (size_t b = 0; b < chunk; ++b) {
            uint8_t* block = out + (done + b) * kQ4_1BlockBytes;
            const uint8_t* c = codes + b * kQBlockValues;
            store_dm(q, block0 + b, block);
            for (size_t j = 0; j < 16; ++j)
                block[4 + j] = static_cast<uint8_t>(c[j] | c[j + 16] << 4);
        }
        done += chunk;
    }
}

void encode_q5_1(const QuantView& q, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    uint8_t codes[kChunkValues];
    for (size_t done = 0; done < n_blocks;) {
        const size_t chunk = std::min(kChunkBlocks, n_blocks - done);
        const uint64_t block0 = first_block + done;
        unpack_lsb0(q.codes, q.bits, block0 * kQBlockValues, chunk * kQBlockValues, codes);
        for (size_t b = 0; b < chunk; ++b) {
            uint8_t* block = out + (done + b) * kQ5_1BlockBytes;
            const uint8_t* c = codes + b * kQBlockValues;
            store_dm(q, block0 + b, block);
            uint32_t qh = 0;
            for (uint32_t j = 0; j < 32; ++j) qh |= uint32_t{(c[j] >> 4) & 1u} << j;
            for (int k = 0; k < 4; ++k) block[4 + k] = static_cast<uint8_t>(qh >> (8 * k));
            for (size_t j = 0; j < 16; ++j)
                block[8 + j] = static_cast<uint8_t>((c[j] & 0x0F) | (c[j + 16] & 0x0F) << 4);
        }
        done += chunk;
    }
}

void dequantize_f32(const QuantView& q, uint64_t first, size_t count, float* out) {
    uint8_t codes[kChunkValues];
    const uint64_t group = static_cast<uint64_t>(q.group);
    for (size_t done = 0; done < count;) {
        const size_t chunk = std::min(kChunkValues, count - done);
        unpack_lsb0(q.codes, q.bits, first + done, chunk, codes);
        // Walk the chunk one group run at a time so scale and min are converted once per run.
        for (size_t i = 0; i < chunk;) {
            const uint64_t index = first + done + i;
            const uint64_t g = index / group;
            const size_t run =
                static_cast<size_t>(std::min<uint64_t>((g + 1) * group - index, chunk - i));
            const float scale = stored_float(q.scale_dtype, q.scales, g);
            const float min = stored_float(q.scale_dtype, q.mins, g);
            for (size_t k = 0; k < run; ++k)
                out[done + i + k] = static_cast<float>(codes[i + k]) * scale + min;
            i += run;
        }
        done += chunk;
    }
}

}  // namespace rebox
