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

#include "test_paths.hpp"

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

int run(const std::string& command) {
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CliBlocker, EveryDefectFixtureIsRefusedWithCountedUniqueBlockers) {
    const fs::path dir =
        fs::temp_directory_path() / ("rebox-cli-blocker-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    // Tensor and reason per defect, from tools/mkfixture/README.md and docs/mcq-v1.md.
    const std::vector<DefectCase> cases = {
        {"group16", "layers.0.self_attn.q_proj.weight", "group 16 is not a multiple of 32"},
        {"bits5", "layers.0.self_attn.q_proj.weight", "bits 5", " --outtype q4_1"},
        {"bytecount", "layers.0.self_attn.q_proj.weight", ".qcodes has 2047 bytes"},
        {"metadata-lie", "layers.0.self_attn.q_proj.weight", "config.json implies [64, 64]"},
        {"metadata-lie-counts", "layers.0.self_attn.q_proj.weight", ".qcodes has 2048 bytes"},
        {"padding", "layers.0.self_attn.padding_probe.weight", "non-zero padding bits"},
        {"unknown-name", "layers.0.mlp.extra_proj.weight", "no llama.cpp name"},
        {"no-merges", "tokenizer.json", "merges"},
    };
    for (const DefectCase& c : cases) {
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
            EXPECT_TRUE(unique.insert(lines[i]).second)
                << c.defect << ": listed twice: " << lines[i];
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
        for (const auto& entry : fs::directory_iterator(dir))
            EXPECT_EQ(entry.path().filename().string().find(".rebox-tmp-"), std::string::npos)
                << c.defect << ": " << entry.path();
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace rebox
