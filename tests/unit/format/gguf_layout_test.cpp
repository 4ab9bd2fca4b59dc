// The GGUF writer (GgufLayout): byte-exact against a hand-assembled file, offsets against the
// docs/gguf.md §1.5 example, and a randomized round trip through the strict reader with expected
// sizes computed here from the §1.3/§1.4 encodings (not taken from the writer).
#include "format/gguf_layout.hpp"

#include <gtest/gtest.h>

#include <random>

#include "format/gguf_file.hpp"
#include "format/gguf_test_bytes.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

TEST(GgufLayout, SerializeMetadataEqualsHandAssembledBytes) {
    GgufLayout layout;
    layout.add_kv("general.architecture", GgufValue::str("qwen3"));
    layout.add_kv("qwen3.block_count", GgufValue::u32(28));
    layout.add_kv("tokenizer.ggml.tokens", GgufValue::string_array({"a", "bc"}));
    layout.add_tensor("t.q41", {64, 4}, GgmlType::Q4_1);
    layout.add_tensor("t.f32", {5}, GgmlType::F32);
    EXPECT_EQ(layout.metadata_size(), 248u);
    EXPECT_EQ(layout.data_offset(), 256u);
    EXPECT_EQ(layout.file_size(), 448u);
    ASSERT_EQ(layout.tensors().size(), 2u);
    EXPECT_EQ(layout.tensors()[0].nbytes, 160u);
    EXPECT_EQ(layout.tensors()[1].offset, 160u);
    EXPECT_EQ(layout.tensors()[1].nbytes, 20u);

    const std::vector<uint8_t> expected = test::small_file();
    const std::vector<uint8_t> metadata = layout.serialize_metadata();
    ASSERT_EQ(metadata.size(), 256u);
    EXPECT_TRUE(std::equal(metadata.begin(), metadata.end(), expected.begin()));
}

TEST(GgufLayout, OffsetsOfTheThreeTensorExample) {
    // docs/gguf.md §1.5: Q4_1 4x64 (160 B), F32 4x64 (1024 B), F32 5 (20 B) -> offsets 0, 160,
    // 1184; the data section is 1568 - 352 = 1216 bytes (the last tensor padded to 32).
    GgufLayout layout;
    layout.add_kv("general.architecture", GgufValue::str("qwen3"));
    layout.add_tensor("t.q41", {64, 4}, GgmlType::Q4_1);
    layout.add_tensor("t.f32", {64, 4}, GgmlType::F32);
    layout.add_tensor("t.f32b", {5}, GgmlType::F32);
    EXPECT_EQ(layout.tensors()[1].offset, 160u);
    EXPECT_EQ(layout.tensors()[2].offset, 1184u);
    EXPECT_EQ(layout.file_size() - layout.data_offset(), 1216u);
    // 24 + (8+20+4+8+5) + (8+5+4+16+4+8) + (8+5+4+16+4+8) + (8+6+4+8+4+8) = 24+45+45+45+38 = 197 ->
    // 224
    EXPECT_EQ(layout.metadata_size(), 197u);
    EXPECT_EQ(layout.data_offset(), 224u);
}

// Encoded size of one value per §1.3, computed independently of the writer.
uint64_t encoded_size(GgufType type, const GgufScalar& s) {
    switch (type) {
        case GgufType::UINT8:
        case GgufType::INT8:
        case GgufType::BOOL:
            return 1;
        case GgufType::UINT16:
        case GgufType::INT16:
            return 2;
        case GgufType::UINT32:
        case GgufType::INT32:
        case GgufType::FLOAT32:
            return 4;
        case GgufType::STRING:
            return 8 + std::get<std::string>(s).size();
        default:
            return 8;
    }
}

