// write_gguf(): the whole file on disk equals the hand-assembled bytes of docs/gguf.md-style
// layout (metadata, data, zero padding after every tensor incl. the last), and it is atomic.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "format/gguf_layout.hpp"
#include "format/gguf_test_bytes.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

GgufLayout small_layout() {
    GgufLayout layout;
    layout.add_kv("general.architecture", GgufValue::str("qwen3"));
    layout.add_kv("qwen3.block_count", GgufValue::u32(28));
    layout.add_kv("tokenizer.ggml.tokens", GgufValue::string_array({"a", "bc"}));
    layout.add_tensor("t.q41", {64, 4}, GgmlType::Q4_1);
    layout.add_tensor("t.f32", {5}, GgmlType::F32);
    return layout;
}

// The data small_file() holds: t.q41 = 0..159, t.f32 = 200..219.
void fill_small(size_t index, std::span<uint8_t> out) {
    ASSERT_EQ(out.size(), index == 0 ? 160u : 20u);
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<uint8_t>((index == 0 ? 0 : 200) + i);
}

TEST(GgufWrite, FileEqualsHandAssembledBytes) {
    const test::ScratchDir scratch;
    const fs::path dir = scratch.path();
    const fs::path target = dir / "small.gguf";
    write_gguf(target, small_layout(), fill_small, false);
    EXPECT_EQ(test::read_file_bytes(target), test::small_file());

    // No overwrite without permission; the existing file and the directory stay as they were.
    try {
        write_gguf(
            target, small_layout(), [](size_t, std::span<uint8_t>) {}, false);
        ADD_FAILURE() << "overwrote an existing file";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
    }
    EXPECT_EQ(test::read_file_bytes(target), test::small_file());
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);

    // A failing fill leaves no file behind.
    const fs::path other = dir / "other.gguf";
    EXPECT_THROW(write_gguf(
                     other, small_layout(),
                     [](size_t i, std::span<uint8_t>) {
                         if (i == 1) throw Error(ExitClass::input, "fill failed");
                     },
                     false),
                 Error);
    EXPECT_FALSE(fs::exists(other));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace rebox
