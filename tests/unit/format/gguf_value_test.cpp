// GGUF values: type table (docs/gguf.md §1.3), factories, strict accessors (llama.cpp's loader
// rejects a key of the wrong type, §1.7) and the short rendering `inspect` prints.
#include "rebox/gguf_value.hpp"

#include <gtest/gtest.h>

namespace rebox {
namespace {

TEST(GgufValue, TypeNamesAndSizesFollowTheTable) {
    EXPECT_EQ(gguf_type_name(GgufType::UINT8), "UINT8");
    EXPECT_EQ(gguf_type_name(GgufType::FLOAT32), "FLOAT32");
    EXPECT_EQ(gguf_type_name(GgufType::ARRAY), "ARRAY");
    EXPECT_EQ(gguf_type_name(GgufType::FLOAT64), "FLOAT64");
    EXPECT_EQ(gguf_scalar_size(GgufType::INT16), 2u);
    EXPECT_EQ(gguf_scalar_size(GgufType::BOOL), 1u);
    EXPECT_EQ(gguf_scalar_size(GgufType::UINT64), 8u);
    EXPECT_EQ(gguf_scalar_size(GgufType::STRING), 0u);
    EXPECT_EQ(gguf_scalar_size(GgufType::ARRAY), 0u);
}

TEST(GgufValue, AccessorsAreStrictAboutTheStoredType) {
    const GgufValue u32 = GgufValue::u32(151643);
    EXPECT_EQ(u32.type, GgufType::UINT32);
    EXPECT_EQ(u32.as_u32(), 151643u);
    EXPECT_FALSE(u32.as_i32().has_value());
    EXPECT_FALSE(u32.as_u16().has_value());
    EXPECT_EQ(u32.as_integer(), 151643);
    EXPECT_FALSE(GgufValue::u64(5).as_u32().has_value());
    EXPECT_EQ(GgufValue::u16(7).as_u16(), 7u);
    EXPECT_EQ(GgufValue::i32(-3).as_i32(), -3);
    EXPECT_EQ(GgufValue::i64(-3).as_integer(), -3);
    EXPECT_FALSE(GgufValue::u64(~0ull).as_integer().has_value());
    EXPECT_EQ(GgufValue::f32(1e-6f).as_f32(), 1e-6f);
    EXPECT_FALSE(GgufValue::f64(1.0).as_f32().has_value());
    EXPECT_EQ(GgufValue::boolean(true).as_bool(), true);
    EXPECT_FALSE(GgufValue::u8(1).as_bool().has_value());
    ASSERT_NE(GgufValue::str("qwen2").as_string(), nullptr);
    EXPECT_EQ(*GgufValue::str("qwen2").as_string(), "qwen2");
    EXPECT_EQ(GgufValue::u32(1).as_string(), nullptr);
    EXPECT_FALSE(GgufValue::str("1").as_integer().has_value());

    const GgufValue types = GgufValue::i32_array({1, 3, 6});
    EXPECT_TRUE(types.is_array());
    EXPECT_EQ(types.elem_type, GgufType::INT32);
    EXPECT_EQ(types.array, (std::vector<GgufScalar>{int64_t{1}, int64_t{3}, int64_t{6}}));
    EXPECT_FALSE(types.as_i32().has_value());
    EXPECT_EQ(GgufValue::f32_array({0.5f}).array[0], GgufScalar{0.5});
}

TEST(GgufValue, ToStringQuotesCutsAndShowsTheFirstItems) {
    EXPECT_EQ(gguf_value_to_string(GgufValue::u32(28)), "28");
    EXPECT_EQ(gguf_value_to_string(GgufValue::i32(-1)), "-1");
    EXPECT_EQ(gguf_value_to_string(GgufValue::f32(1e-6f)),
              "1e-06");  // shortest float, not the double
    EXPECT_EQ(gguf_value_to_string(GgufValue::f64(0.5)), "0.5");
    EXPECT_EQ(gguf_value_to_string(GgufValue::boolean(false)), "false");
    EXPECT_EQ(gguf_value_to_string(GgufValue::str("qwen3")), "'qwen3'");
    EXPECT_EQ(gguf_value_to_string(GgufValue::str("a\nb'c")), "'a\\nb\\'c'");
    EXPECT_EQ(gguf_value_to_string(GgufValue::str(std::string(61, 'x'))),
              "'" + std::string(60, 'x') + "'...");
    EXPECT_EQ(gguf_value_to_string(GgufValue::string_array({"a", "b", "c", "d", "e", "f", "g"})),
              "[STRING] x7: 'a', 'b', 'c', 'd', 'e', 'f', ...");
    EXPECT_EQ(gguf_value_to_string(GgufValue::i32_array({1, 2})), "[INT32] x2: 1, 2");
    EXPECT_EQ(gguf_value_to_string(GgufValue::array_of(GgufType::UINT8, {})), "[UINT8] x0:");
}

}  // namespace
}  // namespace rebox
