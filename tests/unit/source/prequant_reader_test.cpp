// The GPTQ, AWQ and compressed-tensors adapters on small hand-built checkpoints: dispatch by
// quant_method, the view they build (shape [out, in], codes read back through it), float tensors
// passed through, and each kind of bad input: config problems are one-line input errors, tensor
// problems a Blocker naming MODULE.weight (docs/formats.md §5).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rebox/error.hpp"
#include "source/int_quant_view.hpp"
#include "source/mcq_test_writer.hpp"
#include "source/prequant_readers.hpp"
#include "source/read_source.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

using test::ScratchDir;
using test::StTensor;

const std::string kP = "model.layers.0.mlp.down_proj";

std::vector<uint8_t> words(size_t n, uint32_t w) {
    std::vector<uint8_t> b;
    for (size_t i = 0; i < n; ++i)
        for (int k = 0; k < 4; ++k) b.push_back(static_cast<uint8_t>(w >> (8 * k)));
    return b;
}

struct Checkpoint {
    nlohmann::json config = {{"model_type", "qwen3"}};
    std::vector<StTensor> tensors;
    StTensor& part(const std::string& name) {
        for (StTensor& t : tensors)
            if (t.name == name) return t;
        throw std::runtime_error("no " + name);
    }
    void remove(const std::string& name) {
        std::erase_if(tensors, [&](const StTensor& t) { return t.name == name; });
    }
    void write(const std::filesystem::path& dir) const {
        std::ofstream(dir / "config.json") << config.dump();
        test::write_safetensors(dir / "model.safetensors", tensors, {});
    }
};

// GPTQ v1 4-bit, in 64, out 32, group 32: every code 9 (0x99999999 words), stored zero 7 -> z = 8.
Checkpoint gptq() {
    Checkpoint c;
    c.config["quantization_config"] = {{"quant_method", "gptq"},
                                       {"bits", 4},
                                       {"group_size", 32},
                                       {"sym", true},
                                       {"desc_act", false}};
    c.tensors = {{"model.embed_tokens.weight", "F16", {4, 8}, std::vector<uint8_t>(64, 0)},
                 {kP + ".qweight", "I32", {8, 32}, words(256, 0x99999999)},
                 {kP + ".qzeros", "I32", {2, 4}, words(8, 0x77777777)},
                 {kP + ".scales", "F16", {2, 32}, std::vector<uint8_t>(128, 0x3C)},
                 {kP + ".g_idx", "I32", {64}, {}}};
    for (int k = 0; k < 64; ++k) {
        const auto w = words(1, static_cast<uint32_t>(k / 32));
        c.part(kP + ".g_idx").data.insert(c.part(kP + ".g_idx").data.end(), w.begin(), w.end());
    }
    return c;
}

SourceModel read_dir(const Checkpoint& c, const char* tag) {
    ScratchDir dir(tag);
    c.write(dir.path());
    return read_source_model(dir.path());
}

void expect_one_blocker(const SourceModel& m, const std::string& text) {
    ASSERT_EQ(m.blockers.size(), 1u);
    EXPECT_EQ(m.blockers[0].tensor, kP + ".weight");
    EXPECT_NE(m.blockers[0].reason.find(text), std::string::npos) << m.blockers[0].reason;
    for (const SourceTensor& t : m.tensors) EXPECT_FALSE(t.is_quantized()) << t.name;
}

