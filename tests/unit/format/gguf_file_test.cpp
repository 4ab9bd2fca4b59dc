// The strict GGUF reader on hand-assembled files: a valid file with every offset worked out by hand
// from docs/gguf.md §1.1-§1.5, and one broken file per rule of §1.6/§8 with the message it must
// give.
#include "format/gguf_file.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "format/gguf_test_bytes.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

using test::GgufBytes;

using test::small_file;

TEST(GgufFile, HandAssembledFileParses) {
    const std::vector<uint8_t> bytes = small_file();
    // The first bytes match the gguf-py dump in docs/gguf.md §1.1 (except n_tensors/n_kv).
    const std::vector<uint8_t> head = {0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 2,  0, 0, 0, 0, 0, 0, 0,
                                       3,    0,    0,    0,    0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_TRUE(std::equal(head.begin(), head.end(), bytes.begin()));

    const auto f = GgufFile::parse(bytes, "small.gguf");
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->alignment(), 32u);
    EXPECT_EQ(f->meta_end(), 248u);
    EXPECT_EQ(f->data_offset(), 256u);
    EXPECT_EQ(f->file_size(), 448u);
    ASSERT_EQ(f->kvs().size(), 3u);
    EXPECT_EQ(f->kvs()[0].key, "general.architecture");
    ASSERT_NE(f->kvs()[0].value.as_string(), nullptr);
    EXPECT_EQ(*f->kvs()[0].value.as_string(), "qwen3");
    EXPECT_EQ(f->find("qwen3.block_count")->as_u32(), 28u);
    EXPECT_FALSE(f->find("qwen3.block_count")->as_i32().has_value());  // strict typing
    const GgufValue* tokens = f->find("tokenizer.ggml.tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_EQ(tokens->elem_type, GgufType::STRING);
    ASSERT_EQ(tokens->array.size(), 2u);
    EXPECT_EQ(std::get<std::string>(tokens->array[1]), "bc");
    EXPECT_EQ(f->find("missing"), nullptr);

    ASSERT_EQ(f->tensors().size(), 2u);
    const GgufTensorInfo& q = f->tensors()[0];
    EXPECT_EQ(q.name, "t.q41");
    EXPECT_EQ(q.ne, (std::vector<int64_t>{64, 4}));
    EXPECT_EQ(q.type, GgmlType::Q4_1);
    EXPECT_EQ(q.offset, 0u);
    EXPECT_EQ(q.nbytes, 160u);
    EXPECT_EQ(q.element_count(), 256u);
    const GgufTensorInfo* t = f->find_tensor("t.f32");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->offset, 160u);
    EXPECT_EQ(t->nbytes, 20u);
    const auto data = f->tensor_data(*t);
    ASSERT_EQ(data.size(), 20u);
    EXPECT_EQ(data[0], 200);
    EXPECT_EQ(data.data(), bytes.data() + 256 + 160);
    EXPECT_EQ(f->tensor_data(q)[159], 159);
}

TEST(GgufFile, AcceptsVersion2CustomAlignmentEmptyArrayAndNoTensors) {
    GgufBytes b;
    b.header(1, 2, 2);
    b.str("general.alignment").u32(4).u32(64);
    b.str("empty").u32(9).u32(5).u64(0);
    b.tensor("x", {16}, 0, 0);  // 24+(8+17+4+4)+(8+5+4+4+8)+(8+1+4+8+4+8) = 119 -> data at 128
    ASSERT_EQ(b.v.size(), 119u);
    b.pad(64).fill(64, 7);
    const auto f = GgufFile::parse(b.v, "a64.gguf");
    EXPECT_EQ(f->version(), 2u);
    EXPECT_EQ(f->alignment(), 64u);
    EXPECT_EQ(f->data_offset(), 128u);
    EXPECT_TRUE(f->find("empty")->array.empty());

    GgufBytes h;
    h.header(0, 0);
    const auto g = GgufFile::parse(h.v, "header-only.gguf");
    EXPECT_EQ(g->tensors().size(), 0u);
    EXPECT_EQ(g->kvs().size(), 0u);
}

