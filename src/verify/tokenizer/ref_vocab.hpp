// verify's own derivation of the GGUF vocabulary: from a tokenizer.json (byte-level BPE,
// SentencePiece-style BPE with byte_fallback, WordPiece) the tokens placed at their ids and padded
// to vocab_size with their llama.cpp token types (convert_hf_to_gguf's get_vocab_base), from a
// SentencePiece tokenizer.model the pieces, scores and types (_create_vocab_sentencepiece); then
// the special ids with add_bos/add_eos (and for WordPiece sep/mask/add_sep) as gguf-py's
// SpecialVocab finds them in tokenizer_config.json, tokenizer.json's post-processor and
// config.json. Written from those converters' semantics, not from src/model/.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rebox::verify_ref {

// llama.cpp's llama_token_type values (gguf-py TokenType).
inline constexpr int32_t kTokenNormal = 1, kTokenUnknown = 2, kTokenControl = 3,
                         kTokenUserDefined = 4, kTokenUnused = 5, kTokenByte = 6;

struct RefSpmModel;

struct RefVocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> token_types;
    std::optional<uint32_t> bos_id, eos_id, eot_id, unk_id, pad_id;
    bool add_bos = false;
    bool add_eos = false;
    // WordPiece ("bert") only: the separator and mask ids, add_sep, the normalizer flags.
    std::optional<uint32_t> sep_id, mask_id;
    std::optional<bool> add_sep, normalizer_lowercase, normalizer_strip_accents;
    // SentencePiece ("llama") and Unigram ("t5"): one score per token, and add_space_prefix.
    std::vector<float> scores;
    std::optional<bool> add_space_prefix;
    // Unigram ("t5") only: remove_extra_whitespaces and the precompiled_charsmap bytes.
    std::optional<bool> remove_extra_whitespaces;
    std::vector<uint8_t> precompiled_charsmap;
};

// Which tokenizer.json model the vocabulary comes from.
// byte_level_bpe_encoder: a byte-level BPE vocabulary of an encoder (modernbert), whose specials
// also include sep, mask and add_sep, as gguf-py's SpecialVocab gives every model.
enum class RefVocabKind { byte_level_bpe, sentencepiece_bpe, wordpiece, byte_level_bpe_encoder };

// Caps the table verify builds: no released vocabulary is near it (Gemma 3: 262,144).
inline constexpr uint64_t kMaxRefVocab = uint64_t{1} << 24;

// From tokenizer.json's parsed root (model.vocab, added_tokens, post_processor) and model_dir's
// tokenizer_config.json / config.json. vocab_size 0: one past the largest id. Throws rebox::Error
// (input) naming tokenizer.json and the key for an ill-typed entry, an id past vocab_size in
// model.vocab, two strings at one id, or a vocabulary over kMaxRefVocab.
// SentencePiece-style BPE also gets BYTE / UNKNOWN types, scores from the merge ranks and
// add_space_prefix (ref_spm_bpe.cpp); WordPiece the phantom-space tokens, sep/mask/add_sep and
// the normalizer flags (ref_wordpiece.cpp).
RefVocab read_ref_vocab(const simdjson::dom::element& root, const std::filesystem::path& model_dir,
                        uint64_t vocab_size, RefVocabKind kind = RefVocabKind::byte_level_bpe);

// Gemma4Model.set_vocab (gguf-py's LlamaHfVocab over transformers' fast tokenizer, then
// SpecialVocab with merges): every token of model.vocab and added_tokens at its id (a hole is an
// error), score -1000, BYTE / CONTROL / NORMAL / USER_DEFINED types (ref_gemma4_vocab.cpp),
// add_bos true, add_space_prefix false. Throws rebox::Error (input) naming tokenizer.json for a
// file LlamaHfVocab rejects (not a BPE with byte_fallback and a Sequence decoder), a hole, or a
// special token tokenizer_config.json names that the vocabulary lacks.
RefVocab read_ref_gemma4_vocab(const simdjson::dom::element& root,
                               const std::filesystem::path& model_dir);

// From a parsed tokenizer.model (ref_spm_model.hpp) and model_dir's added_tokens.json /
// tokenizer_config.json / config.json (ref_spm_vocab.cpp). vocab_size 0: the piece count. Throws
// rebox::Error (input) naming the file and key for more pieces than vocab_size or an ill-typed
// added token.
RefVocab read_ref_spm_vocab(const RefSpmModel& model, const std::filesystem::path& model_dir,
                            uint64_t vocab_size);

// A Unigram tokenizer.json (XLM-R) as BertModel._xlmroberta_set_vocab writes it, then gguf-py's
// SpecialVocab (ref_unigram.cpp). vocab_size 0: the piece count. Throws rebox::Error (input)
// naming tokenizer.json and the key for malformed pieces or more pieces than vocab_size.
RefVocab read_ref_unigram_vocab(const simdjson::dom::element& root,
                                const std::filesystem::path& model_dir, uint64_t vocab_size);

// A sentencepiece.bpe.model (parsed, ref_spm_model.hpp) as _xlmroberta_set_vocab's preferred
// branch writes it, then gguf-py's SpecialVocab over tokenizer.json (root, or nullptr without
// one) and the JSON side files (ref_unigram.cpp). Throws rebox::Error (input) for a table over
// verify's cap.
RefVocab read_ref_unigram_spm_vocab(const RefSpmModel& model, const simdjson::dom::element* root,
                                    const std::filesystem::path& model_dir, uint64_t vocab_size);

namespace detail {
// gguf-py SpecialVocab over a placed vocabulary. root: tokenizer.json's (nullptr without one);
// added: its added_tokens as (content, id). Ids already set in `vocab` (a SentencePiece unknown
// piece) come first. WordPiece also derives sep/mask and add_sep.
void derive_ref_specials(const simdjson::dom::element* root,
                         const std::vector<std::pair<std::string, uint64_t>>& added,
                         const std::filesystem::path& model_dir, bool wordpiece, RefVocab& vocab);
// convert_hf_to_gguf's does_token_look_special.
bool ref_looks_special(std::string_view text);
// A user-defined token's U+2581 spaces pre-normalized to ' ' (the converter's rule).
std::string ref_spaces_for_metaspace(std::string_view text);
}  // namespace detail

}  // namespace rebox::verify_ref
