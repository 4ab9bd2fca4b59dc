// Row permutation and computed tensors of include/rebox/arch/transforms.hpp.
#include "arch/transforms.hpp"

#include <cmath>
#include <cstdint>
#include <span>

#include "format/half.hpp"

namespace rebox::arch {

std::optional<std::vector<uint32_t>> rope_pair_source_rows(uint64_t rows, uint32_t heads) {
    if (heads == 0 || rows % heads != 0) return std::nullopt;
    const uint64_t head_rows = rows / heads;
    if (head_rows % 2 != 0 || rows > UINT32_MAX) return std::nullopt;
    const uint64_t half = head_rows / 2;
    std::vector<uint32_t> source_of(rows);
    // Source row s sits at [h, j, i] of the [heads, 2, D/2] view; after swapaxes(1, 2) it is at
    // [h, i, j] of [heads, D/2, 2].
    for (uint64_t s = 0; s < rows; ++s) {
        const uint64_t h = s / head_rows, j = (s % head_rows) / half, i = s % half;
        source_of[h * head_rows + 2 * i + j] = static_cast<uint32_t>(s);
    }
    return source_of;
}

std::optional<std::vector<uint32_t>> v_head_source_rows(uint64_t rows, uint64_t first,
                                                        uint32_t k_heads, uint32_t v_heads,
                                                        uint64_t unit) {
    if (k_heads == 0 || v_heads == 0 || unit == 0 || v_heads % k_heads != 0 ||
        rows != first + uint64_t{v_heads} * unit || rows > UINT32_MAX)
        return std::nullopt;
    const uint64_t per_key = v_heads / k_heads;
    std::vector<uint32_t> source_of(rows);
    for (uint64_t r = 0; r < first; ++r) source_of[r] = static_cast<uint32_t>(r);
    // Source head s = k * per_key + j (grouped by key head) lands at j * k_heads + k (tiled).
    for (uint64_t s = 0; s < v_heads; ++s) {
        const uint64_t k = s / per_key, j = s % per_key;
        const uint64_t to = j * k_heads + k;
        for (uint64_t x = 0; x < unit; ++x)
            source_of[first + to * unit + x] = static_cast<uint32_t>(first + s * unit + x);
    }
    return source_of;
}

std::optional<std::vector<uint32_t>> v_head_source_column_blocks(uint64_t rows, uint32_t k_heads,
                                                                 uint32_t v_heads) {
    const auto heads = v_head_source_rows(v_heads, 0, k_heads, v_heads, 1);
    if (!heads || rows == 0 || rows * v_heads > UINT32_MAX) return std::nullopt;
    std::vector<uint32_t> source_of(rows * v_heads);
    for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t p = 0; p < v_heads; ++p)
            source_of[i * v_heads + p] = static_cast<uint32_t>(i * v_heads + (*heads)[p]);
    return source_of;
}

std::optional<std::vector<uint32_t>> qkvz_source_rows(uint32_t k_heads, uint64_t key_rows,
                                                      uint64_t value_rows, bool z) {
    const uint64_t group = 2 * key_rows + 2 * value_rows;
    if (k_heads == 0 || key_rows == 0 || value_rows == 0 || group * k_heads > UINT32_MAX)
        return std::nullopt;
    using Part = std::pair<uint64_t, uint64_t>;  // (offset in the group, rows), in GGUF order
    const Part parts_qkv[] = {{0, key_rows}, {key_rows, key_rows}, {2 * key_rows, value_rows}};
    const Part parts_z[] = {{2 * key_rows + value_rows, value_rows}};
    std::vector<uint32_t> source_of;
    for (const auto& [offset, rows] :
         z ? std::span<const Part>(parts_z) : std::span<const Part>(parts_qkv))
        for (uint64_t h = 0; h < k_heads; ++h)
            for (uint64_t i = 0; i < rows; ++i)
                source_of.push_back(static_cast<uint32_t>(h * group + offset + i));
    return source_of;
}

float neg_exp_f32(float widened_value) {
    return -static_cast<float>(std::exp(static_cast<double>(widened_value)));
}

