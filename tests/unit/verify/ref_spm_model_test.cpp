// verify's own tokenizer.model reader (ref_spm_model) on protobuf bytes written out by hand in
// this file (tags, lengths and values worked from the protobuf wire format and the field numbers
// of sentencepiece_model.proto), hostile bytes (truncated varint, over-long varint, a length past
// the end, a group, a wrong wire type, a piece count over the cap: one Error naming the file and
// the message), and a model trained here by libsentencepiece, read back through
// SentencePieceProcessor (an implementation that is not verify's) for the pieces, scores and
// types.
#include "verify/tokenizer/ref_spm_model.hpp"

#include <gtest/gtest.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <fstream>
#include <sstream>

#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox::verify_ref {
namespace {

std::string bytes_of(std::initializer_list<int> values) {
    std::string out;
    for (const int v : values) out.push_back(static_cast<char>(v));
    return out;
}

// One piece "a", score 0.5, type NORMAL; trainer_spec model_type BPE, byte_fallback, pad_id -1
// (a ten-byte varint), unk_id 3; normalizer_spec add_dummy_prefix false.
const std::string kHandModel = bytes_of({
    0x0A, 0x0A,                               // pieces (field 1, LEN), 10 bytes:
    0x0A, 0x01, 'a',                          //   piece "a"
    0x15, 0x00, 0x00, 0x00, 0x3F,             //   score (field 2, I32) 0x3F000000 = 0.5f
    0x18, 0x01,                               //   type NORMAL
    0x0A, 0x09,                               // pieces, 9 bytes:
    0x0A, 0x05, '<',  'u',  'n',  'k',  '>',  // piece "<unk>", no score (0)
    0x18, 0x02,                               // type UNKNOWN
    0x12, 0x14,                               // trainer_spec (field 2, LEN), 20 bytes:
    0x18, 0x02,                               //   model_type BPE
    0x98, 0x02, 0x01,                         //   byte_fallback (field 35) true
    0xD8, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,  // pad_id (43) -1
    0xC0, 0x02, 0x03,                                                        // unk_id (40) 3
    0x1A, 0x02, 0x18, 0x00,  // normalizer_spec: add_dummy_prefix false
});

TEST(RefSpmModel, HandWrittenBytes) {
    const RefSpmModel model = parse_ref_spm_model(kHandModel);
    ASSERT_EQ(model.pieces.size(), 2u);
    EXPECT_EQ(model.pieces[0].text, "a");
    EXPECT_EQ(model.pieces[0].score, 0.5f);
    EXPECT_EQ(model.pieces[0].type, 1);
    EXPECT_EQ(model.pieces[1].text, "<unk>");
    EXPECT_EQ(model.pieces[1].score, 0.0f);
    EXPECT_EQ(model.pieces[1].type, 2);
    EXPECT_EQ(model.model_type, 2);
    EXPECT_TRUE(model.byte_fallback);
    EXPECT_EQ(model.pad_id, -1);
    EXPECT_EQ(model.unk_id, 3);
    EXPECT_EQ(model.bos_id, 1);  // proto2 defaults where the file says nothing
    EXPECT_EQ(model.eos_id, 2);
    EXPECT_FALSE(model.add_dummy_prefix);
    EXPECT_TRUE(model.remove_extra_whitespaces);
}

TEST(RefSpmModel, DefaultsAndUnknownFieldsSkipped) {
    // One piece with an unknown field 9 (I64) in it, an unknown top-level field 4 (LEN), no specs.
    const RefSpmModel model = parse_ref_spm_model(
        bytes_of({0x0A, 0x0C, 0x0A, 0x01, 'b', 0x49, 1, 2, 3, 4, 5, 6, 7, 8, 0x22, 0x01, 0x00}));
    ASSERT_EQ(model.pieces.size(), 1u);
    EXPECT_EQ(model.pieces[0].text, "b");
    EXPECT_EQ(model.pieces[0].type, 1);
    EXPECT_EQ(model.model_type, 1);  // UNIGRAM
    EXPECT_FALSE(model.byte_fallback);
    EXPECT_TRUE(model.add_dummy_prefix);
}

std::string refusal(const std::string& bytes, uint64_t max_pieces = kMaxRefSpmPieces) {
    try {
        parse_ref_spm_model(bytes, "dir/tokenizer.model", max_pieces);
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        const std::string text = e.what();
        EXPECT_NE(text.find("dir/tokenizer.model"), std::string::npos) << text;
        EXPECT_EQ(text.find('\n'), std::string::npos) << text;  // one line
        return text;
    }
    return "(accepted)";
}

TEST(RefSpmModel, HostileBytesFailInOneLine) {
    EXPECT_NE(refusal(bytes_of({0x0A, 0x80})).find("truncated varint"), std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x80})).find("truncated varint"), std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x0A, 0x05, 'a'})).find("says 5 bytes, but 1 remain"),
              std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}))
                  .find("remain"),
              std::string::npos);  // a length of 2^64 - 1
    EXPECT_NE(
        refusal(bytes_of({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}))
            .find("varint"),
        std::string::npos);  // eleven bytes
    EXPECT_NE(refusal(bytes_of({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02}))
                  .find("over 64 bits"),
              std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x0B})).find("wire type 3"), std::string::npos);  // a group
    EXPECT_NE(refusal(bytes_of({0x08, 0x01})).find("pieces (field 1) has wire type 0"),
              std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x00, 0x00})).find("field number 0"), std::string::npos);
    // Inside a piece: the error names the piece.
    EXPECT_NE(refusal(bytes_of({0x0A, 0x03, 0x0A, 0x05, 'a'})).find("pieces[0]"),
              std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x0A, 0x02, 0x15, 0x00})).find("pieces[0]"), std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x12, 0x02, 0x18, 0x80})).find("trainer_spec"), std::string::npos);
    EXPECT_NE(refusal(bytes_of({0x1A, 0x01, 0x1B})).find("normalizer_spec"), std::string::npos);
    EXPECT_NE(refusal("").find("pieces"), std::string::npos);  // no pieces at all
    // A piece count over the cap fails before the pieces are stored.
    std::string many;
    for (int i = 0; i < 1001; ++i) many += bytes_of({0x0A, 0x00});
    EXPECT_NE(refusal(many, 1000).find("more than 1000 pieces"), std::string::npos);
    EXPECT_EQ(parse_ref_spm_model(many, "tokenizer.model", 1001).pieces.size(), 1001u);
}

