// read_tiktoken_tokenizer on a hand-worked tiny Kimi-style folder (tiktoken.model,
// tokenization_kimi.py, tokenizer_config.json, config.json), expected values worked by hand from
// DeepseekV2Model.set_vocab's kimi-k2 branch and Kimi's TikTokenTokenizer: tokens at their ranks in
// GPT-2's byte spelling, merges in file order (BPE of each token below its own rank, kept when two
// parts remain), specials after the ranks, ids past vocab_size left out; and each malformed
// tiktoken.model refused with one input error naming the line. verify's own reading
// (read_ref_tiktoken) must give the same hand-worked values.
#include "model/tokenizer_tiktoken.hpp"

#include <gtest/gtest.h>

#include "rebox/error.hpp"
#include "test_files.hpp"
#include "verify/tokenizer/ref_tokenizer.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

// Ranks: a b c ' ' ab abc ' a' bc aaa; the line of rank 7 before rank 6 (merges follow the file).
// base64: a=YQ== b=Yg== c=Yw== ' '=IA== ab=YWI= abc=YWJj ' a'=IGE= bc=YmM= aaa=YWFh.
constexpr const char* tt_kRanks =
    "YQ== 0\nYg== 1\nYw== 2\nIA== 3\nYWI= 4\nYWJj 5\nYmM= 7\nIGE= 6\n\nYWFh 8\n";

