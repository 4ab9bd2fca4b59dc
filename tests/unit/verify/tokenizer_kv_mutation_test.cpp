// End to end: `rebox verify` checks the tokenizer KVs of a SentencePiece vocabulary (a tiny fixture
// whose only tokenizer is a tokenizer.model trained here with libsentencepiece's trainer): the
// converted file verifies, and a copy with one score changed, add_space_prefix flipped, one token
// type changed or the tokenizer model renamed fails (exit 3) naming the key.
#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <functional>
#include <memory>

#include "format/gguf_file.hpp"
#include "format/gguf_layout.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

class VerifySentencePieceKvs : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        scratch_ = std::make_unique<test::ScratchDir>();
        work_ = scratch_->path();
        model_ = work_ / "model";
        gguf_ = work_ / "out.gguf";
        const auto fixture = test::run(quoted(test::mkfixture_cli()) + " " + quoted(model_) +
                                       " --preset tiny --tokenizer none");
        ASSERT_EQ(fixture.exit_code, 0) << fixture.output;
        const fs::path text = work_ / "train.txt";
        test::write_file(text, bytes_of("the quick brown fox jumps over the lazy dog\n"
                                        "a small model reads the text and turns words into "
                                        "tokens\nthe sun rises in the east and sets in the "
                                        "west\n"));
        const auto status = sentencepiece::SentencePieceTrainer::Train(
            "--input=" + text.string() + " --model_prefix=" + (model_ / "tokenizer").string() +
            " --vocab_size=300 --model_type=bpe --byte_fallback=true --minloglevel=2");
        ASSERT_TRUE(status.ok()) << status.ToString();
        const auto convert = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model_) +
                                       " -o " + quoted(gguf_) + " --no-verify -q");
        ASSERT_EQ(convert.exit_code, 0) << convert.output;
    }
    static void TearDownTestSuite() { scratch_.reset(); }

    static std::vector<uint8_t> bytes_of(const std::string& text) {
        return std::vector<uint8_t>(text.begin(), text.end());
    }

    // Verifies a copy of the converted GGUF whose KVs `edit` changed (tensors kept).
    static test::RunResult verify_edited(
        const std::function<void(const GgufFile&, GgufLayout&)>& edit) {
        const auto file = GgufFile::open(gguf_);
        GgufLayout layout;
        for (const GgufKV& kv : file->kvs()) layout.add_kv(kv.key, kv.value);
        edit(*file, layout);
        for (const GgufTensorInfo& t : file->tensors()) layout.add_tensor(t.name, t.ne, t.type);
        std::vector<uint8_t> bytes = layout.serialize_metadata();
        bytes.resize(layout.file_size(), 0);
        for (size_t i = 0; i < file->tensors().size(); ++i) {
            const auto data = file->tensor_data(file->tensors()[i]);
            std::copy(data.begin(), data.end(),
                      bytes.begin() + layout.data_offset() + layout.tensors()[i].offset);
        }
        const fs::path mutated = work_ / "mutated.gguf";
        test::write_file(mutated, bytes);
        return test::run(quoted(test::rebox_cli()) + " verify " + quoted(model_) + " " +
                         quoted(mutated));
    }

    static void expect_fails_naming(const test::RunResult& result, const std::string& key) {
        EXPECT_EQ(result.exit_code, 3) << result.output;
        EXPECT_NE(result.output.find(key), std::string::npos) << result.output;
    }

    static inline std::unique_ptr<test::ScratchDir> scratch_;  // removed in TearDownTestSuite
    static inline fs::path work_, model_, gguf_;
};

TEST_F(VerifySentencePieceKvs, ConvertedFileVerifiesWithScores) {
    const auto file = GgufFile::open(gguf_);
    const GgufValue* scores = file->find("tokenizer.ggml.scores");
    ASSERT_NE(scores, nullptr);
    EXPECT_EQ(scores->elem_type, GgufType::FLOAT32);
    EXPECT_EQ(scores->array.size(), 512u);  // the 300 pieces padded to the tiny vocab_size
    const auto result = verify_edited([](const GgufFile&, GgufLayout&) {});
    EXPECT_EQ(result.exit_code, 0) << result.output;
}

TEST_F(VerifySentencePieceKvs, ChangedScore) {
    expect_fails_naming(verify_edited([](const GgufFile& file, GgufLayout& layout) {
                            GgufValue scores = *file.find("tokenizer.ggml.scores");
                            scores.array[280] = std::get<double>(scores.array[280]) - 0.5;
                            layout.set_kv("tokenizer.ggml.scores", scores);
                        }),
                        "tokenizer.ggml.scores");
}

TEST_F(VerifySentencePieceKvs, FlippedSpacePrefix) {
    expect_fails_naming(verify_edited([](const GgufFile&, GgufLayout& layout) {
                            layout.set_kv("tokenizer.ggml.add_space_prefix",
                                          GgufValue::boolean(false));
                        }),
                        "tokenizer.ggml.add_space_prefix");
}

TEST_F(VerifySentencePieceKvs, ChangedTokenTypeOrModel) {
    expect_fails_naming(verify_edited([](const GgufFile& file, GgufLayout& layout) {
                            GgufValue types = *file.find("tokenizer.ggml.token_type");
                            types.array[5] = int64_t{1};  // <0x02>: BYTE -> NORMAL
                            layout.set_kv("tokenizer.ggml.token_type", types);
                        }),
                        "tokenizer.ggml.token_type");
    expect_fails_naming(verify_edited([](const GgufFile&, GgufLayout& layout) {
                            layout.set_kv("tokenizer.ggml.model", GgufValue::str("gpt2"));
                        }),
                        "tokenizer.ggml.model");
}

}  // namespace
}  // namespace rebox
