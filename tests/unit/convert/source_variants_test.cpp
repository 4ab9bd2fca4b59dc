// The same checkpoint stored three ways (one file, 3 shards behind an index, "model."-prefixed
// names) must convert to the same GGUF: same tensors, same bytes (the names map to the same
// llama.cpp names).
#include <gtest/gtest.h>

#include "format/gguf_file.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

TEST(ConvertSourceVariants, ShardedAndPrefixedCheckpointsGiveTheSameGguf) {
    const test::ScratchDir scratch;
    const fs::path dir = scratch.path();
    auto convert = [&](const std::string& name, const std::string& fixture_args) {
        const fs::path model = dir / name;
        const fs::path gguf = dir / (name + ".gguf");
        const auto made = test::run(quoted(test::mkfixture_cli()) + " " + quoted(model) +
                                    " --preset tiny --tokenizer small " + fixture_args);
        EXPECT_EQ(made.exit_code, 0) << made.output;
        const auto converted = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) +
                                         " -o " + quoted(gguf) + " --quiet --name tiny");
        EXPECT_EQ(converted.exit_code, 0) << converted.output;
        return gguf;
    };
    const fs::path plain = convert("plain", "");
    const fs::path sharded = convert("sharded", "--shards 3");
    const fs::path prefixed = convert("prefixed", "--prefix-model");
    ASSERT_TRUE(fs::exists(dir / "sharded" / "model.safetensors.index.json"));

    const auto reference = GgufFile::open(plain);
    ASSERT_EQ(reference->tensors().size(), 24u);
    for (const fs::path& other : {sharded, prefixed}) {
        SCOPED_TRACE(other.filename().string());
        const auto file = GgufFile::open(other);
        ASSERT_EQ(file->tensors().size(), reference->tensors().size());
        for (size_t i = 0; i < file->tensors().size(); ++i) {
            const auto& a = reference->tensors()[i];
            const auto& b = file->tensors()[i];
            EXPECT_EQ(a, b) << a.name;
            const auto da = reference->tensor_data(a);
            const auto db = file->tensor_data(b);
            EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end())) << a.name;
        }
        EXPECT_EQ(file->kvs(), reference->kvs());
    }
}

}  // namespace
}  // namespace rebox