// Kimi's layout: the eight alternatives of pat_str, and a reserved count of 2 (specials 9 .. 12).
constexpr const char* tt_kKimiPy = R"PY(class TikTokenTokenizer(PreTrainedTokenizer):
    num_reserved_special_tokens = 2

    pat_str = "|".join(
        [
            r"""[\p{Han}]+""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    )
)PY";

fs::path tt_kimi_dir(const test::ScratchDir& scratch, const std::string& ranks = tt_kRanks,
                     const std::string& py = tt_kKimiPy) {
    const fs::path dir = scratch / "kimi";
    fs::create_directories(dir);
    test::write_file(dir / "tiktoken.model", ranks);
    test::write_file(dir / "tokenization_kimi.py", py);
    test::write_file(dir / "tokenizer_config.json", R"({"added_tokens_decoder": {
        "9": {"content": "[BOS]", "special": true},
        "10": {"content": "[EOS]", "special": true},
        "40": {"content": "<|far|>", "special": true}},
        "bos_token": "[BOS]", "eos_token": "[EOS]", "chat_template": "{{ x }}"})");
    test::write_file(dir / "config.json", R"({"bos_token_id": 9, "eos_token_id": 10})");
    return dir;
}

TokenizerOptions tt_sized(uint32_t vocab_size) {
    TokenizerOptions options;
    options.vocab_size = vocab_size;
    return options;
}

const std::vector<std::string> tt_kTokens = {"a",
                                             "b",
                                             "c",
                                             "\xC4\xA0",
                                             "ab",
                                             "abc",
                                             "\xC4\xA0"
                                             "a",
                                             "bc",
                                             "aaa",
                                             "[BOS]",
                                             "[EOS]",
                                             "<|reserved_token_11|>"};
const std::vector<std::string> tt_kMerges = {"a b", "ab c", "b c", "\xC4\xA0 a"};

TEST(TiktokenTokenizer, HandWorkedFolder) {
    const test::ScratchDir scratch;
    const TokenizerVocab vocab = read_tiktoken_tokenizer(tt_kimi_dir(scratch), tt_sized(12));
    EXPECT_EQ(vocab.model, "gpt2");
    EXPECT_EQ(vocab.pre, "kimi-k2");
    // 9 ranks, then [BOS] [EOS] <|reserved_token_11|>; 12 (<|reserved_token_12|>) is past
    // vocab_size 12, and added_tokens_decoder's 40 is outside the special range.
    EXPECT_EQ(vocab.tokens, tt_kTokens);
    EXPECT_EQ(vocab.token_types, (std::vector<int32_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3}));
    // aaa: "aa" has no rank, three parts remain: no merge.
    EXPECT_EQ(vocab.merges, tt_kMerges);
    EXPECT_EQ(vocab.bos_id, 9u);
    EXPECT_EQ(vocab.eos_id, 10u);
    EXPECT_EQ(vocab.chat_template, "{{ x }}");
}

// vocab_size past the specials: [PAD<i>] / UNUSED; vocab_size 0: ranks + reserved + 2.
TEST(TiktokenTokenizer, PaddingAndDefaultSize) {
    const test::ScratchDir scratch;
    const fs::path dir = tt_kimi_dir(scratch);
    const TokenizerVocab padded = read_tiktoken_tokenizer(dir, tt_sized(15));
    ASSERT_EQ(padded.tokens.size(), 15u);
    EXPECT_EQ(padded.tokens[12], "<|reserved_token_12|>");
    EXPECT_EQ(padded.token_types[12], 3);
    EXPECT_EQ(padded.tokens[13], "[PAD13]");
    EXPECT_EQ(padded.token_types[14], 5);
    EXPECT_EQ(read_tiktoken_tokenizer(dir, tt_sized(0)).tokens.size(), 13u);
}

// verify's own reading gives the same hand-worked values.
TEST(TiktokenTokenizer, VerifyReadsTheSame) {
    const test::ScratchDir scratch;
    const verify_ref::RefTokenizer ref = verify_ref::read_ref_tiktoken(tt_kimi_dir(scratch), 12);
    EXPECT_EQ(ref.model, "gpt2");
    EXPECT_EQ(ref.pre, "kimi-k2");
    EXPECT_EQ(ref.merges, tt_kMerges);
    ASSERT_TRUE(ref.vocab);
    EXPECT_EQ(ref.vocab->tokens, tt_kTokens);
    EXPECT_EQ(ref.vocab->token_types, (std::vector<int32_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3}));
    EXPECT_EQ(ref.vocab->bos_id, 9u);
    EXPECT_EQ(ref.vocab->eos_id, 10u);
}

// Each malformed tiktoken.model: one input error naming the file and the line; verify refuses
// each as well.
TEST(TiktokenTokenizer, MalformedRanksRefused) {
    const std::string huge = "YQ== 0\n" + std::string(5000, 'Q') + " 1\n";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"YQ== 0\nY!== 1\n", "line 2: token 'Y!==' is not base64"},
        {"YQ== 0\nYg 1\n", "line 2: token 'Yg' is not base64"},
        {"YQ== 0\nYR== 1\n", "line 2: token 'YR==' is not base64"},  // non-zero dropped bits
        {"YQ== 0\nYg== 0\n", "line 2: rank 0 is given twice (first on line 1)"},
        {"YQ== 0\nYQ== 1\n", "line 2: token 'a' is given twice (first on line 1)"},
        {"YQ== 0\nYg== 2\n", "line 2: rank 2 leaves a gap: rank 1 is missing"},
        {"YQ== 0\nYg== x\n", "line 2: rank 'x' is not a number"},
        {"YQ== 0\nYg== 1 2\n", "line 2: has 3 fields"},
        {huge, "line 2: is 5002 bytes long"},
        {"\n\n", "holds no ranks"},
    };
    for (const auto& [ranks, needle] : cases) {
        const test::ScratchDir scratch;
        const fs::path dir = tt_kimi_dir(scratch, ranks);
        try {
            read_tiktoken_tokenizer(dir, tt_sized(0));
            ADD_FAILURE() << "accepted: " << needle;
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::input) << e.what();
            const std::string what = e.what();
            EXPECT_NE(what.find("tiktoken.model: " + needle), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
        EXPECT_THROW(verify_ref::read_ref_tiktoken(dir, 0), Error) << needle;
    }
}

// What the converter's tokenizer needs from tokenization_kimi.py: a BLOCKER when it is missing,
// has no reserved count, or a pat_str that is not Kimi-K2's (unless --tokenizer-pre names one).
TEST(TiktokenTokenizer, KimiPyRules) {
    {
        const test::ScratchDir scratch;
        const fs::path dir = tt_kimi_dir(scratch);
        fs::remove(dir / "tokenization_kimi.py");
        try {
            read_tiktoken_tokenizer(dir, tt_sized(0));
            ADD_FAILURE() << "accepted without tokenization_kimi.py";
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::blocker);
            EXPECT_EQ(e.file(), "tokenization_kimi.py");
        }
    }
    std::string other = tt_kKimiPy;
    other.replace(other.find(R"(\p{N}{1,3})"), 10, R"(\p{N})");
    {
        const test::ScratchDir scratch;
        const fs::path dir = tt_kimi_dir(scratch, tt_kRanks, other);
        try {
            read_tiktoken_tokenizer(dir, tt_sized(0));
            ADD_FAILURE() << "accepted another pat_str";
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::blocker);
            EXPECT_EQ(e.field(), "pat_str");
        }
        TokenizerOptions named = tt_sized(0);
        named.pre = "kimi-k2";
        EXPECT_EQ(read_tiktoken_tokenizer(dir, named).pre, "kimi-k2");
        EXPECT_FALSE(verify_ref::read_ref_tiktoken(dir, 0).pre);
    }
    std::string no_reserved = tt_kKimiPy;
    no_reserved.replace(no_reserved.find("num_reserved_special_tokens"), 5, "#####");
    {
        const test::ScratchDir scratch;
        EXPECT_THROW(
            read_tiktoken_tokenizer(tt_kimi_dir(scratch, tt_kRanks, no_reserved), tt_sized(0)),
            Error);
    }
}

// GPT-2's byte spelling: printable bytes stand for themselves, the rest from U+0100 on.
TEST(TiktokenTokenizer, ByteSpelling) {
    EXPECT_EQ(tiktoken_token_text("A~"), "A~");
    EXPECT_EQ(tiktoken_token_text(std::string(1, '\0')), "\xC4\x80");  // U+0100
    EXPECT_EQ(tiktoken_token_text("\n"), "\xC4\x8A");                  // U+010A
    EXPECT_EQ(tiktoken_token_text("\xAD"), "\xC5\x83");                // U+0143
    EXPECT_EQ(tiktoken_token_text("\xE4\xBD\xA0"), "\xC3\xA4\xC2\xBD\xC5\x82");
}

}  // namespace
}  // namespace rebox
