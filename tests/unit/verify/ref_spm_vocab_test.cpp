// verify's own SentencePiece and WordPiece vocabularies (ref_vocab: read_ref_spm_vocab for a
// tokenizer.model, read_ref_vocab for SentencePiece-style BPE and WordPiece tokenizer.json), on
// hand-written inputs with every expected value worked out by hand from the converter's rules:
// _create_vocab_sentencepiece (filler [PAD<i>] / -10000 / UNUSED, pieces' own scores and types,
// added tokens -1000), rebox's merge-rank scores for byte_fallback BPE (docs/architectures.md),
// BertModel.set_vocab's phantom spaces, and gguf-py SpecialVocab (cls/sep fallbacks, the single
// and pair templates, tokenizer_config.json's flags, config.json ids).
#include <gtest/gtest.h>

#include "rebox/error.hpp"
#include "test_files.hpp"
#include "verify/tokenizer/ref_spm_model.hpp"
#include "verify/tokenizer/ref_vocab.hpp"

namespace rebox::verify_ref {
namespace {

const std::string kSp = "\xE2\x96\x81";  // U+2581

RefVocab json_vocab(const std::filesystem::path& dir, const std::string& tokenizer_json,
                    uint64_t vocab_size, RefVocabKind kind) {
    test::write_file(dir / "tokenizer.json", tokenizer_json);
    simdjson::dom::parser parser;
    const simdjson::padded_string text(tokenizer_json);
    return read_ref_vocab(parser.parse(text).value(), dir, vocab_size, kind);
}

TEST(RefSpmVocab, TokenizerModelPiecesAddedTokensAndSpecials) {
    test::ScratchDir dir;
    RefSpmModel model;
    model.pieces = {{"<unk>", 0.0f, 2},  {"<s>", 0.0f, 3},      {"</s>", 0.0f, 3},
                    {"<0x41>", 0.0f, 6}, {kSp + "a", -1.5f, 1}, {"<sep>", 0.0f, 4}};
    model.add_dummy_prefix = false;
    test::write_file(dir.path() / "added_tokens.json", "{\"x" + kSp + "y\": 6}");
    test::write_file(dir.path() / "tokenizer_config.json", R"({
        "add_bos_token": true, "add_eos_token": false, "bos_token": "<s>",
        "added_tokens_decoder": {"7": {"content": "<|end|>", "special": false},
                                 "2": {"content": "</s>", "special": true},
                                 "20": {"content": "<far>", "special": true}}})");
    test::write_file(dir.path() / "config.json",
                     R"({"bos_token_id": 1, "eos_token_id": 7, "pad_token_id": 99,
                         "unk_token_id": 4})");
    const RefVocab v = read_ref_spm_vocab(model, dir.path(), 9);
    EXPECT_EQ(v.tokens, (std::vector<std::string>{"<unk>", "<s>", "</s>", "<0x41>", kSp + "a",
                                                  "<sep>", "x y", "<|end|>", "[PAD8]"}));
    EXPECT_EQ(v.scores, (std::vector<float>{0, 0, -1000, 0, -1.5f, 0, -1000, -1000, -10000}));
    EXPECT_EQ(v.token_types, (std::vector<int32_t>{2, 3, 3, 6, 1, 4, 4, 3, 5}));
    EXPECT_EQ(v.unk_id, 0u);  // the UNKNOWN piece, before config.json's 4
    EXPECT_EQ(v.bos_id, 1u);
    EXPECT_EQ(v.eos_id, 7u);
    EXPECT_EQ(v.pad_id, std::nullopt);  // 99 is past the vocabulary
    EXPECT_TRUE(v.add_bos);
    EXPECT_FALSE(v.add_eos);
    EXPECT_EQ(v.add_space_prefix, false);
    EXPECT_EQ(v.sep_id, std::nullopt);  // WordPiece only
}

TEST(RefSpmVocab, TokenizerModelRefusals) {
    test::ScratchDir dir;
    RefSpmModel model;
    model.pieces = {{"a", 0.0f, 1}, {"b", 0.0f, 1}};
    const auto refusal = [&](uint64_t vocab_size) -> std::string {
        try {
            read_ref_spm_vocab(model, dir.path(), vocab_size);
        } catch (const Error& e) {
            return e.what();
        }
        return "(accepted)";
    };
    EXPECT_NE(refusal(1).find("tokenizer.model"), std::string::npos);
    EXPECT_EQ(read_ref_spm_vocab(model, dir.path(), 0).tokens.size(), 2u);  // the piece count
    test::write_file(dir.path() / "added_tokens.json", R"({"x": -3})");
    EXPECT_NE(refusal(2).find("added_tokens.json"), std::string::npos);
    test::write_file(dir.path() / "added_tokens.json", "{}");
    test::write_file(dir.path() / "tokenizer_config.json",
                     R"({"added_tokens_decoder": {"one": {"content": "x"}}})");
    EXPECT_NE(refusal(2).find("added_tokens_decoder.one"), std::string::npos);
}

