// `rebox convert` on llama fixtures made wrong in one place (config.json or a tensor name): each is
// refused with exit 2, a first line counting the BLOCKER lines that follow, one BLOCKER naming the
// tensor or config field and the reason, and no output file. Reasons are the ones
// docs/architectures.md gives: q/k rows must be whole heads of even size, every tensor of the
// graph present, rope_scaling a type llama.cpp's converter writes, model_type a supported one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

int run(const std::string& command) { return test::run(command).exit_code; }

std::vector<std::string> lines_of(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

void edit_config(const fs::path& model, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json config;
    std::ifstream(model / "config.json") >> config;
    edit(config);
    std::ofstream(model / "config.json") << config.dump(2);
}

// Renames a tensor in model.safetensors by replacing its name (same length) everywhere in the
// file's header, the mcq metadata included; the data offsets stay valid.
void rename_tensor(const fs::path& model, const std::string& from, const std::string& to) {
    ASSERT_EQ(from.size(), to.size());
    const fs::path file = model / "model.safetensors";
    std::string bytes = test::read_file(file);
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i) header = header << 8 | static_cast<uint8_t>(bytes[i]);
    int replaced = 0;
    for (size_t at = bytes.find(from, 8); at != std::string::npos && at < 8 + header;
         at = bytes.find(from, at + 1), ++replaced)
        bytes.replace(at, from.size(), to);
    ASSERT_GT(replaced, 0);
    test::write_file(file, bytes);
}

struct BadInput {
    std::string name;
    std::function<void(const fs::path&)> spoil;
    std::string subject;  // what the BLOCKER line names
    std::string reason;
};

std::vector<BadInput> bad_inputs() {
    return {
        {"heads-do-not-divide",
         [](const fs::path& m) {
             edit_config(m, [](nlohmann::json& c) {
                 c["num_attention_heads"] = 3;  // 64 q rows are not 3 heads of head_dim 16
                 c["num_key_value_heads"] = 1;
             });
         },
         "layers.0.self_attn.q_proj.weight", "config.json implies [64, 48]"},
        {"odd-head-dim",
         [](const fs::path& m) {
             edit_config(m, [](nlohmann::json& c) {
                 c["num_attention_heads"] = 64;  // every shape agrees, but heads of 1 row
                 c["num_key_value_heads"] = 32;
                 c["head_dim"] = 1;
             });
         },
         "layers.0.self_attn.k_proj.weight", "the head size 1 is odd"},
        {"missing-q",
         [](const fs::path& m) {
             rename_tensor(m, "layers.1.self_attn.q_proj", "layers.1.self_attn.x_proj");
         },
         "blk.1.attn_q.weight", "the llama graph requires blk.1.attn_q.weight"},
        {"unknown-rope-scaling",
         [](const fs::path& m) {
             edit_config(m, [](nlohmann::json& c) { c["rope_scaling"]["rope_type"] = "yarn"; });
         },
         "config.json: rope_scaling", "rope_scaling type 'yarn' is not supported for llama"},
        {"unknown-model-type",
         [](const fs::path& m) {
             edit_config(m, [](nlohmann::json& c) { c["model_type"] = "t5"; });
         },
         "config.json: model_type",
         "model_type 't5' is not supported (supported: qwen3, qwen2, llama, mistral"},
    };
}

void PrintTo(const BadInput& c, std::ostream* os) { *os << c.name; }

// One case per bad input; `BadInputs/CliLlamaBlocker.IsOneBlockerLineAndNoOutput/<name>`.
class CliLlamaBlocker : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliLlamaBlocker, IsOneBlockerLineAndNoOutput) {
    const BadInput& c = GetParam();
    const test::ScratchDir dir;
    const fs::path model = dir / c.name;
    ASSERT_EQ(run("'" + test::mkfixture_cli().string() + "' '" + model.string() +
                  "' --preset tiny --arch llama >/dev/null"),
              0);
    c.spoil(model);
    const fs::path out = dir / (c.name + ".gguf");
    const fs::path err = dir / (c.name + ".err");
    EXPECT_EQ(run("'" + test::rebox_cli().string() + "' convert '" + model.string() + "' -o '" +
                  out.string() + "' --quiet 2>'" + err.string() + "'"),
              2);
    const std::vector<std::string> lines = lines_of(err);
    ASSERT_FALSE(lines.empty());
    bool named = false;
    for (size_t i = 1; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].rfind("BLOCKER ", 0), 0u) << lines[i];
        named |= lines[i].rfind("BLOCKER " + c.subject + ": ", 0) == 0 &&
                 lines[i].find(c.reason) != std::string::npos;
    }
    EXPECT_TRUE(named) << "no BLOCKER " << c.subject << " with '" << c.reason << "' in:\n"
                       << [&] {
                              std::string all;
                              for (const auto& l : lines) all += l + "\n";
                              return all;
                          }();
    const size_t n = lines.size() - 1;
    EXPECT_EQ(lines[0].rfind("rebox: " + model.string() + ": " + std::to_string(n) +
                                 (n == 1 ? " BLOCKER: " : " BLOCKERs: "),
                             0),
              0u)
        << lines[0];
    EXPECT_FALSE(fs::exists(out));
}

INSTANTIATE_TEST_SUITE_P(BadInputs, CliLlamaBlocker, ::testing::ValuesIn(bad_inputs()),
                         [](const ::testing::TestParamInfo<BadInput>& info) {
                             std::string name = info.param.name;
                             for (char& ch : name)
                                 if (ch == '-') ch = '_';
                             return name;
                         });

}  // namespace
}  // namespace rebox
