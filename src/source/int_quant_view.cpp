// Accessors of an IntQuantView (docs/formats.md §5): one function per job, each switching on the
// checkpoint's packing. Every word is a little-endian int32 read byte by byte, so the code is the
// same on any host.
#include "source/int_quant_view.hpp"

#include <algorithm>
#include <cstring>

#include "format/half.hpp"

namespace rebox {
namespace {

inline uint32_t word_at(std::span<const uint8_t> bytes, uint64_t word) {
    const uint8_t* p = bytes.data() + word * 4;
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Code `index` of an lsb0 stream of `bits`-wide codes whose word w is word_of(w).
template <typename WordOf>
inline uint32_t stream_code(int bits, uint64_t index, WordOf word_of) {
    const uint64_t bit = index * static_cast<uint64_t>(bits);
    const uint64_t w = bit / 32;
    const unsigned shift = static_cast<unsigned>(bit % 32);
    uint64_t window = word_of(w) >> shift;
    if (shift + static_cast<unsigned>(bits) > 32)
        window |= uint64_t{word_of(w + 1)} << (32 - shift);
    return static_cast<uint32_t>(window) & ((1u << bits) - 1);
}

}  // namespace

uint32_t int_group_of(const IntQuantView& v, int64_t col) {
    if (!v.g_idx.empty()) return word_at(v.g_idx, static_cast<uint64_t>(col));
    return static_cast<uint32_t>(col / v.group);
}

void int_row_codes(const IntQuantView& v, int64_t row, int64_t col0, size_t count, int16_t* out) {
    const uint64_t r = static_cast<uint64_t>(row), rows = static_cast<uint64_t>(v.rows);
    const uint32_t mask = (1u << v.bits) - 1;
    switch (v.code_layout) {
        case IntCodeLayout::input_packed_columns: {
            const auto word_of = [&](uint64_t w) { return word_at(v.codes, w * rows + r); };
            for (size_t i = 0; i < count; ++i)
                out[i] = static_cast<int16_t>(
                    stream_code(v.bits, static_cast<uint64_t>(col0) + i, word_of));
            return;
        }
        case IntCodeLayout::awq_output_packed: {
            const uint64_t words_per_row = rows / 8;
            const unsigned shift = 4u * static_cast<unsigned>(kAwqNibbleOf[r % 8]);
            for (size_t i = 0; i < count; ++i) {
                const uint64_t k = static_cast<uint64_t>(col0) + i;
                out[i] = static_cast<int16_t>(
                    (word_at(v.codes, k * words_per_row + r / 8) >> shift) & mask);
            }
            return;
        }
        case IntCodeLayout::row_words: {  // each word once, its codes lsb first
            const uint64_t per_word = 32 / static_cast<uint64_t>(v.bits);
            const uint64_t words_per_row =
                (static_cast<uint64_t>(v.cols) + per_word - 1) / per_word;
            for (size_t i = 0; i < count;) {
                const uint64_t k = static_cast<uint64_t>(col0) + i;
                uint32_t word = word_at(v.codes, r * words_per_row + k / per_word) >>
                                static_cast<unsigned>((k % per_word) * v.bits);
                for (uint64_t at = k % per_word; at < per_word && i < count;
                     ++at, ++i, word >>= v.bits)
                    out[i] = static_cast<int16_t>(word & mask);
            }
            return;
        }
        case IntCodeLayout::row_int8: {
            const uint8_t* p = v.codes.data() + r * static_cast<uint64_t>(v.cols) + col0;
            for (size_t i = 0; i < count; ++i) out[i] = static_cast<int8_t>(p[i]);
            return;
        }
    }
}

int32_t int_zero(const IntQuantView& v, int64_t row, int64_t group) {
    const uint64_t r = static_cast<uint64_t>(row), g = static_cast<uint64_t>(group);
    const uint64_t rows = static_cast<uint64_t>(v.rows);
    const uint32_t mask = (1u << v.bits) - 1;
    uint32_t stored = 0;
    switch (v.zero_layout) {
        case IntZeroLayout::constant:
            return v.zero_constant;
        case IntZeroLayout::output_packed_rows: {
            const uint64_t words_per_row = rows * static_cast<uint64_t>(v.bits) / 32;
            stored = stream_code(
                v.bits, r, [&](uint64_t w) { return word_at(v.zeros, g * words_per_row + w); });
            break;
        }
        case IntZeroLayout::awq_output_packed:
            stored = (word_at(v.zeros, g * (rows / 8) + r / 8) >>
                      (4u * static_cast<unsigned>(kAwqNibbleOf[r % 8]))) &
                     mask;
            break;
        case IntZeroLayout::column_words: {
            const uint64_t per_word = 32 / static_cast<uint64_t>(v.bits);
            const uint64_t n_groups = static_cast<uint64_t>(v.n_groups);
            stored = (word_at(v.zeros, (r / per_word) * n_groups + g) >>
                      static_cast<unsigned>((r % per_word) * v.bits)) &
                     mask;
            break;
        }
        case IntZeroLayout::row_int8:
            return static_cast<int8_t>(v.zeros[r * static_cast<uint64_t>(v.n_groups) + g]);
    }
    return static_cast<int32_t>(stored) + v.zero_add;
}

const uint8_t* int_scale_bytes(const IntQuantView& v, int64_t row, int64_t group) {
    const uint64_t index =
        v.scales_group_major
            ? static_cast<uint64_t>(group) * v.rows + static_cast<uint64_t>(row)
            : static_cast<uint64_t>(row) * v.n_groups + static_cast<uint64_t>(group);
    return v.scales.data() + index * float_dtype_size(v.scale_dtype);
}

float int_scale(const IntQuantView& v, int64_t row, int64_t group) {
    const uint8_t* p = int_scale_bytes(v, row, group);
    if (v.scale_dtype == FloatDtype::F32) {
        const uint32_t bits =
            uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    const uint16_t bits = static_cast<uint16_t>(p[0] | p[1] << 8);
    return v.scale_dtype == FloatDtype::BF16 ? bf16_to_float(bits) : half_to_float(bits);
}

void int_deltas(const IntQuantView& v, uint64_t first, size_t count, int16_t* out) {
    const uint64_t cols = static_cast<uint64_t>(v.cols);
    for (size_t done = 0; done < count;) {
        const uint64_t index = first + done;
        const int64_t row = static_cast<int64_t>(index / cols);
        const int64_t col = static_cast<int64_t>(index % cols);
        const size_t n = static_cast<size_t>(std::min<uint64_t>(cols - col, count - done));
        int_row_codes(v, row, col, n, out + done);
        // Subtract each column's zero point, looked up once per run of one group.
        int64_t last_group = -1;
        int32_t z = 0;
        for (size_t i = 0; i < n; ++i) {
            const int64_t g = int_group_of(v, col + static_cast<int64_t>(i));
            if (g != last_group) z = int_zero(v, row, g), last_group = g;
            out[done + i] = static_cast<int16_t>(out[done + i] - z);
        }
        done += n;
    }
}

}  // namespace rebox
