// verify on real conversions of GPTQ / AWQ / compressed-tensors fixtures (rebox-mkfixture's own
// packers, `rebox convert`): the files verify (N/N), and one flipped code bit in the first block
// with a non-zero scale of any quantized tensor, whatever type the converter chose (Q4_0, Q4_1,
// Q5_0, Q8_0), fails verify naming that tensor and the block's first index (ggml block layouts,
// docs/gguf.md §2.2: the first qs byte follows d (Q4_0, Q8_0), d|m (Q4_1) or d|qh (Q5_0)).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "format/gguf_file.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

struct BlockLayout {
    uint64_t bytes, first_qs;
};
// ggml type -> (block bytes, offset of qs[0]).
const std::map<GgmlType, BlockLayout> kBlocks = {{GgmlType::Q4_0, {18, 2}},
                                                 {GgmlType::Q4_1, {20, 4}},
                                                 {GgmlType::Q5_0, {22, 6}},
                                                 {GgmlType::Q8_0, {34, 2}}};

void check_format(const std::string& name, const std::string& flags,
                  const std::set<GgmlType>& expected_types) {
    const test::ScratchDir scratch(name);
    const fs::path work = scratch.path();
    const fs::path model = work / "model", gguf = work / "out.gguf";
    ASSERT_EQ(test::run(quoted(test::mkfixture_cli()) + " " + quoted(model) +
                        " --preset tiny --tokenizer small " + flags)
                  .exit_code,
              0);
    const auto converted = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) +
                                     " -o " + quoted(gguf) + " --no-verify -q");
    ASSERT_EQ(converted.exit_code, 0) << converted.output;
    const auto clean =
        test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " + quoted(gguf));
    ASSERT_EQ(clean.exit_code, 0) << clean.output;
    EXPECT_NE(clean.output.find("re-encoded tensors bit-identical: 14/14, max abs error 0.0"),
              std::string::npos)
        << clean.output;

    const auto file = GgufFile::open(gguf);
    const std::vector<uint8_t> original = test::read_file_bytes(gguf);
    std::map<GgmlType, int> mutated_per_type;
    for (const GgufTensorInfo& t : file->tensors()) {
        const auto layout = kBlocks.find(t.type);
        if (layout == kBlocks.end()) continue;
        const uint64_t base = file->data_offset() + t.offset;
        uint64_t block = 0;
        while ((original[base + block * layout->second.bytes] |
                (original[base + block * layout->second.bytes + 1] & 0x7f) << 8) == 0)
            ++block;  // d = +-0: the codes do not matter there
        std::vector<uint8_t> bytes = original;
        bytes[base + block * layout->second.bytes + layout->second.first_qs] ^= 0x01;
        const fs::path mutated = work / "mutated.gguf";
        test::write_file(mutated, bytes);
        const auto result = test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " +
                                      quoted(mutated));
        EXPECT_EQ(result.exit_code, 3) << t.name << "\n" << result.output;
        EXPECT_NE(result.output.find("MISMATCH " + t.name + " ("), std::string::npos)
            << result.output;
        EXPECT_NE(result.output.find("1 values differ, first at index " +
                                     std::to_string(block * 32) + ":"),
                  std::string::npos)
            << t.name << "\n"
            << result.output;
        ++mutated_per_type[t.type];
    }
    int total = 0;
    std::set<GgmlType> types;
    for (const auto& [type, count] : mutated_per_type) total += count, types.insert(type);
    EXPECT_EQ(total, 14) << name;  // 2 layers x 7 projections
    EXPECT_EQ(types, expected_types) << name;
}

TEST(VerifyPrequantConverted, AwqAsymmetricQ4_0Q4_1Q5_0) {
    check_format("awq", "--format awq --asym", {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0});
}

TEST(VerifyPrequantConverted, Gptq3BitLlamaQ4_0) {
    check_format("gptq3", "--format gptq --bits 3 --asym --arch llama --desc-act blocks",
                 {GgmlType::Q4_0});
}

TEST(VerifyPrequantConverted, CompressedTensorsInt8Q8_0) {
    check_format("ct_int8", "--format compressed-tensors --ct-format int-quantized --bits 8 --asym",
                 {GgmlType::Q8_0});
}

}  // namespace
}  // namespace rebox
