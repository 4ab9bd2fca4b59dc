// Internal: the SentencePiece-style BPE of a tokenizer.json (Llama 2, Mistral, Gemma: BPE with
// byte_fallback and U+2581 for spaces) -> llama.cpp's SPM vocabulary ("llama" model): scores that
// make llama.cpp's score-ordered pair merging follow the BPE merge ranks, BYTE / UNKNOWN token
// types and add_space_prefix.
#pragma once

#include <simdjson.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer_vocab.hpp"

namespace rebox::detail {

// True for a BPE model with "byte_fallback": true (the tokenizers' form of a SentencePiece BPE).
bool is_sentencepiece_bpe(const simdjson::dom::object& model);

// One score per token of `tokens`: -rank of the first merge whose two parts concatenate to the
// token (rank 0 scores 0, the highest); tokens no merge creates get kNoMergeScore(merge count).
// llama.cpp's SPM tokenizer repeatedly merges the adjacent pair whose concatenation is the
// highest-scoring token (leftmost on ties), which is then the BPE's lowest-rank applicable merge.
// Throws rebox::Error (input) for malformed merges.
std::vector<float> spm_scores_from_merges(const simdjson::dom::object& model,
                                          const std::vector<std::string>& tokens);

// The score of tokens no merge produces: below every merge-made token.
float no_merge_score(size_t merge_count);

// llama.cpp's add_space_prefix, read from the normalizer (Prepend "▁") or a Metaspace
// pre-tokenizer (prepend_scheme / add_prefix_space). Throws a blocker when the tokenizer does
// something llama.cpp's SPM tokenizer cannot (spaces not mapped to U+2581, other normalizers,
// Metaspace prepend_scheme "first").
bool spm_add_space_prefix(const simdjson::dom::element& root);

// SPM token types over the placed table (convert_hf_to_gguf's SentencePiece rules): NORMAL
// model.vocab pieces spelled "<0xXX>" become BYTE, model.unk_token becomes UNKNOWN (and
// vocab.unk_id); added tokens keep CONTROL / USER_DEFINED.
void apply_spm_token_types(const simdjson::dom::object& model, TokenizerVocab& vocab);

// A varint / length-delimited field of a sub-message (trainer_spec 2, normalizer_spec 3) of a
// serialized ModelProto, the last occurrence; nullopt when absent. Throws rebox::Error (input) for
// bad protobuf (tokenizer_sentencepiece_model.cpp).
std::optional<uint64_t> sentencepiece_spec_varint(std::string_view model, uint64_t message,
                                                  uint64_t field);
std::optional<std::string> sentencepiece_spec_bytes(std::string_view model, uint64_t message,
                                                    uint64_t field);
// The whole file at `path` (a SentencePiece model, already size-checked by the caller); throws
// rebox::Error (input) when it cannot be read.
std::string read_sentencepiece_file(const std::filesystem::path& path);

// tokenizer.model (SentencePiece BPE ModelProto) -> the "llama" vocabulary, for checkpoints without
// tokenizer.json (tokenizer_sentencepiece_model.cpp). Throws rebox::Error: input for an unreadable
// or malformed file, blocker for a non-BPE model, more pieces than vocab_size or duplicates.
TokenizerVocab read_sentencepiece_model(const std::filesystem::path& model_dir,
                                        const TokenizerOptions& options);

}  // namespace rebox::detail