TEST(GgufFile, OpenReadsAFileAndNamesItInErrors) {
    const test::ScratchDir dir;
    const auto path = dir / "rebox_gguf_file_test.gguf";
    const std::vector<uint8_t> bytes = small_file();
    {
        FILE* out = std::fopen(path.c_str(), "wb");
        ASSERT_NE(out, nullptr);
        std::fwrite(bytes.data(), 1, bytes.size(), out);
        std::fclose(out);
    }
    const auto f = GgufFile::open(path);
    EXPECT_EQ(f->display_name(), path.string());
    EXPECT_EQ(f->tensors().size(), 2u);
    // The last tensor's padding is not required (as llama.cpp's loader): 447 bytes still hold all
    // data.
    const auto write_prefix = [&](size_t size) {
        FILE* out = std::fopen(path.c_str(), "wb");
        ASSERT_NE(out, nullptr);
        std::fwrite(bytes.data(), 1, size, out);
        std::fclose(out);
    };
    write_prefix(447);
    EXPECT_EQ(GgufFile::open(path)->file_size(), 447u);
    write_prefix(435);  // t.f32 occupies bytes 416..435
    try {
        GgufFile::open(path);
        ADD_FAILURE() << "accepted a file cut inside the last tensor";
    } catch (const Error& e) {
        EXPECT_EQ(
            std::string(e.what()).rfind(path.string() + ": tensor 't.f32': data (20 bytes", 0), 0u)
            << e.what();
    }
}

struct CorruptCase {
    const char* name;
    std::function<std::vector<uint8_t>()> build;
    const char* message;
};

GgufBytes one_tensor_file(const std::vector<int64_t>& ne, uint32_t type, uint64_t offset = 0) {
    GgufBytes b;
    b.header(1, 0).tensor("t", ne, type, offset).pad();
    return b;
}