TEST(RefSpmModel, AgreesWithLibSentencePieceOnATrainedModel) {
    test::ScratchDir dir;
    const auto text = dir.path() / "train.txt";
    test::write_file(text,
                     "the quick brown fox jumps over the lazy dog\n"
                     "a small model reads the text and turns words into tokens\n"
                     "the sun rises in the east and sets in the west\n");
    const auto prefix = (dir.path() / "m").string();
    ASSERT_TRUE(sentencepiece::SentencePieceTrainer::Train(
                    "--input=" + text.string() + " --model_prefix=" + prefix +
                    " --model_type=bpe --vocab_size=300 --byte_fallback=true"
                    " --user_defined_symbols=<sep> --control_symbols=<ctl>"
                    " --add_dummy_prefix=false --minloglevel=2")
                    .ok());
    std::ifstream in(prefix + ".model", std::ios::binary);
    std::ostringstream raw;
    raw << in.rdbuf();
    const RefSpmModel model = parse_ref_spm_model(raw.str());
    sentencepiece::SentencePieceProcessor processor;
    ASSERT_TRUE(processor.Load(prefix + ".model").ok());
    ASSERT_EQ(model.pieces.size(), static_cast<size_t>(processor.GetPieceSize()));
    EXPECT_EQ(model.model_type, 2);
    EXPECT_TRUE(model.byte_fallback);
    EXPECT_FALSE(model.add_dummy_prefix);
    int bytes = 0, user_defined = 0;
    for (int id = 0; id < processor.GetPieceSize(); ++id) {
        const RefSpmPiece& piece = model.pieces[static_cast<size_t>(id)];
        ASSERT_EQ(piece.text, processor.IdToPiece(id)) << id;
        ASSERT_EQ(piece.score, processor.GetScore(id)) << id;
        ASSERT_EQ(piece.type == 2, processor.IsUnknown(id)) << id;
        ASSERT_EQ(piece.type == 3, processor.IsControl(id)) << id;
        ASSERT_EQ(piece.type == 6, processor.IsByte(id)) << id;
        ASSERT_EQ(piece.type == 5, processor.IsUnused(id)) << id;
        bytes += piece.type == 6;
        if (piece.type == 4) {
            ++user_defined;
            EXPECT_EQ(piece.text, "<sep>");
        }
    }
    EXPECT_EQ(bytes, 256);
    EXPECT_EQ(user_defined, 1);
}

}  // namespace
}  // namespace rebox::verify_ref