TEST(RefSpmVocab, ByteFallbackBpeScoresTypesAndSpacePrefix) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer_config.json",
                     R"({"bos_token": "<s>", "add_eos_token": false})");
    const std::string tokenizer = R"({
      "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": ")" +
                                  kSp + R"("},
        {"type": "Replace", "pattern": {"String": " "}, "content": ")" +
                                  kSp + R"("}]},
      "pre_tokenizer": null,
      "added_tokens": [{"id": 0, "content": "<unk>", "special": true},
                       {"id": 1, "content": "<s>", "special": true}],
      "post_processor": {"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}]},
      "model": {"type": "BPE", "byte_fallback": true, "unk_token": "<unk>",
        "vocab": {"<unk>": 0, "<s>": 1, "<0x41>": 2, ")" +
                                  kSp + R"(": 3, "a": 4,
                  ")" + kSp + R"(a": 5, "b": 6, "ab": 7},
        "merges": [")" + kSp + R"( a", ["a", "b"], "a b"]}})";
    const RefVocab v = json_vocab(dir.path(), tokenizer, 9, RefVocabKind::sentencepiece_bpe);
    EXPECT_EQ(v.token_types, (std::vector<int32_t>{2, 3, 6, 1, 1, 1, 1, 1, 5}));
    // 3 merges: unmerged tokens score -4; "▁a" is rank 0, "ab" rank 1 (rank 2 makes it again).
    EXPECT_EQ(v.scores, (std::vector<float>{-4, -4, -4, -4, -4, 0, -4, -1, -4}));
    EXPECT_EQ(v.add_space_prefix, true);
    EXPECT_EQ(v.unk_id, 0u);
    EXPECT_EQ(v.bos_id, 1u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_FALSE(v.add_eos);

    const auto prefix_of = [&](const std::string& pre_tokenizer) {
        const std::string text = R"({"pre_tokenizer": )" + pre_tokenizer +
                                 R"(, "model": {"type": "BPE", "byte_fallback": true,
                                  "vocab": {"a": 0}, "merges": []}})";
        return json_vocab(dir.path(), text, 0, RefVocabKind::sentencepiece_bpe).add_space_prefix;
    };
    const std::string metaspace = R"({"type": "Metaspace", "replacement": ")" + kSp + R"(", )";
    EXPECT_EQ(prefix_of(metaspace + R"("prepend_scheme": "never"})"), false);
    EXPECT_EQ(prefix_of(metaspace + R"("prepend_scheme": "first"})"), true);
    EXPECT_EQ(prefix_of(metaspace + R"("add_prefix_space": true})"), true);
    EXPECT_EQ(prefix_of("null"), false);
}

TEST(RefSpmVocab, ByteFallbackBpeWithoutMergesFails) {
    test::ScratchDir dir;
    try {
        json_vocab(dir.path(), R"({"model": {"type": "BPE", "vocab": {"a": 0}}})", 0,
                   RefVocabKind::sentencepiece_bpe);
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("model.merges"), std::string::npos);
    }
}

std::string wordpiece_json(const std::string& single, const std::string& pair) {
    return R"({
      "normalizer": {"type": "BertNormalizer", "clean_text": true, "strip_accents": null,
                     "lowercase": true},
      "added_tokens": [{"id": 0, "content": "[PAD]", "special": true},
                       {"id": 1, "content": "[UNK]", "special": true},
                       {"id": 2, "content": "[CLS]", "special": true},
                       {"id": 3, "content": "[SEP]", "special": true},
                       {"id": 4, "content": "[MASK]", "special": true}],
      "post_processor": {"type": "TemplateProcessing", "single": )" +
           single + R"(, "pair": )" + pair + R"(},
      "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
        "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5,
                  "##lo": 6, "##s": 7}}})";
}

const std::string kCls = R"({"SpecialToken": {"id": "[CLS]", "type_id": 0}})";
const std::string kSep = R"({"SpecialToken": {"id": "[SEP]", "type_id": 0}})";
const std::string kA = R"({"Sequence": {"id": "A", "type_id": 0}})";
const std::string kB = R"({"Sequence": {"id": "B", "type_id": 1}})";

TEST(RefSpmVocab, WordPiecePhantomSpacesAndSpecials) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer_config.json",
                     R"({"cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]",
                         "pad_token": "[PAD]", "unk_token": "[UNK]"})");
    // [CLS] A [SEP] / [CLS] A [SEP] B [SEP]: trimmed to A [SEP] B; the single template has a
    // trailing token, so gguf-py's add_sep is false.
    const RefVocab v =
        json_vocab(dir.path(),
                   wordpiece_json("[" + kCls + "," + kA + "," + kSep + "]",
                                  "[" + kCls + "," + kA + "," + kSep + "," + kB + "," + kSep + "]"),
                   9, RefVocabKind::wordpiece);
    EXPECT_EQ(v.tokens, (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                                  kSp + "hello", "lo", "s", kSp + "[PAD8]"}));
    EXPECT_EQ(v.token_types, (std::vector<int32_t>{3, 3, 3, 3, 3, 1, 1, 1, 5}));
    EXPECT_EQ(v.bos_id, 2u);  // cls_token stands in for the missing bos_token
    EXPECT_EQ(v.eos_id, 3u);  // and sep_token for eos_token
    EXPECT_EQ(v.unk_id, 1u);
    EXPECT_EQ(v.pad_id, 0u);
    EXPECT_EQ(v.sep_id, 3u);
    EXPECT_EQ(v.mask_id, 4u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_TRUE(v.add_eos);
    EXPECT_EQ(v.add_sep, false);
    EXPECT_EQ(v.normalizer_lowercase, true);
    EXPECT_EQ(v.normalizer_strip_accents, std::nullopt);  // null in the BertNormalizer
    EXPECT_TRUE(v.scores.empty());
    EXPECT_EQ(v.add_space_prefix, std::nullopt);

    // [CLS] A / [CLS] A [SEP] B: no trailing token, so the separator sets add_sep.
    const RefVocab w =
        json_vocab(dir.path(),
                   wordpiece_json("[" + kCls + "," + kA + "]",
                                  "[" + kCls + "," + kA + "," + kSep + "," + kB + "]"),
                   9, RefVocabKind::wordpiece);
    EXPECT_EQ(w.add_sep, true);
    EXPECT_FALSE(w.add_eos);
    EXPECT_TRUE(w.add_bos);
}

}  // namespace
}  // namespace rebox::verify_ref
