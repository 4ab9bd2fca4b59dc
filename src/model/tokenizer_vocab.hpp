// tokenizer.json (+ tokenizer_config.json) -> the GGUF tokenizer: byte-level BPE ("gpt2" model:
// merges (both "a b" strings and ["a","b"] pairs), pre-tokenizer name from the pre-tokenizer regex)
// or SentencePiece-style BPE with byte_fallback ("llama" model: scores derived from the merge
// ranks, add_space_prefix); tokens in id order padded to vocab_size with [PAD<i>] / UNUSED (no
// holes), token types, special ids, add_bos/add_eos, chat template. Parsed with simdjson (the file
// is ~11 MB).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rebox {

// llama_token_type / gguf-py TokenType.
enum class TokenType : int32_t {
    UNDEFINED = 0,
    NORMAL = 1,
    UNKNOWN = 2,
    CONTROL = 3,
    USER_DEFINED = 4,
    UNUSED = 5,
    BYTE = 6
};

struct TokenizerVocab {
    // "gpt2" (byte-level BPE) | "llama" (SentencePiece BPE) | "bert" (WordPiece) | "t5"
    // (SentencePiece Unigram, tokenizer_unigram.hpp) | "gemma4" (Gemma 4's SentencePiece-style BPE
    // with merges and scores, tokenizer_gemma4.hpp)
    std::string model = "gpt2";
    // "qwen2", "llama-bpe", ...; "default" for "llama"; empty for "gemma4" (no KV: llama.cpp names
    // it itself)
    std::string pre;
    std::vector<std::string> tokens;
    std::vector<int32_t> token_types;
    std::vector<std::string> merges;       // "gpt2" and "gemma4"
    std::vector<float> scores;             // "llama", "t5" and "gemma4": one per token
    std::optional<bool> add_space_prefix;  // "llama" and "t5"
    // "t5" only: remove_extra_whitespaces and the normalizer's precompiled_charsmap (empty: none).
    std::optional<bool> remove_extra_whitespaces;
    std::vector<uint8_t> precompiled_charsmap;
    // Added tokens whose id is >= vocab_size, left out (never renumbered): "content (id N)".
    std::vector<std::string> dropped_added_tokens;
    std::optional<uint32_t> bos_id, eos_id, eot_id, pad_id, unk_id;
    // End of message (gguf-py SpecialVocab's eom): set only by an architecture's vocabulary rules
    // (Architecture::finish_vocab).
    std::optional<uint32_t> eom_id;
    // "bert" and "t5" only (gguf-py SpecialVocab's sep, mask)
    std::optional<uint32_t> sep_id, mask_id;
    bool add_bos = false;
    bool add_eos = false;
    // "bert": from the TemplateProcessing pair template; "t5": true with a RobertaProcessing
    std::optional<bool> add_sep;
    // "bert": the BertNormalizer / Lowercase / StripAccents normalizer flags, as gguf-py reads
    // them.
    std::optional<bool> normalizer_lowercase, normalizer_strip_accents;
    std::optional<std::string> chat_template;
};

struct TokenizerOptions {
    uint32_t vocab_size = 0;         // config.json vocab_size (0: the tokenizer's own count)
    std::optional<std::string> pre;  // override the pre-tokenizer name (--tokenizer-pre)
    // config.json as already parsed (the plan passes ModelDir's); null: model_dir/config.json is
    // read if it exists.
    const nlohmann::json* config = nullptr;
    // The pre name for a lone ByteLevel pre-tokenizer (GPT-2's regex, no Split): the
    // architecture's (Architecture::byte_level_pre); empty: such a tokenizer is a BLOCKER.
    std::string_view byte_level_pre = {};
    // An encoder's byte-level BPE vocabulary (modernbert): sep, mask and add_sep are written too,
    // as for WordPiece and Unigram.
    bool encoder = false;
    // The architecture's own tokenizer model (Architecture::tokenizer_model): "gemma4" reads the
    // tokenizer.json as Gemma4Model.set_vocab does (tokenizer_gemma4.hpp); empty: by its shape.
    std::string_view model = {};
};

// Special ids / add flags follow gguf-py SpecialVocab: tokenizer_config.json *_token contents
// (looked up in added_tokens), the TemplateProcessing post-processor rule (trailing token != eos:
// old eos -> eot, add_eos), then model_dir/config.json {bos,eos,unk,pad}_token_id for ids still
// unset. Throws rebox::Error: input class for malformed JSON; blocker class for what cannot be
// carried (no merges, unknown pre-tokenizer regex (named in the message, fix: --tokenizer-pre), a
// model.vocab id >= vocab_size, duplicate token strings, a non-BPE model, a SentencePiece
// normalizer llama.cpp cannot follow). Added tokens with ids >= an explicit vocab_size are left
// out and listed in dropped_added_tokens (convert_hf_to_gguf ignores them likewise).
TokenizerVocab read_tokenizer(const std::filesystem::path& model_dir,
                              const TokenizerOptions& options);

// The pre-tokenizer name llama.cpp uses for a Split regex, or nullopt when unknown.
std::optional<std::string> pre_tokenizer_for_regex(const std::string& regex);

// The pre-tokenizer name llama.cpp uses for a Sequence of several Split regexes (in order), or
// nullopt when unknown.
std::optional<std::string> pre_tokenizer_for_regex_sequence(
    const std::vector<std::string_view>& regexes);

}  // namespace rebox
