// llama3 rope factors, verify's own computation (see ref_rope.hpp). The converter's torch code
// works on float32 tensors: `x / t` is reciprocal(t) * x, Python numbers are rounded to float32
// where they meet a tensor, and the power is float32 (here: the double power rounded once).
#include "verify/values/ref_rope.hpp"

#include <cctype>
#include <cmath>

namespace rebox::verify_ref {

std::vector<float> expected_proportional_rope_freqs(const RefConfig& config) {
    if (!config.full_layers) return {};
    const double head = config.full_layers->head_dim;
    // Python's int() of the double products, as Gemma4Model.generate_extra_tensors takes them.
    const auto rotated = static_cast<size_t>(head * config.full_layers->partial_rotary_factor / 2);
    const auto half = static_cast<size_t>(head / 2);
    std::vector<float> out(half, 1e30f);
    for (size_t i = 0; i < rotated && i < half; ++i) out[i] = 1.0f;
    return out;
}

std::vector<float> expected_llama3_rope_freqs(const RefConfig& config) {
    const RefRopeScaling& s = *config.rope_scaling;
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

uint64_t phi3_rotary_dims(const RefConfig& config) {
    double part = 1.0;
    if (config.partial_rotary_factor) part = *config.partial_rotary_factor;
    if (config.rope_scaling && config.rope_scaling->partial_rotary_factor)
        part = *config.rope_scaling->partial_rotary_factor;
    const double product = std::trunc(part * double(config.hidden_size));
    if (!(product >= 0.0) || config.num_attention_heads == 0) return 0;
    return uint64_t(product) / config.num_attention_heads;
}

std::optional<Phi3LongRope> expected_phi3_long_rope(const RefConfig& config) {
    if (!config.rope_scaling) return std::nullopt;
    const RefRopeScaling& s = *config.rope_scaling;
    std::string type;
    for (const char c : s.type) type += char(std::tolower(static_cast<unsigned char>(c)));
    if ((type != "longrope" && type != "su") || !s.long_factor || s.long_factor->empty())
        return std::nullopt;
    Phi3LongRope rope;
    const uint64_t dims = phi3_rotary_dims(config);
    const size_t short_count = s.short_factor ? s.short_factor->size() : 0;
    if (dims % 2 != 0 || s.long_factor->size() != dims / 2 || short_count != dims / 2)
        rope.problem = "long_factor has " + std::to_string(s.long_factor->size()) +
                       " values, short_factor " + std::to_string(short_count) + "; " +
                       std::to_string(dims) + " rotary dimensions need half as many each";
    for (const double v : *s.long_factor) rope.long_factors.push_back(float(v));
    if (s.short_factor)
        for (const double v : *s.short_factor) rope.short_factors.push_back(float(v));
    const std::optional<uint32_t> original = s.original_max_position_embeddings
                                                 ? s.original_max_position_embeddings
                                                 : config.original_max_position_embeddings;
    if (original) {
        const double ratio = double(config.max_position_embeddings) / double(*original);
        rope.attn_factor =
            ratio > 1.0 ? float(std::sqrt(1.0 + std::log(ratio) / std::log(double(*original))))
                        : 1.0f;
    }
    return rope;
}

}  // namespace rebox::verify_ref
