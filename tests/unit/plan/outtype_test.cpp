// --outtype f16 / bf16 per tensor and the bytes they produce: quantized tensors dequantized to
// bf16, float tensors re-stored as fp16 or bf16, each only when every value is exact in the target
// type (else one BLOCKER naming the first inexact value); 1-D tensors stay F32 whatever the
// outtype. Expected bits are worked by hand from the binary16/bfloat16 layouts.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "convert/chunk_encoder.hpp"
#include "hand_tensor.hpp"
#include "plan/tensor_rules.hpp"
#include "quant_test_bytes.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

using test::u16_le;

// A float source tensor owning its little-endian bytes.
struct FloatTensor {
    std::vector<uint8_t> bytes;
    SourceTensor tensor;
    FloatTensor(FloatDtype dtype, std::vector<uint8_t> data, std::vector<int64_t> shape)
        : bytes(std::move(data)) {
        tensor.name = "model.layers.0.mlp.up_proj.weight";
        tensor.shape = std::move(shape);
        tensor.float_dtype = dtype;
        tensor.float_data = bytes;
    }
    FloatTensor(const FloatTensor&) = delete;
};

std::vector<uint8_t> f32_bytes(const std::vector<float>& values) {
    std::vector<uint8_t> out(values.size() * 4);
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

struct Outcome {
    bool ok = false;
    TensorPlan plan;
    std::vector<Blocker> blockers;
};

Outcome plan_of(const SourceTensor& t, OutType outtype,
                const std::string& gguf_name = "blk.0.ffn_up.weight") {
    PlanOptions options;
    options.outtype = outtype;
    Outcome o;
    o.ok = plan_detail::plan_tensor(t, 0, gguf_name, options, &o.plan, &o.blockers);
    return o;
}

std::vector<uint8_t> encoded(const SourceTensor& t, const TensorPlan& plan) {
    std::vector<uint8_t> out(plan.nbytes);
    const uint64_t n = t.element_count();
    convert_detail::encode_chunk(t, plan, convert_detail::Chunk{0, 0, n, 0, plan.nbytes}, out);
    return out;
}

TEST(Outtype, NamesRoundTrip) {
    for (const char* name : {"auto", "q4_1", "f32", "f16", "bf16"})
        EXPECT_STREQ(outtype_name(*parse_outtype(name)), name);
    EXPECT_FALSE(parse_outtype("q8_0").has_value());
    EXPECT_EQ(PlanOptions{}.outtype, OutType::automatic);
}

TEST(Outtype, QuantizedToBf16WhenEveryValueIsExact) {
    // 4-bit codes 0..15 (x4), scale 1.0, min 0: values 0..15; bf16 of 0, 1, 2, 3 = 0x0000,
    // 0x3f80, 0x4000, 0x4040; 15 = 0x4170.
    std::vector<uint8_t> codes(64);
    for (size_t i = 0; i < 64; ++i) codes[i] = static_cast<uint8_t>(i % 16);
    const test::HandTensor t(4, 32, 2, 32, codes, FloatDtype::F16, u16_le({0x3c00, 0x3c00}),
                             u16_le({0x0000, 0x0000}));
    const Outcome o = plan_of(t.tensor, OutType::bf16);
    ASSERT_TRUE(o.ok) << o.blockers[0].reason;
    EXPECT_EQ(o.plan.type, GgmlType::BF16);
    EXPECT_EQ(o.plan.encoding, Encoding::dequant_bf16);
    EXPECT_EQ(o.plan.nbytes, 128u);
    const std::vector<uint8_t> bytes = encoded(t.tensor, o.plan);
    EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 8),
              (std::vector<uint8_t>{0x00, 0x00, 0x80, 0x3f, 0x00, 0x40, 0x40, 0x40}));
    EXPECT_EQ(bytes[30], 0x70);
    EXPECT_EQ(bytes[31], 0x41);
}

TEST(Outtype, QuantizedNotExactInBf16IsABlockerNamingTheValue) {
    // 6-bit, scale 2^-10, min 0.5: value 1 = 0.5 + 2^-10 = 1.001953125 * 2^-1 needs 9 fraction
    // bits (binary32 0x3f004000); bf16 keeps 7.
    std::vector<uint8_t> codes(64);
    for (size_t i = 0; i < 64; ++i) codes[i] = static_cast<uint8_t>(i);
    const test::HandTensor t(6, 64, 1, 64, codes, FloatDtype::F16, u16_le({0x1400}),
                             u16_le({0x3800}));
    const Outcome o = plan_of(t.tensor, OutType::bf16);
    EXPECT_FALSE(o.ok);
    ASSERT_EQ(o.blockers.size(), 1u);
    EXPECT_EQ(o.blockers[0].tensor, "layers.0.mlp.up_proj.weight");
    EXPECT_NE(o.blockers[0].reason.find("value 0.500976562 (0x3f004000) at index 1 is not exact "
                                        "in BF16"),
              std::string::npos)
        << o.blockers[0].reason;
    // The same values are all fp16 (2^-11 grid in [0.5, 1)): --outtype f16 takes them.
    const Outcome f16 = plan_of(t.tensor, OutType::f16);
    ASSERT_TRUE(f16.ok);
    EXPECT_EQ(f16.plan.encoding, Encoding::dequant_f16);
}

