// general.size_label as llama.cpp's converter computes it when no name gives one
// (GGUFWriter.get_total_parameter_count over the tensors written, gguf-py utility.size_label):
// two significant digits with a K/M/B/T suffix, "NxSIZE" for a mixture of experts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rebox {

struct ParameterCounts {
    int64_t total = 0;
    int64_t shared = 0;        // every tensor that is not a stacked expert tensor
    int64_t expert = 0;        // one expert's share of the stacked expert tensors
    int64_t expert_count = 0;  // the mean expert count over the stacked tensors; 0: not a MoE
};

struct CountedTensor {
    std::string name;         // GGUF name; "_exps." marks stacked experts
    std::vector<int64_t> ne;  // ggml order
};

ParameterCounts count_parameters(const std::vector<CountedTensor>& tensors);

// gguf-py model_weight_count_rounded_notation(count, min_digits=2): "596M", "1.5B", "0.40K".
std::string rounded_weight_count(int64_t count);

// gguf-py size_label(total, shared, expert, expert_count).
std::string size_label(const ParameterCounts& counts);

}  // namespace rebox
