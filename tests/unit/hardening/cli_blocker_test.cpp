// `rebox convert` on every mkfixture defect (mcq-v1 "What a reader must refuse" and the Q4_1
// carry rules): exit 2, a first line "rebox: DIR: N BLOCKER(s): ..." whose N is the number of
// BLOCKER lines that follow, each BLOCKER listed once, the defect's tensor named, nothing written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

struct DefectCase {
    std::string defect, tensor, reason;
    std::string convert_flags;  // bits5 is refused only when Q4_1 is the one block type allowed
};

std::vector<std::string> lines_of(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

int run(const std::string& command) { return test::run(command).exit_code; }

void PrintTo(const DefectCase& c, std::ostream* os) { *os << c.defect; }

// One case per defect; `Defects/CliBlocker.IsRefusedWithCountedUniqueBlockers/<defect>`.
class CliBlocker : public ::testing::TestWithParam<DefectCase> {};

TEST_P(CliBlocker, IsRefusedWithCountedUniqueBlockers) {
    const DefectCase& c = GetParam();
    const test::ScratchDir dir;
    const fs::path model = dir / c.defect;
    ASSERT_EQ(run("'" + test::mkfixture_cli().string() + "' '" + model.string() +
                  "' --preset tiny --tokenizer small --defect " + c.defect + " >/dev/null"),
              0)
        << c.defect;
    const fs::path out = dir / (c.defect + ".gguf");
    const fs::path err = dir / (c.defect + ".err");
    const int code =
        run("'" + test::rebox_cli().string() + "' convert '" + model.string() + "' -o '" +
            out.string() + "' --quiet" + c.convert_flags + " 2>'" + err.string() + "'");
    EXPECT_EQ(code, 2) << c.defect;
    const std::vector<std::string> lines = lines_of(err);
    ASSERT_FALSE(lines.empty()) << c.defect;
    std::set<std::string> unique;
    bool named = false;
    for (size_t i = 1; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].rfind("BLOCKER ", 0), 0u) << c.defect << ": " << lines[i];
        EXPECT_TRUE(unique.insert(lines[i]).second) << c.defect << ": listed twice: " << lines[i];
        if (lines[i].rfind("BLOCKER " + c.tensor + ": ", 0) == 0 &&
            lines[i].find(c.reason) != std::string::npos)
            named = true;
    }
    EXPECT_TRUE(named) << c.defect << ": no BLOCKER for " << c.tensor << " with '" << c.reason
                       << "'";
    const size_t n = lines.size() - 1;
    const std::string head = "rebox: " + model.string() + ": " + std::to_string(n) +
                             (n == 1 ? " BLOCKER: " : " BLOCKERs: ");
    EXPECT_EQ(lines[0].rfind(head, 0), 0u) << c.defect << ": " << lines[0];
    EXPECT_FALSE(fs::exists(out)) << c.defect;
    for (const auto& entry : fs::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().find(".rebox-tmp-"), std::string::npos)
            << c.defect << ": " << entry.path();
}

// Tensor and reason per defect, from tools/mkfixture/README.md and docs/mcq-v1.md.
INSTANTIATE_TEST_SUITE_P(
    Defects, CliBlocker,
    ::testing::Values(
        DefectCase{"group16", "layers.0.self_attn.q_proj.weight",
                   "group 16 is not a multiple of 32"},
        DefectCase{"bits5", "layers.0.self_attn.q_proj.weight", "bits 5", " --outtype q4_1"},
        DefectCase{"bytecount", "layers.0.self_attn.q_proj.weight", ".qcodes has 2047 bytes"},
        DefectCase{"metadata-lie", "layers.0.self_attn.q_proj.weight",
                   "config.json implies [64, 64]"},
        DefectCase{"metadata-lie-counts", "layers.0.self_attn.q_proj.weight",
                   ".qcodes has 2048 bytes"},
        DefectCase{"padding", "layers.0.self_attn.padding_probe.weight", "non-zero padding bits"},
        DefectCase{"unknown-name", "layers.0.mlp.extra_proj.weight", "no llama.cpp name"},
        DefectCase{"no-merges", "tokenizer.json", "merges"}),
    [](const ::testing::TestParamInfo<DefectCase>& info) {
        std::string name = info.param.defect;
        for (char& ch : name)
            if (ch == '-') ch = '_';
        return name;
    });

}  // namespace
}  // namespace rebox
