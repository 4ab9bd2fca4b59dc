// Builds the i-quant neighbour tables the way iq2xs_init_impl and iq3xs_init_impl do; each
// neighbour list is ordered by a counting sort on the distance (stable in the grid index), the
// same total order as ggml's qsort of (distance, index) pairs.
#include "quantize/iq_tables.hpp"

#include <algorithm>
#include <cfloat>
#include <mutex>
#include <string>

#include "quantize/iq_grid_data.hpp"
#include "rebox/error.hpp"

namespace rebox::quant {

namespace iq_tables_build {

IqTables build(const uint16_t* compact, int grid_size, int values, int bits, int map_size,
               int nwant) {
    IqTables t;
    t.values = values;
    t.bits = bits;
    t.points.resize(static_cast<size_t>(grid_size * values));
    t.map.assign(static_cast<size_t>(map_size), -1);
    const int mask = (1 << bits) - 1;
    for (int k = 0; k < grid_size; ++k) {
        int key = 0;
        for (int i = 0; i < values; ++i) {
            const int l = (compact[k] >> (bits * i)) & mask;
            t.points[static_cast<size_t>(k * values + i)] = static_cast<int8_t>(2 * l + 1);
            key |= l << (bits * i);
        }
        t.map[static_cast<size_t>(key)] = k;
    }
    const int max_distance = values * 4 * mask * mask;
    std::vector<int> distance(static_cast<size_t>(grid_size));
    std::vector<int> count(static_cast<size_t>(max_distance + 1));
    for (int u = 0; u < map_size; ++u) {
        if (t.map[static_cast<size_t>(u)] >= 0) continue;
        int pos[8];
        for (int i = 0; i < values; ++i) pos[i] = 2 * ((u >> (bits * i)) & mask) + 1;
        std::fill(count.begin(), count.end(), 0);
        for (int j = 0; j < grid_size; ++j) {
            const int8_t* q = t.point(j);
            int d2 = 0;
            for (int i = 0; i < values; ++i) d2 += (q[i] - pos[i]) * (q[i] - pos[i]);
            distance[static_cast<size_t>(j)] = d2;
            ++count[static_cast<size_t>(d2)];
        }
        // The nwant smallest distances that occur, then every point at one of them.
        int limit = -1;
        for (int d = 0, have = 0; d <= max_distance && have < nwant; ++d) {
            if (count[static_cast<size_t>(d)] == 0) continue;
            ++have;
            limit = d;
        }
        const auto offset = static_cast<int32_t>(t.neighbours.size());
        t.map[static_cast<size_t>(u)] = -(offset + 1);
        t.neighbours.push_back(0);
        for (int d = 0; d <= limit; ++d) {
            if (count[static_cast<size_t>(d)] == 0) continue;
            for (int j = 0; j < grid_size; ++j)
                if (distance[static_cast<size_t>(j)] == d)
                    t.neighbours.push_back(static_cast<uint16_t>(j));
        }
        t.neighbours[static_cast<size_t>(offset)] =
            static_cast<uint16_t>(t.neighbours.size() - static_cast<size_t>(offset) - 1);
    }
    return t;
}

IqTables build_grid(IqGrid grid) {
    using namespace iq_grid_data;
    constexpr int kMap2 = 43692, kMap3 = 4096;
    switch (grid) {
        case IqGrid::iq2_xxs:
            return build(kIq2GridXxs, 256, 8, 2, kMap2, 2);
        case IqGrid::iq2_xs:
            return build(kIq2GridXs, 512, 8, 2, kMap2, 2);
        case IqGrid::iq2_s:
            return build(kIq2GridS, 1024, 8, 2, kMap2, 1);
        case IqGrid::iq1:
            return build(kIq1Grid, 2048, 8, 2, kMap2, 3);
        case IqGrid::iq3_xxs:
            return build(kIq3GridXxs, 256, 4, 3, kMap3, 2);
        case IqGrid::iq3_s:
            return build(kIq3GridS, 512, 4, 3, kMap3, 3);
    }
    return {};
}

}  // namespace iq_tables_build

const IqTables& iq_tables(IqGrid grid) {
    static std::once_flag once[6];
    static IqTables tables[6];
    const auto index = static_cast<size_t>(grid);
    std::call_once(once[index],
                   [grid, index] { tables[index] = iq_tables_build::build_grid(grid); });
    return tables[index];
}

int iq_best_neighbour(const IqTables& t, int key, const float* xval, const float* weight,
                      float scale, int8_t* L) {
    const uint16_t* list = t.neighbours.data() + (-t.map[static_cast<size_t>(key)] - 1);
    float best_d2 = FLT_MAX;
    int best = -1;
    for (int j = 1; j <= list[0]; ++j) {
        const int8_t* q = t.point(list[j]);
        float d2 = 0;
        for (int i = 0; i < t.values; ++i) {
            const float diff = scale * static_cast<float>(q[i]) - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = list[j];
        }
    }
    if (best < 0) return -1;
    const int8_t* q = t.point(best);
    for (int i = 0; i < t.values; ++i) L[i] = static_cast<int8_t>((q[i] - 1) / 2);
    return best;
}

void iq_off_grid(const char* type) {
    throw Error(ExitClass::input, std::string("quantize_rows(") + type + ")", "",
                "a block's grid search found no grid point (NaN or Inf in the row, its imatrix "
                "or their products), where ggml aborts",
                "finite values and imatrix weights whose squares fit in a float");
}

void iq_weighted_sums(int n, const float* weight, const float* xval, const int8_t* L, float& sumqx,
                      float& sumq2) {
    sumqx = 0;
    sumq2 = 0;
    for (int i = 0; i < n; ++i) {
        const float w = weight[i];
        const auto q = static_cast<float>(2 * L[i] + 1);
        sumqx += w * xval[i] * q;
        sumq2 += w * q * q;
    }
}

int iq_grid_index(const IqTables& t, const int8_t* L, const char* type) {
    int key = 0;
    for (int i = 0; i < t.values; ++i) key |= L[i] << (t.bits * i);
    if (key < 0 || key >= static_cast<int>(t.map.size()) || t.map[static_cast<size_t>(key)] < 0)
        iq_off_grid(type);
    return t.map[static_cast<size_t>(key)];
}

}  // namespace rebox::quant
