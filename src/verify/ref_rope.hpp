// verify's own reading of llama's rope conventions (docs/architectures.md), written apart from
// src/arch/ so a wrong permutation or a wrong rope_freqs formula there cannot agree with itself:
// the inverse row map (which source row a GGUF row of a permuted q/k tensor holds) and the llama3
// rope factors.
#pragma once

#include <cstdint>
#include <vector>

#include "rebox/model/model_config.hpp"

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
std::vector<float> expected_llama3_rope_freqs(const ModelConfig& config);

}  // namespace rebox::verify_ref
