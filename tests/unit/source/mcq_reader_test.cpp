// read_mcq_model on directories written by the test-local writer: a good file yields the tensors
// with metadata bits/group/shape and zero-copy spans; each rule of the spec's "What a reader must
// refuse" yields a Blocker naming the tensor (which is left out), including the (bits 2, group 128)
// written as (4, 64) metadata lie that only the byte-count checks can catch.
#include "source/mcq_reader.hpp"

#include <gtest/gtest.h>

#include "rebox/error.hpp"
#include "source/mcq_test_writer.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

using test::McqFile;

class McqReader : public ::testing::Test {
  protected:
    test::ScratchDir dir{"mcq-reader"};

    SourceModel read(const McqFile& file) {
        file.write(dir.path() / "model.safetensors");
        return read_mcq_model(*ModelDir::open(dir.path()));
    }

    static std::string all_blockers(const SourceModel& model) {
        std::string s;
        for (const Blocker& b : model.blockers)
            s += "\n  " + b.tensor + " | " + b.reason + " | " + b.fix;
        return s;
    }

    static bool has_tensor(const SourceModel& model, const std::string& name) {
        for (const SourceTensor& t : model.tensors)
            if (t.name == name) return true;
        return false;
    }

    // The model has exactly one blocker for `tensor`, whose reason contains `reason`, and the
    // tensor itself was left out.
    static void expect_refused(const SourceModel& model, const std::string& tensor,
                               const std::string& reason) {
        int matches = 0;
        for (const Blocker& b : model.blockers)
            if (b.tensor == tensor && b.reason.find(reason) != std::string::npos) ++matches;
        EXPECT_EQ(matches, 1) << "want '" << reason << "' for " << tensor
                              << "; got:" << all_blockers(model);
        EXPECT_FALSE(has_tensor(model, tensor));
        for (const Blocker& b : model.blockers) EXPECT_FALSE(b.fix.empty()) << b.reason;
    }
};

constexpr const char* kW = "layers.0.self_attn.q_proj.weight";

TEST_F(McqReader, GoodFileYieldsQuantAndFloatTensors) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.plain("norm.weight", "F32", {128}, 4);
    file.plain("layers.0.input_layernorm.weight", "BF16", {128}, 2);
    const SourceModel model = read(file);
    EXPECT_TRUE(model.blockers.empty()) << all_blockers(model);
    EXPECT_EQ(model.format, "mcq-v1");
    ASSERT_EQ(model.tensors.size(), 3u);
    const SourceTensor* q = nullptr;
    for (const SourceTensor& t : model.tensors)
        if (t.name == kW) q = &t;
    ASSERT_NE(q, nullptr);
    ASSERT_TRUE(q->is_quantized());
    EXPECT_EQ(q->quant->bits, 4);
    EXPECT_EQ(q->quant->group, 64);
    EXPECT_EQ(q->shape, (std::vector<int64_t>{8, 128}));
    EXPECT_EQ(q->element_count(), 1024u);
    const auto& stream = file.part(std::string(kW) + ".qcodes").data;
    ASSERT_EQ(q->quant->codes.size(), stream.size());
    EXPECT_TRUE(std::equal(stream.begin(), stream.end(), q->quant->codes.begin()));
    const auto& scales = file.part(std::string(kW) + ".scales").data;
    ASSERT_EQ(q->quant->scales.size(), 32u);
    EXPECT_TRUE(std::equal(scales.begin(), scales.end(), q->quant->scales.begin()));
    EXPECT_EQ(q->quant->mins.size(), 32u);
    for (const SourceTensor& t : model.tensors) {
        if (t.name == "norm.weight") {
            EXPECT_FALSE(t.is_quantized());
            EXPECT_EQ(t.float_dtype, FloatDtype::F32);
            EXPECT_EQ(t.float_data.size(), 512u);
        }
        if (t.name == "layers.0.input_layernorm.weight") {
            EXPECT_EQ(t.float_dtype, FloatDtype::BF16);
        }
    }
}

TEST_F(McqReader, OrphanPartsWithoutEntry) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.mcq["tensors"].erase(kW);
    const SourceModel model = read(file);
    for (const char* part : {".qcodes", ".scales", ".mins"})
        expect_refused(model, std::string(kW) + part, "no entry for");
}

TEST_F(McqReader, OrphanPartsInFileWithoutMcqMetadata) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.write_mcq = false;
    const SourceModel model = read(file);
    expect_refused(model, std::string(kW) + ".qcodes", "the file has no mcq metadata");
}

TEST_F(McqReader, EntryWithAPartMissing) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.remove(std::string(kW) + ".mins");
    expect_refused(read(file), kW, ".mins' tensor");
}

TEST_F(McqReader, EntryWithNoPartsAtAll) {
    McqFile file;
    file.plain("norm.weight", "F32", {128}, 4);
    file.mcq["tensors"][kW] = {{"bits", 4}, {"group", 64}, {"layout", "lsb0"}, {"shape", {8, 128}}};
    const SourceModel model = read(file);
    expect_refused(model, kW, "no .qcodes/.scales/.mins");
    EXPECT_TRUE(has_tensor(model, "norm.weight"));
}

TEST_F(McqReader, EntryWithAFieldMissing) {
    for (const char* field : {"bits", "group", "layout", "shape"}) {
        McqFile file;
        file.quant(kW, 4, 64, 8, 128);
        file.mcq["tensors"][kW].erase(field);
        expect_refused(read(file), kW, std::string("no '") + field + "' field");
    }
}

