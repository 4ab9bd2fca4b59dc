// verify's own parse of config.json "quantization_config" for GPTQ, AWQ and compressed-tensors
// checkpoints (also under "text_config"), independent of source/: quant_method, bits, group_size,
// GPTQ checkpoint_format, AWQ version, compressed-tensors format and config_groups' weights.
// What a checkpoint's tensors must look like follows from these and is checked per tensor by
// prequant_source_index.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace rebox::verify_ref {

// unknown: a quant_method verify does not read (e.g. "hqq"); the config's problem says so.
enum class PrequantMethod { none, gptq, awq, compressed_tensors, unknown };

struct PrequantConfig {
    PrequantMethod method = PrequantMethod::none;
    std::string field;  // "quantization_config" or "text_config.quantization_config"
    // GPTQ / AWQ: bits (GPTQ 2, 3, 4, 8; AWQ 4) and input columns per group (0: one group for the
    // whole row, GPTQ group_size -1).
    int64_t bits = 0;
    int64_t group = 0;
    bool gptq_stores_zero_minus_one = true;  // checkpoint_format "gptq" (default) vs "gptq_v2"
    bool awq_gemv = false;                   // AWQ version "gemv" (default "gemm")
    // compressed-tensors: every "format" named (top level and per config group) and the weights'
    // num_bits / strategy / group_size when all config groups agree (else problem).
    std::set<std::string> ct_formats;
    int64_t ct_bits = 0;
    std::string ct_strategy;  // "group" or "channel"
    int64_t ct_group = 0;
    std::string problem;  // non-empty: the block cannot be used (names the field)
};

// method none when config.json has no quantization_config with a quant_method (MLX's copy of its
// "quantization" block has none); unknown with a problem for a quant_method other than gptq, awq,
// compressed-tensors. Throws rebox::Error (input) when config.json exists but is not JSON.
// The first object under one of `keys` in config.json's top level, else in its text_config, that
// has `required_member` (any object when null); *field says where ("text_config.quantization").
// verify's one look-up of a quantization block (MLX and GPTQ/AWQ/compressed-tensors).
const nlohmann::json* find_quant_block(const nlohmann::json& root,
                                       std::initializer_list<const char*> keys,
                                       const char* required_member, std::string* field);

PrequantConfig read_prequant_config(const std::filesystem::path& config_path);

// The same from a parsed document (tests).
PrequantConfig parse_prequant_config(const nlohmann::json& root);

}  // namespace rebox::verify_ref