GgufScalar random_scalar(std::mt19937_64& rng, GgufType type) {
    const uint64_t r = rng();
    switch (type) {
        case GgufType::UINT8:
            return uint64_t{r & 0xFF};
        case GgufType::UINT16:
            return uint64_t{r & 0xFFFF};
        case GgufType::UINT32:
            return uint64_t{r & 0xFFFFFFFF};
        case GgufType::UINT64:
            return r;
        case GgufType::INT8:
            return int64_t{static_cast<int8_t>(r)};
        case GgufType::INT16:
            return int64_t{static_cast<int16_t>(r)};
        case GgufType::INT32:
            return int64_t{static_cast<int32_t>(r)};
        case GgufType::INT64:
            return static_cast<int64_t>(r);
        case GgufType::FLOAT32:
            return double{static_cast<float>(static_cast<int32_t>(r)) / 1024.0f};
        case GgufType::FLOAT64:
            return static_cast<double>(static_cast<int64_t>(r)) / 3.0;
        case GgufType::BOOL:
            return (r & 1) != 0;
        case GgufType::STRING: {
            std::string s(r % 5 == 0 ? 0 : r % 40, 'x');  // every fifth string is empty
            for (char& c : s)
                c = static_cast<char>(rng() & 0xFF);  // arbitrary bytes, even invalid UTF-8
            return s;
        }
        default:
            return uint64_t{0};
    }
}

TEST(GgufLayout, RandomRoundTripThroughTheStrictReader) {
    const GgufType scalar_types[] = {GgufType::UINT8,   GgufType::INT8,   GgufType::UINT16,
                                     GgufType::INT16,   GgufType::UINT32, GgufType::INT32,
                                     GgufType::FLOAT32, GgufType::BOOL,   GgufType::STRING,
                                     GgufType::UINT64,  GgufType::INT64,  GgufType::FLOAT64};
    struct TypeRow {
        uint32_t id, block, bytes;
    };
    // docs/gguf.md §2.1: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0.
    const TypeRow tensor_types[] = {{0, 1, 4},   {1, 1, 2},   {30, 1, 2},  {2, 32, 18},
                                    {3, 32, 20}, {6, 32, 22}, {7, 32, 24}, {8, 32, 34}};
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        std::mt19937_64 rng(seed);
        GgufLayout layout;
        uint64_t meta = 24;
        int key_index = 0;
        for (GgufType type : scalar_types) {
            const std::string key = "k" + std::to_string(key_index++) + ".scalar";
            GgufValue value;
            value.type = type;
            value.scalar = random_scalar(rng, type);
            meta += 8 + key.size() + 4 + encoded_size(type, value.scalar);
            layout.add_kv(key, value);

            const std::string array_key = "k" + std::to_string(key_index++) + ".array";
            std::vector<GgufScalar> items(rng() % 7);  // includes empty arrays
            uint64_t items_size = 0;
            for (GgufScalar& item : items) {
                item = random_scalar(rng, type);
                items_size += encoded_size(type, item);
            }
            meta += 8 + array_key.size() + 4 + 4 + 8 + items_size;
            layout.add_kv(array_key, GgufValue::array_of(type, std::move(items)));
        }

        std::vector<uint64_t> expected_nbytes;
        std::vector<std::vector<int64_t>> shapes;
        const size_t n_tensors = 1 + rng() % 10;
        for (size_t i = 0; i < n_tensors; ++i) {
            const TypeRow& t = tensor_types[rng() % 8];
            std::vector<int64_t> ne = {static_cast<int64_t>(t.block * (1 + rng() % 4))};
            const size_t n_dims = 1 + rng() % 4;
            while (ne.size() < n_dims) ne.push_back(static_cast<int64_t>(1 + rng() % 3));
            uint64_t nbytes = static_cast<uint64_t>(ne[0]) / t.block * t.bytes;
            for (size_t j = 1; j < ne.size(); ++j) nbytes *= static_cast<uint64_t>(ne[j]);
            const std::string name = "blk." + std::to_string(i) + ".weight";
            meta += 8 + name.size() + 4 + 8 * ne.size() + 4 + 8;
            layout.add_tensor(name, ne, static_cast<GgmlType>(t.id));
            expected_nbytes.push_back(nbytes);
            shapes.push_back(ne);
        }
        const uint64_t data_offset = (meta + 31) / 32 * 32;
        ASSERT_EQ(layout.metadata_size(), meta) << seed;
        ASSERT_EQ(layout.data_offset(), data_offset) << seed;

        // Image: metadata, then each tensor's random bytes padded with zeros (as write_gguf does).
        std::vector<uint8_t> image = layout.serialize_metadata();
        ASSERT_EQ(image.size(), data_offset);
        for (size_t i = meta; i < data_offset; ++i) ASSERT_EQ(image[i], 0) << "metadata padding";
        std::vector<std::vector<uint8_t>> data;
        uint64_t expected_offset = 0;
        for (size_t i = 0; i < n_tensors; ++i) {
            ASSERT_EQ(layout.tensors()[i].offset, expected_offset) << seed;
            ASSERT_EQ(image.size(), data_offset + expected_offset);
            std::vector<uint8_t> bytes(expected_nbytes[i]);
            for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
            image.insert(image.end(), bytes.begin(), bytes.end());
            image.resize((image.size() + 31) / 32 * 32, 0);
            expected_offset += (expected_nbytes[i] + 31) / 32 * 32;
            data.push_back(std::move(bytes));
        }
        ASSERT_EQ(layout.file_size(), image.size()) << seed;

        const auto file = GgufFile::parse(image, "roundtrip.gguf");
        EXPECT_EQ(file->data_offset(), data_offset);
        EXPECT_EQ(file->meta_end(), meta);
        ASSERT_EQ(file->kvs().size(), 24u);
        EXPECT_EQ(file->kvs(), layout.kvs()) << seed;
        ASSERT_EQ(file->tensors().size(), n_tensors);
        EXPECT_EQ(file->tensors(), layout.tensors()) << seed;
        for (size_t i = 0; i < n_tensors; ++i) {
            const GgufTensorInfo& t = file->tensors()[i];
            EXPECT_EQ(t.ne, shapes[i]);
            EXPECT_EQ(t.nbytes, expected_nbytes[i]);
            const auto bytes = file->tensor_data(t);
            ASSERT_TRUE(std::equal(bytes.begin(), bytes.end(), data[i].begin(), data[i].end()))
                << seed << " " << i;
        }
    }
}

