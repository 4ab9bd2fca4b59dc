// The search tables of ggml's i-quants (iq2xs_init_impl's and iq3xs_init_impl's grid, map and
// neighbour lists), built once per grid on first use (std::call_once: thread-safe, nothing built
// for a run that never quantizes these types).
//
// A grid point holds `values` codes of `bits` bits (8 x 2 bits for the 2-bit and 1-bit grids,
// 4 x 3 bits for the 3-bit ones), its key u = sum l_i << (bits * i). Every key is either on the
// grid (map[u] = its grid index) or not (map[u] = -(offset + 1), and neighbours[offset] = n,
// followed by the n grid indices nearest to the point 2l+1 in squared distance over the `nwant`
// smallest distances, in (distance, index) order as ggml's qsort leaves them).
#pragma once

#include <cstdint>
#include <vector>

namespace rebox::quant {

enum class IqGrid { iq2_xxs, iq2_xs, iq2_s, iq1, iq3_xxs, iq3_s };

struct IqTables {
    int values = 0;              // codes per grid point (8 or 4)
    int bits = 0;                // bits per code in a key (2 or 3)
    std::vector<int8_t> points;  // grid_size x values: 2l+1, as ggml's kgrid_q2xs / kgrid_q3xs
    std::vector<int32_t> map;    // 43692 (2 bits) or 4096 (3 bits) entries
    std::vector<uint16_t> neighbours;

    const int8_t* point(int index) const { return points.data() + index * values; }
};

const IqTables& iq_tables(IqGrid grid);

// iq2_find_best_neighbour / iq3_find_best_neighbour: the neighbour of `key` (not on the grid)
// with the least sum weight[i] * (scale*q_i - xval[i])^2 (the first on ties); writes its codes
// (q-1)/2 into L and returns its grid index, or -1 when every distance is NaN (ggml asserts).
int iq_best_neighbour(const IqTables& t, int key, const float* xval, const float* weight,
                      float scale, int8_t* L);

// The helpers every i-quant search shares:
// a block whose search found no grid point (a NaN or Inf reached it, where ggml aborts): one
// input error naming the type.
[[noreturn]] void iq_off_grid(const char* type);
// sum weight[i] * xval[i] * (2L[i]+1) and sum weight[i] * (2L[i]+1)^2 over n values, in ggml's
// order (the same float sequence as its loops).
void iq_weighted_sums(int n, const float* weight, const float* xval, const int8_t* L, float& sumqx,
                      float& sumq2);
// The grid index of the t.values codes L (key sum L[i] << (t.bits * i)); iq_off_grid when the
// key is not on the grid.
int iq_grid_index(const IqTables& t, const int8_t* L, const char* type);

}  // namespace rebox::quant
