// read_tokenizer on small hand-written tokenizer.json files: both merge spellings, padding, token
// types, special-token rules, added tokens beyond vocab_size left out, and every refusal (missing
// merges, unknown regex, model.vocab ids beyond vocab_size, duplicates, non-BPE, malformed JSON)
// with its exit class.
#include <gtest/gtest.h>

#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

// The Qwen2/3 Split regex as it is spelled inside tokenizer.json (JSON-escaped).
constexpr const char* kQwenRegexJson =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";
constexpr const char* kLlama3RegexJson =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";

TokenizerOptions sized(uint32_t vocab_size) {
    TokenizerOptions options;
    options.vocab_size = vocab_size;
    return options;
}

TokenizerOptions with_pre(const std::string& pre) {
    TokenizerOptions options;
    options.pre = pre;
    return options;
}

struct TokenizerParts {
    std::string model_type = "BPE";
    std::string vocab = R"({"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġa": 4})";
    std::string merges = R"(["a b", "Ġ a"])";  // JSON array text, or "" to leave merges out
    std::string added = R"([{"id": 5, "content": "<|end|>", "special": true},
                            {"id": 6, "content": "<tool>", "special": false}])";
    std::string regex = kQwenRegexJson;
    std::string post_processor = "null";
};

std::string tokenizer_json(const TokenizerParts& p) {
    std::string model = R"({"type": ")" + p.model_type + R"(", "vocab": )" + p.vocab;
    if (!p.merges.empty()) model += R"(, "merges": )" + p.merges;
    model += "}";
    return R"({"version": "1.0", "added_tokens": )" + p.added + R"(, "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": ")" +
           p.regex + R"("}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
        "post_processor": )" +
           p.post_processor + R"(, "model": )" + model + "}";
}

TokenizerVocab read_parts(const TokenizerParts& parts, TokenizerOptions options = {},
                          const std::string& tokenizer_config = "") {
    test::ScratchDir dir;
    dir.write("tokenizer.json", tokenizer_json(parts));
    if (!tokenizer_config.empty()) dir.write("tokenizer_config.json", tokenizer_config);
    return read_tokenizer(dir.path(), options);
}