// e^x rounded once to fp16 from double: through binary32 first, and where that lands exactly on the
// midpoint of two fp16 values (a tie the binary32 rounding made), the side e^x lies on decides.
float neg_exp_f16(uint16_t half_bits) {
    const double e = std::exp(static_cast<double>(half_to_float(half_bits)));  // > 0 or +inf
    const float f = static_cast<float>(e);
    const uint16_t nearest = float_to_half(f);
    const float at = half_to_float(nearest);
    if (at == f || !std::isfinite(f) || !std::isfinite(at)) return -at;
    const uint16_t other = f > at ? nearest + 1 : nearest - 1;  // positive: bits order the values
    const float beside = half_to_float(other);
    const bool tie = 2.0 * double(f) == double(at) + double(beside);
    if (!tie || e == double(f)) return -at;
    return -((e > double(f)) == (beside > at) ? beside : at);
}

std::vector<float> llama3_rope_freqs(const ModelConfig& config) {
    const RopeScalingConfig scaling = config.rope_scaling.value_or(RopeScalingConfig{});
    const double factor = scaling.factor.value_or(8.0);
    const double low_freq_factor = scaling.low_freq_factor.value_or(1.0);
    const double high_freq_factor = scaling.high_freq_factor.value_or(4.0);
    const double old_context_len = scaling.original_max_position_embeddings.value_or(8192);
    // Python scalars (doubles) meet float32 tensors: torch rounds them to float32 first.
    const float low_freq_wavelen = static_cast<float>(old_context_len / low_freq_factor);
    const float high_freq_wavelen = static_cast<float>(old_context_len / high_freq_factor);
    const float two_pi = static_cast<float>(2.0 * M_PI);
    const float old_len = static_cast<float>(old_context_len);
    const float low = static_cast<float>(low_freq_factor);
    const float band = static_cast<float>(high_freq_factor - low_freq_factor);
    const float factor_f = static_cast<float>(factor);
    const float base = config.rope_theta;
    const uint32_t dim = config.head_dim;

    std::vector<float> factors;
    for (uint32_t k = 0; k < dim; k += 2) {
        // freqs = 1.0 / (base ** (arange(0, dim, 2, float32) / dim))
        const float exponent = static_cast<float>(k) / static_cast<float>(dim);
        const float power =
            static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
        const float freq = 1.0f / power;
        // wavelen = 2 * math.pi / freq  ==  reciprocal(freq) * float(2 pi)
        const float wavelen = (1.0f / freq) * two_pi;
        if (wavelen < high_freq_wavelen) {
            factors.push_back(1.0f);
        } else if (wavelen > low_freq_wavelen) {
            factors.push_back(factor_f);
        } else {
            const float smooth = ((1.0f / wavelen) * old_len - low) / band;
            factors.push_back(1.0f / ((1.0f - smooth) / factor_f + smooth));
        }
    }
    return factors;
}

std::vector<float> phi3_rope_factors(const ModelConfig& config, bool long_factors) {
    std::vector<float> factors;
    if (!config.rope_scaling) return factors;
    const auto& list =
        long_factors ? config.rope_scaling->long_factor : config.rope_scaling->short_factor;
    if (!list) return factors;
    for (const double value : *list) factors.push_back(static_cast<float>(value));
    return factors;
}

std::vector<float> proportional_rope_freqs(const ModelConfig& config) {
    const uint32_t dim = config.full_attention ? config.full_attention->head_dim : 0;
    const double fraction =
        config.rope_scaling ? config.rope_scaling->partial_rotary_factor.value_or(1.0) : 1.0;
    // int(head_dim_full * partial_rotary_factor / 2) and int(head_dim_full / 2), in Python floats.
    const double rotated_pairs = std::trunc(double(dim) * fraction / 2.0);
    const double pairs = std::trunc(double(dim) / 2.0);
    std::vector<float> factors;
    for (uint32_t k = 0; k < pairs; ++k) factors.push_back(k < rotated_pairs ? 1.0f : 1e30f);
    return factors;
}

float norm_plus_one_f32(float widened_value) { return widened_value + 1.0f; }

// The binary32 sum is rounded once more to fp16; binary32 carries 24 >= 2*11 + 2 bits, so this
// double rounding equals the single correct rounding of the exact sum (torch's and numpy's F16 add
// on CPU compute in binary32 and round the same way).
float norm_plus_one_f16(uint16_t half_bits) {
    return half_to_float(float_to_half(half_to_float(half_bits) + 1.0f));
}

}  // namespace rebox::arch
