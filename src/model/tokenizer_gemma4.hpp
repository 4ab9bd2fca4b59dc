// Internal: Gemma 4's GGUF vocabulary (tokenizer.ggml.model "gemma4"), as llama.cpp's converter
// (Gemma4Model.set_vocab) writes it from tokenizer.json through gguf-py's LlamaHfVocab and
// transformers' tokenizer: every token in id order, score -1000, token types BYTE / CONTROL /
// NORMAL (USER_DEFINED past the model's own vocabulary and for the chat parser's channel and tool
// tokens), the merges as they are.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <filesystem>

#include "model/tokenizer_vocab.hpp"

namespace rebox::detail {

// LlamaHfVocab's own test of the file: a BPE model with byte_fallback and a Sequence decoder.
// Throws a blocker-class rebox::Error naming tokenizer.json otherwise.
void check_gemma4_tokenizer(const simdjson::dom::element& root, const simdjson::dom::object& model);

// Scores and token types of the placed table (`vocab.tokens`, no holes); `base_count`: the number
// of model.vocab entries (transformers' vocab_size: ids below it are the model's own). The special
// tokens are those tokenizer_config.json names (bos / eos / unk / sep / pad / cls / mask,
// additional_special_tokens, extra_special_tokens, and any other top-level "*_token" key holding a
// token, as Gemma 4's sot_token / eot_token / ...). Throws a blocker-class rebox::Error naming
// tokenizer.json for a hole in the ids or a named special token the vocabulary lacks, an
// input-class one for a malformed tokenizer_config.json.
void apply_gemma4_vocab(const std::filesystem::path& model_dir, size_t base_count,
                        TokenizerVocab& vocab);

}  // namespace rebox::detail
