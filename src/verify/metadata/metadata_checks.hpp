// The GGUF's KVs and byte layout checked against the source directory (config.json, pooling,
// tokenizer) and against the canonical GGUF layout; each finding is one problem line.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "format/gguf_file.hpp"
#include "format/gguf_shards.hpp"
#include "verify/sources/ref_config.hpp"
#include "verify/values/ref_layer_scalars.hpp"

namespace rebox::verify_ref {

// What the user told the writer that verify takes as given.
struct KvCheckOptions {
    std::optional<std::string> tokenizer_pre;  // --tokenizer-pre NAME
    bool reranker = false;  // an encoder whose source has a classifier head: pooling RANK
    // Tensors of a block type quantized from float sources (a quantize recipe's file): the
    // file type names the recipe chosen, which the tensor types do not tell.
    size_t requantized = 0;
    // The per-layer array KVs the source's scalar tensors give (expected_layer_scalars).
    std::vector<RefLayerScalarKv> layer_scalars;
};

// KVs of the set (the first shard's, without split.*): general.*, {arch}.* hyper-parameters,
// rope and norm constants, pooling_type, tokenizer.*; each expected value derived from the source.
// A KV no check covers is a problem in the {arch}. and tokenizer. namespaces (llama.cpp reads
// them) and otherwise one "key: why" line in `unchecked`.
void check_kvs(const GgufSet& gguf, const RefConfig& config, const std::filesystem::path& model_dir,
               const KvCheckOptions& options, std::vector<std::string>& problems,
               std::vector<std::string>& unchecked);

// One file (each shard of a set): data_offset == PAD(meta_end, alignment), canonical offsets,
// nbytes, file size.
void check_layout(const GgufFile& gguf, std::vector<std::string>& problems);

}  // namespace rebox::verify_ref
