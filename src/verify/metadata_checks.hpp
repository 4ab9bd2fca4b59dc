// The GGUF's KVs and byte layout checked against the source directory (config.json, pooling,
// tokenizer) and against the canonical GGUF layout; each finding is one problem line.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "format/gguf_file.hpp"
#include "format/gguf_shards.hpp"
#include "model/model_config.hpp"

namespace rebox::verify_ref {

// KVs of the set (the first shard's, without split.*): general.architecture, {arch}.*
// hyper-parameters (UINT32), pooling_type, tokenizer.ggml.*.
void check_kvs(const GgufSet& gguf, const ModelConfig& config,
               const std::filesystem::path& model_dir, std::vector<std::string>& problems);

// One file (each shard of a set): data_offset == PAD(meta_end, alignment), canonical offsets,
// nbytes, file size.
void check_layout(const GgufFile& gguf, std::vector<std::string>& problems);

}  // namespace rebox::verify_ref
