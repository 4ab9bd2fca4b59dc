// verify's own search tables for the i-quants (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S), built from the compact grids the way ggml-quants.c's iq2xs_init_impl / iq3xs_init_impl
// define them, with code of its own. The grid points themselves are read from
// quantize/iq_grid_data.hpp: read-only data (no code), shared with the writer and checked entry by
// entry against ggml's dequantizers by tests/unit/quantize/iquant_oracle_test.cpp.
//
// A grid point holds `values` codes l of `bits` bits (8 x 2 bits for the 2-bit and 1-bit grids,
// 4 x 3 bits for the 3-bit ones); its key is sum l_i << (bits * i), its coordinates 2l + 1. A key
// that is not a grid point has a neighbour list: every grid point whose squared distance to it is
// one of the `nwant` smallest distances that occur (3 for the 1-bit grid and IQ3_S's, 1 for
// IQ2_S's, 2 for IQ2_XXS's, IQ2_XS's and IQ3_XXS's), ordered by distance, then by grid index (ggml
// sorts (distance, index) pairs). Built once per grid on first use (std::call_once): a verify of a
// file without i-quants builds nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace rebox::verify_ref::iq_grids {

enum class Grid { iq2_xxs, iq2_xs, iq2_s, iq1, iq3_xxs, iq3_s };

struct RefIqGrid {
    int values = 0;              // codes per point: 8 or 4
    int bits = 0;                // bits per code in a key: 2 or 3
    std::vector<int8_t> points;  // point j's coordinates 2l + 1 at [j * values, (j + 1) * values)
    std::vector<int32_t> index_of_key;  // grid index, or -1 for a key that is not on the grid
    std::vector<uint32_t> list_start;   // key k's neighbours: [list_start[k], list_start[k + 1])
    std::vector<uint16_t> neighbours;   // grid indices

    const int8_t* point(int index) const { return points.data() + index * values; }
    int key_count() const { return static_cast<int>(index_of_key.size()); }
    // The grid index of `key`; -1 when the key is off the grid or out of range.
    int index(uint32_t key) const { return key < index_of_key.size() ? index_of_key[key] : -1; }
    // The neighbour list of an off-grid key (empty for a grid point or a key out of range: a
    // 2-bit key with a code 3, which no search can form, has no list).
    std::span<const uint16_t> neighbours_of(uint32_t key) const {
        if (key >= index_of_key.size()) return {};
        return std::span<const uint16_t>(neighbours.data() + list_start[key],
                                         list_start[key + 1] - list_start[key]);
    }
};

const RefIqGrid& grid(Grid which);

}  // namespace rebox::verify_ref::iq_grids
