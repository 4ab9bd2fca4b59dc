// read_tokenizer on a tokenizer.model without tokenizer.json: SentencePiece BPE models trained here
// with Debian's libsentencepiece trainer (ids laid out by SentencePiece's documented order: <unk>,
// <s>, </s>, control and user-defined symbols, the 256 byte pieces, then merged pieces with
// falling scores), padding to vocab_size, added tokens from tokenizer_config.json,
// add_space_prefix from --add_dummy_prefix, and the refusals (Unigram, corrupt file).
#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>

#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

constexpr const char* kText =
    "the quick brown fox jumps over the lazy dog\n"
    "a small model reads the text and turns every word into tokens\n"
    "tokens are numbers that the network can use, and the numbers stay the same\n"
    "in the morning the sun rises in the east, in the evening it sets in the west\n";

// Trains a tokenizer.model into dir (extra: more trainer flags).
void train(const test::ScratchDir& dir, const std::string& extra) {
    const auto input = dir.write("train.txt", kText);
    const std::string args = "--input=" + input.string() +
                             " --model_prefix=" + (dir.path() / "tokenizer").string() +
                             " --character_coverage=1.0 --byte_fallback=true"
                             " --control_symbols=<ctl> --user_defined_symbols=<tool>"
                             " --minloglevel=2 " +
                             extra;
    const auto status = sentencepiece::SentencePieceTrainer::Train(args);
    ASSERT_TRUE(status.ok()) << status.ToString();
}

TokenizerVocab read(const test::ScratchDir& dir, uint32_t vocab_size = 0) {
    TokenizerOptions options;
    options.vocab_size = vocab_size;
    return read_tokenizer(dir.path(), options);
}

TEST(ModelTokenizerSentencePieceModel, PiecesTypesAndScores) {
    test::ScratchDir dir;
    train(dir, "--model_type=bpe --vocab_size=330");
    const TokenizerVocab v = read(dir);
    EXPECT_EQ(v.model, "llama");
    EXPECT_EQ(v.pre, "default");
    EXPECT_EQ(v.add_space_prefix, true);  // SentencePiece's default add_dummy_prefix
    ASSERT_EQ(v.tokens.size(), 330u);
    ASSERT_EQ(v.scores.size(), 330u);
    const std::vector<std::string> first = {"<unk>", "<s>", "</s>", "<ctl>", "<tool>", "<0x00>"};
    EXPECT_EQ(std::vector<std::string>(v.tokens.begin(), v.tokens.begin() + 6), first);
    // UNKNOWN 2, CONTROL 3, USER_DEFINED 4, BYTE 6.
    const std::vector<int32_t> types = {2, 3, 3, 3, 4, 6};
    EXPECT_EQ(std::vector<int32_t>(v.token_types.begin(), v.token_types.begin() + 6), types);
    EXPECT_EQ(v.tokens[260], "<0xFF>");
    EXPECT_EQ(v.token_types[260], 6);
    EXPECT_EQ(v.unk_id, 0u);
    // Merged pieces from id 261 on: NORMAL, scores 0, -1, -2, ... (the merge order).
    for (size_t id = 261; id < 300; ++id) {
        EXPECT_EQ(v.token_types[id], 1) << id;
        EXPECT_EQ(v.scores[id], -static_cast<float>(id - 261)) << id;
    }
    EXPECT_TRUE(v.merges.empty());
}

TEST(ModelTokenizerSentencePieceModel, PaddingAddedTokensAndSpacePrefix) {
    test::ScratchDir dir;
    train(dir, "--model_type=bpe --vocab_size=330 --add_dummy_prefix=false");
    dir.write("tokenizer_config.json",
              R"({"add_bos_token": true, "added_tokens_decoder": {
                  "330": {"content": "<|extra|>", "special": true},
                  "331": {"content": "my\u2581word", "special": false},
                  "400": {"content": "<beyond>", "special": true}}})");
    const TokenizerVocab v = read(dir, 333);
    EXPECT_EQ(v.add_space_prefix, false);
    ASSERT_EQ(v.tokens.size(), 333u);
    EXPECT_EQ(v.tokens[330], "<|extra|>");
    EXPECT_EQ(v.token_types[330], 3);
    EXPECT_EQ(v.scores[330], -1000.0f);
    EXPECT_EQ(v.tokens[331], "my word");  // user-defined: U+2581 -> ' ' as the converter does
    EXPECT_EQ(v.token_types[331], 4);
    EXPECT_EQ(v.tokens[332], "[PAD332]");
    EXPECT_EQ(v.token_types[332], 5);
    EXPECT_EQ(v.scores[332], -10000.0f);
    EXPECT_EQ(v.dropped_added_tokens, std::vector<std::string>{"<beyond> (id 400)"});
    EXPECT_TRUE(v.add_bos);
}

TEST(ModelTokenizerSentencePieceModel, UnigramAndCorruptFilesAreRefused) {
    test::ScratchDir unigram;
    train(unigram, "--model_type=unigram --vocab_size=300");
    try {
        read(unigram);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::blocker);
        EXPECT_NE(std::string(e.what()).find("tokenizer.model: trainer_spec.model_type: Unigram"),
                  std::string::npos)
            << e.what();
    }
    test::ScratchDir corrupt;
    corrupt.write("tokenizer.model", std::string("\x0a\xff\xff\xff\xff\x0f", 6));
    try {
        read(corrupt);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_NE(std::string(e.what()).find("tokenizer.model"), std::string::npos) << e.what();
    }
    // tokenizer.json wins when both are present.
    test::ScratchDir both;
    train(both, "--model_type=bpe --vocab_size=330");
    both.write("tokenizer.json", "{");
    EXPECT_THROW(read(both), Error);
}

}  // namespace
}  // namespace rebox
