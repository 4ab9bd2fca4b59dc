// End to end for gemma: an F16 gemma3 fixture (tools/mkfixture, norms stored around 0 as HF stores
// them) converted by `rebox convert --no-verify` verifies, and verify refuses (exit 3, naming the
// tensor) a norm left unshifted, a norm shifted by a binary32 add where the converter's fp16 add
// rounds, a wrong last row of the cut token_embd; a multimodal fixture converts with its mmproj.
// Also verify's own fp16 rounding (ref_norm_shift.hpp) on hand-worked values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "format/gguf_file.hpp"
#include "format/half.hpp"
#include "format/safetensors.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"
#include "verify/values/ref_norm_shift.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

TEST(GemmaRefNormShift, HandWorkedFp16Rounding) {
    using verify_ref::add_one_as_converter;
    using verify_ref::SourceFloat;
    // 2^-10 + 2^-20 (fp16 0x1401): fp16(1 + 2^-10 + 2^-20) = 1 + 2^-10; 2^-11: tie to even, 1;
    // 1.5 * 2^-10: tie to even, 1 + 2^-9; -1: +0.
    float f16[] = {std::ldexp(1.0f, -10) + std::ldexp(1.0f, -20), std::ldexp(1.0f, -11),
                   1.5f * std::ldexp(1.0f, -10), -1.0f};
    add_one_as_converter(SourceFloat::F16, f16);
    EXPECT_EQ(std::bit_cast<uint32_t>(f16[0]), 0x3F802000u);
    EXPECT_EQ(f16[1], 1.0f);
    EXPECT_EQ(std::bit_cast<uint32_t>(f16[2]), 0x3F804000u);
    EXPECT_EQ(std::bit_cast<uint32_t>(f16[3]), 0u);
    // BF16 and F32 sources: a binary32 add (2^-7 + 2^-14 keeps its 2^-14).
    float bf16[] = {std::ldexp(1.0f, -7) + std::ldexp(1.0f, -14)};
    add_one_as_converter(SourceFloat::BF16, bf16);
    EXPECT_EQ(std::bit_cast<uint32_t>(bf16[0]), 0x3F810200u);
    EXPECT_EQ(verify_ref::round_to_fp16(65519.0), 65504.0);
    EXPECT_TRUE(std::isinf(verify_ref::round_to_fp16(65520.0)));
    EXPECT_EQ(verify_ref::round_to_fp16(std::ldexp(1.0, -25)), 0.0);  // tie with 0: even
    EXPECT_EQ(verify_ref::round_to_fp16(3 * std::ldexp(1.0, -26)), std::ldexp(1.0, -24));
}

class GemmaVerify : public ::testing::Test {
  protected:
    fs::path fixture(const std::string& name, const std::string& flags) {
        const fs::path dir = work_ / name;
        const auto made = test::run(quoted(test::mkfixture_cli()) + " " + quoted(dir) +
                                    " --preset tiny --tokenizer small " + flags);
        EXPECT_EQ(made.exit_code, 0) << made.output;
        return dir;
    }
    // Converts without verifying, applies `patch` to the F32 values of `tensor`, runs verify.
    test::RunResult verify_patched(const fs::path& model, const std::string& tensor,
                                   const std::function<void(std::span<float>)>& patch,
                                   const std::string& convert_flags = "") {
        const fs::path gguf = work_ / "out.gguf";
        const auto convert =
            test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) + " -o " +
                      quoted(gguf) + " --no-verify -q --force " + convert_flags);
        EXPECT_EQ(convert.exit_code, 0) << convert.output;
        std::vector<uint8_t> bytes = test::read_file_bytes(gguf);
        {
            const auto file = GgufFile::open(gguf);
            const GgufTensorInfo* t = file->find_tensor(tensor);
            EXPECT_NE(t, nullptr) << tensor;
            if (t == nullptr) return {};
            std::vector<float> values(t->nbytes / 4);
            const uint64_t at = file->data_offset() + t->offset;
            std::memcpy(values.data(), bytes.data() + at, t->nbytes);
            patch(values);
            std::memcpy(bytes.data() + at, values.data(), t->nbytes);
        }
        test::write_file(gguf, bytes);
        return test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " +
                         quoted(gguf));
    }
    test::ScratchDir scratch_;
    fs::path work_ = scratch_.path();
};

TEST_F(GemmaVerify, F16NormsNeedTheFp16Add) {
    const fs::path model = fixture("g3", "--arch gemma3 --format float --dtype f16");
    EXPECT_EQ(verify_patched(model, "blk.0.attn_norm.weight", [](std::span<float>) {}).exit_code,
              0);
    // Unshifted.
    const auto unshifted =
        verify_patched(model, "blk.0.attn_norm.weight", [](std::span<float> v) { v[3] -= 1.0f; });
    EXPECT_EQ(unshifted.exit_code, 3) << unshifted.output;
    EXPECT_NE(unshifted.output.find("blk.0.attn_norm.weight"), std::string::npos)
        << unshifted.output;
    // A binary32 add where the fp16 add rounds: find such a value in the source.
    const auto st = SafetensorsFile::open(model / "model.safetensors");
    const StTensorInfo* norm = st->find("model.layers.0.post_attention_layernorm.weight");
    ASSERT_NE(norm, nullptr);
    const auto data = st->data(*norm);
    size_t index = SIZE_MAX;
    float binary32 = 0;
    for (size_t i = 0; i < norm->element_count(); ++i) {
        const uint16_t h = static_cast<uint16_t>(data[2 * i] | (data[2 * i + 1] << 8));
        const float sum = half_to_float(h) + 1.0f;
        if (half_to_float(float_to_half(sum)) != sum) {
            index = i;
            binary32 = sum;
            break;
        }
    }
    ASSERT_NE(index, SIZE_MAX) << "the fixture has no value where the fp16 add rounds";
    const auto f32_add = verify_patched(model, "blk.0.post_attention_norm.weight",
                                        [&](std::span<float> v) { v[index] = binary32; });
    EXPECT_EQ(f32_add.exit_code, 3) << f32_add.output;
    EXPECT_NE(f32_add.output.find("blk.0.post_attention_norm.weight"), std::string::npos)
        << f32_add.output;
}

TEST_F(GemmaVerify, MultimodalConvertsAndTheCutEmbeddingIsChecked) {
    const fs::path model = fixture("mm", "--arch gemma3 --multimodal");
    const auto ok = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) + " -o " +
                              quoted(work_ / "mm.gguf") + " --outtype f32");
    EXPECT_EQ(ok.exit_code, 0) << ok.output;
    EXPECT_NE(ok.output.find("39 vision tower / multimodal projector tensor(s) written to the "
                             "mmproj file"),
              std::string::npos)
        << ok.output;
    EXPECT_TRUE(fs::exists(work_ / "mmproj-mm.gguf"));
    // The cut embedding's last kept row is compared too (a wrong row there is refused).
    const auto extra_row = verify_patched(
        model, "token_embd.weight",
        [](std::span<float> v) {
            for (size_t i = v.size() - 64; i < v.size(); ++i) v[i] = 0.5f;
        },
        "--outtype f32");
    EXPECT_EQ(extra_row.exit_code, 3) << extra_row.output;
    EXPECT_NE(extra_row.output.find("token_embd.weight"), std::string::npos) << extra_row.output;
}

}  // namespace
}  // namespace rebox