// The error read_parts throws; fails the test when there is none.
Error error_of(const TokenizerParts& parts, TokenizerOptions options = {}) {
    try {
        read_parts(parts, options);
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no error";
    return Error(ExitClass::input, "");
}

TEST(ModelTokenizerSmall, TokensTypesAndPadding) {
    const TokenizerVocab v = read_parts({}, sized(9));
    const std::vector<std::string> tokens = {"a",       "b",      "ab",     "Ġ",     "Ġa",
                                             "<|end|>", "<tool>", "[PAD7]", "[PAD8]"};
    const std::vector<int32_t> types = {1, 1, 1, 1, 1, 3, 4, 5, 5};
    EXPECT_EQ(v.tokens, tokens);
    EXPECT_EQ(v.token_types, types);
    EXPECT_EQ(v.pre, "qwen2");
    EXPECT_EQ(read_parts({}).tokens.size(), 7u);  // no vocab_size: max id + 1
}

TEST(ModelTokenizerSmall, MergeStringsAndPairsGiveTheSameMerges) {
    TokenizerParts pairs;
    pairs.merges = R"([["a", "b"], ["Ġ", "a"]])";
    const std::vector<std::string> expected = {"a b", "Ġ a"};
    EXPECT_EQ(read_parts({}).merges, expected);
    EXPECT_EQ(read_parts(pairs).merges, expected);
    // A space inside a pair part is written as U+0120 (gguf-py).
    pairs.merges = R"([["a b", "c"]])";
    EXPECT_EQ(read_parts(pairs).merges, std::vector<std::string>{"a\xC4\xA0"
                                                                 "b c"});
}

TEST(ModelTokenizerSmall, MissingOrEmptyMergesAreBlockers) {
    for (const char* merges : {"", "[]", "null"}) {
        TokenizerParts parts;
        parts.merges = merges;
        const Error e = error_of(parts);
        EXPECT_EQ(e.exit_class(), ExitClass::blocker) << merges;
        EXPECT_STREQ(e.what(),
                     "tokenizer.json: model.merges: missing (a gpt2 BPE tokenizer needs merges)");
    }
    TokenizerParts bad;
    bad.merges = R"([["a", "b", "c"]])";
    EXPECT_EQ(error_of(bad).exit_class(), ExitClass::input);
}

TEST(ModelTokenizerSmall, PreTokenizerFromRegexOrOverride) {
    TokenizerParts llama;
    llama.regex = kLlama3RegexJson;
    EXPECT_EQ(read_parts(llama).pre, "llama-bpe");

    TokenizerParts unknown;
    unknown.regex = R"(\\p{L}+|\\s+)";
    const Error e = error_of(unknown);
    EXPECT_EQ(e.exit_class(), ExitClass::blocker);
    const std::string message = e.what();
    EXPECT_NE(message.find(R"('\p{L}+|\s+')"), std::string::npos)
        << message;  // the regex, unescaped
    EXPECT_NE(message.find("--tokenizer-pre NAME"), std::string::npos) << message;

    EXPECT_EQ(read_parts(unknown, with_pre("gpt-2")).pre, "gpt-2");
    EXPECT_EQ(read_parts({}, with_pre("llama-bpe")).pre, "llama-bpe");  // the override wins
}

TEST(ModelTokenizerSmall, IdsBeyondVocabSizeAreBlockers) {
    const Error e = error_of({}, sized(4));  // model.vocab "Ġa" has id 4
    EXPECT_EQ(e.exit_class(), ExitClass::blocker);
    EXPECT_NE(std::string(e.what()).find("'\xC4\xA0"
                                         "a' has id 4"),
              std::string::npos)
        << e.what();
    // Added tokens beyond an explicit vocab_size are left out and listed, as convert_hf_to_gguf
    // ignores them (<tool> has id 6).
    const TokenizerVocab dropped = read_parts({}, sized(6));
    EXPECT_EQ(dropped.tokens.size(), 6u);
    EXPECT_EQ(dropped.dropped_added_tokens, std::vector<std::string>{"<tool> (id 6)"});
    TokenizerParts huge;
    huge.vocab = R"({"a": 4000000000})";
    EXPECT_EQ(error_of(huge).exit_class(), ExitClass::blocker);  // no 4e9-entry allocation
}

TEST(ModelTokenizerSmall, DuplicatesAndConflictsAreBlockers) {
    TokenizerParts same_text;
    same_text.added = R"([{"id": 5, "content": "ab", "special": true}])";
    EXPECT_EQ(error_of(same_text).exit_class(), ExitClass::blocker);
    TokenizerParts same_id;
    same_id.added = R"([{"id": 2, "content": "<x>", "special": true}])";
    EXPECT_EQ(error_of(same_id).exit_class(), ExitClass::blocker);
    // An added token repeating its own model.vocab entry is fine and becomes CONTROL.
    TokenizerParts repeated;
    repeated.added = R"([{"id": 2, "content": "ab", "special": true}])";
    EXPECT_EQ(read_parts(repeated).token_types[2], 3);
}

TEST(ModelTokenizerSmall, NonBpeAndMalformedInput) {
    TokenizerParts word_level;  // (Unigram is read: tokenizer_unigram_test.cpp)
    word_level.model_type = "WordLevel";
    EXPECT_EQ(error_of(word_level).exit_class(), ExitClass::blocker);
    TokenizerParts negative;
    negative.vocab = R"({"a": -1})";
    EXPECT_EQ(error_of(negative).exit_class(), ExitClass::input);

    test::ScratchDir dir;
    dir.write("tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, )");
    try {
        read_tokenizer(dir.path(), {});
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_EQ(std::string(e.what()).rfind("tokenizer.json: not valid JSON", 0), 0u) << e.what();
    }
    test::ScratchDir empty;
    EXPECT_THROW(read_tokenizer(empty.path(), {}), Error);

    // Over the 512 MiB tokenizer.json cap (a sparse file: nothing is read or allocated).
    test::ScratchDir big;
    std::filesystem::resize_file(big.write("tokenizer.json", "{"), (512ull << 20) + 1);
    try {
        read_tokenizer(big.path(), {});
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_NE(std::string(e.what()).find(
                      "tokenizer.json: is 536870913 bytes, over rebox's 512 MiB limit"),
                  std::string::npos)
            << e.what();
    }
    // tokenizer_config.json is a side file: 64 MiB.
    test::ScratchDir side;
    side.write("tokenizer.json",
               R"({"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}})");
    std::filesystem::resize_file(side.write("tokenizer_config.json", "{"), (64ull << 20) + 1);
    try {
        read_tokenizer(side.path(), TokenizerOptions{0, "qwen2"});
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "tokenizer_config.json: is 67108865 bytes, over rebox's 64 MiB limit"),
                  std::string::npos)
            << e.what();
    }
}