std::vector<CorruptCase> corrupt_cases() {
    const int64_t i32max = 2147483647;
    return {
        {"bad_magic", [] { return GgufBytes{}.raw("FUGG").u32(3).i64(0).i64(0).v; },
         "bad.gguf: magic: not a GGUF file (starts with 'FUGG') (expected 'GGUF')"},
        {"short_magic", [] { return GgufBytes{}.raw("GG").v; },
         "bad.gguf: magic: truncated at byte 0"},
        {"version_0", [] { return GgufBytes{}.header(0, 0, 0).v; },
         "version: 0 is not a GGUF version"},
        {"version_1", [] { return GgufBytes{}.header(0, 0, 1).v; },
         "version: GGUFv1 is no longer supported"},
        {"version_4", [] { return GgufBytes{}.header(0, 0, 4).v; },
         "version: 4 is not supported (expected 2 or 3)"},
        {"version_swapped", [] { return GgufBytes{}.header(0, 0, 0x03000000).v; }, "byte-swapped"},
        {"header_truncated", [] { return GgufBytes{}.raw("GGUF").u32(3).u32(0).v; },
         "bad.gguf: tensor_count: truncated at byte 8"},
        {"n_tensors_negative", [] { return GgufBytes{}.header(-1, 0).v; },
         "tensor_count: -1 is negative"},
        {"n_kv_negative", [] { return GgufBytes{}.header(0, -1).v; }, "kv_count: -1 is negative"},
        {"n_tensors_huge", [] { return GgufBytes{}.header(1000000000000, 0).fill(64, 0).v; },
         "tensor_count: 1000000000000 tensor infos cannot fit in the 64 bytes"},
        {"n_kv_huge", [] { return GgufBytes{}.header(0, INT64_MAX).fill(64, 0).v; },
         "kv_count: 9223372036854775807 pairs cannot fit"},
        {"key_length_huge", [] { return GgufBytes{}.header(0, 1).u64(~0ull).fill(32, 0).v; },
         "kv[0] key: string length 18446744073709551615 exceeds 1 GiB"},
        {"key_past_eof", [] { return GgufBytes{}.header(0, 1).u64(100).raw("abcdefgh").u32(4).v; },
         "kv[0] key: truncated at byte 32"},
        {"empty_key", [] { return GgufBytes{}.header(0, 1).str("").u32(4).u32(1).v; },
         "kv[0] key: empty key"},
        {"invalid_value_type", [] { return GgufBytes{}.header(0, 1).str("k").u32(13).u32(1).v; },
         "bad.gguf: k: invalid value type 13 (expected 0..12)"},
        {"nested_array", [] { return GgufBytes{}.header(0, 1).str("k").u32(9).u32(9).u64(0).v; },
         "k: invalid array element type 9 (nested arrays are not supported)"},
        {"array_elem_type_13",
         [] { return GgufBytes{}.header(0, 1).str("k").u32(9).u32(13).u64(0).v; },
         "k: invalid array element type 13"},
        {"duplicate_key",
         [] { return GgufBytes{}.header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2).v; },
         "bad.gguf: a.b: duplicate key"},
        {"alignment_13", [] { return GgufBytes{}.header(0, 1).kv_u32("general.alignment", 13).v; },
         "general.alignment: 13 is not a power of two (expected a non-zero power of two)"},
        {"alignment_0", [] { return GgufBytes{}.header(0, 1).kv_u32("general.alignment", 0).v; },
         "general.alignment: 0 is not a power of two"},
        {"alignment_u8",
         [] {
             return GgufBytes{}.header(0, 1).str("general.alignment").u32(0).u8(32).fill(8, 0).v;
         },
         "general.alignment: has type UINT8 (expected UINT32)"},
        {"value_truncated", [] { return GgufBytes{}.header(0, 1).str("k").u32(4).raw("ab").v; },
         "bad.gguf: k: truncated at byte 37"},
        {"string_past_eof",
         [] { return GgufBytes{}.header(0, 1).str("k").u32(8).u64(50).raw("short").v; },
         "k: truncated at byte 45 (expected 50 more bytes"},
        {"array_past_eof",
         [] { return GgufBytes{}.header(0, 1).str("k").u32(9).u32(4).u64(1000).fill(40, 0).v; },
         "k: array of 1000 elements needs at least 4000 bytes"},
        {"string_array_past_eof",
         [] { return GgufBytes{}.header(0, 1).str("k").u32(9).u32(8).u64(10).fill(40, 0).v; },
         "k: array of 10 elements needs at least 80 bytes"},
        {"array_too_long",
         [] { return GgufBytes{}.header(0, 1).str("k").u32(9).u32(0).u64((1ull << 30) + 1).v; },
         "k: array of 1073741825 elements exceeds 1Gi"},
        // 6,710,887 one-byte elements fit the file but would decode to 40 bytes each (> 256 MiB).
        {"array_memory_budget",
         [] {
             const uint64_t n = (256ull << 20) / 40 + 1;
             return GgufBytes{}.header(0, 1).str("k").u32(9).u32(0).u64(n).fill(n, 7).v;
         },
         "k: the header would need more than 256 MiB of memory once decoded (268435481 bytes so "
         "far) (expected smaller metadata arrays)"},
        {"name_64_bytes",
         [] {
             GgufBytes b;
             b.header(1, 0).tensor(std::string(64, 'n'), {8}, 0, 0).pad().fill(32, 0);
             return b.v;
         },
         "bad.gguf: tensor[0] name: "
         "'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn' is 64 bytes "
         "long (expected at most 63 bytes)"},
        {"n_dims_5",
         [] { return GgufBytes{}.header(1, 0).str("t").u32(5).fill(48, 1).u32(0).u64(0).v; },
         "tensor 't': n_dims = 5 (expected 1..4)"},
        {"n_dims_0",
         [] { return GgufBytes{}.header(1, 0).str("t").u32(0).u32(0).u64(0).fill(16, 0).v; },
         "tensor 't': n_dims = 0 (expected 1..4)"},
        {"ne_negative",
         [] {
             return one_tensor_file({32, -1}, 0).v;
         },
         "tensor 't': ne[1] = -1 is negative"},
        {"ne_zero",
         [] {
             return one_tensor_file({0, 4}, 0).v;
         },
         "tensor 't': ne[0] = 0 is a zero-sized"},
        {"ne_overflow",
         [=] {
             return one_tensor_file({4 * i32max, 4 * i32max, 4 * i32max}, 24).v;
         },
         "tensor 't': element count overflows int64 at ne[1]"},
        {"nbytes_overflow", [] { return one_tensor_file({int64_t{1} << 62}, 0).v; },
         "tensor 't': byte size of 4611686018427387904 F32 elements overflows 64 bits"},
        {"type_43", [] { return one_tensor_file({32}, 43).v; },
         "tensor 't': type id 43 is unknown (expected 0..42)"},
        {"type_negative", [] { return one_tensor_file({32}, 0xFFFFFFFFu).v; },
         "type id 4294967295 is unknown"},
        {"type_removed_4", [] { return one_tensor_file({32}, 4).v; },
         "tensor 't': type id 4 was removed"},
        {"type_removed_31", [] { return one_tensor_file({32}, 31).v; }, "type id 31 was removed"},
        {"ne0_not_block_multiple",
         [] {
             return one_tensor_file({48, 2}, 3).v;
         },
         "tensor 't': ne[0] = 48 is not a multiple of the Q4_1 block size 32"},
        {"offset_minus_1", [] { return one_tensor_file({8}, 0, ~0ull).fill(32, 0).v; },
         "tensor 't': offset 18446744073709551615 is not canonical (expected 0,"},
        {"offset_alignment_1",  // offsets computed with alignment 1 while the file says 32
         [] {
             GgufBytes b;
             b.header(2, 0).tensor("a", {5}, 0, 0).tensor("b", {8}, 0, 20).pad().fill(96, 0);
             return b.v;
         },
         "tensor 'b': offset 20 is not canonical (expected 32,"},
        {"duplicate_tensor_name",
         [] {
             GgufBytes b;
             b.header(2, 0).tensor("a", {8}, 0, 0).tensor("a", {8}, 0, 32).pad().fill(64, 0);
             return b.v;
         },
         "bad.gguf: tensor 'a': duplicate tensor name"},
        {"data_one_byte_short", [] { return one_tensor_file({8}, 0).fill(31, 0).v; },
         "tensor 't': data (32 bytes at data offset 0) runs past the end of the file"},
        {"second_tensor_missing",
         [] {
             GgufBytes b;
             b.header(2, 0).tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 32).pad().fill(32, 0);
             return b.v;
         },
         "tensor 'b': data (32 bytes at data offset 32) runs past the end"},
        {"data_section_past_eof", [] { return GgufBytes{}.header(1, 0).tensor("t", {8}, 0, 0).v; },
         "data section: starts at byte 64, past the end of the file"},
        {"tensor_info_truncated",
         [] { return GgufBytes{}.header(1, 0).str("t").u32(2).i64(8).i64(2).fill(3, 0).v; },
         "tensor 't': truncated at byte 53"},
    };
}

