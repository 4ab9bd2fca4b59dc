// What llama.cpp enforces about the types of metadata keys it reads (ggml's gguf.cpp for
// general.alignment; llama-model-loader's strictly typed get_key for the rest), so that
// `rebox meta` can refuse to write a file llama.cpp would reject or misread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rebox/gguf_value.hpp"

namespace rebox {

// The type llama.cpp requires for `key` ("UINT32", "ARRAY[STRING]"), given the file's
// general.architecture (for "<arch>.context_length" and the like); nullopt for keys it does not
// type-check.
std::optional<std::string> llama_required_type(const std::string& key, const std::string& arch);

// The type llama.cpp's converter (gguf-py) writes a model-card key with: general.type, name,
// basename, ... STRING, general.sampling.top_k / penalty_last_n / mirostat INT32 and the other
// sampling values FLOAT32, general.base_model.count / dataset.count UINT32 (their N.name, ...
// STRING), general.tags / languages ARRAY[STRING]. nullopt for other keys. llama.cpp reads these
// as text or not at all, so another type is a warning of `rebox check`, never a failure.
std::optional<std::string> converter_model_card_type(const std::string& key);

// True for keys llama.cpp cannot load a model without (general.architecture, tokenizer.ggml.model
// and .tokens, <arch>.context_length / .embedding_length / .block_count): deleting one is refused.
bool llama_requires_key(const std::string& key, const std::string& arch);

// Checks the KV set a meta edit would write: general.architecture present and a STRING,
// general.alignment a UINT32 power of two, and each key in `touched` of the type llama.cpp
// requires. Throws rebox::Error naming `file` and the key.
void check_llama_kv_rules(const std::string& file, const std::vector<GgufKV>& kvs,
                          const std::vector<std::string>& touched);

}  // namespace rebox