std::string input_error(const Checkpoint& c, const char* tag) {
    try {
        read_dir(c, tag);
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
}

TEST(PrequantReader, GptqModuleBecomesOneView) {
    const SourceModel m = read_dir(gptq(), "gptq-ok");
    EXPECT_EQ(m.format, "gptq");
    ASSERT_TRUE(m.blockers.empty()) << m.blockers[0].reason;
    ASSERT_EQ(m.tensors.size(), 2u);
    EXPECT_FALSE(m.tensors[0].is_quantized());  // the F16 embedding
    const SourceTensor& t = m.tensors[1];
    EXPECT_EQ(t.name, kP + ".weight");
    EXPECT_EQ(t.shape, (std::vector<int64_t>{32, 64}));
    ASSERT_TRUE(t.int_quant);
    EXPECT_TRUE(t.int_quant->g_idx.empty());  // k / 32: plain groups
    int16_t d[64];
    int_deltas(*t.int_quant, 31 * 64, 64, d);  // the last row: 9 - (7 + 1)
    for (int16_t x : d) EXPECT_EQ(x, 1);
}

TEST(PrequantReader, GptqBadTensors) {
    Checkpoint zero = gptq();
    zero.config["quantization_config"]["sym"] = false;
    zero.part(kP + ".qzeros").data[5] = 0xF7;  // group 0, column 11 (byte 5, high): 15 -> z = 16
    expect_one_blocker(read_dir(zero, "gptq-zero"), "z = 16");
    Checkpoint g = gptq();
    g.part(kP + ".g_idx").data[4 * 40] = 2;  // groups are 0 and 1
    expect_one_blocker(read_dir(g, "gptq-gidx"), "g_idx[40] = 2 is outside [0, 2)");
    Checkpoint missing = gptq();
    missing.remove(kP + ".scales");
    expect_one_blocker(read_dir(missing, "gptq-noscales"), "missing " + kP + ".scales");
    Checkpoint shape = gptq();
    shape.part(kP + ".qzeros").shape = {2, 2};
    shape.part(kP + ".qzeros").data.resize(16);
    expect_one_blocker(read_dir(shape, "gptq-shape"), "expected [2, 4]");
}

TEST(PrequantReader, GptqBadConfigIsOneInputError) {
    Checkpoint bits = gptq();
    bits.config["quantization_config"]["bits"] = 5;
    EXPECT_NE(input_error(bits, "gptq-bits").find("quantization_config.bits: GPTQ bits 5"),
              std::string::npos);
    Checkpoint marlin = gptq();
    marlin.config["quantization_config"]["checkpoint_format"] = "marlin";
    EXPECT_NE(input_error(marlin, "gptq-marlin").find("'marlin' is not supported"),
              std::string::npos);
    Checkpoint unknown = gptq();
    unknown.config["quantization_config"]["quant_method"] = "bitsandbytes";
    EXPECT_NE(input_error(unknown, "unknown-method").find("'bitsandbytes' is not supported"),
              std::string::npos);
}

// AWQ GEMM 4-bit, in 64, out 8, group 32: qweight word 0x75316420 in input row 5 only.
Checkpoint awq() {
    Checkpoint c;
    c.config["quantization_config"] = {{"quant_method", "awq"},
                                       {"bits", 4},
                                       {"group_size", 32},
                                       {"zero_point", true},
                                       {"version", "gemm"}};
    std::vector<uint8_t> qweight = words(64, 0);
    const auto w = words(1, 0x75316420);
    std::copy(w.begin(), w.end(), qweight.begin() + 4 * 5);
    c.tensors = {{kP + ".qweight", "I32", {64, 1}, qweight},
                 {kP + ".qzeros", "I32", {2, 1}, words(2, 0)},
                 {kP + ".scales", "F16", {2, 8}, std::vector<uint8_t>(32, 0x3C)}};
    return c;
}

TEST(PrequantReader, AwqTransposesByReadingInPlace) {
    const SourceModel m = read_dir(awq(), "awq-ok");
    EXPECT_EQ(m.format, "awq");
    ASSERT_EQ(m.tensors.size(), 1u);
    const SourceTensor& t = m.tensors[0];
    EXPECT_EQ(t.shape, (std::vector<int64_t>{8, 64}));
    for (int n = 0; n < 8; ++n) {
        int16_t codes[64];
        int_row_codes(*t.int_quant, n, 0, 64, codes);
        for (int k = 0; k < 64; ++k) EXPECT_EQ(codes[k], k == 5 ? n : 0) << n << "," << k;
    }
    Checkpoint gemv = awq();
    gemv.config["quantization_config"]["version"] = "gemv_fast";
    EXPECT_NE(input_error(gemv, "awq-gemv").find("'gemv_fast' is not supported"),
              std::string::npos);
    Checkpoint scales = awq();
    scales.part(kP + ".scales").shape = {1, 16};
    expect_one_blocker(read_dir(scales, "awq-scales"), "expected [2, 8]");
}

// compressed-tensors pack-quantized 4-bit symmetric, out 8, in 64, group 32.
Checkpoint ct() {
    Checkpoint c;
    c.config["quantization_config"] = {{"quant_method", "compressed-tensors"},
                                       {"format", "pack-quantized"},
                                       {"config_groups",
                                        {{"group_0",
                                          {{"targets", {"Linear"}},
                                           {"weights",
                                            {{"num_bits", 4},
                                             {"type", "int"},
                                             {"symmetric", true},
                                             {"strategy", "group"},
                                             {"group_size", 32}}}}}}}};
    std::vector<uint8_t> shape = {8, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0};
    c.tensors = {{kP + ".weight_packed", "I32", {8, 8}, words(64, 0x0F0F0F0F)},
                 {kP + ".weight_scale", "BF16", {8, 2}, std::vector<uint8_t>(32, 0x3F)},
                 {kP + ".weight_shape", "I64", {2}, shape}};
    return c;
}

TEST(PrequantReader, CompressedTensorsOffsetAndShape) {
    const SourceModel m = read_dir(ct(), "ct-ok");
    EXPECT_EQ(m.format, "compressed-tensors");
    ASSERT_EQ(m.tensors.size(), 1u);
    EXPECT_EQ(m.tensors[0].shape, (std::vector<int64_t>{8, 64}));
    int16_t d[4];
    int_deltas(*m.tensors[0].int_quant, 0, 4, d);  // fields 15, 0, 15, 0 minus 8
    EXPECT_EQ(std::vector<int>(d, d + 4), (std::vector<int>{7, -8, 7, -8}));
    Checkpoint wrong = ct();
    wrong.part(kP + ".weight_shape").data[8] = 72;  // in 72 needs 9 words per row
    expect_one_blocker(read_dir(wrong, "ct-shape"), "expected [8, 9]");
    Checkpoint asym = ct();
    asym.config["quantization_config"]["config_groups"]["group_0"]["weights"]["symmetric"] = false;
    expect_one_blocker(read_dir(asym, "ct-nozp"), "missing " + kP + ".weight_zero_point");
    Checkpoint fmt = ct();
    fmt.config["quantization_config"]["format"] = "float-quantized";
    EXPECT_NE(input_error(fmt, "ct-format").find("'float-quantized' is not supported"),
              std::string::npos);
}

}  // namespace
}  // namespace rebox
