// verify's own architecture records (src/verify/arch/): every architecture the writer supports has
// one, under the same GGUF name, and no other file of src/verify/ names an architecture: a new
// family is its file there plus one line of ref_registry.cpp. The writer's registry is read here,
// by the test only, to learn which names to look for.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "arch/architecture.hpp"
#include "test_paths.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/sources/ref_config.hpp"

namespace rebox {
namespace {

TEST(VerifyArchRegistry, EveryWriterArchitectureHasAVerifyRecord) {
    size_t checked = 0;
    for (const arch::Architecture* writer : arch::all_architectures()) {
        const verify_ref::RefArch* by_gguf = verify_ref::find_ref_arch(writer->gguf_arch);
        ASSERT_NE(by_gguf, nullptr) << writer->gguf_arch;
        EXPECT_EQ(by_gguf->gguf_arch, writer->gguf_arch);
        for (const std::string_view model_type : writer->model_types) {
            const verify_ref::RefArch* own = verify_ref::find_ref_arch(model_type);
            ASSERT_NE(own, nullptr) << model_type;
            EXPECT_EQ(own->gguf_arch, writer->gguf_arch) << model_type;
            ++checked;
        }
    }
    EXPECT_GE(checked, 16u);
    EXPECT_EQ(verify_ref::find_ref_arch("deepseek_v4"), nullptr);
}

TEST(VerifyArchRegistry, EmbeddingGemmaIsChosenByArchitectures) {
    const std::string widths =
        R"("hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 128,
           "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
           "vocab_size": 256, "sliding_window": 512)";
    const auto embedding = verify_ref::parse_ref_config(
        R"({"model_type": "gemma3_text", "architectures": ["Gemma3TextModel"], )" + widths + "}");
    EXPECT_EQ(embedding.model_type, "gemma-embedding");
    EXPECT_EQ(embedding.max_position_embeddings, 131072u);  // Gemma3TextConfig's default
    const auto causal = verify_ref::parse_ref_config(
        R"({"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"], )" + widths + "}");
    EXPECT_EQ(causal.model_type, "gemma3_text");
    EXPECT_EQ(verify_ref::find_ref_arch(causal.model_type)->gguf_arch, "gemma3");
}

// A line naming a tokenizer kind (tokenizer.ggml.model "llama" / "bert", pre "qwen2"), not an
// architecture.
bool names_a_tokenizer_kind(const std::string& line) {
    for (const char* mark : {".model", "WordPiece", "SentencePiece", "kDigitRules"})
        if (line.find(mark) != std::string::npos) return true;
    return false;
}

TEST(VerifyArchRegistry, OnlyTheArchitectureFilesNameArchitectures) {
    std::set<std::string> names;
    for (const arch::Architecture* writer : arch::all_architectures()) {
        names.emplace(writer->gguf_arch);
        for (const std::string_view model_type : writer->model_types) names.emplace(model_type);
    }
    const auto verify_dir = test::source_dir() / "src" / "verify";
    size_t files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(verify_dir)) {
        if (!entry.is_regular_file()) continue;
        const auto relative = std::filesystem::relative(entry.path(), verify_dir);
        // verify/arch/: the records (one file per architecture) and the one list.
        if (relative.parent_path() == "arch" && relative.extension() == ".cpp" &&
            relative.filename() != "expected_shapes.cpp" &&
            relative.filename() != "ref_transforms.cpp")
            continue;
        ++files;
        std::ifstream in(entry.path());
        std::string line;
        for (size_t number = 1; std::getline(in, line); ++number) {
            if (names_a_tokenizer_kind(line)) continue;
            for (const std::string& name : names)
                EXPECT_EQ(line.find("\"" + name + "\""), std::string::npos)
                    << relative << ":" << number << " names the architecture \"" << name
                    << "\" (put it in its file in src/verify/arch/)";
        }
    }
    EXPECT_GT(files, 80u);  // the folder and its subfolders were found
}

}  // namespace
}  // namespace rebox
