// rope_freqs.weight for llama3 rope scaling: both the converter's computation (src/arch) and
// verify's own (src/verify/values/ref_rope) against values worked out outside the code: for
// head_dim 16, theta 500000, factor 32, low 1, high 4, original context 8192 (Llama 3.2's numbers),
// the wavelengths 2*pi*500000^(k/16) are < 2048 for k = 0..6 (factor 1), 2*pi*707.107 = 4442.88 for
// k = 8 (in the band: smooth = (8192/4442.88 - 1)/3 = 0.28129, 1/((1-smooth)/32 + smooth) =
// 3.29226), and > 8192 for k >= 10 (factor 32). The exact binary32 bits of the band value come
// from a float32 emulation in Python (struct round trips after every torch float32 operation).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

#include "arch/transforms.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox {
namespace {

ModelConfig rope_config(uint32_t head_dim, float theta, RopeScalingConfig scaling) {
    ModelConfig c;
    c.model_type = "llama";
    c.head_dim = head_dim;
    c.rope_theta = theta;
    c.rope_scaling = scaling;
    return c;
}

// The same numbers as verify's own config type (src/verify/sources/ref_config.hpp).
verify_ref::RefConfig as_ref_config(const ModelConfig& config) {
    verify_ref::RefConfig c;
    c.model_type = config.model_type;
    c.head_dim = config.head_dim;
    c.rope_theta = config.rope_theta;
    const RopeScalingConfig& s = *config.rope_scaling;
    c.rope_scaling = verify_ref::RefRopeScaling{s.type,
                                                s.factor,
                                                s.low_freq_factor,
                                                s.high_freq_factor,
                                                s.original_max_position_embeddings,
                                                {},
                                                {},
                                                {},
                                                {},
                                                {},
                                                {},
                                                {}};
    return c;
}

std::vector<uint32_t> bits_of(const std::vector<float>& values) {
    std::vector<uint32_t> out;
    for (const float v : values) out.push_back(std::bit_cast<uint32_t>(v));
    return out;
}

struct Expected {
    ModelConfig config;
    std::vector<uint32_t> bits;
};

std::vector<Expected> cases() {
    return {
        {rope_config(16, 500000.0f, {"llama3", 32.0, 1.0, 4.0, 8192, {}, {}, {}, {}, {}, {}, {}}),
         {0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x4052b46f, 0x42000000, 0x42000000,
          0x42000000}},  // 1 1 1 1 3.2922628 32 32 32
        // theta 10000, factor 8, original context 64: two values in the band (1.2939758 and
        // 7.6673851), and the converter's defaults for the two frequency factors.
        {rope_config(16, 10000.0f,
                     {"llama3", 8.0, std::nullopt, std::nullopt, 64, {}, {}, {}, {}, {}, {}, {}}),
         {0x3f800000, 0x3fa5a100, 0x40f55b38, 0x41000000, 0x41000000, 0x41000000, 0x41000000,
          0x41000000}},
    };
}

TEST(RopeFreqs, ConverterComputationMatchesHandValues) {
    for (const Expected& e : cases()) EXPECT_EQ(bits_of(arch::llama3_rope_freqs(e.config)), e.bits);
}

TEST(RopeFreqs, VerifyComputationMatchesHandValues) {
    for (const Expected& e : cases())
        EXPECT_EQ(bits_of(verify_ref::expected_llama3_rope_freqs(as_ref_config(e.config))), e.bits);
}

TEST(RopeFreqs, DefaultsAreTheConvertersDefaults) {
    // No numbers given: factor 8, low 1, high 4, original context 8192.
    const ModelConfig bare =
        rope_config(16, 500000.0f, {"llama3", {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}});
    const ModelConfig full =
        rope_config(16, 500000.0f, {"llama3", 8.0, 1.0, 4.0, 8192, {}, {}, {}, {}, {}, {}, {}});
    EXPECT_EQ(bits_of(arch::llama3_rope_freqs(bare)), bits_of(arch::llama3_rope_freqs(full)));
    EXPECT_EQ(arch::llama3_rope_freqs(bare).back(), 8.0f);
}

}  // namespace
}  // namespace rebox
