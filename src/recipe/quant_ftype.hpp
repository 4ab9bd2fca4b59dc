// The file types `rebox quantize` writes, as llama-quantize v0.4.0 names and numbers them
// (tools/quantize/quantize.cpp QUANT_OPTIONS, include/llama.h llama_ftype): the name a user types
// (any case, the Q3_K/Q4_K/Q5_K aliases, or the ftype number), the general.file_type value and the
// default tensor type (llama_ftype_get_default_type).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rebox/ggml_type.hpp"

namespace rebox {

// The file types are llama_ftype values (rebox/ggml_type.hpp).
using QuantFtype = LlamaFileType;

struct QuantFtypeInfo {
    QuantFtype ftype;
    std::string_view name;  // llama-quantize's canonical spelling, "Q4_K_M"
    GgmlType default_type;  // llama_ftype_get_default_type
};

// The canonical entries (aliases excluded), in llama-quantize's list order.
const std::vector<QuantFtypeInfo>& quant_ftypes();
// A type name in any case ("q4_k_m"), an alias ("Q4_K" = Q4_K_M, "Q3_K" = Q3_K_M, "Q5_K" =
// Q5_K_M) or an ftype number ("15"), as llama-quantize's try_parse_ftype accepts them; nullopt
// otherwise.
std::optional<QuantFtypeInfo> parse_quant_ftype(std::string_view text);
const QuantFtypeInfo& quant_ftype_info(QuantFtype ftype);
// "Q4_0 Q4_1 ... IQ4_XS", for messages.
std::string quant_ftype_names();

// A ggml type name in any case ("q6_k", "Q8_0", "f16"), as llama-quantize's parse_ggml_type
// compares with ggml_type_name; nullopt for an unknown name.
std::optional<GgmlType> parse_ggml_type_name(std::string_view text);

// True for the block-quantized ggml types, as ggml_is_quantized (block size > 1); false for F32,
// F16, BF16, I8..I64 and F64.
bool ggml_type_is_quantized(GgmlType type);

}  // namespace rebox
