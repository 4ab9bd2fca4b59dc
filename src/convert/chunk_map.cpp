// split_into_chunks: units of output (blocks or values) per chunk, rounded to whole rows for
// permuted tensors; stacked experts are cut per expert first.
#include "chunk_map.hpp"

#include <algorithm>

namespace rebox::convert_detail {

std::vector<Chunk> split_into_chunks(const Plan& plan, uint64_t output_bytes) {
    std::vector<Chunk> chunks;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const TensorPlan& tp = plan.tensors[i];
        const auto unit = output_unit(tp);
        const uint64_t units = tp.nbytes / unit.bytes;
        uint64_t units_per_chunk = std::max<uint64_t>(1, output_bytes / unit.bytes);
        if (!tp.row_source.empty()) {  // permuted rows: chunks of whole output rows
            const uint64_t units_per_row = tp.row_values / unit.values;
            units_per_chunk =
                std::max<uint64_t>(1, units_per_chunk / units_per_row) * units_per_row;
        }
        // Stacked experts: each expert's units on their own (the plan made every expert whole
        // blocks: cols is a multiple of the block size for block types).
        const bool stacked = !tp.expert_sources.empty();
        const uint64_t units_per_source = stacked ? tp.expert_values / unit.values : units;
        for (uint64_t u = 0; u < units;) {
            const uint64_t source = units_per_source == 0 ? 0 : u / units_per_source;
            const uint64_t source_end = std::min(units, (source + 1) * units_per_source);
            const uint64_t n = std::min(units_per_chunk, source_end - u);
            Chunk chunk{i, u * unit.values, n * unit.values, u * unit.bytes, n * unit.bytes};
            chunk.source_index = stacked ? tp.expert_sources[source] : tp.source_index;
            chunk.source_first = (u - source * units_per_source) * unit.values +
                                 (stacked ? tp.expert_first(source) : 0);
            chunks.push_back(chunk);
            u += n;
        }
    }
    return chunks;
}

}  // namespace rebox::convert_detail
