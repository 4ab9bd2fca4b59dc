// verify's expectations must not come from the writer's code, or a mistake there would agree with
// itself. Every file of src/verify/, in every subfolder: no src/model/ tokenizer header
// (tokenizer_vocab, tokenizer_spm, tokenizer_special) or the writer's read_tokenizer; no header of
// the writer's pipeline (plan/, encode/, quantize/ other than the i-quant grid data, convert/,
// source/ other than the opened checkpoint folder ModelDir that convert hands over).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_paths.hpp"

namespace rebox {
namespace {

// Each regular file under src/verify/ (recursively) with its text.
std::vector<std::pair<std::filesystem::path, std::string>> verify_sources() {
    std::vector<std::pair<std::filesystem::path, std::string>> out;
    const auto verify_dir = test::source_dir() / "src" / "verify";
    for (const auto& entry : std::filesystem::recursive_directory_iterator(verify_dir)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path());
        std::ostringstream text;
        text << in.rdbuf();
        out.emplace_back(std::filesystem::relative(entry.path(), verify_dir), text.str());
    }
    return out;
}

TEST(VerifyTokenizerIndependence, NoWriterTokenizerCodeInVerify) {
    const auto sources = verify_sources();
    size_t nested = 0;
    for (const auto& [path, source] : sources) {
        if (path.has_parent_path()) ++nested;
        for (const char* banned :
             {"model/tokenizer", "\"tokenizer_vocab.hpp\"", "\"tokenizer_spm.hpp\"",
              "read_tokenizer(", "read_sentencepiece_model(", "TokenizerVocab"})
            EXPECT_EQ(source.find(banned), std::string::npos) << path << " uses " << banned;
    }
    EXPECT_GT(sources.size(), 90u);  // the folder was found, subfolders included
    EXPECT_GT(nested, 80u);
}

TEST(VerifyTokenizerIndependence, NoWriterPipelineCodeInVerify) {
    const std::string kModelDir = "#include \"source/model_dir.hpp\"";
    // The one quantize/ header verify may read: the i-quant grid points, constant data without
    // code (checked against ggml's dequantizers by iquant_oracle_test), never the writer's
    // searches or neighbour tables.
    const std::string kGridData = "#include \"quantize/iq_grid_data.hpp\"";
    for (const auto& [path, source] : verify_sources()) {
        for (const char* banned :
             {"#include \"plan/", "#include \"encode/", "#include \"convert/", "#include \"../"})
            EXPECT_EQ(source.find(banned), std::string::npos) << path << " includes " << banned;
        for (size_t at = source.find("#include \"quantize/"); at != std::string::npos;
             at = source.find("#include \"quantize/", at + 1))
            EXPECT_EQ(source.compare(at, kGridData.size(), kGridData), 0)
                << path << " includes a quantize/ header other than iq_grid_data.hpp";
        for (size_t at = source.find("#include \"source/"); at != std::string::npos;
             at = source.find("#include \"source/", at + 1))
            EXPECT_EQ(source.compare(at, kModelDir.size(), kModelDir), 0)
                << path << " includes a source/ header other than model_dir.hpp";
    }
}

}  // namespace
}  // namespace rebox
