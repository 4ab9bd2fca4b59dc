// verify's own reading of the source tokenizer files for the KVs that name how llama.cpp splits
// text: the tokenizer model, the pre-tokenizer, the BPE merges and the chat template. Parsed here
// (simdjson / nlohmann), never through the writer's tokenizer code, and never from the GGUF.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verify/tokenizer/ref_vocab.hpp"

namespace rebox::verify_ref {

struct RefTokenizer {
    bool present = false;  // tokenizer.json or tokenizer.model exists
    std::string model;  // "gpt2" (byte-level BPE) | "llama" (SentencePiece / byte_fallback BPE) |
                        // "bert" (WordPiece) | "t5" (SentencePiece Unigram)
    // llama.cpp's pre-tokenizer name; nullopt when the Split regex is not one verify knows
    // (pre_problem says why).
    std::optional<std::string> pre;
    std::string pre_problem;
    // The pre-tokenizer is a lone ByteLevel (GPT-2's regex inside it, no Split to name it by):
    // the name is then the model family's (its record's byte_level_pre, verify/arch/).
    bool byte_level_only = false;
    std::vector<std::string> merges;  // "gpt2" only, as GGUF holds them ("left right")
    std::optional<std::string> chat_template;
    // Tokens, types, special ids and add flags (SentencePiece: also scores and add_space_prefix),
    // derived in the same parse of tokenizer.json or tokenizer.model (ref_vocab.hpp); set
    // whenever `present`.
    std::optional<RefVocab> vocab;
};

// vocab_size: config.json's (0: one past the largest id, or the piece count). Throws rebox::Error
// (input class) naming the file when it cannot be read or parsed.
// encoder_bpe: a byte-level BPE vocabulary gets the encoders' sep / mask / add_sep (modernbert).
// gemma4_vocab: Gemma4Model.set_vocab's own vocabulary from tokenizer.json alone.
RefTokenizer read_ref_tokenizer(const std::filesystem::path& model_dir, uint64_t vocab_size = 0,
                                bool encoder_bpe = false, bool gemma4_vocab = false);

// A tiktoken vocabulary (tiktoken.model + tokenization_kimi.py + tokenizer_config.json, no
// tokenizer.json), as DeepseekV2Model.set_vocab's kimi-k2 branch writes it (ref_tiktoken.cpp):
// "gpt2", pre "kimi-k2" when pat_str is Kimi-K2's, merges rebuilt from the ranks, tokens and
// types, special ids. Throws rebox::Error (input) naming the file for a malformed one.
RefTokenizer read_ref_tiktoken(const std::filesystem::path& model_dir, uint64_t vocab_size);

// llama.cpp's pre-tokenizer name for a tokenizer.json Split regex, nullopt when unknown.
std::optional<std::string> ref_pre_for_regex(std::string_view regex);

// llama.cpp's pre-tokenizer name for a Sequence of several Split regexes (in order), nullopt when
// unknown.
std::optional<std::string> ref_pre_for_split_sequence(const std::vector<std::string_view>& regexes);

}  // namespace rebox::verify_ref
