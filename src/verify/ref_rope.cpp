// llama3 rope factors, verify's own computation (see ref_rope.hpp). The converter's torch code
// works on float32 tensors: `x / t` is reciprocal(t) * x, Python numbers are rounded to float32
// where they meet a tensor, and the power is float32 (here: the double power rounded once).
#include "ref_rope.hpp"

#include <cmath>

namespace rebox::verify_ref {

std::vector<float> expected_llama3_rope_freqs(const ModelConfig& config) {
    const RopeScalingConfig& s = *config.rope_scaling;
    const double original =
        s.original_max_position_embeddings ? double(*s.original_max_position_embeddings) : 8192.0;
    const double low_factor = s.low_freq_factor.value_or(1.0);
    const double high_factor = s.high_freq_factor.value_or(4.0);
    const float scale = float(s.factor.value_or(8.0));
    const float long_wave = float(original / low_factor);    // beyond it: divide by factor
    const float short_wave = float(original / high_factor);  // below it: unchanged
    const float denominator = float(high_factor - low_factor);
    const float numerator_shift = float(low_factor);
    const size_t count = config.head_dim / 2;

    std::vector<float> out(count);
    for (size_t n = 0; n < count; ++n) {
        const float ratio = float(2 * n) / float(config.head_dim);
        const double theta_power = std::pow(double(config.rope_theta), double(ratio));
        const float inv_freq = 1.0f / float(theta_power);
        const float wave = float(2.0 * M_PI) * (1.0f / inv_freq);
        const bool high_frequency = wave < short_wave;
        const bool low_frequency = !high_frequency && wave > long_wave;
        if (high_frequency || low_frequency) {
            out[n] = high_frequency ? 1.0f : scale;
            continue;
        }
        const float t = (float(original) * (1.0f / wave) - numerator_shift) / denominator;
        out[n] = 1.0f / ((1.0f - t) / scale + t);
    }
    return out;
}

}  // namespace rebox::verify_ref
