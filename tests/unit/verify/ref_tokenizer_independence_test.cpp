// verify's expected tokenizer KVs must not come from the writer's tokenizer code, or a mistake
// there would agree with itself: no file of src/verify/ includes a src/model/ tokenizer header
// (tokenizer_vocab, tokenizer_spm, tokenizer_special) or names the writer's read_tokenizer.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_paths.hpp"

namespace rebox {
namespace {

TEST(VerifyTokenizerIndependence, NoWriterTokenizerCodeInVerify) {
    const auto verify_dir = test::source_dir() / "src" / "verify";
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(verify_dir)) {
        std::ifstream in(entry.path());
        std::ostringstream text;
        text << in.rdbuf();
        const std::string source = text.str();
        ++files;
        for (const char* banned :
             {"model/tokenizer", "\"tokenizer_vocab.hpp\"", "\"tokenizer_spm.hpp\"",
              "read_tokenizer(", "read_sentencepiece_model(", "TokenizerVocab"})
            EXPECT_EQ(source.find(banned), std::string::npos)
                << entry.path().filename() << " uses " << banned;
    }
    EXPECT_GT(files, 20u);  // the folder was found
}

}  // namespace
}  // namespace rebox
