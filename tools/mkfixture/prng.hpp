// Deterministic random numbers for the fixture generator: splitmix64 implemented here, so the
// same seed gives the same bytes on every platform and library version (no std:: distributions).
#pragma once

#include <cstdint>
#include <string_view>

namespace mkfixture {

class SplitMix64 {
  public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform in [lo, hi).
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
    // Uniform integer in [0, 2^bits), bits in 1..32 (top bits of one draw: exactly uniform).
    uint32_t uniform_bits(int bits) { return static_cast<uint32_t>(next() >> (64 - bits)); }

  private:
    uint64_t state_;
};

// FNV-1a of a name, used to give every tensor (and every stream in it) its own seed, so the
// content does not depend on tensor order or sharding.
inline uint64_t fnv1a64(std::string_view text) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

// Seeded by the tensor's name without a leading "model.", so the prefixed layout (--prefix-model)
// holds exactly the same values as the plain one.
inline SplitMix64 stream_for(uint64_t seed, std::string_view stream_name) {
    if (stream_name.starts_with("model.")) stream_name.remove_prefix(6);
    SplitMix64 mix(seed ^ fnv1a64(stream_name));
    return SplitMix64(mix.next());
}

}  // namespace mkfixture
