// A BF16 safetensors entry whose values are drawn from the SplitMix64 stream of its name (the
// fixtures stored in BF16 only: qwen35, gemma4): deterministic per seed and name, whatever the
// order the tensors are listed in.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mlx_pack.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"

namespace mkfixture {

// `value` draws one value from the stream, in row-major order; stored as the nearest BF16.
inline StTensor seeded_bf16(const std::string& name, const std::vector<int64_t>& shape,
                            uint64_t seed, std::function<double(SplitMix64&)> value) {
    int64_t count = 1;
    for (const int64_t d : shape) count *= d;
    return {name, "BF16", shape, static_cast<uint64_t>(count) * 2,
            [name, count, seed, value](std::ostream& out) {
                SplitMix64 rng = stream_for(seed, name);
                for (int64_t i = 0; i < count; ++i) {
                    const uint16_t bits = float_to_bf16(static_cast<float>(value(rng)));
                    out.put(static_cast<char>(bits & 0xff));
                    out.put(static_cast<char>(bits >> 8));
                }
            }};
}

}  // namespace mkfixture
