// A tiktoken vocabulary (Kimi-K2 / K2-Thinking / K2.5: tiktoken.model, tokenizer_config.json and
// the remote-code tokenization_kimi.py, no tokenizer.json) -> the GGUF tokenizer, as llama.cpp's
// converter writes it (DeepseekV2Model.set_vocab's "kimi-k2" branch): byte-level BPE ("gpt2")
// tokens at their ranks, spelled through GPT-2's byte-to-unicode table; the merges rebuilt from the
// ranks (for each multi-byte token in file order, BPE over its own bytes stopped at its rank: a
// merge when exactly two parts remain); the special tokens at ids n .. n + reserved + 1 (n: the
// number of ranks) named by tokenizer_config.json's added_tokens_decoder, else
// <|reserved_token_ID|>, CONTROL; ids past vocab_size left out, missing ids [PAD<i>] / UNUSED;
// then gguf-py's SpecialVocab without a tokenizer.json (config.json's ids, tokenizer_config.json's
// add flags and chat template).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer_vocab.hpp"

namespace rebox {

// tiktoken.model's ranks: tokens[r] is the byte string of rank r; file_order[k] the rank on the
// k-th non-empty line.
struct TiktokenRanks {
    std::vector<std::string> tokens;
    std::vector<uint32_t> file_order;
};

// Caps for tiktoken.model: Kimi-K2's is ~2.8 MB with 163,584 ranks and lines under 100 bytes.
inline constexpr uint64_t kMaxTiktokenBytes = 64ull << 20;
inline constexpr size_t kMaxTiktokenLine = 4096;

// Parses "BASE64 RANK" lines (empty lines skipped, as tiktoken's load_tiktoken_bpe does). Throws
// rebox::Error (input) naming `file`, the line and what is wrong for: a line that is not two
// fields, one over kMaxTiktokenLine, base64 that is not canonical standard base64 of a non-empty
// string, a rank that is not a decimal number, a byte string or a rank given twice, and ranks that
// are not exactly 0 .. n-1 (a gap).
TiktokenRanks parse_tiktoken_ranks(std::string_view text, const std::string& file);

// GPT-2's bytes_to_unicode spelling of a byte string (QwenModel.token_bytes_to_string).
std::string tiktoken_token_text(std::string_view bytes);

// The merges of DeepseekV2Model.set_vocab's kimi-k2 branch, "left right", in file order.
std::vector<std::string> tiktoken_merges(const TiktokenRanks& ranks);

// The whole vocabulary of model_dir (tiktoken.model + tokenization_kimi.py + tokenizer_config.json
// + config.json). options.vocab_size 0: ranks + reserved + 2. Throws rebox::Error: input class for
// a malformed tiktoken.model / tokenizer_config.json; blocker class for tokenization_kimi.py
// missing or without the pat_str / num_reserved_special_tokens the converter's tokenizer takes, a
// pat_str that is not Kimi-K2's (fix: --tokenizer-pre), or vocab_size below the rank count.
TokenizerVocab read_tiktoken_tokenizer(const std::filesystem::path& model_dir,
                                       const TokenizerOptions& options);

// Kimi-K2's pat_str (tokenization_kimi.py's eight alternatives joined by '|'): llama.cpp's
// "kimi-k2" pre-tokenizer.
extern const std::string_view kKimiK2PatStr;

}  // namespace rebox
