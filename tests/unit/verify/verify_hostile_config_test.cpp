// `rebox verify` on a good file with a hostile config.json beside the checkpoint: each huge count
// is refused by verify's own parser (ref_config) in one line naming config.json and the key, exit
// 1, well under a second, before anything is sized from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

TEST(VerifyHostileConfig, HugeCountsFailInOneLineNamingTheKey) {
    test::ScratchDir scratch;
    const fs::path model = scratch.path() / "model", gguf = scratch.path() / "out.gguf";
    ASSERT_EQ(test::run_mkfixture(model, "--preset tiny --arch qwen3"), 0);
    const auto convert = test::run(test::quoted(test::rebox_cli()) + " convert " +
                                   test::quoted(model) + " -o " + test::quoted(gguf) + " -q");
    ASSERT_EQ(convert.exit_code, 0) << convert.output;
    nlohmann::json original;
    std::ifstream(model / "config.json") >> original;
    for (const auto& [key, value] :
         std::vector<std::pair<std::string, uint64_t>>{{"num_hidden_layers", 1000000000},
                                                       {"num_attention_heads", 4000000000},
                                                       {"head_dim", 1000000},
                                                       {"num_experts", 4000000000},
                                                       {"vocab_size", 2000000000},
                                                       {"intermediate_size", 3000000000}}) {
        nlohmann::json edited = original;
        edited[key] = value;
        std::ofstream(model / "config.json", std::ios::trunc) << edited.dump();
        const auto start = std::chrono::steady_clock::now();
        const auto result = test::run(test::quoted(test::rebox_cli()) + " verify " +
                                      test::quoted(model) + " " + test::quoted(gguf));
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_EQ(result.exit_code, 1) << key << ": " << result.output;
        EXPECT_NE(result.err.find("config.json: " + key + ":"), std::string::npos)
            << key << ": " << result.err;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_LT(seconds, 1.0) << key;
    }
    std::ofstream(model / "config.json", std::ios::trunc) << original.dump();
    EXPECT_EQ(test::run(test::quoted(test::rebox_cli()) + " verify " + test::quoted(model) + " " +
                        test::quoted(gguf))
                  .exit_code,
              0);
}

}  // namespace
}  // namespace rebox
