// Produces the GGUF bytes of one slice of one planned tensor (the unit of parallel work).
#pragma once

#include <cstdint>
#include <span>

#include "plan/plan.hpp"
#include "source/source_model.hpp"

namespace rebox::convert_detail {

// A slice of a tensor: values [first, first+count), always whole blocks for block types.
struct Chunk {
    size_t plan_index = 0;
    uint64_t first = 0;
    uint64_t count = 0;
    uint64_t out_offset = 0;  // byte offset inside the tensor's GGUF data
    uint64_t out_bytes = 0;
    // Where the values come from: source tensor source_index (TensorPlan::kComputed for a
    // computed tensor) from its value source_first on. Equal to the plan's source_index and
    // `first` except for stacked experts, where the chunk lies inside one expert's source.
    size_t source_index = 0;
    uint64_t source_first = 0;
};

// Bytes of GGUF output per value (fractional for block types) as {bytes per unit, values per unit}.
struct UnitSize {
    uint64_t bytes;
    uint64_t values;
};
UnitSize output_unit(const TensorPlan& plan);

// Writes the chunk's GGUF bytes into out (out.size() == chunk.out_bytes). A tensor with a row map
// must be chunked in whole rows.
void encode_chunk(const SourceTensor& source, const TensorPlan& plan, const Chunk& chunk,
                  std::span<uint8_t> out);

}  // namespace rebox::convert_detail
