// Test-local builders of IntQuantViews over test-owned bytes (encode and plan tests): signed byte
// codes and zero points, or unsigned codes packed pf = 32/bits per little-endian word as
// docs/formats.md §5.3 describes, and row-major [rows, n_groups] scales.
#pragma once

#include <cstdint>
#include <vector>

#include "quant_test_bytes.hpp"
#include "source/source_model.hpp"

namespace rebox::test {

// Owns the bytes a view points into; view() is valid while the object lives.
struct IntTensor {
    int bits = 4;
    int64_t rows = 1, cols = 32, group = 32;
    std::vector<int> codes;  // rows*cols, row-major
    std::vector<int> zeros;  // rows*n_groups (signed bytes), or empty: zero_constant
    int zero_constant = 0;
    std::vector<uint16_t> scale_bits;  // rows*n_groups, fp16 or bf16 bits
    FloatDtype scale_dtype = FloatDtype::F16;
    std::vector<int32_t> g_idx;
    bool packed_words = false;  // codes as row_words (unsigned) instead of signed bytes

    std::vector<uint8_t> code_bytes, zero_bytes, scale_bytes, g_idx_bytes;

    int64_t n_groups() const { return (cols + group - 1) / group; }

    IntQuantView view() {
        IntQuantView v;
        v.bits = bits;
        v.rows = rows;
        v.cols = cols;
        v.group = group;
        v.n_groups = g_idx.empty() ? n_groups() : static_cast<int64_t>(scale_bits.size()) / rows;
        code_bytes.clear();
        if (packed_words) {
            const int64_t pf = 32 / bits, words = (cols + pf - 1) / pf;
            std::vector<uint32_t> w(static_cast<size_t>(rows * words), 0);
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t k = 0; k < cols; ++k)
                    w[r * words + k / pf] |= static_cast<uint32_t>(codes[r * cols + k])
                                             << (bits * (k % pf));
            for (uint32_t x : w)
                for (int b = 0; b < 4; ++b)
                    code_bytes.push_back(static_cast<uint8_t>(x >> (8 * b)));
            v.code_layout = IntCodeLayout::row_words;
        } else {
            for (int c : codes) code_bytes.push_back(static_cast<uint8_t>(static_cast<int8_t>(c)));
            v.code_layout = IntCodeLayout::row_int8;
        }
        v.codes = code_bytes;
        zero_bytes.clear();
        if (zeros.empty()) {
            v.zero_layout = IntZeroLayout::constant;
            v.zero_constant = zero_constant;
        } else {
            for (int z : zeros) zero_bytes.push_back(static_cast<uint8_t>(static_cast<int8_t>(z)));
            v.zero_layout = IntZeroLayout::row_int8;
            v.zeros = zero_bytes;
        }
        scale_bytes = u16_le(scale_bits);
        v.scale_dtype = scale_dtype;
        v.scales_group_major = false;
        v.scales = scale_bytes;
        g_idx_bytes.clear();
        for (int32_t g : g_idx)
            for (int b = 0; b < 4; ++b)
                g_idx_bytes.push_back(static_cast<uint8_t>(static_cast<uint32_t>(g) >> (8 * b)));
        v.g_idx = g_idx_bytes;
        v.method = "test";
        v.packed_bytes = code_bytes.size() + zero_bytes.size() + scale_bytes.size();
        return v;
    }
};

}  // namespace rebox::test