TEST(ModelTokenizerSmall, SpecialTokensFromConfigAndTemplate) {
    const std::string config =
        R"({"bos_token": null, "eos_token": {"content": "<|end|>"}, "add_bos_token": true,
                                   "chat_template": "{{ messages }}"})";
    const TokenizerVocab v = read_parts({}, {}, config);
    EXPECT_FALSE(v.bos_id.has_value());
    EXPECT_EQ(v.eos_id, 5u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_FALSE(v.add_eos);
    EXPECT_EQ(v.chat_template, "{{ messages }}");

    // A template that starts with <|end|> and ends with <|end|>: bos taken from it, eos unchanged.
    TokenizerParts templated;
    templated.added = R"([{"id": 5, "content": "<|end|>", "special": true},
                          {"id": 6, "content": "<|start|>", "special": true}])";
    templated.post_processor = R"({"type": "Sequence", "processors": [{"type": "ByteLevel"},
        {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|start|>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<|end|>", "type_id": 0}}]}]})";
    const TokenizerVocab t = read_parts(templated, {}, R"({"eos_token": "<|end|>"})");
    EXPECT_EQ(t.bos_id, 6u);
    EXPECT_EQ(t.eos_id, 5u);
    EXPECT_FALSE(t.eot_id.has_value());
    EXPECT_TRUE(t.add_bos);
    EXPECT_TRUE(t.add_eos);
}

TEST(ModelTokenizerSmall, ConfigJsonIdsFillTheGaps) {
    test::ScratchDir dir;
    dir.write("tokenizer.json", tokenizer_json({}));
    dir.write("tokenizer_config.json", R"({"eos_token": "<|end|>"})");
    dir.write("config.json", R"({"bos_token_id": 6, "eos_token_id": 0, "pad_token_id": 99})");
    const TokenizerVocab v = read_tokenizer(dir.path(), {});
    EXPECT_EQ(v.bos_id, 6u);
    EXPECT_EQ(v.eos_id, 5u);             // tokenizer_config.json wins
    EXPECT_FALSE(v.pad_id.has_value());  // 99 is not a token
}

// gguf-py's SpecialVocab reads an id from text_config when the top level has none (absent or
// null): a multimodal config.json that keeps its ids with the text model (Ministral 3).
TEST(ModelTokenizerSmall, ConfigJsonIdsFromTextConfig) {
    test::ScratchDir dir;
    dir.write("tokenizer.json", tokenizer_json({}));
    dir.write("config.json", R"({"bos_token_id": null, "eos_token_id": 5,
        "text_config": {"bos_token_id": 6, "eos_token_id": 0, "pad_token_id": 2}})");
    const TokenizerVocab v = read_tokenizer(dir.path(), {});
    EXPECT_EQ(v.bos_id, 6u);  // null at the top: text_config's
    EXPECT_EQ(v.eos_id, 5u);  // the top level's first
    EXPECT_EQ(v.pad_id, 2u);  // absent at the top
}