TEST_F(McqReader, VersionOtherThanOneNamesTheFile) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.plain("norm.weight", "F32", {128}, 4);
    file.mcq["version"] = 2;
    const SourceModel model = read(file);
    ASSERT_EQ(model.blockers.size(), 1u) << all_blockers(model);
    EXPECT_NE(model.blockers[0].tensor.find("model.safetensors"), std::string::npos);
    EXPECT_NE(model.blockers[0].reason.find("version 2 is not supported"), std::string::npos);
    EXPECT_FALSE(has_tensor(model, kW));
    EXPECT_TRUE(has_tensor(model, "norm.weight"));
}

TEST_F(McqReader, UnknownLayout) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.mcq["tensors"][kW]["layout"] = "msb0";
    expect_refused(read(file), kW, "unknown layout 'msb0'");
}

TEST_F(McqReader, BitsOutsideOneToEight) {
    for (int bits : {0, 9, -1}) {
        McqFile file;
        file.quant(kW, 4, 64, 8, 128);
        file.mcq["tensors"][kW]["bits"] = bits;
        expect_refused(read(file), kW, "bits " + std::to_string(bits) + " is outside 1..8");
    }
}

TEST_F(McqReader, GroupBelowOne) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.mcq["tensors"][kW]["group"] = 0;
    expect_refused(read(file), kW, "group 0 is < 1");
}

TEST_F(McqReader, ShapeNot2D) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.mcq["tensors"][kW]["shape"] = {2, 4, 128};
    expect_refused(read(file), kW, "is not 2-D");
}

TEST_F(McqReader, ShapeDimensionBelowOne) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.mcq["tensors"][kW]["shape"] = {0, 128};
    expect_refused(read(file), kW, "dimension < 1");
}

TEST_F(McqReader, NNotMultipleOfGroup) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.mcq["tensors"][kW]["group"] = 48;  // 1024 % 48 != 0
    expect_refused(read(file), kW, "not a multiple of group 48");
}

TEST_F(McqReader, QcodesNotU8) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.part(std::string(kW) + ".qcodes").dtype = "I8";
    expect_refused(read(file), kW, ".qcodes dtype is I8 (expected U8)");
}

TEST_F(McqReader, QcodesWrongByteCount) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    auto& qcodes = file.part(std::string(kW) + ".qcodes");
    qcodes.data.push_back(0);
    qcodes.shape = {static_cast<int64_t>(qcodes.data.size())};
    expect_refused(read(file), kW, ".qcodes has 513 bytes (expected ceil(N*bits/8) = 512");
}

TEST_F(McqReader, MetadataLieBits2Group128WrittenAs4And64) {
    // The data is (bits 2, group 128): 256 code bytes, 8 groups. The metadata claims (4, 64); the
    // product group*bits agrees, so only the counts against N = 1024 reveal it.
    McqFile file;
    file.quant(kW, 2, 128, 8, 128);
    file.mcq["tensors"][kW]["bits"] = 4;
    file.mcq["tensors"][kW]["group"] = 64;
    expect_refused(read(file), kW, ".qcodes has 256 bytes (expected ceil(N*bits/8) = 512");
}

TEST_F(McqReader, ScalesCountDisagreesWithGroup) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.mcq["tensors"][kW]["group"] = 32;  // qcodes still right; 16 scales stored, 32 expected
    expect_refused(read(file), kW, ".scales shape is [16] (expected [32]");
}

TEST_F(McqReader, ScalesNotF16) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    auto& scales = file.part(std::string(kW) + ".scales");
    scales.dtype = "BF16";
    expect_refused(read(file), kW, ".scales dtype is BF16 (expected F16)");
}

TEST_F(McqReader, MinsWrongCount) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    auto& mins = file.part(std::string(kW) + ".mins");
    mins.data.resize(mins.data.size() - 2);
    mins.shape = {15};
    expect_refused(read(file), kW, ".mins shape is [15] (expected [16]");
}

TEST_F(McqReader, NonZeroPaddingBits) {
    McqFile file;
    file.quant(kW, 3, 3, 1, 3);  // 9 bits used of 16
    file.part(std::string(kW) + ".qcodes").data[1] |= 0x80;
    expect_refused(read(file), kW, "non-zero padding");
}

TEST_F(McqReader, PlainTensorOfNonFloatDtype) {
    McqFile file;
    file.plain("position_ids", "I64", {4}, 8);
    expect_refused(read(file), "position_ids", "dtype I64 is not F32, F16 or BF16");
}

TEST_F(McqReader, PlainTensorBesideItsQuantizedParts) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.plain(kW, "F16", {8, 128}, 2);
    expect_refused(read(file), kW, "exists beside its quantized parts");
}

TEST_F(McqReader, MalformedMcqJsonIsAnInputError) {
    McqFile file;
    file.quant(kW, 4, 64, 8, 128);
    file.write(dir.path() / "model.safetensors");
    // Rewrite with a broken metadata string.
    std::map<std::string, std::string> metadata = {{"mcq", "{\"version\": 1, \"tensors\": {"}};
    test::write_safetensors(dir.path() / "model.safetensors", file.tensors, metadata);
    try {
        read_mcq_model(*ModelDir::open(dir.path()));
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_NE(std::string(e.what()).find("__metadata__.mcq"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace rebox
