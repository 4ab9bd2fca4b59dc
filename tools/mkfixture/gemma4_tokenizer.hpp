// A small tokenizer shaped like Gemma 4's (--arch gemma4): no real Gemma 4 tokenizer.json is
// available offline, so this one has the structure of Gemma's published tokenizer.json (a BPE
// with byte_fallback over U+2581-escaped text: normalizer Replace " " -> "\u2581", a Split " "
// pre-tokenizer, a Replace / ByteFallback / Fuse decoder, a "<bos> $A" post-processor; <pad>
// <eos> <bos> <unk> <mask> first, the 256 <0xHH> byte tokens) with Gemma 4's turn, channel, tool
// and image tokens, and merges learned from a short English text; tokenizer_config.json names
// the special tokens as transformers' Gemma 4 tokenizer does (extra_special_tokens).
#pragma once

#include <cstdint>
#include <filesystem>

namespace mkfixture {

// Writes tokenizer.json and tokenizer_config.json into out_dir; returns the token count.
int64_t write_gemma4_tokenizer(const std::filesystem::path& out_dir);

}  // namespace mkfixture