TEST(ModelTokenizerSmall, RegexTable) {
    EXPECT_EQ(
        pre_tokenizer_for_regex(
            R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        "qwen2");
    // Qwen3.5's tokenizer.json (llama-vocab.cpp's "original regex" of LLAMA_VOCAB_PRE_TYPE_QWEN35).
    EXPECT_EQ(
        pre_tokenizer_for_regex(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        "qwen35");
    EXPECT_FALSE(pre_tokenizer_for_regex("").has_value());
}

// deepseek-ai/DeepSeek-V3's tokenizer.json "pre_tokenizer": a Sequence of three Isolated Splits
// and a ByteLevel without regex, typed out JSON-escaped as the hub file spells it (the three
// regexes are the ones llama-vocab.cpp lists for LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM; the
// converter's chkhsh for this tokenizer says "deepseek-v3").
std::string deepseek_v3_tokenizer_json(const std::string& cjk_regex) {
    const std::string words =
        R"([!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";
    auto split = [](const std::string& regex) {
        return R"({"type": "Split", "pattern": {"Regex": ")" + regex +
               R"("}, "behavior": "Isolated", "invert": false})";
    };
    return R"({"added_tokens": [], "pre_tokenizer": {"type": "Sequence", "pretokenizers": [)" +
           split(R"(\\p{N}{1,3})") + ", " + split(cjk_regex) + ", " + split(words) +
           R"(, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                 "use_regex": false}]},
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})";
}

TEST(ModelTokenizerSmall, DeepseekV3SplitSequence) {
    test::ScratchDir dir;
    dir.write("tokenizer.json", deepseek_v3_tokenizer_json("[一-龥぀-ゟ゠-ヿ]+"));
    EXPECT_EQ(read_tokenizer(dir.path(), {}).pre, "deepseek-v3");
    // One range short (no katakana): not the DeepSeek-V3 sequence, and its first regex alone
    // names nothing either.
    dir.write("tokenizer.json", deepseek_v3_tokenizer_json("[一-龥぀-ゟ]+"));
    try {
        read_tokenizer(dir.path(), {});
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::blocker);
        EXPECT_NE(std::string(e.what()).find("deepseek-v3"), std::string::npos) << e.what();
    }
    EXPECT_EQ(pre_tokenizer_for_regex_sequence({R"(\p{N}{1,3})"}), std::nullopt);
}

}  // namespace
}  // namespace rebox

namespace rebox {
namespace {

// Llama 3.1 Instruct's layout: tokenizer_config.json names bos <|begin_of_text|> and eos <|eot_id|>
// with no add_bos_token key; the post-processor template starts with <|begin_of_text|>. gguf-py
// SpecialVocab then writes bos 128000, eos 128009 (not <|end_of_text|> 128001) and add_bos true.
TEST(ModelTokenizerSmall, Llama31SpecialTokens) {
    TokenizerParts llama;
    llama.regex = kLlama3RegexJson;
    llama.added = R"([{"id": 5, "content": "<|begin_of_text|>", "special": true},
                      {"id": 6, "content": "<|end_of_text|>", "special": true},
                      {"id": 7, "content": "<|eot_id|>", "special": true}])";
    llama.post_processor = R"({"type": "Sequence", "processors": [{"type": "ByteLevel"},
        {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}}]}]})";
    const TokenizerVocab v =
        read_parts(llama, {}, R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})");
    EXPECT_EQ(v.model, "gpt2");
    EXPECT_EQ(v.pre, "llama-bpe");
    EXPECT_EQ(v.bos_id, 5u);
    EXPECT_EQ(v.eos_id, 7u);
    EXPECT_FALSE(v.eot_id.has_value());
    EXPECT_TRUE(v.add_bos);
    EXPECT_FALSE(v.add_eos);
    EXPECT_TRUE(v.scores.empty());
    EXPECT_FALSE(v.add_space_prefix.has_value());
}

}  // namespace
}  // namespace rebox

