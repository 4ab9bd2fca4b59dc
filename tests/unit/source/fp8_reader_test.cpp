// FP8 block-quantized checkpoints (docs/formats.md §6): E4M3 decoding against the OCP 8-bit
// floating point spec's table (every exponent class, subnormals, ±0, max 448, NaN), the reader on
// small hand-built directories (an edge block that is partial, float tensors beside, the dropped
// activation scales) and every refusal of hostile input, and the plan's type choice on
// hand-worked products (F16, BF16, F32, and a product binary32 cannot hold).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "plan/expert_stack.hpp"
#include "plan/fp8_rules.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "source/fp8_values.hpp"
#include "source/mcq_test_writer.hpp"
#include "source/read_source.hpp"
#include "source/source_values.hpp"
#include "test_files.hpp"

namespace rebox::test {
namespace {

// ---- E4M3 (OCP OFP8 spec v1.0, table "E4M3": bias 7, no infinities, S.1111.111 NaN) ----------

TEST(Fp8E4m3, EveryExponentClassWithMantissaZero) {
    // Exponent field 1..15, mantissa 0: 2^(field - 7).
    const std::pair<uint8_t, double> powers[] = {
        {0x08, 0.015625}, {0x10, 0.03125}, {0x18, 0.0625}, {0x20, 0.125}, {0x28, 0.25},
        {0x30, 0.5},      {0x38, 1.0},     {0x40, 2.0},    {0x48, 4.0},   {0x50, 8.0},
        {0x58, 16.0},     {0x60, 32.0},    {0x68, 64.0},   {0x70, 128.0}, {0x78, 256.0}};
    for (const auto& [byte, value] : powers) {
        EXPECT_EQ(e4m3_to_double(byte), value) << int{byte};
        EXPECT_EQ(e4m3_to_double(static_cast<uint8_t>(byte | 0x80)), -value) << int{byte};
    }
}

TEST(Fp8E4m3, MantissaSubnormalsZeroMaxAndNan) {
    EXPECT_EQ(e4m3_to_double(0x3C), 1.5);    // 1.100b
    EXPECT_EQ(e4m3_to_double(0x3F), 1.875);  // 1.111b
    EXPECT_EQ(e4m3_to_double(0x77), 240.0);  // 1.111b x 2^7
    EXPECT_EQ(e4m3_to_double(0x79), 288.0);  // 1.001b x 2^8
    EXPECT_EQ(e4m3_to_double(0x7E), 448.0);  // the largest finite: 1.110b x 2^8
    EXPECT_EQ(e4m3_to_double(0xFE), -448.0);
    EXPECT_EQ(e4m3_to_double(0x01), 0.001953125);  // smallest subnormal 2^-9
    EXPECT_EQ(e4m3_to_double(0x04), 0.0078125);    // 0.100b x 2^-6
    EXPECT_EQ(e4m3_to_double(0x07), 0.013671875);  // largest subnormal 0.111b x 2^-6
    EXPECT_EQ(e4m3_to_double(0x87), -0.013671875);
    EXPECT_EQ(e4m3_to_double(0x00), 0.0);
    EXPECT_FALSE(std::signbit(e4m3_to_double(0x00)));
    EXPECT_EQ(e4m3_to_double(0x80), 0.0);
    EXPECT_TRUE(std::signbit(e4m3_to_double(0x80)));  // -0
    EXPECT_TRUE(std::isnan(e4m3_to_double(0x7F)));
    EXPECT_TRUE(std::isnan(e4m3_to_double(0xFF)));
    EXPECT_TRUE(e4m3_is_nan(0x7F) && e4m3_is_nan(0xFF));
    EXPECT_FALSE(e4m3_is_nan(0x7E) || e4m3_is_nan(0xFE) || e4m3_is_nan(0x77));
}

// ---- the reader ----------------------------------------------------------------------------

const std::string kFp8Q = "model.layers.0.self_attn.q_proj";

std::vector<uint8_t> bf16s(std::initializer_list<uint16_t> bits) {
    std::vector<uint8_t> bytes;
    for (uint16_t b : bits)
        bytes.push_back(static_cast<uint8_t>(b & 0xff)), bytes.push_back(b >> 8);
    return bytes;
}

std::vector<uint8_t> f32s(std::initializer_list<float> values) {
    std::vector<uint8_t> bytes(values.size() * 4);
    size_t i = 0;
    for (float v : values) std::memcpy(bytes.data() + 4 * i++, &v, 4);
    return bytes;
}

// q_proj: 3 x 5 codes in blocks of 2 rows x 3 columns, so a 2 x 2 grid of BF16 scales whose
// last row and column are partial blocks.
struct Fp8Dir : StTensorList {
    nlohmann::json quant = {{"activation_scheme", "dynamic"},
                            {"fmt", "e4m3"},
                            {"quant_method", "fp8"},
                            {"weight_block_size", {2, 3}}};
    Fp8Dir() {
        std::vector<uint8_t> codes(15, 0x38);  // 1.0
        codes[4] = 0x3C;                       // row 0, column 4: 1.5 (block 0, 1)
        codes[14] = 0xC0;                      // row 2, column 4: -2.0 (block 1, 1)
        tensors.push_back({kFp8Q + ".weight", "F8_E4M3", {3, 5}, codes});
        // 1, 4 / 0.5, 8 (BF16 bits)
        tensors.push_back(
            {kFp8Q + ".weight_scale_inv", "BF16", {2, 2}, bf16s({0x3F80, 0x4080, 0x3F00, 0x4100})});
        tensors.push_back({kFp8Q + ".activation_scale", "F32", {}, f32s({1.0f})});
        tensors.push_back({"model.norm.weight", "BF16", {5}, std::vector<uint8_t>(10, 0)});
    }
    SourceModel read() const {
        ScratchDir dir("fp8-reader");
        std::ofstream(dir.path() / "config.json")
            << nlohmann::json{{"model_type", "qwen3"}, {"quantization_config", quant}}.dump();
        write_safetensors(dir.path() / "model.safetensors", tensors, {});
        return read_source_model(dir.path());
    }
};

const SourceTensor* find_tensor(const SourceModel& model, const std::string& name) {
    for (const SourceTensor& t : model.tensors)
        if (t.name == name) return &t;
    return nullptr;
}

void expect_fp8_blocker(const Fp8Dir& dir, const std::string& tensor, const std::string& text) {
    const SourceModel model = dir.read();
    ASSERT_FALSE(model.blockers.empty()) << text;
    EXPECT_EQ(model.blockers[0].tensor, tensor);
    EXPECT_NE(model.blockers[0].reason.find("model.safetensors"), std::string::npos);
    EXPECT_NE(model.blockers[0].reason.find(text), std::string::npos) << model.blockers[0].reason;
    EXPECT_EQ(find_tensor(model, kFp8Q + ".weight"), nullptr);
}

TEST(Fp8Reader, ValuesArePerBlockProductsWithPartialEdgeBlocks) {
    const SourceModel model = Fp8Dir().read();
    EXPECT_EQ(model.format, "fp8");
    EXPECT_TRUE(model.blockers.empty());
    const SourceTensor* q = find_tensor(model, kFp8Q + ".weight");
    ASSERT_NE(q, nullptr);
    ASSERT_TRUE(q->fp8.has_value());
    EXPECT_EQ(q->shape, (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(q->fp8->scale_rows(), 2);
    EXPECT_EQ(q->fp8->scale_cols(), 2);
    EXPECT_EQ(q->fp8->scale_dtype, FloatDtype::BF16);
    // Hand-worked: row r, column c takes scale (r / 2, c / 3).
    const float want[15] = {1,    1,    1,    4, 6,     // 1.5 * 4
                            1,    1,    1,    4, 4,     //
                            0.5f, 0.5f, 0.5f, 8, -16};  // -2 * 8
    float got[15];
    source_values_f32(*q, 0, 15, got);
    for (int i = 0; i < 15; ++i) EXPECT_EQ(got[i], want[i]) << i;
    source_values_f32(*q, 9, 3, got);  // a slice across a row boundary
    EXPECT_EQ(got[0], 4.0f);
    EXPECT_EQ(got[1], 0.5f);
    EXPECT_EQ(got[2], 0.5f);
    EXPECT_NE(find_tensor(model, "model.norm.weight"), nullptr);
    // The activation scale is dropped, as ModelBase.dequant_model drops it.
    EXPECT_EQ(find_tensor(model, kFp8Q + ".activation_scale"), nullptr);
    EXPECT_EQ(model.tensors.size(), 2u);
}

TEST(Fp8Reader, HostileScaleShapesAndDtypesAreBlockers) {
    Fp8Dir short_cols;
    short_cols.part(kFp8Q + ".weight_scale_inv").shape = {2, 1};
    short_cols.part(kFp8Q + ".weight_scale_inv").data.resize(4);
    expect_fp8_blocker(short_cols, kFp8Q + ".weight", "(expected [2, 2]");
    Fp8Dir extra_rows;
    extra_rows.part(kFp8Q + ".weight_scale_inv").shape = {3, 2};
    extra_rows.part(kFp8Q + ".weight_scale_inv").data.resize(12);
    expect_fp8_blocker(extra_rows, kFp8Q + ".weight", "has shape [3, 2]");
    Fp8Dir u8_scale;
    u8_scale.part(kFp8Q + ".weight_scale_inv").dtype = "U8";
    u8_scale.part(kFp8Q + ".weight_scale_inv").shape = {2, 4};
    expect_fp8_blocker(u8_scale, kFp8Q + ".weight", "dtype U8 (expected F32 or BF16 or F16)");
    Fp8Dir i8_weight;
    i8_weight.part(kFp8Q + ".weight").dtype = "I8";
    expect_fp8_blocker(i8_weight, kFp8Q + ".weight", "dtype I8 (expected F8_E4M3)");
    Fp8Dir three_d;
    three_d.part(kFp8Q + ".weight").shape = {1, 3, 5};
    expect_fp8_blocker(three_d, kFp8Q + ".weight", "shape [1, 3, 5] (expected [out, in])");
}

TEST(Fp8Reader, NanCodesMissingPartsAndBadScalesAreBlockers) {
    Fp8Dir nan;
    nan.part(kFp8Q + ".weight").data[7] = 0xFF;
    expect_fp8_blocker(nan, kFp8Q + ".weight", "E4M3 byte 0xff at row 1, column 2 is NaN");
    Fp8Dir nan_positive;
    nan_positive.part(kFp8Q + ".weight").data[0] = 0x7F;
    expect_fp8_blocker(nan_positive, kFp8Q + ".weight", "0x7f at row 0, column 0 is NaN");
    Fp8Dir inf_scale;
    inf_scale.part(kFp8Q + ".weight_scale_inv").data = bf16s({0x3F80, 0x7F80, 0, 0});
    expect_fp8_blocker(inf_scale, kFp8Q + ".weight", "block (0, 1) is not a finite scale");
    Fp8Dir no_scale;
    no_scale.tensors.erase(no_scale.tensors.begin() + 1);
    expect_fp8_blocker(no_scale, kFp8Q + ".weight",
                       "F8_E4M3 tensor has no scale (expected " + kFp8Q + ".weight_scale_inv)");
    Fp8Dir no_weight;
    no_weight.tensors.erase(no_weight.tensors.begin());
    expect_fp8_blocker(no_weight, kFp8Q + ".weight_scale_inv", "has no FP8 weight beside it");
}

TEST(Fp8Reader, MalformedQuantizationConfigIsOneInputError) {
    const auto refused = [](const nlohmann::json& block_size, const std::string& text) {
        Fp8Dir dir;
        if (block_size.is_null())
            dir.quant.erase("weight_block_size");
        else
            dir.quant["weight_block_size"] = block_size;
        try {
            dir.read();
            ADD_FAILURE() << "accepted " << block_size.dump();
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos);
        }
    };
    refused(nullptr, "weight_block_size: is missing");
    refused({0, 128}, "is not two block sides");
    refused(nlohmann::json::array({128}), "is not two block sides");
    refused({128, "128"}, "is not two block sides");
    refused({int64_t{1} << 40, 128}, "is not two block sides");
    Fp8Dir e5m2;
    e5m2.quant["fmt"] = "e5m2";
    EXPECT_THROW(e5m2.read(), Error);
}

// ---- the plan's type choice, on hand-worked products ----------------------------------------

struct HandFp8 {
    std::vector<uint8_t> codes, scales;
    SourceTensor tensor;
    HandFp8(std::vector<uint8_t> code_bytes, FloatDtype dtype, std::vector<uint8_t> scale_bytes)
        : codes(std::move(code_bytes)), scales(std::move(scale_bytes)) {
        tensor.name = "layers.0.mlp.up_proj.weight";
        tensor.shape = {1, static_cast<int64_t>(codes.size())};
        Fp8View v;
        v.rows = 1;
        v.cols = static_cast<int64_t>(codes.size());
        v.codes = codes;
        v.scale_dtype = dtype;
        v.scales = scales;
        tensor.fp8 = v;
    }
};

std::string planned_type(const HandFp8& t, bool fallback, std::string* reason = nullptr,
                         OutType outtype = OutType::automatic) {
    PlanOptions options;
    options.allow_lossless_fallback = fallback;
    options.outtype = outtype;
    TensorPlan plan;
    std::vector<Blocker> blockers;
    if (plan_detail::plan_fp8(t.tensor, options, false, &plan, &blockers))
        return ggml_type_name(plan.type);
    if (reason) *reason = blockers.at(0).reason + " | " + blockers.at(0).fix;
    return "BLOCKER";
}

TEST(Fp8Plan, SmallestExactFloatType) {
    // 1.0 and -448 times a BF16 scale of 1: F16 holds both.
    EXPECT_EQ(planned_type(HandFp8({0x38, 0xFE}, FloatDtype::BF16, bf16s({0x3F80})), true), "F16");
    // 2^-9 (the smallest subnormal) times 2^-20: 2^-29 is below fp16's 2^-24, BF16 holds it.
    EXPECT_EQ(planned_type(HandFp8({0x38, 0x01}, FloatDtype::F32, f32s({0x1p-20f})), true), "BF16");
    // 1.875 (1.111b) times BF16 1.9921875 (1.1111111b) = 3825/1024, 12 significant bits: F32.
    EXPECT_EQ(planned_type(HandFp8({0x3F}, FloatDtype::BF16, bf16s({0x3FFF})), true), "F32");
    // 448 times F32 2^120 = 1.75 x 2^128: beyond binary32's range (FLT_MAX < 2^128).
    std::string reason;
    EXPECT_EQ(planned_type(HandFp8({0x7E}, FloatDtype::F32, f32s({0x1p120f})), true, &reason),
              "BLOCKER");
    EXPECT_NE(reason.find("is not a binary32 value"), std::string::npos) << reason;
}

TEST(Fp8Plan, ProductBinary32CannotHoldIsABlockerNamingBlockAndValue) {
    // 1.875 x (1 + 2^-23) = 15 (2^23 + 1) / 2^26: 27 significant bits. Blocks of 2 columns, so
    // column 3 is in block (0, 1), whose scale is the second.
    HandFp8 t({0x38, 0x38, 0x38, 0x3F}, FloatDtype::F32, f32s({1.0f, 1.00000012f}));
    t.tensor.fp8->block_cols = 2;
    std::string reason;
    EXPECT_EQ(planned_type(t, true, &reason), "BLOCKER");
    EXPECT_NE(reason.find("row 0, column 3 (block 0, 1"), std::string::npos) << reason;
    EXPECT_NE(reason.find("= 1.8750002235174179"), std::string::npos) << reason;
    EXPECT_NE(reason.find("no exact GGUF carriage"), std::string::npos) << reason;
    EXPECT_NE(reason.find("lossy"), std::string::npos) << reason;
    // The same with an exact product (code 1.0) converts as F32.
    t.codes[3] = 0x38;
    EXPECT_EQ(planned_type(t, true), "F32");
}

TEST(Fp8Plan, FallbackFlagAndOuttypes) {
    HandFp8 t({0x3F}, FloatDtype::BF16, bf16s({0x3FFF}));
    std::string reason;
    EXPECT_EQ(planned_type(t, false, &reason), "BLOCKER");
    EXPECT_NE(reason.find("--allow-lossless-fallback"), std::string::npos) << reason;
    EXPECT_NE(reason.find("store it as F32"), std::string::npos) << reason;
    EXPECT_EQ(planned_type(t, false, nullptr, OutType::f32), "F32");
    EXPECT_EQ(planned_type(t, false, &reason, OutType::bf16), "BLOCKER");
    EXPECT_NE(reason.find("not exact in BF16"), std::string::npos) << reason;
    HandFp8 f16({0x38, 0xFE}, FloatDtype::BF16, bf16s({0x3F80}));
    EXPECT_EQ(planned_type(f16, false, nullptr, OutType::f16), "F16");
    EXPECT_EQ(planned_type(f16, false, nullptr, OutType::bf16), "BF16");
}

// Experts of one layer whose products fit different float types share the smallest type that holds
// every expert's products (a stacked GGUF tensor has one type).
std::string stacked_type(const HandFp8& e0, const HandFp8& e1) {
    SourceModel model;
    model.tensors = {e0.tensor, e1.tensor};
    model.tensors[0].name = "layers.0.mlp.experts.0.up_proj.weight";
    model.tensors[1].name = "layers.0.mlp.experts.1.up_proj.weight";
    const plan_detail::ExpertGroup group{
        "blk.0.ffn_up_exps.weight", "layers.0.mlp.experts.{e}.up_proj.weight", {0, 1}};
    PlanOptions options;
    options.allow_lossless_fallback = true;
    TensorPlan plan;
    std::vector<Blocker> blockers;
    if (!plan_detail::plan_expert_stack(model, group, options, &plan, &blockers))
        return "BLOCKER " + blockers.at(0).reason;
    return ggml_type_name(plan.type);
}

TEST(Fp8Plan, ExpertsShareTheSmallestTypeExactForAll) {
    // 1.0 and -448 times BF16 1.0: F16 (and BF16) exact. 2^-9 times BF16 2^-20 (0x3580): BF16 only.
    const HandFp8 f16_and_bf16({0x38, 0xFE}, FloatDtype::BF16, bf16s({0x3F80}));
    const HandFp8 bf16_only({0x01, 0x38}, FloatDtype::BF16, bf16s({0x3580}));
    EXPECT_EQ(planned_type(f16_and_bf16, true), "F16");
    EXPECT_EQ(planned_type(bf16_only, true), "BF16");
    EXPECT_EQ(stacked_type(f16_and_bf16, bf16_only), "BF16");
    EXPECT_EQ(stacked_type(bf16_only, f16_and_bf16), "BF16");
    // 1.875 (1.111b) times BF16 1.0078125 (1.0000001b, 0x3F81): 11 significant bits, F16 only.
    const HandFp8 f16_only({0x3F, 0x38}, FloatDtype::BF16, bf16s({0x3F81}));
    EXPECT_EQ(planned_type(f16_only, true), "F16");
    EXPECT_EQ(stacked_type(f16_only, bf16_only), "F32");
    EXPECT_EQ(stacked_type(f16_only, f16_and_bf16), "F16");
}

}  // namespace
}  // namespace rebox::test
