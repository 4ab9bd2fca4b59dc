// The planner's per-tensor exactness decisions on hand-made quantized tensors: BF16/F32 scales and
// mins are carried into Q4_1/Q5_1 only when fp16 holds them exactly (values worked out by hand from
// the bfloat16/binary16 layouts), a BLOCKER names the first offending group with its value,
// all-zero groups may carry an inexact scale as d = 0, and --allow-lossless-fallback picks F16
// exactly when every value code*scale+min fits fp16, else F32.
#include <gtest/gtest.h>

#include <vector>

#include "hand_tensor.hpp"
#include "plan/tensor_rules.hpp"
#include "quant_test_bytes.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

using test::f32_le;
using test::HandTensor;
using test::u16_le;

struct Outcome {
    bool ok = false;
    TensorPlan plan;
    std::vector<Blocker> blockers;
};

Outcome plan_of(const HandTensor& t, bool fallback = false, OutType outtype = OutType::automatic) {
    PlanOptions options;
    options.allow_lossless_fallback = fallback;
    options.outtype = outtype;
    Outcome o;
    o.ok =
        plan_detail::plan_tensor(t.tensor, 0, "blk.0.ffn_up.weight", options, &o.plan, &o.blockers);
    return o;
}

constexpr GgmlType kQ4_1 = GgmlType::Q4_1;
constexpr GgmlType kQ5_1 = GgmlType::Q5_1;
constexpr GgmlType kF16 = GgmlType::F16;
constexpr GgmlType kF32 = GgmlType::F32;

std::vector<uint8_t> ramp(size_t n, int bits) {
    std::vector<uint8_t> codes(n);
    for (size_t i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(i % (1u << bits));
    return codes;
}

TEST(PlanExactness, Bf16ScaleExactInFp16GoesToQ4_1) {
    // bf16 0x3f81 = 1 + 2^-7: fp16 has 10 mantissa bits, so it is exact (0x3c08).
    // Mins bf16 0xbf80 = -1.0 and 0x3e00 = 0.125: exact.
    const HandTensor t(4, 32, 2, 32, ramp(64, 4), FloatDtype::BF16, u16_le({0x3f81, 0x3f81}),
                       u16_le({0xbf80, 0x3e00}));
    const Outcome o = plan_of(t);
    ASSERT_TRUE(o.ok) << (o.blockers.empty() ? "" : o.blockers[0].reason);
    EXPECT_EQ(o.plan.type, kQ4_1);
    EXPECT_EQ(o.plan.encoding, Encoding::q4_1_repack);
    EXPECT_EQ(o.plan.nbytes, 2u * 20);
    EXPECT_FALSE(o.plan.zero_code_groups_get_zero_scale);
    EXPECT_NE(o.plan.note.find("BF16 scales/mins exact in fp16"), std::string::npos) << o.plan.note;
}

TEST(PlanExactness, NegativeScalesAreKept) {
    // bf16 0xbf81 = -1.0078125: exact in fp16 (0xbc08); MLX stores negative scales for ~half the
    // groups.
    const HandTensor t(4, 32, 1, 32, ramp(32, 4), FloatDtype::BF16, u16_le({0xbf81}),
                       u16_le({0x3f80}));
    const Outcome o = plan_of(t);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.plan.type, kQ4_1);
}

TEST(PlanExactness, F32ScaleOneTenthIsABlockerNamingTheGroup) {
    // Group 0: scale 0.5 (exact). Group 1: 0.1f = 0x3dcccccd, whose 24-bit significand does not fit
    // fp16's 11 bits; the group has non-zero codes.
    const HandTensor t(4, 32, 2, 32, ramp(64, 4), FloatDtype::F32, f32_le({0.5f, 0.1f}),
                       f32_le({0.0f, 0.0f}));
    const Outcome o = plan_of(t);
    EXPECT_FALSE(o.ok);
    ASSERT_EQ(o.blockers.size(), 1u);
    EXPECT_EQ(o.blockers[0].tensor, "layers.0.mlp.up_proj.weight");
    EXPECT_NE(o.blockers[0].reason.find("scale of group 1 (0.100000001 = f32 0x3dcccccd) is not "
                                        "exactly representable as fp16"),
              std::string::npos)
        << o.blockers[0].reason;
    EXPECT_NE(o.blockers[0].fix.find("--allow-lossless-fallback"), std::string::npos);
}

TEST(PlanExactness, Bf16MinBelowFp16SubnormalsIsABlocker) {
    // bf16 0x3300: exponent 0x66 = 102 -> 2^-25, half of fp16's smallest subnormal 2^-24: not
    // exact.
    const HandTensor t(4, 32, 3, 32, ramp(96, 4), FloatDtype::BF16,
                       u16_le({0x3f80, 0x3f80, 0x3f80}), u16_le({0x0000, 0x3300, 0x3300}));
    const Outcome o = plan_of(t);
    EXPECT_FALSE(o.ok);
    ASSERT_EQ(o.blockers.size(), 1u);
    EXPECT_NE(o.blockers[0].reason.find(
                  "min of group 1 (2.98023224e-08 = BF16 0x3300) is not exactly representable"),
              std::string::npos)
        << o.blockers[0].reason;
}

