// Deterministic tensor contents: realistic centred group parameters, uniform random codes, norms
// near 1, and (optionally) exactness corner cases in the first groups of a tensor.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "model_plan.hpp"

namespace mkfixture {

struct GroupParams {
    std::vector<uint16_t> scales;  // fp16 bits, one per group
    std::vector<uint16_t> mins;
};

// What the first groups of a corners tensor hold (see tensor_content.cpp); groups from
// corner_group_count() on are ordinary.
int corner_group_count();

GroupParams make_group_params(const QuantTensor& tensor, uint64_t seed);

// Writes the packed lsb0 code stream (streamed in blocks; honours drop_last_byte and
// dirty_padding).
void write_qcodes(std::ostream& out, const QuantTensor& tensor, uint64_t seed);
void write_f16_le(std::ostream& out, const std::vector<uint16_t>& values);
void write_norm(std::ostream& out, const NormTensor& tensor, uint64_t seed);

}  // namespace mkfixture
