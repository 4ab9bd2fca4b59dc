// verify's own reading of the rope conventions (docs/architectures.md), written apart from
// src/arch/ so a wrong permutation or a wrong rope_freqs formula there cannot agree with itself:
// the inverse row map (which source row a GGUF row of a permuted q/k tensor holds), the llama3
// rope factors and phi3's long rope (factor tensors, rotary dimensions, attention factor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "verify/sources/ref_config.hpp"

namespace rebox::verify_ref {

// GGUF row `gguf_row` of a q/k tensor with heads of `head_rows` rows (even): the head's rows are
// interleaved pairs (re, im) in the GGUF, first half / second half in the source.
inline uint64_t rope_source_row(uint64_t gguf_row, uint64_t head_rows) {
    const uint64_t head_start = gguf_row - gguf_row % head_rows;
    const uint64_t in_head = gguf_row - head_start;
    const uint64_t second_half = in_head & 1u;
    return head_start + second_half * (head_rows / 2) + (in_head >> 1);
}

// rope_freqs.weight of a llama3 rope_scaling config: head_dim/2 binary32 values, each step the
// binary32 operation torch performs in llama.cpp's converter.
std::vector<float> expected_llama3_rope_freqs(const RefConfig& config);

// gemma4: rope_freqs.weight of the full layers' proportional rope: head size D and partial factor
// p (RefConfig::full_layers) give int(D * p / 2) values 1.0, then 1e30 up to int(D / 2).
std::vector<float> expected_proportional_rope_freqs(const RefConfig& config);

// phi3: the rotary dimensions, int(partial_rotary_factor * hidden_size) // heads (the factor from
// rope_scaling, else config.json's top level, else 1).
uint64_t phi3_rotary_dims(const RefConfig& config);

// phi3 with a "longrope"/"su" rope_scaling and a non-empty long_factor: the converter writes the
// two factor tensors and rope.scaling.attn_factor. nullopt otherwise.
struct Phi3LongRope {
    std::vector<float> long_factors, short_factors;  // each value rounded once to binary32
    float attn_factor = 1.0f;
    std::string problem;  // non-empty: the lists do not have rotary_dims/2 values each
};
std::optional<Phi3LongRope> expected_phi3_long_rope(const RefConfig& config);

}  // namespace rebox::verify_ref