TEST(PlanExactness, AllZeroCodeGroupCarriesAnInexactScaleAsZero) {
    // Group 1 has only zero codes and scale bf16 0x33d7 ((1 + 87/128) * 2^-24, ~1e-7, not a whole
    // multiple of 2^-24): only its min matters, so the tensor plans to Q4_1 with d = 0 there.
    std::vector<uint8_t> codes = ramp(96, 4);
    for (int i = 32; i < 64; ++i) codes[i] = 0;
    const HandTensor t(4, 32, 3, 32, codes, FloatDtype::BF16, u16_le({0x3f80, 0x33d7, 0x3f80}),
                       u16_le({0x0000, 0xbe00, 0x0000}));
    const Outcome o = plan_of(t);
    ASSERT_TRUE(o.ok) << (o.blockers.empty() ? "" : o.blockers[0].reason);
    EXPECT_EQ(o.plan.type, kQ4_1);
    EXPECT_TRUE(o.plan.zero_code_groups_get_zero_scale);
    EXPECT_NE(o.plan.note.find("1 group(s) with all codes 0"), std::string::npos) << o.plan.note;

    // The same scale where the group has one non-zero code is a BLOCKER.
    codes[40] = 1;
    const HandTensor used(4, 32, 3, 32, codes, FloatDtype::BF16, u16_le({0x3f80, 0x33d7, 0x3f80}),
                          u16_le({0x0000, 0xbe00, 0x0000}));
    const Outcome refused = plan_of(used);
    EXPECT_FALSE(refused.ok);
    ASSERT_EQ(refused.blockers.size(), 1u);
    EXPECT_NE(refused.blockers[0].reason.find("scale of group 1"), std::string::npos);
    EXPECT_NE(refused.blockers[0].reason.find("non-zero codes"), std::string::npos);
}

TEST(PlanExactness, NaNScaleInAllZeroGroupIsABlocker) {
    const HandTensor t(4, 32, 1, 32, std::vector<uint8_t>(32, 0), FloatDtype::BF16,
                       u16_le({0x7fc0}), u16_le({0x0000}));
    EXPECT_FALSE(plan_of(t).ok);
}

TEST(PlanExactness, FiveBitGoesToQ5_1ByDefault) {
    // --outtype auto: Q5_1 is the smallest block type holding 5-bit codes exactly; no flag needed.
    // Q5_1: 32 values per 24-byte block; [2, 64] = 4 blocks = 96 bytes.
    const HandTensor t(5, 64, 2, 64, ramp(128, 5), FloatDtype::F16, u16_le({0x3c00, 0x3c00}),
                       u16_le({0x0000, 0x0000}));
    for (const bool fallback : {false, true}) {
        const Outcome o = plan_of(t, fallback);
        ASSERT_TRUE(o.ok) << fallback;
        EXPECT_EQ(o.plan.type, kQ5_1);
        EXPECT_EQ(o.plan.encoding, Encoding::q5_1_repack);
        EXPECT_EQ(o.plan.nbytes, 96u);
    }
}

TEST(PlanExactness, FiveBitIsABlockerUnderOuttypeQ4_1) {
    const HandTensor t(5, 64, 2, 64, ramp(128, 5), FloatDtype::F16, u16_le({0x3c00, 0x3c00}),
                       u16_le({0x0000, 0x0000}));
    const Outcome o = plan_of(t, false, OutType::q4_1);
    EXPECT_FALSE(o.ok);
    ASSERT_EQ(o.blockers.size(), 1u);
    EXPECT_EQ(o.blockers[0].tensor, "layers.0.mlp.up_proj.weight");
    EXPECT_NE(o.blockers[0].reason.find("bits 5"), std::string::npos);
    EXPECT_NE(o.blockers[0].fix.find("--outtype auto"), std::string::npos);
    // With the fallback, --outtype q4_1 keeps Q4_1 as the only block type: codes c, scale 1, min
    // 0 are the integers 0..31, all fp16: an F16 copy.
    const Outcome fallback = plan_of(t, true, OutType::q4_1);
    ASSERT_TRUE(fallback.ok);
    EXPECT_EQ(fallback.plan.type, kF16);
    EXPECT_EQ(fallback.plan.encoding, Encoding::dequant_f16);
}

