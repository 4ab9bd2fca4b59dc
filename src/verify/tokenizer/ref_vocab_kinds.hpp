// Internal to verify's vocabulary derivation (ref_vocab.cpp): the steps a SentencePiece-style BPE
// or a WordPiece tokenizer.json adds to the placed token table.
#pragma once

#include <simdjson.h>

#include "verify/tokenizer/ref_vocab.hpp"

namespace rebox::verify_ref {

// SentencePiece-style BPE (byte_fallback): NORMAL "<0xXX>" tokens become BYTE, model.unk_token
// UNKNOWN (and unk_id); scores from the merge ranks; add_space_prefix from the normalizer and
// pre-tokenizer (ref_spm_bpe.cpp). Throws rebox::Error (input) naming tokenizer.json and the key
// for missing or malformed merges.
void apply_ref_spm_bpe(const simdjson::dom::element& root, RefVocab& vocab);

// WordPiece: llama.cpp's phantom-space tokens and the normalizer flags (ref_wordpiece.cpp).
void apply_ref_wordpiece(const simdjson::dom::element& root, RefVocab& vocab);

}  // namespace rebox::verify_ref
