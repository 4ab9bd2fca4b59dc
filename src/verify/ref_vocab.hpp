// verify's own derivation of the GGUF vocabulary of a tokenizer.json: the tokens placed at their
// ids and padded to vocab_size, their llama.cpp token types (convert_hf_to_gguf's get_vocab_base),
// and the special ids with add_bos/add_eos as gguf-py's SpecialVocab finds them in
// tokenizer_config.json, tokenizer.json's post-processor and config.json. Written from those
// converters' semantics, not from src/model/.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rebox::verify_ref {

// llama.cpp's llama_token_type values (gguf-py TokenType).
inline constexpr int32_t kTokenNormal = 1, kTokenControl = 3, kTokenUserDefined = 4,
                         kTokenUnused = 5;

struct RefVocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> token_types;
    std::optional<uint32_t> bos_id, eos_id, eot_id, unk_id, pad_id;
    bool add_bos = false;
    bool add_eos = false;
    // WordPiece ("bert") only: the separator and mask ids, add_sep, the normalizer flags.
    std::optional<uint32_t> sep_id, mask_id;
    std::optional<bool> add_sep, normalizer_lowercase, normalizer_strip_accents;
};

// Caps the table verify builds: no released vocabulary is near it (Gemma 3: 262,144).
inline constexpr uint64_t kMaxRefVocab = uint64_t{1} << 24;

// From tokenizer.json's parsed root (model.vocab, added_tokens, post_processor) and model_dir's
// tokenizer_config.json / config.json. vocab_size 0: one past the largest id. Throws rebox::Error
// (input) naming tokenizer.json and the key for an ill-typed entry, an id past vocab_size in
// model.vocab, two strings at one id, or a vocabulary over kMaxRefVocab.
RefVocab read_ref_vocab(const simdjson::dom::element& root, const std::filesystem::path& model_dir,
                        uint64_t vocab_size);

}  // namespace rebox::verify_ref