TEST(Outtype, F32TensorRecastToF16AndRefusedAsBf16) {
    // 1.5, -2, 0.25, 65504 in fp16: 0x3e00, 0xc000, 0x3400, 0x7bff. 65504 = 0x477fe000 has
    // non-zero low 16 bits: not a bf16 value.
    const FloatTensor t(FloatDtype::F32, f32_bytes({1.5f, -2.0f, 0.25f, 65504.0f}), {2, 2});
    const Outcome f16 = plan_of(t.tensor, OutType::f16);
    ASSERT_TRUE(f16.ok) << f16.blockers[0].reason;
    EXPECT_EQ(f16.plan.encoding, Encoding::recast_f16);
    EXPECT_EQ(f16.plan.type, GgmlType::F16);
    EXPECT_EQ(encoded(t.tensor, f16.plan),
              (std::vector<uint8_t>{0x00, 0x3e, 0x00, 0xc0, 0x00, 0x34, 0xff, 0x7b}));
    const Outcome bf16 = plan_of(t.tensor, OutType::bf16);
    EXPECT_FALSE(bf16.ok);
    ASSERT_EQ(bf16.blockers.size(), 1u);
    EXPECT_NE(bf16.blockers[0].reason.find("value 65504 (0x477fe000) at index 3"),
              std::string::npos)
        << bf16.blockers[0].reason;
}

TEST(Outtype, F32ValueAboveFp16RangeIsRefusedForF16) {
    // 99840 = bf16 0x47c3 (exact in bf16) > 65504: --outtype f16 names it, bf16 takes it.
    const FloatTensor t(FloatDtype::F32, f32_bytes({0.5f, 99840.0f}), {1, 2});
    const Outcome f16 = plan_of(t.tensor, OutType::f16);
    EXPECT_FALSE(f16.ok);
    ASSERT_EQ(f16.blockers.size(), 1u);
    EXPECT_NE(
        f16.blockers[0].reason.find("value 99840 (0x47c30000) at index 1 is not exact in F16"),
        std::string::npos)
        << f16.blockers[0].reason;
    const Outcome bf16 = plan_of(t.tensor, OutType::bf16);
    ASSERT_TRUE(bf16.ok);
    EXPECT_EQ(bf16.plan.encoding, Encoding::recast_bf16);
    EXPECT_EQ(encoded(t.tensor, bf16.plan), (std::vector<uint8_t>{0x00, 0x3f, 0xc3, 0x47}));
}

TEST(Outtype, F16TensorRecastToBf16OnlyWhenExact) {
    // fp16 1.5 (0x3e00) = bf16 0x3fc0; fp16 1 + 2^-10 (0x3c01) needs 10 fraction bits: not bf16.
    const FloatTensor exact(FloatDtype::F16, u16_le({0x3e00, 0x3e00}), {1, 2});
    const Outcome ok = plan_of(exact.tensor, OutType::bf16);
    ASSERT_TRUE(ok.ok);
    EXPECT_EQ(ok.plan.encoding, Encoding::recast_bf16);
    EXPECT_EQ(encoded(exact.tensor, ok.plan), (std::vector<uint8_t>{0xc0, 0x3f, 0xc0, 0x3f}));
    const FloatTensor inexact(FloatDtype::F16, u16_le({0x3e00, 0x3c01}), {1, 2});
    EXPECT_FALSE(plan_of(inexact.tensor, OutType::bf16).ok);
    // Under f16 an F16 tensor is a plain copy; under auto it keeps its dtype.
    EXPECT_EQ(plan_of(inexact.tensor, OutType::f16).plan.encoding, Encoding::copy_f16);
    EXPECT_EQ(plan_of(inexact.tensor, OutType::automatic).plan.encoding, Encoding::copy_f16);
}

TEST(Outtype, OneDimensionalTensorsStayF32WhateverTheOuttype) {
    // bf16 0x3fc0 = 1.5 widened: binary32 0x3fc00000.
    const FloatTensor norm(FloatDtype::BF16, u16_le({0x3fc0, 0x3fc0}), {2});
    for (const OutType outtype :
         {OutType::automatic, OutType::q4_1, OutType::f32, OutType::f16, OutType::bf16}) {
        const Outcome o = plan_of(norm.tensor, outtype, "blk.0.attn_norm.weight");
        ASSERT_TRUE(o.ok) << outtype_name(outtype);
        EXPECT_EQ(o.plan.type, GgmlType::F32) << outtype_name(outtype);
        EXPECT_EQ(o.plan.encoding, Encoding::widen_f32) << outtype_name(outtype);
    }
}

}  // namespace
}  // namespace rebox