TEST(GgufFile, CorruptFileTableCoversEveryRule) { EXPECT_GE(corrupt_cases().size(), 25u); }

void PrintTo(const CorruptCase& c, std::ostream* os) { *os << c.name; }

// One case per broken rule: `CorruptFiles/GgufFileCorrupt.IsRejectedWithTheRuleItBreaks/<name>`.
class GgufFileCorrupt : public ::testing::TestWithParam<CorruptCase> {};

TEST_P(GgufFileCorrupt, IsRejectedWithTheRuleItBreaks) {
    const CorruptCase& c = GetParam();
    const std::vector<uint8_t> bytes = c.build();
    try {
        GgufFile::parse(bytes, "bad.gguf");
        ADD_FAILURE() << c.name << ": accepted";
    } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(c.message), std::string::npos)
            << c.name << ": got \"" << message << "\", want \"" << c.message << "\"";
        EXPECT_EQ(e.exit_class(), ExitClass::input) << c.name;
        EXPECT_EQ(message.find('\n'), std::string::npos) << c.name;
        EXPECT_EQ(message.rfind("bad.gguf: ", 0), 0u) << c.name << ": " << message;
    } catch (const std::exception& e) {
        ADD_FAILURE() << c.name << ": wrong exception type: " << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(CorruptFiles, GgufFileCorrupt, ::testing::ValuesIn(corrupt_cases()),
                         [](const ::testing::TestParamInfo<CorruptCase>& info) {
                             return std::string(info.param.name);
                         });

TEST(GgufFile, ValidOneTensorFileIsAcceptedSoTheCorruptCasesAreMinimal) {
    // The base shape of the corrupt cases, unbroken: header 24 + info (8+1+4+8+4+8) = 57 -> data
    // at 64.
    GgufBytes b = one_tensor_file({8}, 0);
    b.fill(32, 0);
    const auto f = GgufFile::parse(b.v, "ok.gguf");
    EXPECT_EQ(f->data_offset(), 64u);
    EXPECT_EQ(f->tensors()[0].nbytes, 32u);
}

TEST(GgufFile, KeysWithControlCharactersStayOnOneLine) {
    GgufBytes b;
    b.header(0, 2).kv_u32("a\nb", 1).kv_u32("a\nb", 1);
    try {
        GgufFile::parse(b.v, "bad.gguf");
        ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "bad.gguf: a\\x0ab: duplicate key");
    }
}

TEST(GgufFile, RandomCorruptionsGiveErrorsOrValidFilesNeverCrashes) {
    // Flip, overwrite and truncate the hand-made file; every outcome must be a parsed file whose
    // tensors lie inside the image, or a rebox::Error (anything else escapes and fails the test).
    const std::vector<uint8_t> original = small_file();
    std::mt19937 rng(7);
    size_t rejected = 0;
    for (int round = 0; round < 3000; ++round) {
        std::vector<uint8_t> bytes = original;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            const size_t at = rng() % 256;  // the metadata block
            bytes[at] =
                (rng() % 2) ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(bytes[at] ^ 0x80);
        }
        if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
        try {
            const auto f = GgufFile::parse(bytes, "fuzz.gguf");
            for (const GgufTensorInfo& t : f->tensors()) {
                const auto data = f->tensor_data(t);
                ASSERT_GE(data.data(), bytes.data());
                ASSERT_LE(data.data() + data.size(), bytes.data() + bytes.size());
            }
        } catch (const Error& e) {
            ++rejected;
            ASSERT_EQ(std::string(e.what()).rfind("fuzz.gguf: ", 0), 0u) << e.what();
        }
    }
    EXPECT_GT(rejected, 1000u);
}

}  // namespace
}  // namespace rebox
