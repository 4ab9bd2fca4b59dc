// The safetensors reader against files assembled byte by byte here (8-byte LE header length, JSON
// header, data area), following the format as the HF `safetensors` crate defines and validates it.
#include "format/safetensors.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::write_file;

// ---- test-local file assembly -------------------------------------------------------------

std::vector<uint8_t> st_image_declared(uint64_t declared_header_length, const std::string& header,
                                       const std::vector<uint8_t>& data) {
    std::vector<uint8_t> bytes;
    for (int i = 0; i < 8; ++i)
        bytes.push_back(static_cast<uint8_t>(declared_header_length >> (8 * i)));
    bytes.insert(bytes.end(), header.begin(), header.end());
    bytes.insert(bytes.end(), data.begin(), data.end());
    return bytes;
}

std::vector<uint8_t> st_image(const std::string& header, const std::vector<uint8_t>& data) {
    return st_image_declared(header.size(), header, data);
}

// "NAME":{"dtype":"DTYPE","shape":SHAPE,"data_offsets":[BEGIN,END]}
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  uint64_t begin, uint64_t end) {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
           ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

std::vector<uint8_t> counting_bytes(size_t count) {
    std::vector<uint8_t> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<uint8_t>(i + 1);
    return data;
}

void write_text(const fs::path& path, const std::string& text) {
    write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// Parses `bytes` as "bad.safetensors" and returns the input-class error message (or a marker).
std::string parse_error(const std::vector<uint8_t>& bytes) {
    try {
        SafetensorsFile::parse(bytes, "bad.safetensors");
    } catch (const Error& error) {
        EXPECT_EQ(error.exit_class(), ExitClass::input);
        const std::string message = error.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_EQ(message.rfind("bad.safetensors: ", 0), 0u) << message;
        return message;
    }
    return "<no error>";
}

std::string model_error(const fs::path& dir) {
    try {
        SafetensorsModel::open(dir);
    } catch (const Error& error) {
        EXPECT_EQ(error.exit_class(), ExitClass::input);
        return error.what();
    }
    return "<no error>";
}

// ---- valid files ---------------------------------------------------------------------------

TEST(Safetensors, ParsesTensorsMetadataAndGivesZeroCopyData) {
    // Header padded with spaces as the HF writer does; a scalar and an empty tensor included.
    const std::string header = "{\"__metadata__\":{\"format\":\"pt\",\"mcq\":\"{\\\"v\\\":1}\"}," +
                               entry("a.weight", "F32", "[2]", 0, 8) + "," +
                               entry("b.weight", "BF16", "[1,2]", 8, 12) + "," +
                               entry("scalar", "U8", "[]", 12, 13) + "," +
                               entry("empty", "I64", "[0,5]", 13, 13) + "}   ";
    const std::vector<uint8_t> bytes = st_image(header, counting_bytes(13));
    const auto file = SafetensorsFile::parse(bytes, "good.safetensors");

    EXPECT_EQ(file->display_name(), "good.safetensors");
    EXPECT_EQ(file->header_size(), header.size());
    ASSERT_EQ(file->tensors().size(), 4u);
    const StTensorInfo& a = file->tensors()[0];
    EXPECT_EQ(a.name, "a.weight");
    EXPECT_EQ(a.dtype, StDtype::F32);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(a.begin, 0u);
    EXPECT_EQ(a.end, 8u);
    EXPECT_EQ(a.element_count(), 2u);
    const StTensorInfo* b = file->find("b.weight");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->dtype, StDtype::BF16);
    EXPECT_EQ(b->shape, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(file->find("scalar")->element_count(), 1u);
    EXPECT_EQ(file->find("empty")->element_count(), 0u);
    EXPECT_EQ(file->find("missing"), nullptr);

    EXPECT_EQ(file->metadata().size(), 2u);
    EXPECT_EQ(file->metadata().at("format"), "pt");
    EXPECT_EQ(file->metadata().at("mcq"), "{\"v\":1}");

    const size_t data_start = 8 + header.size();
    const auto b_data = file->data(*b);
    EXPECT_EQ(b_data.data(), bytes.data() + data_start + 8);  // zero-copy
    EXPECT_EQ(b_data.size(), 4u);
    EXPECT_EQ(b_data[0], 9);
    EXPECT_EQ(b_data[3], 12);
    EXPECT_EQ(file->data(*file->find("scalar"))[0], 13);
    EXPECT_EQ(file->data(*file->find("empty")).size(), 0u);
}

TEST(Safetensors, FindsEveryNameOfALargeHeaderAndNothingElse) {
    // 3000 one-byte tensors "t.<i>.w" at offsets [i, i+1): each look-up must land on its own
    // entry (its offsets and its byte i + 1), and names that are prefixes, extensions or
    // near-misses of real ones must not be found.
    constexpr size_t kCount = 3000;
    std::string header = "{";
    for (size_t i = 0; i < kCount; ++i)
        header += (i ? "," : "") + entry("t." + std::to_string(i) + ".w", "U8", "[1]", i, i + 1);
    header += "}";
    const std::vector<uint8_t> bytes = st_image(header, counting_bytes(kCount));
    const auto file = SafetensorsFile::parse(bytes, "many.safetensors");
    ASSERT_EQ(file->tensors().size(), kCount);
    for (size_t i = 0; i < kCount; ++i) {
        const std::string name = "t." + std::to_string(i) + ".w";
        const StTensorInfo* found = file->find(name);
        ASSERT_NE(found, nullptr) << name;
        EXPECT_EQ(found->name, name);
        EXPECT_EQ(found->begin, i);
        EXPECT_EQ(file->data(*found)[0], static_cast<uint8_t>(i + 1)) << name;
    }
    for (const char* absent : {"t.1", "t.1.", "t.1.w.", "t.3000.w", "T.1.w", "", "t.01.w"})
        EXPECT_EQ(file->find(absent), nullptr) << absent;
}

TEST(Safetensors, DtypeTable) {
    EXPECT_EQ(st_dtype_from_name("F8_E4M3"), StDtype::F8_E4M3);
    EXPECT_EQ(st_dtype_from_name("f32"), std::nullopt);
    EXPECT_EQ(st_dtype_name(StDtype::BF16), "BF16");
    EXPECT_EQ(st_dtype_size(StDtype::BOOL), 1u);
    EXPECT_EQ(st_dtype_size(StDtype::I16), 2u);
    EXPECT_EQ(st_dtype_size(StDtype::U32), 4u);
    EXPECT_EQ(st_dtype_size(StDtype::F64), 8u);
    EXPECT_EQ(st_dtype_size(StDtype::F8_E5M2), 1u);
}

TEST(Safetensors, EmptyFileWithNoTensorsIsValid) {
    const auto file = SafetensorsFile::parse(st_image("{}", {}), "empty.safetensors");
    EXPECT_TRUE(file->tensors().empty());
    EXPECT_TRUE(file->metadata().empty());
}

TEST(Safetensors, OpenMapsTheFileAndModelPrefersSingleFile) {
    ScratchDir dir;
    const std::string header = "{" + entry("w", "F16", "[2,2]", 0, 8) + "}";
    write_file(dir.path() / "model.safetensors", st_image(header, counting_bytes(8)));
    const SafetensorsModel model = SafetensorsModel::open(dir.path());
    ASSERT_EQ(model.files().size(), 1u);
    const auto& file = model.files()[0];
    EXPECT_EQ(file->path(), dir.path() / "model.safetensors");
    ASSERT_NE(file->mapping(), nullptr);
    const auto data = file->data(file->tensors().at(0));
    EXPECT_EQ(data.data(), file->mapping()->bytes().data() + 8 + header.size());
    EXPECT_EQ(data[7], 8);
}

TEST(Safetensors, ShardedModelThroughIndex) {
    ScratchDir dir;
    write_file(
        dir.path() / "model-00001-of-00002.safetensors",
        st_image("{" + entry("x", "F32", "[1]", 0, 4) + "," + entry("y", "U8", "[3]", 4, 7) + "}",
                 counting_bytes(7)));
    write_file(dir.path() / "model-00002-of-00002.safetensors",
               st_image("{" + entry("z", "I16", "[2]", 0, 4) + "}", counting_bytes(4)));
    // z listed first: shards come in order of first appearance in weight_map.
    write_text(
        dir.path() / "model.safetensors.index.json",
        R"({"metadata":{"total_size":11},"weight_map":{"z":"model-00002-of-00002.safetensors",
                 "x":"model-00001-of-00002.safetensors","y":"model-00001-of-00002.safetensors"}})");
    const SafetensorsModel model = SafetensorsModel::open(dir.path());
    ASSERT_EQ(model.files().size(), 2u);
    EXPECT_EQ(model.files()[0]->path().filename(), "model-00002-of-00002.safetensors");
    EXPECT_EQ(model.files()[1]->path().filename(), "model-00001-of-00002.safetensors");
    ASSERT_NE(model.files()[1]->find("y"), nullptr);
    EXPECT_EQ(model.files()[1]->data(*model.files()[1]->find("y"))[0], 5);
}