namespace rebox {
namespace {

// WordPiece, hand-worked: BertModel.set_vocab keeps control tokens, turns "##s" into "s" and every
// other token (padding included) into "\u2581" + token; the special ids follow gguf-py's
// SpecialVocab (bos from cls_token, eos from sep_token; the "[CLS] $A [SEP] $B [SEP]" pair gives
// add_sep false,
// "$A [SEP] [SEP] $B" would give true); the BertNormalizer gives lowercase, a null strip_accents
// none.
TEST(ModelTokenizerSmall, WordPieceVocabulary) {
    const std::string post = R"({"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[CLS]"}}, {"Sequence": {"id": "A"}}, {"SpecialToken": {"id": "[SEP]"}}],
        "pair": [{"SpecialToken": {"id": "[CLS]"}}, {"Sequence": {"id": "A"}}, {"SpecialToken": {"id": "[SEP]"}},
                 {"Sequence": {"id": "B"}}, {"SpecialToken": {"id": "[SEP]"}}]})";
    const std::string json = R"({"added_tokens": [
        {"id": 0, "content": "[PAD]", "special": true}, {"id": 1, "content": "[UNK]", "special": true},
        {"id": 2, "content": "[CLS]", "special": true}, {"id": 3, "content": "[SEP]", "special": true},
        {"id": 4, "content": "[MASK]", "special": true}],
        "normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null},
        "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": )" +
                             post + R"(,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab":
            {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "dog": 5, "##s": 6, "s": 7}}})";
    const std::string config = R"({"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
        "unk_token": "[UNK]", "mask_token": "[MASK]"})";
    test::ScratchDir dir;
    dir.write("tokenizer.json", json);
    dir.write("tokenizer_config.json", config);
    const TokenizerVocab v = read_tokenizer(dir.path(), sized(9));
    EXPECT_EQ(v.model, "bert");
    EXPECT_EQ(v.pre, "default");
    EXPECT_EQ(v.tokens, (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                                  "\u2581dog", "s", "\u2581s", "\u2581[PAD8]"}));
    EXPECT_EQ(v.token_types, (std::vector<int32_t>{3, 3, 3, 3, 3, 1, 1, 1, 5}));
    EXPECT_EQ(v.bos_id, 2u);
    EXPECT_EQ(v.eos_id, 3u);
    EXPECT_EQ(v.sep_id, 3u);
    EXPECT_EQ(v.unk_id, 1u);
    EXPECT_EQ(v.pad_id, 0u);
    EXPECT_EQ(v.mask_id, 4u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_TRUE(v.add_eos);
    EXPECT_EQ(v.add_sep, false);
    EXPECT_EQ(v.normalizer_lowercase, true);
    EXPECT_FALSE(v.normalizer_strip_accents.has_value());
    EXPECT_TRUE(v.merges.empty());

    // "$A [SEP] [SEP] $B" between the single template's ends: add_sep true.
    std::string doubled = json;
    const std::string middle = R"({"SpecialToken": {"id": "[SEP]"}},
                 {"Sequence": {"id": "B"}})";
    doubled.replace(
        doubled.find(middle), middle.size(),
        R"({"SpecialToken": {"id": "[SEP]"}}, {"SpecialToken": {"id": "[SEP]"}}, {"Sequence": {"id": "B"}})");
    dir.write("tokenizer.json", doubled);
    EXPECT_EQ(read_tokenizer(dir.path(), sized(9)).add_sep, true);
}

}  // namespace
}  // namespace rebox
