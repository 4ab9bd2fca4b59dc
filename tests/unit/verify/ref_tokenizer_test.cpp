// verify's own tokenizer reading (ref_tokenizer): the pre-tokenizer names for the regexes
// llama.cpp's src/llama-vocab.cpp quotes as "original regex from tokenizer.json" (typed out here
// from that file, not from rebox's table), merges spelled as gguf-py's SpecialVocab writes them,
// the SentencePiece-style model and the chat template chosen from tokenizer_config.json.
#include "verify/tokenizer/ref_tokenizer.hpp"

#include <gtest/gtest.h>

#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox::verify_ref {
namespace {

TEST(RefTokenizer, PreTokenizerNamesFromLlamaCppRegexes) {
    // llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_QWEN2 and _LLAMA3.
    EXPECT_EQ(
        ref_pre_for_regex(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        "qwen2");
    EXPECT_EQ(
        ref_pre_for_regex(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        "llama-bpe");
    // LLAMA_VOCAB_PRE_TYPE_QWEN35: Qwen2's with \p{M}, the original and llama.cpp's spelling.
    EXPECT_EQ(
        ref_pre_for_regex(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        "qwen35");
    EXPECT_EQ(
        ref_pre_for_regex(
            R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        "qwen35");
    // \p{M} in the letter runs only (not the hub's string): no name.
    EXPECT_EQ(
        ref_pre_for_regex(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        std::nullopt);
    EXPECT_EQ(ref_pre_for_regex(""), std::nullopt);
}

// deepseek-ai/DeepSeek-V3's tokenizer.json pre_tokenizer (three Isolated Splits, then a ByteLevel
// without regex), JSON-escaped as the hub file spells it; llama-vocab.cpp lists the same three
// regexes for LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM ("deepseek-v3").
std::string deepseek_v3_pre_tokenizer(const std::string& digits) {
    const std::string split = R"({"type": "Split", "behavior": "Isolated", "pattern": {"Regex": )";
    return R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [)" + split + R"(")" +
           digits + R"("}}, )" + split + R"("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}}, )" +
           split +
           R"("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}, )" +
           R"({"type": "ByteLevel", "use_regex": false}]},
           "model": {"type": "BPE", "byte_fallback": false, "vocab": {}, "merges": []}})";
}

TEST(RefTokenizer, DeepseekV3IsKnownByItsThreeSplits) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer.json", deepseek_v3_pre_tokenizer(R"(\\p{N}{1,3})"));
    const RefTokenizer ref = read_ref_tokenizer(dir.path());
    EXPECT_EQ(ref.pre, "deepseek-v3");
    EXPECT_EQ(ref.pre_problem, "");
    // Single digits instead of groups of three: not DeepSeek-V3's sequence.
    test::write_file(dir.path() / "tokenizer.json", deepseek_v3_pre_tokenizer(R"(\\p{N})"));
    const RefTokenizer other = read_ref_tokenizer(dir.path());
    EXPECT_EQ(other.pre, std::nullopt);
    EXPECT_NE(other.pre_problem.find("not one verify knows"), std::string::npos);
}

TEST(RefTokenizer, ByteLevelMergesAndChatTemplate) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer.json", R"({
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {"type": "ByteLevel"}]},
      "model": {"type": "BPE", "byte_fallback": false, "vocab": {},
                "merges": ["a b", ["c d", "e"]]}})");
    test::write_file(dir.path() / "tokenizer_config.json",
                     R"({"chat_template": [{"name": "tool_use", "template": "T"},
                                           {"name": "default", "template": "D"}]})");
    const RefTokenizer ref = read_ref_tokenizer(dir.path());
    EXPECT_TRUE(ref.present);
    EXPECT_EQ(ref.model, "gpt2");
    EXPECT_EQ(ref.pre, "qwen2");
    // gguf-py: ' '.join(part.replace(' ', chr(ord(' ') + 256)) for part in pair)
    EXPECT_EQ(ref.merges, (std::vector<std::string>{"a b",
                                                    "c\xC4\xA0"
                                                    "d e"}));
    EXPECT_EQ(ref.chat_template, "D");
}

TEST(RefTokenizer, ByteFallbackIsSentencePieceWithDefaultPre) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer.json",
                     R"({"model": {"type": "BPE", "byte_fallback": true, "merges": ["a b"],
                                   "vocab": {"a": 0, "b": 1, "ab": 2}}})");
    const RefTokenizer ref = read_ref_tokenizer(dir.path());
    EXPECT_EQ(ref.model, "llama");
    EXPECT_EQ(ref.pre, "default");
    EXPECT_TRUE(ref.merges.empty());  // a SentencePiece vocabulary merges by score
    ASSERT_TRUE(ref.vocab.has_value());
    EXPECT_EQ(ref.vocab->scores, (std::vector<float>{-2, -2, 0}));  // "ab" is merge rank 0
    EXPECT_EQ(ref.chat_template, std::nullopt);
}

TEST(RefTokenizer, UnknownRegexIsReportedNotGuessed) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer.json",
                     R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\s+"}},
                        "model": {"type": "BPE", "vocab": {}, "merges": []}})");
    const RefTokenizer ref = read_ref_tokenizer(dir.path());
    EXPECT_EQ(ref.pre, std::nullopt);
    EXPECT_NE(ref.pre_problem.find("not one verify knows"), std::string::npos);
}

TEST(RefTokenizer, BadJsonIsAnInputErrorNamingTheFile) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer.json", "{\"model\": ");
    try {
        read_ref_tokenizer(dir.path());
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
    }
}

TEST(RefTokenizer, AnOversizedFileIsRefusedBeforeItIsRead) {
    test::ScratchDir dir;
    const std::filesystem::path path = dir.path() / "tokenizer.json";
    test::write_file(path, "{}");
    std::filesystem::resize_file(path, (uintmax_t{512} << 20) + 1);  // sparse: nothing is written
    try {
        read_ref_tokenizer(dir.path());
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace rebox::verify_ref
