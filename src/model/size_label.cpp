// Parameter counts and the size label of gguf-py (see size_label.hpp), with Python's float
// arithmetic: count * 1e-9 as one binary64 product, round() half to even, "%.Nf" formatting.
#include "model/size_label.hpp"

#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rebox {

ParameterCounts count_parameters(const std::vector<CountedTensor>& tensors) {
    ParameterCounts counts;
    int64_t expert_sum = 0;
    int64_t expert_tensors = 0;
    for (const CountedTensor& tensor : tensors) {
        int64_t size = 1;
        for (const int64_t n : tensor.ne) size *= n;
        // gguf-py indexes the numpy shape (ne reversed): shape[-3] is ne[2], shape[-2] is ne[1].
        if (tensor.name.find("_exps.") != std::string::npos && tensor.ne.size() >= 3) {
            const bool bias = tensor.name.find(".bias") != std::string::npos;
            const int64_t experts = bias ? tensor.ne[1] : tensor.ne[2];
            if (experts > 0) counts.expert += size / experts;
            expert_sum += experts;
            ++expert_tensors;
        } else {
            counts.shared += size;
        }
        counts.total += size;
    }
    counts.expert_count = expert_tensors > 0 ? expert_sum / expert_tensors : 0;
    return counts;
}

std::string rounded_weight_count(int64_t count) {
    const double value = static_cast<double>(count);
    double scaled = 0;
    char suffix = 'K';
    if (value > 1e12) {
        scaled = value * 1e-12;
        suffix = 'T';
    } else if (value > 1e9) {
        scaled = value * 1e-9;
        suffix = 'B';
    } else if (value > 1e6) {
        scaled = value * 1e-6;
        suffix = 'M';
    } else {
        scaled = value * 1e-3;
    }
    // len(str(round(scaled)).lstrip('0')): the digits of the nearest integer (ties to even).
    const int previous_mode = std::fegetround();
    std::fesetround(FE_TONEAREST);
    const double rounded = std::nearbyint(scaled);
    std::fesetround(previous_mode);
    char digits[64];
    std::snprintf(digits, sizeof digits, "%.0f", std::fabs(rounded));
    std::string integer = digits;
    size_t length = integer == "0" ? 0 : integer.size();
    if (rounded < 0) ++length;  // the '-' sign Python's str() keeps
    const int fix = length >= 2 ? 0 : 2 - static_cast<int>(length);
    char text[96];
    std::snprintf(text, sizeof text, "%.*f%c", fix, scaled, suffix);
    return text;
}

std::string size_label(const ParameterCounts& counts) {
    if (counts.expert_count > 0)
        return std::to_string(counts.expert_count) + "x" +
               rounded_weight_count(std::llabs(counts.shared) + std::llabs(counts.expert));
    return rounded_weight_count(std::llabs(counts.total));
}

}  // namespace rebox