// ---- corrupt files: each must fail with its own message -------------------------------------

TEST(SafetensorsCorrupt, FileShorterThanLengthPrefix) {
    EXPECT_NE(parse_error({1, 0, 0, 0, 0})
                  .find("header length: file is 5 bytes, too short for the 8-byte header length"),
              std::string::npos);
}

TEST(SafetensorsCorrupt, HeaderLengthPastEndOfFile) {
    const std::string message = parse_error(st_image_declared(1000, "{}", {}));
    EXPECT_NE(message.find("header length 1000 runs past the end of the file (10 bytes)"),
              std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, HeaderLengthOverTheCap) {
    const std::string message =
        parse_error(st_image_declared(kSafetensorsMaxHeaderBytes + 1, "{}", {}));
    EXPECT_NE(message.find("header length 104857601 is over the limit (expected at most 104857600"),
              std::string::npos)
        << message;
    // The largest 64-bit length must not wrap any bounds arithmetic either.
    EXPECT_NE(parse_error(st_image_declared(~0ull, "{}", {})).find("over the limit"),
              std::string::npos);
}

TEST(SafetensorsCorrupt, HeaderNotJson) {
    EXPECT_NE(
        parse_error(st_image("{\"w\": nope", {})).find("bad.safetensors: header: not valid JSON"),
        std::string::npos);
    EXPECT_NE(parse_error(st_image("{\"\xff\xfe\":1}", {})).find("header: not valid JSON"),
              std::string::npos);
}

TEST(SafetensorsCorrupt, HeaderJsonNotAnObject) {
    EXPECT_NE(parse_error(st_image("[1,2]", {})).find("header: JSON is [1,2], not an object"),
              std::string::npos);
}

TEST(SafetensorsCorrupt, UnknownDtype) {
    const std::string message =
        parse_error(st_image("{" + entry("w", "F7", "[1]", 0, 4) + "}", {0, 0, 0, 0}));
    EXPECT_NE(message.find("w: unknown dtype \"F7\" (expected one of BOOL, U8"), std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, DtypeNotAString) {
    EXPECT_NE(
        parse_error(st_image(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", {0, 0, 0, 0}))
            .find("w: dtype is 4"),
        std::string::npos);
}

TEST(SafetensorsCorrupt, MissingDtypeShapeOrOffsets) {
    EXPECT_NE(parse_error(st_image(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", {0, 0, 0, 0}))
                  .find("w: missing \"dtype\""),
              std::string::npos);
    EXPECT_NE(parse_error(st_image(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", {0, 0, 0, 0}))
                  .find("w: missing \"shape\""),
              std::string::npos);
    EXPECT_NE(parse_error(st_image(R"({"w":{"dtype":"F32","shape":[1]}})", {0, 0, 0, 0}))
                  .find("w: missing \"data_offsets\""),
              std::string::npos);
}

TEST(SafetensorsCorrupt, TensorEntryNotAnObject) {
    EXPECT_NE(parse_error(st_image(R"({"w":[1,2]})", {})).find("w: tensor entry is [1,2]"),
              std::string::npos);
}

TEST(SafetensorsCorrupt, NegativeOrNonIntegerShapeDim) {
    EXPECT_NE(parse_error(st_image("{" + entry("w", "F32", "[1,-3]", 0, 4) + "}", {0, 0, 0, 0}))
                  .find("w: shape[1] is -3 (expected a non-negative integer)"),
              std::string::npos);
    EXPECT_NE(parse_error(st_image("{" + entry("w", "F32", "[2.5]", 0, 4) + "}", {0, 0, 0, 0}))
                  .find("w: shape[0] is 2.5"),
              std::string::npos);
}

TEST(SafetensorsCorrupt, DataOffsetsMalformed) {
    EXPECT_NE(
        parse_error(st_image(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})", {0}))
            .find("w: data_offsets is [0,1,2]"),
        std::string::npos);
    EXPECT_NE(
        parse_error(st_image(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}})", {0}))
            .find("w: data_offsets is [-1,0]"),
        std::string::npos);
}

TEST(SafetensorsCorrupt, BeginAfterEnd) {
    EXPECT_NE(parse_error(st_image("{" + entry("w", "F32", "[1]", 8, 4) + "}", counting_bytes(8)))
                  .find("w: data_offsets [8, 4] has begin > end"),
              std::string::npos);
}

TEST(SafetensorsCorrupt, OverlappingOffsets) {
    const std::string header =
        "{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}";
    const std::string message = parse_error(st_image(header, counting_bytes(12)));
    EXPECT_NE(
        message.find(
            "b: data_offsets [4, 12] overlaps tensor \"a\" which ends at 8 (expected begin == 8)"),
        std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, HoleBetweenTensors) {
    const std::string header =
        "{" + entry("b", "F32", "[2]", 12, 20) + "," + entry("a", "F32", "[2]", 0, 8) + "}";
    const std::string message = parse_error(st_image(header, counting_bytes(20)));
    EXPECT_NE(message.find("b: data_offsets [12, 20] leaves a hole of 4 bytes after tensor \"a\""),
              std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, FirstTensorNotAtDataStart) {
    const std::string message =
        parse_error(st_image("{" + entry("a", "F32", "[2]", 4, 12) + "}", counting_bytes(12)));
    EXPECT_NE(message.find("a: data_offsets [4, 12] leaves a hole of 4 bytes after the data start"),
              std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, EndPastDataArea) {
    const std::string message =
        parse_error(st_image("{" + entry("w", "F32", "[2]", 0, 8) + "}", counting_bytes(4)));
    EXPECT_NE(message.find("w: data_offsets end 8 is past the end of the data area (4 bytes)"),
              std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, TrailingBytesAfterLastTensor) {
    const std::string message =
        parse_error(st_image("{" + entry("w", "F32", "[1]", 0, 4) + "}", counting_bytes(6)));
    EXPECT_NE(message.find(
                  "data_offsets: tensors cover 4 bytes but the data area has 6 (trailing bytes)"),
              std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, ShapeTimesDtypeDisagreesWithSpan) {
    const std::string message =
        parse_error(st_image("{" + entry("w", "F32", "[3]", 0, 8) + "}", counting_bytes(8)));
    EXPECT_NE(
        message.find("w: shape [3] x F32 (4 bytes) is 12 bytes but data_offsets [0, 8] span 8"),
        std::string::npos)
        << message;
}

TEST(SafetensorsCorrupt, ElementCountOverflow) {
    // 2^62 * 2^62 wraps to 0 in 64 bits, which would "match" an empty span without the check.
    const std::string message = parse_error(st_image(
        "{" + entry("w", "F32", "[4611686018427387904,4611686018427387904]", 0, 0) + "}", {}));
    EXPECT_NE(message.find(
                  "w: element count of shape [4611686018427387904, 4611686018427387904] overflows"),
              std::string::npos)
        << message;
    // 2^62 elements fit, but 2^62 x 8 bytes wraps to 0.
    EXPECT_NE(
        parse_error(st_image("{" + entry("v", "F64", "[4611686018427387904]", 0, 0) + "}", {}))
            .find("v: byte size of shape [4611686018427387904] x F64 overflows"),
        std::string::npos);
}

TEST(SafetensorsCorrupt, MetadataNotStringToString) {
    EXPECT_NE(parse_error(st_image(R"({"__metadata__":{"format":"pt","n":1}})", {}))
                  .find("__metadata__: value of \"n\" is 1, not a string"),
              std::string::npos);
    EXPECT_NE(
        parse_error(st_image(R"({"__metadata__":["pt"]})", {})).find("__metadata__: is [\"pt\"]"),
        std::string::npos);
}

TEST(SafetensorsCorrupt, DuplicateTensorName) {
    const std::string header =
        "{" + entry("w", "U8", "[1]", 0, 1) + "," + entry("w", "U8", "[1]", 1, 2) + "}";
    EXPECT_NE(
        parse_error(st_image(header, {1, 2})).find("bad.safetensors: w: duplicate tensor name"),
        std::string::npos);
}

TEST(SafetensorsCorrupt, ControlCharactersInNamesStayOnOneLine) {
    const std::string message =
        parse_error(st_image("{" + entry("evil\\nname", "F7", "[1]", 0, 1) + "}", {0}));
    EXPECT_NE(message.find("evil\\x0aname: unknown dtype"), std::string::npos) << message;
}

// ---- corrupt checkpoint directories -------------------------------------------------------

TEST(SafetensorsModelCorrupt, NoCheckpointInDirectory) {
    ScratchDir dir;
    const std::string message = model_error(dir.path());
    EXPECT_NE(message.find(dir.path().string() +
                           ": no model.safetensors or model.safetensors.index.json"),
              std::string::npos)
        << message;
}

TEST(SafetensorsModelCorrupt, IndexNamesMissingShard) {
    ScratchDir dir;
    write_text(dir.path() / "model.safetensors.index.json",
               R"({"weight_map":{"x":"model-00001.safetensors"}})");
    const std::string message = model_error(dir.path());
    EXPECT_NE(message.find("weight_map: shard \"model-00001.safetensors\" does not exist"),
              std::string::npos)
        << message;
}

TEST(SafetensorsModelCorrupt, IndexNamesTensorNotInItsShard) {
    ScratchDir dir;
    write_file(dir.path() / "a.safetensors",
               st_image("{" + entry("x", "U8", "[1]", 0, 1) + "}", {7}));
    write_file(dir.path() / "b.safetensors",
               st_image("{" + entry("y", "U8", "[1]", 0, 1) + "}", {8}));
    write_text(dir.path() / "model.safetensors.index.json",
               R"({"weight_map":{"x":"a.safetensors","y":"a.safetensors"}})");
    const std::string message = model_error(dir.path());
    EXPECT_NE(message.find("weight_map.y: tensor is not in shard \"a.safetensors\""),
              std::string::npos)
        << message;
}

TEST(SafetensorsModelCorrupt, ShardHoldsTensorTheIndexDoesNotAssign) {
    ScratchDir dir;
    write_file(dir.path() / "a.safetensors", st_image("{" + entry("x", "U8", "[1]", 0, 1) + "," +
                                                          entry("extra", "U8", "[1]", 1, 2) + "}",
                                                      {7, 8}));
    write_text(dir.path() / "model.safetensors.index.json",
               R"({"weight_map":{"x":"a.safetensors"}})");
    const std::string message = model_error(dir.path());
    EXPECT_NE(message.find("a.safetensors: extra: tensor is not assigned to this shard"),
              std::string::npos)
        << message;
}

TEST(SafetensorsModelCorrupt, IndexShardWithPathComponents) {
    ScratchDir dir;
    for (const char* shard : {"../outside.safetensors", "sub/a.safetensors", "/etc/passwd", ".."}) {
        write_text(dir.path() / "model.safetensors.index.json",
                   std::string(R"({"weight_map":{"x":")") + shard + "\"}}");
        const std::string message = model_error(dir.path());
        EXPECT_NE(message.find("weight_map.x: shard \"" + std::string(shard) +
                               "\" is not a plain file name"),
                  std::string::npos)
            << message;
    }
}

TEST(SafetensorsModelCorrupt, IndexWithoutWeightMapOrNotJson) {
    ScratchDir dir;
    write_text(dir.path() / "model.safetensors.index.json", R"({"metadata":{}})");
    EXPECT_NE(model_error(dir.path()).find("weight_map: missing or not an object"),
              std::string::npos);
    write_text(dir.path() / "model.safetensors.index.json", R"({"weight_map":)");
    EXPECT_NE(model_error(dir.path()).find("not valid JSON"), std::string::npos);
    write_text(dir.path() / "model.safetensors.index.json", R"({"weight_map":{}})");
    EXPECT_NE(model_error(dir.path()).find("weight_map: is empty"), std::string::npos);
}

TEST(SafetensorsModelCorrupt, CorruptShardReportsTheShardFile) {
    ScratchDir dir;
    write_file(dir.path() / "a.safetensors", {1, 2, 3});
    write_text(dir.path() / "model.safetensors.index.json",
               R"({"weight_map":{"x":"a.safetensors"}})");
    const std::string message = model_error(dir.path());
    EXPECT_NE(
        message.find((dir.path() / "a.safetensors").string() + ": header length: file is 3 bytes"),
        std::string::npos)
        << message;
}

}  // namespace
}  // namespace rebox
