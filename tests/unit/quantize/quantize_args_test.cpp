// quantize_rows / dequantize_row refuse bad arguments with one clear Error (input class) and
// write nothing; hand-worked blocks check the primitives (nearest_int's ties to even, ggml's
// fp16 rounding) and -ffp-contract=off is shown to be in effect in the kernels' code.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "quantize/ggml_scalar.hpp"
#include "quantize/quantize.hpp"
#include "quantize/scale_search.hpp"
#include "rebox/rebox.hpp"

namespace rebox {
namespace {

void expect_input_error(const std::function<void()>& call, const std::string& needle) {
    try {
        call();
        ADD_FAILURE() << "no Error thrown (expected one mentioning '" << needle << "')";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input) << e.what();
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(QuantizeRows, RefusesBadArgumentsWithoutWriting) {
    std::vector<float> src(512, 1.f);
    std::vector<uint8_t> dst(1024, 0xcc);
    const auto untouched = dst;
    expect_input_error([&] { quantize_rows(GgmlType::F16, src.data(), dst.data(), 1, 256); },
                       "has no quantizer");
    expect_input_error(
        [&] { quantize_rows(static_cast<GgmlType>(4), src.data(), dst.data(), 1, 256); },
        "has no quantizer");
    expect_input_error([&] { quantize_rows(GgmlType::Q8_0, src.data(), dst.data(), 1, 33); },
                       "n_per_row is 33");
    expect_input_error([&] { quantize_rows(GgmlType::Q4_K, src.data(), dst.data(), 1, 32); },
                       "multiple of the block size 256");
    expect_input_error([&] { quantize_rows(GgmlType::Q4_0, src.data(), dst.data(), -1, 32); },
                       "nrows is -1");
    expect_input_error([&] { quantize_rows(GgmlType::Q4_0, src.data(), dst.data(), 1, 0); },
                       "n_per_row is 0");
    expect_input_error(
        [&] {
            quantize_rows(GgmlType::Q8_0, src.data(), dst.data(),
                          std::numeric_limits<int64_t>::max() / 64, 256);
        },
        "overflow");
    EXPECT_EQ(dst, untouched);
    EXPECT_EQ(quantize_rows(GgmlType::Q8_0, src.data(), dst.data(), 0, 256), 0u);
    EXPECT_EQ(dst, untouched);
}

TEST(DequantizeRow, RefusesBadArguments) {
    std::vector<uint8_t> src(1024, 0);
    std::vector<float> dst(256);
    expect_input_error([&] { dequantize_row(GgmlType::Q4_0, src.data(), dst.data(), 31); },
                       "n is 31");
    expect_input_error([&] { dequantize_row(GgmlType::Q6_K, src.data(), dst.data(), -256); },
                       "n is -256");
    expect_input_error([&] { dequantize_row(GgmlType::Q8_1, src.data(), dst.data(), 32); },
                       "has no dequantizer");
}

TEST(QuantizePrimitives, NearestIntRoundsHalfToEven) {
    EXPECT_EQ(quant::nearest_int(0.5f), 0);
    EXPECT_EQ(quant::nearest_int(1.5f), 2);
    EXPECT_EQ(quant::nearest_int(2.5f), 2);
    EXPECT_EQ(quant::nearest_int(-0.5f), 0);
    EXPECT_EQ(quant::nearest_int(-1.5f), -2);
    EXPECT_EQ(quant::nearest_int(-2.4999998f), -2);
    EXPECT_EQ(quant::nearest_int(4194303.f), 4194303);
}

TEST(QuantizePrimitives, Fp16RoundingAsGgml) {
    EXPECT_EQ(quant::fp32_to_fp16(1.0f), 0x3c00);
    EXPECT_EQ(quant::fp32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ(quant::fp32_to_fp16(65504.f), 0x7bff);
    EXPECT_EQ(quant::fp32_to_fp16(65520.f), 0x7c00);            // tie to even: infinity
    EXPECT_EQ(quant::fp32_to_fp16(0x1p-24f), 0x0001);           // smallest subnormal
    EXPECT_EQ(quant::fp32_to_fp16(0x1p-25f), 0x0000);           // tie to even: zero
    EXPECT_EQ(quant::fp32_to_fp16(0x1.8p-24f), 0x0002);         // tie to even: 2
    EXPECT_EQ(quant::fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);    // tie to even: down
    EXPECT_EQ(quant::fp32_to_fp16(1.0f + 0x1.8p-10f), 0x3c02);  // tie to even: up
    EXPECT_EQ(quant::fp32_to_fp16(std::bit_cast<float>(0x7f800001u)), 0x7e00);  // NaN
    EXPECT_EQ(quant::fp32_to_fp16(std::bit_cast<float>(0xffc12345u)), 0xfe00);  // -NaN
    EXPECT_EQ(std::bit_cast<uint32_t>(quant::fp16_to_fp32(0x0001)), 0x33800000u);
    EXPECT_EQ(std::bit_cast<uint32_t>(quant::fp16_to_fp32(0x7c01)), 0x7fc02000u);  // quieted
}

// 1 + 2^-12 squared is 1 + 2^-11 + 2^-24: rounded (a tie, to even) it is 1 + 2^-11, so
// a*a - (1 + 2^-11) is 0 in two roundings and 2^-24 when fused. contraction_probe is compiled
// with FMA enabled for it, so only -ffp-contract=off keeps it at two roundings.
TEST(QuantizePrimitives, KernelsAreCompiledWithoutFpContraction) {
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("fma")) GTEST_SKIP() << "this CPU has no FMA";
#endif
    volatile float a = 1.0f + 0x1p-12f;
    volatile float c = -(1.0f + 0x1p-11f);
    EXPECT_EQ(quant::contraction_probe(a, a, c), 0.0f)
        << "a*b+c was fused: the kernels are not built with -ffp-contract=off";
}

}  // namespace
}  // namespace rebox
