// Internal to verify's prequant index: one stored tensor of a quantized module (file + header
// entry) and the checks every binder shares (dtype/shape against what config.json implies, g_idx
// range), each setting entry.problem with one line naming the tensor and what was expected.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "format/safetensors.hpp"
#include "verify/sources/prequant_config.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

struct Part {
    const SafetensorsFile* file = nullptr;
    const StTensorInfo* info = nullptr;
    std::span<const uint8_t> data() const { return file->data(*info); }
    const std::string& name() const { return info->name; }
};

using Parts = std::map<std::string, Part>;  // every tensor of the model by name

const Part* find_part(const Parts& parts, const std::string& name);
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
// Checks one part's dtype and shape; on failure sets entry.problem and returns false.
bool expect_part(const Part& part, std::initializer_list<StDtype> dtypes,
                 const std::vector<int64_t>& shape, const std::string& why, SourceTensor& entry);
// Every g_idx value (I32) must name an existing group.
bool check_g_idx(const Part& part, uint64_t groups, SourceTensor& entry);

// Fill entry.pq from a module's parts (entry.problem on the first disagreement).
void bind_gptq(const PrequantConfig& config, const std::string& module, const Parts& parts,
               const Part& qweight, SourceTensor& entry);
void bind_awq(const PrequantConfig& config, const std::string& module, const Parts& parts,
              const Part& qweight, SourceTensor& entry);
void bind_awq_gemv(const PrequantConfig& config, const std::string& module, const Parts& parts,
                   const Part& qweight, SourceTensor& entry);
// AWQ gemv's qzeros words per row (AutoAWQ calculate_zeros_width).
uint64_t awq_gemv_zero_words(uint64_t in, uint64_t group);
void bind_ct_packed(const PrequantConfig& config, const std::string& module, const Parts& parts,
                    const Part& packed, SourceTensor& entry);
void bind_ct_int8(const PrequantConfig& config, const std::string& module, const Parts& parts,
                  const Part& weight, const Part& scale, SourceTensor& entry);

}  // namespace rebox::verify_ref
