// verify's own phi3 rules: the fused source shapes, the long-rope factor tensors and attention
// factor computed by verify's code (hand-worked values), and end to end on a longrope fixture
// converted with
// --no-verify: it verifies (2 generated tensors), and a rope factor changed by one ulp, a wrong
// attn_factor or sliding_window KV, or a missing factor tensor each make `rebox verify` exit 3
// naming the tensor or key; a Phi-3 general.name over a vocabulary without Phi-3's tokens is
// refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <memory>

#include "format/gguf_file.hpp"
#include "format/gguf_layout.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"
#include "verify/arch/expected_shapes.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

uint32_t bits(float f) {
    uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    return u;
}

verify_ref::RefConfig tiny_phi3() {
    verify_ref::RefConfig c;
    c.model_type = "phi3";
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 16;
    c.intermediate_size = 128;
    c.vocab_size = 100;
    c.max_position_embeddings = 131072;
    c.original_max_position_embeddings = 4096;
    return c;
}

TEST(Phi3VerifyRef, FusedSourceShapes) {
    const verify_ref::RefConfig c = tiny_phi3();
    using Shape = std::vector<int64_t>;
    EXPECT_EQ(verify_ref::expected_hf_shape(c, "layers.1.self_attn.qkv_proj.weight"),
              (Shape{128, 64}));
    EXPECT_EQ(verify_ref::expected_hf_shape(c, "layers.1.self_attn.qkv_proj.bias"), (Shape{128}));
    EXPECT_EQ(verify_ref::expected_hf_shape(c, "layers.1.mlp.gate_up_proj.weight"),
              (Shape{256, 64}));
}

TEST(Phi3VerifyRef, LongRopeValuesAndAttentionFactor) {
    verify_ref::RefConfig c = tiny_phi3();
    EXPECT_FALSE(verify_ref::expected_phi3_long_rope(c).has_value());
    verify_ref::RefRopeScaling s;
    s.type = "longrope";
    s.long_factor = std::vector<double>{1.0, 1.01, 1.5, 2.0, 3.0, 4.0, 5.0, 1.0 / 3.0 + 1.0};
    s.short_factor = std::vector<double>(8, 1.1);
    c.rope_scaling = s;
    auto rope = verify_ref::expected_phi3_long_rope(c);
    ASSERT_TRUE(rope.has_value());
    EXPECT_TRUE(rope->problem.empty()) << rope->problem;
    ASSERT_EQ(rope->long_factors.size(), 8u);
    EXPECT_EQ(bits(rope->long_factors[1]), 0x3F8147AEu);   // 1.01
    EXPECT_EQ(bits(rope->long_factors[7]), 0x3FAAAAABu);   // 4/3
    EXPECT_EQ(bits(rope->short_factors[0]), 0x3F8CCCCDu);  // 1.1
    EXPECT_EQ(bits(rope->attn_factor), 0x3F9859B9u);       // sqrt(17/12)
    // 8192 of 16384 (scale 2): sqrt(1 + ln 2 / ln 8192) = sqrt(1 + 1/13) = 1.03774904...
    c.max_position_embeddings = 16384;
    c.original_max_position_embeddings = 8192;
    EXPECT_EQ(verify_ref::expected_phi3_long_rope(c)->attn_factor,
              static_cast<float>(1.0377490433255416));
    c.rope_scaling->short_factor->pop_back();
    EXPECT_FALSE(verify_ref::expected_phi3_long_rope(c)->problem.empty());
    c.rope_scaling->type = "linear";
    EXPECT_FALSE(verify_ref::expected_phi3_long_rope(c).has_value());
}

