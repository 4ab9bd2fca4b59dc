// GPTQ / AWQ / compressed-tensors fixture output (--format gptq|awq|compressed-tensors): the
// quantization_config block of config.json and safetensors files in each format's layout
// (docs/formats.md §5), with the embedding, lm_head, norms and biases as plain F16 (GPTQ, AWQ) or
// BF16 (compressed-tensors) tensors, like real checkpoints. Defects change one field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model_plan.hpp"
#include "prequant_content.hpp"

namespace mkfixture {

// zero-out-of-range (gptq v1), g-idx-out-of-range (gptq), missing-scales, scales-shape,
// unknown-quant-method, unknown-layout, inexact-bf16-scale (compressed-tensors with bf16 scales),
// bits-not-allowed, int8-range (8-bit asymmetric: one q - z = 255, no exact ggml type).
const std::vector<std::string>& prequant_defect_names();

// Throws std::runtime_error for a combination the format does not have (e.g. awq with --sym, bits
// the format never writes); with a plan also for widths the format cannot pack (a group that does
// not divide them where the format needs whole groups, 3-bit widths not a multiple of 32).
void check_prequant_options(const PrequantOptions& options, const ModelPlan* plan);

// Adds quantization_config (and torch_dtype) to the config.json already written in out_dir.
void add_prequant_quantization(const std::filesystem::path& out_dir,
                               const PrequantOptions& options);

void write_prequant_model_files(const std::filesystem::path& out_dir, const ModelPlan& plan,
                                int shard_count, uint64_t seed, const PrequantOptions& options);

// The three steps of a one-shard fixture in a GPTQ / AWQ / compressed-tensors layout: the options
// checked against the plan, quantization_config added, the safetensors written.
void write_prequant_fixture(const std::filesystem::path& out_dir, const ModelPlan& plan,
                            uint64_t seed, const PrequantOptions& options);

}  // namespace mkfixture