TEST(GgufLayout, RejectsWhatTheReaderWouldReject) {
    const auto expect_error = [](const std::function<void()>& action, const std::string& message) {
        try {
            action();
            ADD_FAILURE() << "no error, want " << message;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        }
    };
    GgufLayout layout;
    layout.add_kv("a", GgufValue::u32(1));
    layout.add_tensor("t", {32}, GgmlType::Q4_1);
    expect_error([&] { layout.add_kv("a", GgufValue::u32(2)); }, "a: duplicate key");
    expect_error([&] { layout.add_kv("", GgufValue::u32(2)); }, "empty key");
    expect_error([&] { layout.add_kv("general.alignment", GgufValue::u32(32)); },
                 "general.alignment");
    expect_error([&] { layout.add_kv("n", GgufValue::array_of(GgufType::ARRAY, {})); },
                 "nested arrays");
    expect_error(
        [&] {
            GgufValue v = GgufValue::u8(1);
            v.scalar = uint64_t{300};
            layout.add_kv("r", v);
        },
        "r: 300 is out of range (expected a UINT8 value)");
    expect_error([&] { layout.add_tensor("t", {32}, GgmlType::Q4_1); },
                 "tensor 't': duplicate tensor name");
    expect_error([&] { layout.add_tensor(std::string(64, 'n'), {32}, GgmlType::F32); },
                 "at most 63 bytes");
    expect_error([&] { layout.add_tensor("d5", {32, 1, 1, 1, 1}, GgmlType::F32); }, "5 dimensions");
    expect_error([&] { layout.add_tensor("z", {32, 0}, GgmlType::F32); }, "ne[1] = 0");
    expect_error([&] { layout.add_tensor("b", {48}, GgmlType::Q4_1); },
                 "not a multiple of the Q4_1 block size 32");
    expect_error([&] { layout.add_tensor("r", {32}, static_cast<GgmlType>(4)); },
                 "unknown ggml type id 4");
    expect_error([&] { layout.add_tensor("o", {int64_t{1} << 62}, GgmlType::F32); }, "overflows");

    layout.set_kv("a", GgufValue::str("replaced"));
    ASSERT_EQ(layout.kvs().size(), 1u);
    EXPECT_EQ(*layout.kvs()[0].value.as_string(), "replaced");
    EXPECT_EQ(layout.tensors().size(), 1u);  // failed adds left nothing behind
}

}  // namespace
}  // namespace rebox
