// Internal: a SentencePiece Unigram vocabulary (XLM-RoBERTa's: bge-m3, multilingual-e5,
// paraphrase-multilingual-MiniLM) -> llama.cpp's UGM vocabulary, tokenizer.ggml.model "t5", as
// llama.cpp's converter writes it (BertModel._xlmroberta_set_vocab): pieces and scores in id
// order padded to vocab_size with [PAD<i>] / -10000 / UNUSED, token types, add_space_prefix,
// remove_extra_whitespaces and the normalizer's precompiled_charsmap. From tokenizer.json
// (model.type "Unigram", tokenizer_unigram.cpp) or, preferred as the converter prefers it, from
// sentencepiece.bpe.model (tokenizer_unigram_model.cpp). Special ids come after, from
// tokenizer_special.cpp.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "model/tokenizer_vocab.hpp"

namespace rebox::detail {

// The score of a padding entry ([PAD<i>], UNUSED), as the converter writes it.
inline constexpr float kUnigramPadScore = -10000.0f;

// tokenizer.json's Unigram model (root: the parsed file; model: its "model" object). added: the
// added_tokens as (content, id), for the special-token rules. Throws rebox::Error: input for
// malformed entries, blocker for more pieces than options.vocab_size or duplicate pieces.
TokenizerVocab read_unigram_json(const simdjson::dom::element& root,
                                 const simdjson::dom::object& model,
                                 const std::filesystem::path& model_dir,
                                 const TokenizerOptions& options,
                                 std::vector<std::pair<std::string, uint32_t>>& added);

// sentencepiece.bpe.model (tokenizer_unigram_model.cpp), without the special ids. Throws
// rebox::Error: input for an unreadable or malformed file, blocker for a non-Unigram model, more
// pieces than vocab_size allows or duplicate pieces.
TokenizerVocab read_unigram_sentencepiece(const std::filesystem::path& model_dir,
                                          const TokenizerOptions& options);

// Standard base64 (RFC 4648, '=' padding) as tokenizer.json stores precompiled_charsmap; nullopt
// for text that is not base64.
std::optional<std::vector<uint8_t>> decode_base64(std::string_view text);

}  // namespace rebox::detail
