// The converter's name heuristics (gguf-py get_model_id_components / id_to_title), worked by hand
// from metadata.py's rules: split at '-', annotate versions, quant types, sizes and finetunes, the
// basename the leading words, a size far from the real count a finetune.
#include "model/model_id_parts.hpp"

#include <gtest/gtest.h>

namespace rebox {
namespace {

TEST(ModelIdParts, HuggingFaceIdWithSizeFinetuneVersion) {
    // "Qwen3" basename (no type, starts with a letter), "0.6B" size, "Instruct" finetune, "v2"
    // version after the basename ended.
    const ModelIdParts parts = model_id_parts("Qwen/Qwen3-0.6B-Instruct-v2", 0);
    EXPECT_EQ(parts.organization, "Qwen");
    EXPECT_EQ(parts.full_name, "Qwen3-0.6B-Instruct-v2");
    EXPECT_EQ(parts.basename, "Qwen3");
    EXPECT_EQ(parts.size_label, "0.6B");
    EXPECT_EQ(parts.finetune, "Instruct");
    EXPECT_EQ(parts.version, "v2");
}

TEST(ModelIdParts, LowercaseSizeIsNormalizedAndBloomNotationRewritten) {
    EXPECT_EQ(model_id_parts("llama-7b", 0).size_label, "7B");
    EXPECT_EQ(model_id_parts("bloom-7b1", 0).size_label, "7.1B");
    EXPECT_EQ(model_id_parts("Mixtral-8x7b-v0.1", 0).size_label, "8x7B");
    EXPECT_EQ(model_id_parts("Mixtral-8x7b-v0.1", 0).version, "v0.1");
}

TEST(ModelIdParts, SizeFarFromTheParameterCountBecomesAFinetune) {
    // 7 * 1e9 parameters: "32k" (32000) differs by more than 7/8 of them -> finetune, lower case.
    const ModelIdParts parts = model_id_parts("Llama-7B-32K", 7'000'000'000);
    EXPECT_EQ(parts.size_label, "7B");
    EXPECT_EQ(parts.finetune, "32k");
    EXPECT_EQ(parts.basename, "Llama");
    // With 600k parameters, "0.6B" is far too (|6e8 - 6e5| > 7 * 6e5 / 8).
    const ModelIdParts tiny = model_id_parts("Qwen3-0.6B", 600'000);
    EXPECT_EQ(tiny.size_label, std::nullopt);
    EXPECT_EQ(tiny.finetune, "0.6b");
}

TEST(ModelIdParts, AmbiguousNameHasNoBasename) {
    // No size, finetune or version: "too ambiguous", basename dropped.
    const ModelIdParts parts = model_id_parts("tiny", 0);
    EXPECT_EQ(parts.full_name, "tiny");
    EXPECT_EQ(parts.basename, std::nullopt);
    EXPECT_EQ(model_id_parts("my-model", 0).basename, std::nullopt);
}

TEST(ModelIdParts, SentenceDotOrgAndQuantType) {
    const ModelIdParts sentence = model_id_parts("My Model 7B", 0);
    EXPECT_EQ(sentence.full_name, "My Model 7B");
    EXPECT_EQ(sentence.size_label, std::nullopt);
    EXPECT_EQ(model_id_parts("../x-7B", 0).organization, std::nullopt);
    // q4_k_m is a quant type (upper-cased, not a finetune); "small" loses its size annotation
    // beside a number and, unannotated at the start, joins the basename.
    const ModelIdParts quant = model_id_parts("foo-small-7B-q4_k_m", 0);
    EXPECT_EQ(quant.size_label, "7B");
    EXPECT_EQ(quant.finetune, std::nullopt);
    EXPECT_EQ(quant.basename, "foo-small");
}

TEST(ModelIdParts, VersionInsideTheBasenameStaysThere) {
    // "3" is a version at the start -> part of the basename; "v2" trailing after the finetune.
    const ModelIdParts parts = model_id_parts("phi-3-mini-v2", 0);
    EXPECT_EQ(parts.basename, "phi-3");
    EXPECT_EQ(parts.size_label, "mini");
    EXPECT_EQ(parts.version, "v2");
}

TEST(IdToTitle, PythonTitleCasingOfLowercaseWords) {
    EXPECT_EQ(id_to_title("qwen3-0.6b-instruct-v2"), "Qwen3 0.6b Instruct v2");
    EXPECT_EQ(id_to_title("Qwen3-0.6B"), "Qwen3 0.6B");
    EXPECT_EQ(id_to_title("ultrachat_200k"), "Ultrachat_200K");  // title() raises after '_', '0'
    EXPECT_EQ(id_to_title("  open-orca  "), "Open Orca");
    EXPECT_EQ(id_to_title("HuggingFaceH4"), "HuggingFaceH4");  // not all lower case: kept
    EXPECT_EQ(python_title("they're bill's"), "They'Re Bill'S");
}

}  // namespace
}  // namespace rebox