class Phi3VerifyEndToEnd : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        scratch_ = std::make_unique<test::ScratchDir>();
        work_ = scratch_->path();
        model_ = work_ / "model";
        gguf_ = work_ / "out.gguf";
        const auto fixture =
            test::run(test::quoted(test::mkfixture_cli()) + " " + test::quoted(model_) +
                      " --preset tiny --tokenizer small --arch phi3 --rope-scaling longrope");
        ASSERT_EQ(fixture.exit_code, 0) << fixture.output;
        const auto convert =
            test::run(test::quoted(test::rebox_cli()) + " convert " + test::quoted(model_) +
                      " -o " + test::quoted(gguf_) + " --no-verify -q");
        ASSERT_EQ(convert.exit_code, 0) << convert.output;
    }
    static void TearDownTestSuite() { scratch_.reset(); }

    static test::RunResult verify(const fs::path& gguf) {
        return test::run(test::quoted(test::rebox_cli()) + " verify " + test::quoted(model_) + " " +
                         test::quoted(gguf));
    }

    // Rewrites the GGUF through GgufLayout with edited KVs and tensors, then verifies it.
    static test::RunResult verify_rebuilt(const std::function<void(GgufLayout&)>& edit_kvs,
                                          const std::string& drop_tensor = "",
                                          const std::string& bump_tensor = "") {
        const auto file = GgufFile::open(gguf_);
        GgufLayout layout;
        for (const GgufKV& kv : file->kvs()) layout.add_kv(kv.key, kv.value);
        edit_kvs(layout);
        std::vector<std::vector<uint8_t>> data;
        for (const GgufTensorInfo& t : file->tensors()) {
            if (t.name == drop_tensor) continue;
            const auto bytes = file->tensor_data(t);
            data.emplace_back(bytes.begin(), bytes.end());
            if (t.name == bump_tensor) {  // first value + 1 ulp
                uint32_t u = 0;
                std::memcpy(&u, data.back().data(), 4);
                ++u;
                std::memcpy(data.back().data(), &u, 4);
            }
            layout.add_tensor(t.name, t.ne, t.type);
        }
        std::vector<uint8_t> out = layout.serialize_metadata();
        out.resize(layout.file_size(), 0);
        for (size_t i = 0; i < data.size(); ++i)
            std::copy(data[i].begin(), data[i].end(),
                      out.begin() + layout.data_offset() + layout.tensors()[i].offset);
        const fs::path mutated = work_ / "mutated.gguf";
        test::write_file(mutated, out);
        return verify(mutated);
    }

    static void expect_fails_naming(const test::RunResult& result, const std::string& name) {
        EXPECT_EQ(result.exit_code, 3) << result.output;
        EXPECT_NE(result.output.find(name), std::string::npos) << result.output;
    }

    static inline std::unique_ptr<test::ScratchDir> scratch_;  // removed in TearDownTestSuite
    static inline fs::path work_, model_, gguf_;
};

TEST_F(Phi3VerifyEndToEnd, ConvertedFixtureVerifies) {
    const auto result = verify(gguf_);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("generated tensors bit-identical: 2/2"), std::string::npos)
        << result.output;
    // The rebuild helper itself changes nothing.
    EXPECT_EQ(verify_rebuilt([](GgufLayout&) {}).exit_code, 0);
}

TEST_F(Phi3VerifyEndToEnd, RopeFactorOneUlpOff) {
    expect_fails_naming(verify_rebuilt([](GgufLayout&) {}, "", "rope_factors_short.weight"),
                        "MISMATCH rope_factors_short.weight");
}

TEST_F(Phi3VerifyEndToEnd, RopeFactorTensorMissing) {
    expect_fails_naming(verify_rebuilt([](GgufLayout&) {}, "rope_factors_long.weight"),
                        "rope_factors_long.weight: missing");
}

TEST_F(Phi3VerifyEndToEnd, WrongAttnFactor) {
    expect_fails_naming(verify_rebuilt([](GgufLayout& layout) {
                            layout.set_kv("phi3.rope.scaling.attn_factor", GgufValue::f32(1.0f));
                        }),
                        "phi3.rope.scaling.attn_factor");
}

TEST_F(Phi3VerifyEndToEnd, WrongSlidingWindow) {
    expect_fails_naming(verify_rebuilt([](GgufLayout& layout) {
                            layout.set_kv("phi3.attention.sliding_window", GgufValue::u32(0));
                        }),
                        "phi3.attention.sliding_window");
}

// llama.cpp's vocabulary loader needs </s>, <unk>, <s> and <|endoftext|> when general.name says
// Phi-3; the small tokenizer has none of the first three: refused (exit 2, nothing written) until
// --name gives another name.
TEST_F(Phi3VerifyEndToEnd, Phi3NameWithoutItsTokensIsRefused) {
    // The converter's name for the directory (docs/gguf.md §4.5) is "Phi3 Tiny": it has "phi3".
    const fs::path named = work_ / "phi3-tiny";
    fs::copy(model_, named, fs::copy_options::recursive);
    const fs::path out = work_ / "named.gguf";
    const auto refused = test::run(test::quoted(test::rebox_cli()) + " convert " +
                                   test::quoted(named) + " -o " + test::quoted(out));
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("BLOCKER general.name: 'Phi3 Tiny'"), std::string::npos)
        << refused.output;
    EXPECT_NE(refused.output.find("has no </s>, <unk>, <s>"), std::string::npos) << refused.output;
    EXPECT_FALSE(fs::exists(out));
    const auto renamed =
        test::run(test::quoted(test::rebox_cli()) + " convert " + test::quoted(named) + " -o " +
                  test::quoted(out) + " --name tiny -q");
    EXPECT_EQ(renamed.exit_code, 0) << renamed.output;
}

}  // namespace
}  // namespace rebox
