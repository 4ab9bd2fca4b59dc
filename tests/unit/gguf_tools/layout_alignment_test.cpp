// GgufLayout with an explicit alignment (what `rebox meta` uses to keep a file's
// general.alignment): offsets, data offset and file size worked out by hand, and the key accepted
// only as a UINT32 equal to the layout's alignment.
#include <gtest/gtest.h>

#include "format/gguf_file.hpp"
#include "format/gguf_layout.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

TEST(LayoutAlignment, OffsetsAndDataSectionFollowTheExplicitAlignment) {
    GgufLayout layout(64);
    layout.add_kv("general.alignment", GgufValue::u32(64));
    layout.add_tensor("t1", {5}, GgmlType::F32);  // F32, 20 bytes
    layout.add_tensor("t2", {3}, GgmlType::F32);  // F32, 12 bytes
    // header 24; KV 8+17+4+4 = 33 -> 57; each tensor info 8+2+4+8+4+8 = 34 -> 91, 125.
    EXPECT_EQ(layout.metadata_size(), 125u);
    EXPECT_EQ(layout.data_offset(), 128u);
    EXPECT_EQ(layout.tensors()[1].offset, 64u);
    EXPECT_EQ(layout.file_size(), 128u + 64u + 64u);
    const std::vector<uint8_t> meta = layout.serialize_metadata();
    ASSERT_EQ(meta.size(), 128u);
    // The strict reader agrees once the data is appended.
    std::vector<uint8_t> file = meta;
    file.resize(layout.file_size(), 0);
    const auto parsed = GgufFile::parse(file, "aligned.gguf");
    EXPECT_EQ(parsed->alignment(), 64u);
    EXPECT_EQ(parsed->data_offset(), 128u);
    EXPECT_EQ(parsed->tensors()[1].offset, 64u);
}

TEST(LayoutAlignment, TheKeyMustMatchAndThePlainLayoutRefusesIt) {
    EXPECT_THROW(GgufLayout{48}, Error);
    EXPECT_THROW(GgufLayout{0}, Error);
    GgufLayout layout(64);
    EXPECT_THROW(layout.add_kv("general.alignment", GgufValue::u32(32)), Error);
    EXPECT_THROW(layout.add_kv("general.alignment", GgufValue::u64(64)), Error);
    GgufLayout plain;
    EXPECT_THROW(plain.add_kv("general.alignment", GgufValue::u32(32)), Error);
    EXPECT_EQ(plain.alignment(), 32u);
}

}  // namespace
}  // namespace rebox