TEST(PlanExactness, FiveBitWithGroup16IsABlockerNamingTheFlag) {
    const HandTensor t(5, 16, 1, 32, ramp(32, 5), FloatDtype::F16, u16_le({0x3c00, 0x3c00}),
                       u16_le({0x0000, 0x0000}));
    const Outcome o = plan_of(t);
    EXPECT_FALSE(o.ok);
    ASSERT_EQ(o.blockers.size(), 1u);  // group 16 (5 bits alone would be Q5_1)
    EXPECT_NE(o.blockers[0].reason.find("group 16 is not a multiple of 32"), std::string::npos);
    EXPECT_NE(o.blockers[0].fix.find("--allow-lossless-fallback"), std::string::npos);
    const Outcome q4_1 = plan_of(t, false, OutType::q4_1);
    ASSERT_EQ(q4_1.blockers.size(), 2u);  // bits 5 and group 16
    EXPECT_NE(q4_1.blockers[0].reason.find("bits 5"), std::string::npos);
    EXPECT_NE(q4_1.blockers[1].reason.find("group 16"), std::string::npos);
}

TEST(PlanExactness, BlockerSaysWhatTheFallbackCosts) {
    // 64 6-bit codes: 48 code bytes + one fp16 scale + one fp16 min = 52 packed bytes. The values
    // 0.5 + c * 2^-10 are all fp16 (see FallbackSixBitScalePowerOfTwoIsF16): F16, 128 bytes,
    // 128/52 = 2.46x, +76 bytes.
    const HandTensor t(6, 64, 1, 64, ramp(64, 6), FloatDtype::F16, u16_le({0x1400}),
                       u16_le({0x3800}));
    const Outcome o = plan_of(t);
    ASSERT_EQ(o.blockers.size(), 1u);
    const std::string& fix = o.blockers[0].fix;
    EXPECT_NE(fix.find("F16: 128 bytes, 2.46x its 52 packed bytes (+76 bytes)"), std::string::npos)
        << fix;
    EXPECT_EQ(o.blockers[0].fallback_growth_bytes, 76u);
}

TEST(PlanExactness, SixBitIsABlockerWithoutTheFlag) {
    const HandTensor t(6, 64, 1, 64, ramp(64, 6), FloatDtype::F16, u16_le({0x1400}),
                       u16_le({0x3800}));
    const Outcome o = plan_of(t);
    EXPECT_FALSE(o.ok);
    ASSERT_EQ(o.blockers.size(), 1u);
    EXPECT_NE(o.blockers[0].reason.find("bits 6"), std::string::npos);
    EXPECT_NE(o.blockers[0].fix.find("--allow-lossless-fallback"), std::string::npos);
}

TEST(PlanExactness, FallbackSixBitScalePowerOfTwoIsF16) {
    // 0.5 + c * 2^-10 for c <= 63 lies in [0.5, 0.5616) where fp16's step is 2^-11: all exact.
    const HandTensor t(6, 64, 2, 64, ramp(128, 6), FloatDtype::F16, u16_le({0x1400, 0x1400}),
                       u16_le({0x3800, 0x3800}));
    const Outcome o = plan_of(t, true);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.plan.type, kF16);
    EXPECT_EQ(o.plan.encoding, Encoding::dequant_f16);
    EXPECT_EQ(o.plan.nbytes, 128u * 2);
    EXPECT_NE(o.plan.note.find("bits 6"), std::string::npos) << o.plan.note;
    EXPECT_NE(o.plan.note.find("F16"), std::string::npos) << o.plan.note;
}

TEST(PlanExactness, FallbackSixBitScaleOneTenthIsF32) {
    // fp16 0x2e66 = 1638 * 2^-14; 0.5 + 0x2e66 (code 1) is not a multiple of 2^-11: F32.
    const HandTensor t(6, 64, 2, 64, ramp(128, 6), FloatDtype::F16, u16_le({0x1400, 0x2e66}),
                       u16_le({0x3800, 0x3800}));
    const Outcome o = plan_of(t, true);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.plan.type, kF32);
    EXPECT_EQ(o.plan.encoding, Encoding::dequant_f32);
    EXPECT_EQ(o.plan.nbytes, 128u * 4);
    EXPECT_NE(o.plan.note.find("F32"), std::string::npos) << o.plan.note;
}

TEST(PlanExactness, FallbackAlsoTakesInexactBf16Scales) {
    // 4-bit but scale 0x33d7 with non-zero codes: no Q4_1; values c * 1.0012e-7 are fp16
    // subnormal-range numbers 215c * 2^-31, not multiples of 2^-24 for c = 1: F32.
    const HandTensor t(4, 32, 1, 32, ramp(32, 4), FloatDtype::BF16, u16_le({0x33d7}),
                       u16_le({0x0000}));
    const Outcome o = plan_of(t, true);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.plan.type, kF32);
    EXPECT_NE(o.plan.note.find("scale of group 0"), std::string::npos) << o.plan.note;
}

}  // namespace
}  // namespace rebox
