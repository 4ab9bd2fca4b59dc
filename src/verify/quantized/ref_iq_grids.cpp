// The i-quant grid tables of verify's re-quantizer (ref_iq_grids.hpp). Written for clarity: for
// each key, the squared distance to every grid point, the `nwant` smallest distinct distances,
// then the points at those distances in (distance, index) order. Only keys a search can form get a
// list: for the 2-bit grids every code of a searched key is clamped to 0..2 (2 < kMaxQ = 3, or the
// three IQ1 levels), so the 3^8 = 6561 keys without a code 3 (ggml builds lists for all 43692 keys
// of its map, the same lists for these); every 3-bit key (codes 0..7) gets one.
#include "verify/quantized/ref_iq_grids.hpp"

#include <mutex>

#include "quantize/iq_grid_data.hpp"

namespace rebox::verify_ref::iq_grids {

namespace {

struct GridSpec {
    const uint16_t* compact;
    int size;
    int values;
    int bits;
    int key_count;  // ggml's kmap_size
    int nwant;
};

GridSpec spec_of(Grid which) {
    using namespace rebox::iq_grid_data;
    switch (which) {
        case Grid::iq2_xxs:
            return {kIq2GridXxs, 256, 8, 2, 43692, 2};
        case Grid::iq2_xs:
            return {kIq2GridXs, 512, 8, 2, 43692, 2};
        case Grid::iq2_s:
            return {kIq2GridS, 1024, 8, 2, 43692, 1};
        case Grid::iq1:
            return {kIq1Grid, 2048, 8, 2, 43692, 3};
        case Grid::iq3_xxs:
            return {kIq3GridXxs, 256, 4, 3, 4096, 2};
        case Grid::iq3_s:
            break;
    }
    return {kIq3GridS, 512, 4, 3, 4096, 3};
}

// True when a search can form this key (see the top comment).
bool searchable(int key, const GridSpec& spec) {
    if (spec.bits == 3) return true;
    for (int i = 0; i < spec.values; ++i)
        if (((key >> (2 * i)) & 3) == 3) return false;
    return true;
}

RefIqGrid build(Grid which) {
    const GridSpec spec = spec_of(which);
    RefIqGrid g;
    g.values = spec.values;
    g.bits = spec.bits;
    const int mask = (1 << spec.bits) - 1;
    g.points.resize(static_cast<size_t>(spec.size * spec.values));
    g.index_of_key.assign(static_cast<size_t>(spec.key_count), -1);
    for (int j = 0; j < spec.size; ++j) {
        for (int i = 0; i < spec.values; ++i) {
            const int l = (spec.compact[j] >> (spec.bits * i)) & mask;
            g.points[static_cast<size_t>(j * spec.values + i)] = static_cast<int8_t>(2 * l + 1);
        }
        g.index_of_key[spec.compact[j]] = j;  // the compact entry is the point's key
    }
    g.list_start.assign(static_cast<size_t>(spec.key_count) + 1, 0);
    std::vector<int> distance(static_cast<size_t>(spec.size));
    for (int key = 0; key < spec.key_count; ++key) {
        g.list_start[static_cast<size_t>(key)] = static_cast<uint32_t>(g.neighbours.size());
        if (g.index_of_key[static_cast<size_t>(key)] >= 0 || !searchable(key, spec)) continue;
        int position[8];
        for (int i = 0; i < spec.values; ++i)
            position[i] = 2 * ((key >> (spec.bits * i)) & mask) + 1;
        // levels: the nwant smallest distinct distances, ascending (nwant <= 3).
        int levels[3];
        int have = 0;
        for (int j = 0; j < spec.size; ++j) {
            const int8_t* p = g.point(j);
            int d2 = 0;
            for (int i = 0; i < spec.values; ++i) d2 += (p[i] - position[i]) * (p[i] - position[i]);
            distance[static_cast<size_t>(j)] = d2;
            int at = 0;
            while (at < have && levels[at] < d2) ++at;
            if (at < have && levels[at] == d2) continue;  // already a level
            if (at == spec.nwant) continue;               // larger than every kept level
            if (have == spec.nwant) --have;               // the largest level drops out
            for (int k = have; k > at; --k) levels[k] = levels[k - 1];
            levels[at] = d2;
            ++have;
        }
        for (int level = 0; level < have; ++level)
            for (int j = 0; j < spec.size; ++j)
                if (distance[static_cast<size_t>(j)] == levels[level])
                    g.neighbours.push_back(static_cast<uint16_t>(j));
    }
    g.list_start[static_cast<size_t>(spec.key_count)] = static_cast<uint32_t>(g.neighbours.size());
    return g;
}

constexpr int kGrids = 6;

}  // namespace

const RefIqGrid& grid(Grid which) {
    static std::once_flag once[kGrids];
    static RefIqGrid grids[kGrids];
    const auto slot = static_cast<int>(which);
    std::call_once(once[slot], [slot, which] { grids[slot] = build(which); });
    return grids[slot];
}

}  // namespace rebox::verify_ref::iq_grids
