// Split pre-tokenizer regex (tokenizer.json) -> llama.cpp tokenizer.ggml.pre name. The regexes are
// the ones llama.cpp's src/llama-vocab.cpp quotes as "original regex from tokenizer.json" for each
// pre type, plus llama.cpp's own adapted spelling of the same expression; a pre type made of
// several Split regexes in sequence (DeepSeek-V3) is known by the whole sequence.
#include <algorithm>
#include <array>
#include <string_view>

#include "model/tokenizer_vocab.hpp"

namespace rebox {
namespace {

struct KnownRegex {
    std::string_view regex;
    std::string_view pre;
};

// Several llama.cpp pre types share one regex (e.g. qwen2/stablelm2/hunyuan,
// llama-bpe/dbrx/smaug-bpe); the name chosen is the one the family in question (Qwen2/2.5/3,
// Llama-3) is converted with.
constexpr std::array<KnownRegex, 7> kKnownRegexes{{
    // Qwen2 / Qwen2.5 / Qwen3 (single-digit numbers).
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen2"},
    {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen2"},
    // Qwen3.5 / 3.6: Qwen2's with combining marks (\p{M}) in the letter runs and out of the
    // punctuation runs (LLAMA_VOCAB_PRE_TYPE_QWEN35; the converter's chkhsh d30d75d9... says
    // "qwen35").
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen35"},
    {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen35"},
    // Llama-3 (numbers in groups of up to three).
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "llama-bpe"},
    {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "llama-bpe"},
    // o200k (GPT-4o, gpt-oss): cased letter runs, contractions as an optional suffix, digits in
    // groups of up to three.
    {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "gpt-4o"},
}};

// DeepSeek-V3 / R1 (and Kimi-K2's DeepSeek-V3 tokenizer): digits in groups of up to three, then
// CJK ideographs and kana runs, then the word / punctuation rule; the three Split regexes of
// deepseek-ai/DeepSeek-V3's tokenizer.json, as llama-vocab.cpp lists them for
// LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM (the converter names this tokenizer "deepseek-v3").
constexpr std::array<std::string_view, 3> kDeepseekV3Sequence{{
    R"(\p{N}{1,3})",
    R"([一-龥぀-ゟ゠-ヿ]+)",
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
}};

}  // namespace

std::optional<std::string> pre_tokenizer_for_regex_sequence(
    const std::vector<std::string_view>& regexes) {
    if (std::ranges::equal(regexes, kDeepseekV3Sequence)) return std::string("deepseek-v3");
    return std::nullopt;
}

std::optional<std::string> pre_tokenizer_for_regex(const std::string& regex) {
    for (const KnownRegex& known : kKnownRegexes)
        if (known.regex == regex) return std::string(known.pre);
    return std::nullopt;
}

}  // namespace rebox
