// verify's own mcq-v1 metadata reading: the spec's example is accepted, every refusal rule of the
// spec gives a problem line naming the tensor.
#include "verify/sources/mcq_metadata.hpp"

#include <gtest/gtest.h>

namespace rebox::verify_ref {
namespace {

TEST(VerifyMcqMetadata, SpecExampleParses) {
    std::vector<std::string> problems;
    const mcq::FileMetadata meta = mcq::parse_file_metadata(
        R"({"version": 1, "tensors": {
          "layers.0.self_attn.q_proj.weight": {"bits": 4, "group": 64, "layout": "lsb0", "shape": [2048, 1024]},
          "embed_tokens.weight": {"bits": 3, "group": 64, "layout": "lsb0", "shape": [151669, 1024]}}})",
        "m.safetensors", problems);
    EXPECT_TRUE(problems.empty());
    ASSERT_EQ(meta.entries.size(), 2u);
    const mcq::Entry& q = meta.entries.at("layers.0.self_attn.q_proj.weight");
    EXPECT_EQ(q.bits, 4u);
    EXPECT_EQ(q.group, 64u);
    EXPECT_EQ(q.shape, (std::vector<int64_t>{2048, 1024}));
    EXPECT_EQ(q.element_count, 2048u * 1024u);
    EXPECT_EQ(meta.entries.at("embed_tokens.weight").bits, 3u);
}

TEST(VerifyMcqMetadata, RefusalsBecomeProblemsNamingTheTensor) {
    const char* bad_entries[] = {
        R"({"bits": 9, "group": 32, "layout": "lsb0", "shape": [4, 32]})",
        R"({"bits": 0, "group": 32, "layout": "lsb0", "shape": [4, 32]})",
        R"({"group": 32, "layout": "lsb0", "shape": [4, 32]})",
        R"({"bits": 4, "group": 0, "layout": "lsb0", "shape": [4, 32]})",
        R"({"bits": 4, "group": 32, "layout": "msb0", "shape": [4, 32]})",
        R"({"bits": 4, "group": 32, "shape": [4, 32]})",
        R"({"bits": 4, "group": 32, "layout": "lsb0", "shape": [128]})",
        R"({"bits": 4, "group": 32, "layout": "lsb0", "shape": [4, 0]})",
        R"({"bits": 4, "group": 48, "layout": "lsb0", "shape": [1, 64]})",  // 64 % 48 != 0
        R"({"bits": "4", "group": 32, "layout": "lsb0", "shape": [4, 32]})",
    };
    for (const char* entry : bad_entries) {
        std::vector<std::string> problems;
        const std::string json =
            std::string(R"({"version": 1, "tensors": {"w.weight": )") + entry + "}}";
        const mcq::FileMetadata meta = mcq::parse_file_metadata(json, "m.safetensors", problems);
        EXPECT_TRUE(meta.entries.empty()) << entry;
        ASSERT_EQ(problems.size(), 1u) << entry;
        EXPECT_NE(problems[0].find("m.safetensors: w.weight: "), std::string::npos) << problems[0];
    }
}

TEST(VerifyMcqMetadata, WrongVersionOrNotJson) {
    for (const char* text : {R"({"version": 2, "tensors": {}})", R"({"tensors": {}})", "not json",
                             R"({"version": 1})", "[1]"}) {
        std::vector<std::string> problems;
        mcq::parse_file_metadata(text, "m.safetensors", problems);
        EXPECT_EQ(problems.size(), 1u) << text;
    }
}

}  // namespace
}  // namespace rebox::verify_ref
