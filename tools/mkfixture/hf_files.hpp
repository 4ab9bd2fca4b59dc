// The Hugging Face directory around the tensors: config.json, sentence-transformers pooling
// files, and the model files (one safetensors file, or shards plus model.safetensors.index.json).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model_plan.hpp"
#include "safetensors_writer.hpp"

namespace mkfixture {

// bos_id / eos_id < 0: not written (as config.json of a model without those tokens).
// arch "qwen2": model_type qwen2, Qwen2ForCausalLM, attention_bias true and no head_dim key.
// arch "llama": LlamaForCausalLM with the keys of Llama-3.2's config; rope_scaling "llama3" adds
// Llama 3.1/3.2's rope_scaling (factor 32, low 1, high 4, original context 8192).
// arch "mistral": MistralForCausalLM with the keys of Mistral-Nemo's config (explicit head_dim).
// arch "phi3": Phi3ForCausalLM (Phi-3-mini keys); rope_scaling "longrope" adds Phi-3.5-mini style
// long/short factors (rotary dims/2 each) with a 131072 context over the original 4096;
// partial_rotary_factor > 0 writes that key (Phi-4-mini: 0.75) and rotates int(f * hidden) // heads
// dimensions.
void write_config_json(const std::filesystem::path& out_dir, const Dims& dims, bool tied,
                       int64_t bos_id = -1, int64_t eos_id = -1, const std::string& arch = "qwen3",
                       const std::string& rope_scaling = "none", bool attention_bias = false,
                       double partial_rotary_factor = 0.0, bool multimodal = false,
                       bool vl_split = false, int64_t vl_temporal = 2, int64_t vl_merger_width = 0);
// arch "gemma" / "gemma2" / "gemma3": GemmaForCausalLM / Gemma2ForCausalLM (softcapping, sliding
// window) / Gemma3ForCausalLM (model_type gemma3_text); multimodal (gemma3): a
// Gemma3ForConditionalGeneration config with the text numbers in text_config.
// arch "qwen2_vl" / "qwen2_5_vl": write_qwen2vl_config (qwen2vl_files.hpp).
// Sets one number of the config.json already written in out_dir (the experts-count defect).
void set_config_number(const std::filesystem::path& out_dir, const std::string& key, int64_t value);
// sentence-transformers modules.json and 1_Pooling/config.json: pooling `mode` "lasttoken" (the
// decoders' embedding fixtures), "cls" or "mean".
void write_pooling_files(const std::filesystem::path& out_dir, int64_t hidden,
                         const std::string& mode = "lasttoken");

// The "mcq" metadata JSON of one file (Python json.dumps style, as in the spec's example).
std::string mcq_metadata_json(const std::vector<PlanUnit>& units);

// Writes the plan's tensors as model.safetensors (shard_count 1) or as shards plus
// model.safetensors.index.json; entries(units) builds one file's tensors, metadata(units) its
// __metadata__. Both layouts (mcq, MLX) go through here.
using ShardEntries = std::function<std::vector<StTensor>(const std::vector<PlanUnit>&)>;
using ShardMetadata =
    std::function<std::vector<std::pair<std::string, std::string>>(const std::vector<PlanUnit>&)>;
void write_safetensors_files(const std::filesystem::path& out_dir, const ModelPlan& plan,
                             int shard_count, const ShardEntries& entries,
                             const ShardMetadata& metadata);

// Writes model.safetensors (shard_count 1) or the shards and the index.
void write_model_files(const std::filesystem::path& out_dir, const ModelPlan& plan, int shard_count,
                       uint64_t seed);

}  // namespace mkfixture
