// End to end for verify on GPTQ / AWQ / compressed-tensors sources, with no converter involved:
// the test chooses codes q, zero points z, fp16 scales s and a block-rotated g_idx itself, packs
// them into a GPTQ (3-bit, v1, act-order g_idx), an AWQ gemm, a compressed-tensors pack-quantized
// (3-bit, zero points) and an int-quantized (int8) checkpoint with its own packers written from
// docs/formats.md §5, and writes a float twin holding (q - z) * s as F32. `rebox convert` of the
// twin gives a GGUF (KVs, tokenizer, llama q/k permutation) that every packed checkpoint must
// verify against. The GGUF is then rewritten with two tensors in Q4_0 / Q8_0 blocks built here
// (same values: must pass), with one code off by one and with one block scale changed (must fail,
// naming the tensor and the index), and the sources are changed (v2 zero points, g_idx ignored).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "format/gguf_file.hpp"
#include "format/gguf_layout.hpp"
#include "format/safetensors.hpp"
#include "source/mcq_test_writer.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::StTensor;

constexpr int64_t kGroup = 32;

// The test's logical quantization of tensor number t (values chosen here, not read back).
struct Logical {
    int t = 0;
    int64_t out = 0, in = 0;
    int64_t groups() const { return in / kGroup; }
    // GPTQ's act-order g_idx: 32-column blocks rotated by one group (constant on every block).
    int64_t g_idx(int64_t k) const { return (k / kGroup + 1) % groups(); }
    uint32_t q(int64_t n, int64_t k) const {
        return static_cast<uint32_t>((n * 7 + k * 13 + t * 5) % 8);
    }
    uint32_t z(int64_t g, int64_t n) const {
        return static_cast<uint32_t>(1 + (g * 5 + n * 3 + t) % 7);
    }
    uint16_t s(int64_t g, int64_t n) const {
        return static_cast<uint16_t>(0x2000 + (g * 31 + n * 17 + t * 11) % 0xC00);
    }
    // Value (n, k) with GPTQ's groups.
    int32_t diff(int64_t n, int64_t k) const {
        return static_cast<int32_t>(q(n, k)) - static_cast<int32_t>(z(g_idx(k), n));
    }
    uint16_t scale_of(int64_t n, int64_t k) const { return s(g_idx(k), n); }
};

// fp16 bits of a normal number -> its value (the test's scales are all normal).
double half_value(uint16_t bits) {
    const int exponent = (bits >> 10) & 0x1F;
    const double mantissa = 1.0 + (bits & 0x3FF) / 1024.0;
    return ((bits & 0x8000) ? -1.0 : 1.0) * std::ldexp(mantissa, exponent - 15);
}

float value_of(const Logical& L, int64_t n, int64_t k) {
    return static_cast<float>(L.diff(n, k) * half_value(L.scale_of(n, k)));
}

void put_u16(std::vector<uint8_t>& bytes, uint16_t v) {
    bytes.push_back(static_cast<uint8_t>(v));
    bytes.push_back(static_cast<uint8_t>(v >> 8));
}

std::vector<uint8_t> words_bytes(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes;
    for (uint32_t w : words)
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
    return bytes;
}

// Sets `bits` bits at stream bit `bit` of the stream whose word i is words[first + i * stride].
void put_stream(std::vector<uint32_t>& words, size_t first, size_t stride, uint64_t bit,
                unsigned bits, uint32_t value) {
    for (unsigned b = 0; b < bits; ++b) {
        const uint64_t p = bit + b;
        if ((value >> b) & 1u) words[first + (p / 32) * stride] |= 1u << (p % 32);
    }
}

bool is_quantized_linear(const std::string& name) {
    return name.ends_with("_proj.weight") && name.find(".layers.") != std::string::npos;
}

void gptq_tensors(const std::string& module, const Logical& L, std::vector<StTensor>& out) {
    const size_t rows_w = static_cast<size_t>(L.in * 3 / 32),
                 zero_words = static_cast<size_t>(L.out * 3 / 32);
    std::vector<uint32_t> qweight(rows_w * L.out, 0), qzeros(zero_words * L.groups(), 0);
    std::vector<uint8_t> scales, g_idx;
    for (int64_t n = 0; n < L.out; ++n)
        for (int64_t k = 0; k < L.in; ++k) put_stream(qweight, n, L.out, k * 3, 3, L.q(n, k));
    for (int64_t g = 0; g < L.groups(); ++g)
        for (int64_t n = 0; n < L.out; ++n) {
            put_stream(qzeros, g * zero_words, 1, n * 3, 3, L.z(g, n) - 1);  // v1: z - 1
            put_u16(scales, L.s(g, n));
        }
    std::vector<uint32_t> g_words;
    for (int64_t k = 0; k < L.in; ++k) g_words.push_back(static_cast<uint32_t>(L.g_idx(k)));
    out.push_back(
        {module + ".qweight", "I32", {static_cast<int64_t>(rows_w), L.out}, words_bytes(qweight)});
    out.push_back({module + ".qzeros",
                   "I32",
                   {L.groups(), static_cast<int64_t>(zero_words)},
                   words_bytes(qzeros)});
    out.push_back({module + ".scales", "F16", {L.groups(), L.out}, scales});
    out.push_back({module + ".g_idx", "I32", {L.in}, words_bytes(g_words)});
}

// AWQ has no g_idx: its group b (columns 32b..) carries GPTQ's group g_idx(32b).
void awq_tensors(const std::string& module, const Logical& L, std::vector<StTensor>& out) {
    static constexpr unsigned kOrder[8] = {0, 2, 4, 6,
                                           1, 3, 5, 7};  // nibble i holds column kOrder[i]
    const auto nibble_of = [](int64_t column) {
        for (unsigned i = 0; i < 8; ++i)
            if (kOrder[i] == column % 8) return i;
        return 0u;
    };
    const size_t words = static_cast<size_t>(L.out / 8);
    std::vector<uint32_t> qweight(L.in * words, 0), qzeros(L.groups() * words, 0);
    std::vector<uint8_t> scales;
    for (int64_t k = 0; k < L.in; ++k)
        for (int64_t n = 0; n < L.out; ++n)
            qweight[k * words + n / 8] |= L.q(n, k) << (4 * nibble_of(n));
    for (int64_t b = 0; b < L.groups(); ++b)
        for (int64_t n = 0; n < L.out; ++n) {
            qzeros[b * words + n / 8] |= L.z(L.g_idx(b * kGroup), n) << (4 * nibble_of(n));
            put_u16(scales, L.s(L.g_idx(b * kGroup), n));
        }
    out.push_back({module + ".qweight", "I32", {L.in, L.out / 8}, words_bytes(qweight)});
    out.push_back({module + ".qzeros", "I32", {L.groups(), L.out / 8}, words_bytes(qzeros)});
    out.push_back({module + ".scales", "F16", {L.groups(), L.out}, scales});
}

std::vector<uint8_t> ct_scales(const Logical& L) {
    std::vector<uint8_t> scales;  // [out, groups]
    for (int64_t n = 0; n < L.out; ++n)
        for (int64_t b = 0; b < L.groups(); ++b) put_u16(scales, L.s(L.g_idx(b * kGroup), n));
    return scales;
}

void ct_packed_tensors(const std::string& module, const Logical& L, std::vector<StTensor>& out) {
    const int64_t per_word = 10;  // 3 bits: 10 fields per word, no field crosses a word
    const int64_t row_words = (L.in + per_word - 1) / per_word;
    const int64_t zero_rows = (L.out + per_word - 1) / per_word;
    std::vector<uint32_t> packed(L.out * row_words, 0), zeros(zero_rows * L.groups(), 0);
    for (int64_t n = 0; n < L.out; ++n)
        for (int64_t k = 0; k < L.in; ++k)
            packed[n * row_words + k / per_word] |= L.q(n, k) << (3 * (k % per_word));
    for (int64_t n = 0; n < L.out; ++n)
        for (int64_t b = 0; b < L.groups(); ++b)
            zeros[(n / per_word) * L.groups() + b] |= L.z(L.g_idx(b * kGroup), n)
                                                      << (3 * (n % per_word));
    std::vector<uint8_t> shape;
    for (int64_t d : {L.out, L.in})
        for (int i = 0; i < 8; ++i)
            shape.push_back(static_cast<uint8_t>(static_cast<uint64_t>(d) >> (8 * i)));
    out.push_back({module + ".weight_packed", "I32", {L.out, row_words}, words_bytes(packed)});
    out.push_back({module + ".weight_scale", "F16", {L.out, L.groups()}, ct_scales(L)});
    out.push_back(
        {module + ".weight_zero_point", "I32", {zero_rows, L.groups()}, words_bytes(zeros)});
    out.push_back({module + ".weight_shape", "I64", {2}, shape});
}

void ct_int8_tensors(const std::string& module, const Logical& L, std::vector<StTensor>& out) {
    std::vector<uint8_t> weight, zeros;
    for (int64_t n = 0; n < L.out; ++n)
        for (int64_t k = 0; k < L.in; ++k) weight.push_back(static_cast<uint8_t>(L.q(n, k)));
    for (int64_t n = 0; n < L.out; ++n)
        for (int64_t b = 0; b < L.groups(); ++b)
            zeros.push_back(static_cast<uint8_t>(L.z(L.g_idx(b * kGroup), n)));
    out.push_back({module + ".weight", "I8", {L.out, L.in}, weight});
    out.push_back({module + ".weight_scale", "F16", {L.out, L.groups()}, ct_scales(L)});
    out.push_back({module + ".weight_zero_point", "I8", {L.out, L.groups()}, zeros});
}

using Packer = std::function<void(const std::string&, const Logical&, std::vector<StTensor>&)>;

class VerifyPrequant : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        scratch_ = std::make_unique<test::ScratchDir>();
        work_ = scratch_->path();
        const fs::path base = work_ / "float";
        const auto made = test::run(quoted(test::mkfixture_cli()) + " " + quoted(base) +
                                    " --preset tiny --format float --arch llama --tokenizer small");
        ASSERT_EQ(made.exit_code, 0) << made.output;
        config_ = nlohmann::json::parse(test::read_file(base / "config.json"));
        const auto file = SafetensorsFile::open(base / "model.safetensors");
        int t = 0;
        for (const StTensorInfo& info : file->tensors()) {
            const auto data = file->data(info);
            StTensor plain{info.name, std::string(st_dtype_name(info.dtype)), info.shape,
                           std::vector<uint8_t>(data.begin(), data.end())};
            if (!is_quantized_linear(info.name)) {
                plain_.push_back(plain);
                continue;
            }
            modules_.push_back({info.name.substr(0, info.name.size() - 7),
                                Logical{t++, info.shape[0], info.shape[1]}});
        }
        // The twin: (q - z) * s as F32, converted by rebox into the GGUF every source must match.
        const fs::path twin = work_ / "twin";
        std::vector<StTensor> tensors = plain_;
        for (const auto& [module, L] : modules_) {
            std::vector<uint8_t> bytes;
            for (int64_t n = 0; n < L.out; ++n)
                for (int64_t k = 0; k < L.in; ++k) {
                    const float v = value_of(L, n, k);
                    uint32_t u;
                    std::memcpy(&u, &v, 4);
                    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(u >> (8 * b)));
                }
            tensors.push_back({module + ".weight", "F32", {L.out, L.in}, bytes});
        }
        make_dir(twin, config_, tensors);
        gguf_ = work_ / "twin.gguf";
        const auto converted = test::run(quoted(test::rebox_cli()) + " convert " + quoted(twin) +
                                         " -o " + quoted(gguf_) + " -q");
        ASSERT_EQ(converted.exit_code, 0) << converted.output;

        gptq_ = write_source("gptq",
                             {{"quant_method", "gptq"},
                              {"bits", 3},
                              {"group_size", kGroup},
                              {"desc_act", true},
                              {"sym", false},
                              {"checkpoint_format", "gptq"}},
                             gptq_tensors);
        awq_ = write_source("awq",
                            {{"quant_method", "awq"},
                             {"bits", 4},
                             {"group_size", kGroup},
                             {"version", "gemm"},
                             {"zero_point", true}},
                            awq_tensors);
        ct_ = write_source("ct", ct_config("pack-quantized", 3), ct_packed_tensors);
        ct_int8_ = write_source("ct_int8", ct_config("int-quantized", 8), ct_int8_tensors);
    }

    static nlohmann::json ct_config(const std::string& format, int bits) {
        return {{"quant_method", "compressed-tensors"},
                {"format", format},
                {"ignore", {"lm_head"}},
                {"config_groups",
                 {{"group_0",
                   {{"targets", {"Linear"}},
                    {"weights",
                     {{"num_bits", bits},
                      {"type", "int"},
                      {"symmetric", false},
                      {"strategy", "group"},
                      {"group_size", kGroup}}}}}}}};
    }

    static void make_dir(const fs::path& dir, const nlohmann::json& config,
                         const std::vector<StTensor>& tensors) {
        fs::create_directories(dir);
        for (const auto& entry : fs::directory_iterator(work_ / "float")) {
            const std::string name = entry.path().filename().string();
            if (name != "config.json" && name != "model.safetensors")
                fs::copy(entry.path(), dir / name, fs::copy_options::recursive);
        }
        std::ofstream(dir / "config.json") << config.dump(2);
        test::write_safetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
    }

    static fs::path write_source(const std::string& name, const nlohmann::json& quantization,
                                 const Packer& pack) {
        nlohmann::json config = config_;
        config["quantization_config"] = quantization;
        std::vector<StTensor> tensors = plain_;
        for (const auto& [module, L] : modules_) pack(module, L, tensors);
        make_dir(work_ / name, config, tensors);
        return work_ / name;
    }

    static const Logical& logical(const std::string& module) {
        for (const auto& [name, L] : modules_)
            if (name == module) return L;
        throw std::runtime_error("no module " + module);
    }

    static test::RunResult verify(const fs::path& model, const fs::path& gguf) {
        return test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " +
                         quoted(gguf));
    }

    // The twin GGUF with blk.0.ffn_up.weight as Q4_0 and blk.0.ffn_down.weight as Q8_0, blocks
    // built here from the logical values (d = s, q' = q - z + 8 / q - z); `edit` may change them.
    static fs::path rewrite(
        const std::string& name,
        const std::function<void(const std::string&, std::vector<uint8_t>&)>& edit) {
        const auto original = GgufFile::open(gguf_);
        GgufLayout layout(original->alignment());
        // One Q4_0 and one Q8_0 tensor among F32 ones: llama.cpp's loader guesses MOSTLY_Q4_0 (2),
        // the most common block type, a tie going to the smaller.
        for (const GgufKV& kv : original->kvs())
            layout.add_kv(kv.key, kv.key == "general.file_type" ? GgufValue::u32(2) : kv.value);
        const auto type_of = [](const std::string& tensor, GgmlType type) {
            if (tensor == "blk.0.ffn_up.weight") return GgmlType::Q4_0;
            if (tensor == "blk.0.ffn_down.weight") return GgmlType::Q8_0;
            return type;
        };
        for (const GgufTensorInfo& info : original->tensors())
            layout.add_tensor(info.name, info.ne, type_of(info.name, info.type));
        const fs::path path = work_ / (name + ".gguf");
        write_gguf(
            path, layout,
            [&](size_t i, std::span<uint8_t> out) {
                const GgufTensorInfo& info = original->tensors()[i];
                std::vector<uint8_t> bytes;
                if (info.name == "blk.0.ffn_up.weight" || info.name == "blk.0.ffn_down.weight") {
                    const bool q4 = info.name == "blk.0.ffn_up.weight";
                    const Logical& L =
                        logical(q4 ? "model.layers.0.mlp.up_proj" : "model.layers.0.mlp.down_proj");
                    for (int64_t n = 0; n < L.out; ++n)
                        for (int64_t k0 = 0; k0 < L.in; k0 += 32) {
                            put_u16(bytes, L.scale_of(n, k0));
                            if (q4) {
                                for (int64_t j = 0; j < 16; ++j)
                                    bytes.push_back(
                                        static_cast<uint8_t>((L.diff(n, k0 + j) + 8) |
                                                             ((L.diff(n, k0 + j + 16) + 8) << 4)));
                            } else {
                                for (int64_t j = 0; j < 32; ++j)
                                    bytes.push_back(static_cast<uint8_t>(
                                        static_cast<int8_t>(L.diff(n, k0 + j))));
                            }
                        }
                    edit(info.name, bytes);
                } else {
                    const auto data = original->tensor_data(info);
                    bytes.assign(data.begin(), data.end());
                }
                ASSERT_EQ(bytes.size(), out.size()) << info.name;
                std::memcpy(out.data(), bytes.data(), out.size());
            },
            true);
        return path;
    }

    static void expect_passes(const fs::path& model, const fs::path& gguf) {
        const auto result = verify(model, gguf);
        EXPECT_EQ(result.exit_code, 0) << result.output;
        EXPECT_NE(result.output.find(
                      "re-encoded tensors bit-identical: 14/14, max abs error 0.0; "
                      "copied tensors bit-identical: 7/7; generated tensors bit-identical: 1/1"),
                  std::string::npos)
            << result.output;
    }

    static void TearDownTestSuite() { scratch_.reset(); }

    static inline std::unique_ptr<test::ScratchDir> scratch_;  // removed in TearDownTestSuite
    static inline fs::path work_, gguf_, gptq_, awq_, ct_, ct_int8_;
    static inline nlohmann::json config_;
    static inline std::vector<StTensor> plain_;
    static inline std::vector<std::pair<std::string, Logical>> modules_;
};

TEST_F(VerifyPrequant, EveryFormatVerifiesAgainstTheTwin) {
    expect_passes(gptq_, gguf_);
    expect_passes(awq_, gguf_);
    expect_passes(ct_, gguf_);
    expect_passes(ct_int8_, gguf_);
}

TEST_F(VerifyPrequant, OtherBlockTypesWithTheSameValuesPass) {
    const fs::path gguf = rewrite("blocks", [](const std::string&, std::vector<uint8_t>&) {});
    expect_passes(gptq_, gguf);
    expect_passes(ct_, gguf);
}

TEST_F(VerifyPrequant, OneCodeOffByOneFailsNamingTensorAndIndex) {
    // Row 3, column 5 of ffn_up: block 3*2 + 0, value 5 = low nibble of qs[5].
    const fs::path gguf =
        rewrite("code", [](const std::string& tensor, std::vector<uint8_t>& bytes) {
            if (tensor != "blk.0.ffn_up.weight") return;
            uint8_t& byte = bytes[6 * 18 + 2 + 5];
            byte = static_cast<uint8_t>((byte & 0xF0) | (((byte & 0x0F) + 1) & 0x0F));
        });
    const auto result = verify(gptq_, gguf);
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_NE(
        result.output.find("MISMATCH blk.0.ffn_up.weight (model.layers.0.mlp.up_proj.weight): "
                           "1 values differ, first at index 197"),
        std::string::npos)
        << result.output;
}

TEST_F(VerifyPrequant, ADifferentBlockScaleFailsAtItsFirstNonZeroValue) {
    // ffn_down [64, 128]: block 10 is row 2, columns 64..95; its d gets the next fp16 value.
    const fs::path gguf =
        rewrite("scale", [](const std::string& tensor, std::vector<uint8_t>& bytes) {
            if (tensor != "blk.0.ffn_down.weight") return;
            bytes[10 * 34] = static_cast<uint8_t>(bytes[10 * 34] + 1);
        });
    const Logical& L = logical("model.layers.0.mlp.down_proj");
    int64_t first = -1;
    for (int64_t k = 64; k < 96 && first < 0; ++k)
        if (L.diff(2, k) != 0) first = 2 * L.in + k;
    ASSERT_GE(first, 0);
    const auto result = verify(gptq_, gguf);
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_NE(result.output.find(
                  "MISMATCH blk.0.ffn_down.weight (model.layers.0.mlp.down_proj.weight): "),
              std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("first at index " + std::to_string(first) + ":"),
              std::string::npos)
        << result.output;
}

TEST_F(VerifyPrequant, GptqV2ReadsTheStoredZeroAsIs) {
    // The same tensors declared gptq_v2: every zero point is one less, so every value differs.
    nlohmann::json config = nlohmann::json::parse(test::read_file(gptq_ / "config.json"));
    config["quantization_config"]["checkpoint_format"] = "gptq_v2";
    const fs::path v2 = work_ / "gptq_v2";
    fs::remove_all(v2);
    fs::copy(gptq_, v2, fs::copy_options::recursive);
    std::ofstream(v2 / "config.json") << config.dump(2);
    const auto result = verify(v2, gguf_);
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_NE(result.output.find("MISMATCH blk.0.attn_q.weight"), std::string::npos)
        << result.output;
}

TEST_F(VerifyPrequant, GIdxValuesDecideTheGroup) {
    // The same GPTQ tensors with g_idx = k / 32 (what desc_act false would mean): groups shift.
    std::vector<StTensor> tensors = plain_;
    for (const auto& [module, L] : modules_) {
        gptq_tensors(module, L, tensors);
        std::vector<uint32_t> g_words;
        for (int64_t k = 0; k < L.in; ++k) g_words.push_back(static_cast<uint32_t>(k / kGroup));
        tensors.back().data = words_bytes(g_words);
    }
    nlohmann::json config = nlohmann::json::parse(test::read_file(gptq_ / "config.json"));
    const fs::path dir = work_ / "gptq_plain_gidx";
    fs::remove_all(dir);
    make_dir(dir, config, tensors);
    const auto result = verify(dir, gguf_);
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_NE(result.output.find("MISMATCH blk.0.ffn_up.weight"), std::string::npos)
        << result.output;
}

TEST_F(VerifyPrequant, AGIdxOutsideTheGroupsIsAProblem) {
    std::vector<StTensor> tensors = plain_;
    for (const auto& [module, L] : modules_) gptq_tensors(module, L, tensors);
    for (StTensor& t : tensors)
        if (t.name == "model.layers.1.mlp.down_proj.g_idx") t.data[4 * 127] = 4;  // 4 groups: 0..3
    nlohmann::json config = nlohmann::json::parse(test::read_file(gptq_ / "config.json"));
    const fs::path dir = work_ / "gptq_bad_gidx";
    fs::remove_all(dir);
    make_dir(dir, config, tensors);
    const auto result = verify(dir, gguf_);
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_NE(result.output.find("model.layers.1.mlp.down_proj.g_idx: value 4 at input column 127 "
                                 "is not a group"),
              std::string::npos)
        << result.output;
}

TEST_F(VerifyPrequant, AValueThatIsNotBinary32IsReportedNotRounded) {
    // int-quantized with F32 scales 1 + 2^-23 (0x3F800001) for up_proj of layer 1: (q - z) * s
    // has values no GGUF type can hold (the source itself is not binary32-exact there).
    std::vector<StTensor> tensors = plain_;
    for (const auto& [module, L] : modules_) {
        ct_int8_tensors(module, L, tensors);
        if (module != "model.layers.1.mlp.up_proj") continue;
        StTensor& scale = tensors[tensors.size() - 2];
        ASSERT_EQ(scale.name, module + ".weight_scale");
        scale.dtype = "F32";
        scale.data.clear();
        for (int64_t i = 0; i < L.out * L.groups(); ++i)
            for (uint8_t b : {0x01, 0x00, 0x80, 0x3F}) scale.data.push_back(b);
    }
    nlohmann::json config = nlohmann::json::parse(test::read_file(ct_int8_ / "config.json"));
    const fs::path dir = work_ / "ct_int8_f32_scale";
    fs::remove_all(dir);
    make_dir(dir, config, tensors);
    // (q - z) * s with |q - z| in {3, 5, 6, 7} needs 25 or more significant bits (|q - z| in
    // {1, 2, 4} does not): verify names the tensor and the first such value instead of rounding.
    const auto result = verify(dir, gguf_);
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_NE(result.output.find("PROBLEM blk.1.ffn_up.weight (model.layers.1.mlp.up_proj.weight)"),
              std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find(", not a binary32 value, so no GGUF type holds it exactly"),
              std::string::npos)
        << result.output;
}

TEST_F(VerifyPrequant, PartsThatDisagreeAreNamed) {
    struct Case {
        std::string name;
        Packer pack;
        nlohmann::json config;  // the whole config.json of that format
        std::function<void(std::vector<StTensor>&)> corrupt;
        std::string expected;
    };
    const auto edit = [](const std::string& tensor, std::function<void(StTensor&)> change) {
        return [tensor, change](std::vector<StTensor>& tensors) {
            for (StTensor& t : tensors)
                if (t.name == tensor) change(t);
        };
    };
    const nlohmann::json gptq = nlohmann::json::parse(test::read_file(gptq_ / "config.json"));
    const nlohmann::json awq = nlohmann::json::parse(test::read_file(awq_ / "config.json"));
    const nlohmann::json ct = nlohmann::json::parse(test::read_file(ct_ / "config.json"));
    const std::vector<Case> cases = {
        // qzeros one word short per group row: [4, 5] instead of [4, 6] (out 64 at 3 bits, in 128).
        {"qzeros", gptq_tensors, gptq,
         edit("model.layers.0.mlp.down_proj.qzeros",
              [](StTensor& t) {
                  t.shape = {t.shape[0], t.shape[1] - 1};
                  t.data.resize(static_cast<size_t>(t.shape[0] * t.shape[1] * 4));
              }),
         "model.layers.0.mlp.down_proj.qzeros: I32 [4, 5] (expected I32 [4, 6]"},
        // AWQ qweight stored as I64 words.
        {"awq_dtype", awq_tensors, awq,
         edit("model.layers.1.self_attn.v_proj.qweight",
              [](StTensor& t) {
                  t.dtype = "I64";
                  t.shape[1] /= 2;
              }),
         "model.layers.1.self_attn.v_proj.qweight: I64 [64, 2] (expected I32 [in, out/8]"},
        // weight_shape claims 80 input columns: 8 packed words per row, the file has 7.
        {"weight_shape", ct_packed_tensors, ct,
         edit("model.layers.0.mlp.up_proj.weight_shape", [](StTensor& t) { t.data[8] = 80; }),
         "model.layers.0.mlp.up_proj.weight_packed: I32 [128, 7] (expected I32 [128, 8]"},
    };
    for (const Case& c : cases) {
        std::vector<StTensor> tensors = plain_;
        for (const auto& [module, L] : modules_) c.pack(module, L, tensors);
        c.corrupt(tensors);
        const fs::path dir = work_ / ("disagree_" + c.name);
        fs::remove_all(dir);
        make_dir(dir, c.config, tensors);
        const auto result = verify(dir, gguf_);
        EXPECT_EQ(result.exit_code, 3) << c.name << "\n" << result.output;
        EXPECT_NE(result.output.find(c.expected), std::string::npos) << c.name << "\n"
                                                                     << result.output;
    }
}

TEST_F(VerifyPrequant, MkfixtureDefectsAreNamed) {
    // rebox-mkfixture's defect checkpoints (its own packer, tools/mkfixture/README.md): verify
    // must fail each, naming the tensor or config field.
    struct Case {
        std::string format, defect, expected;
    };
    const std::vector<Case> cases = {
        {"gptq", "missing-scales", "model.layers.0.self_attn.q_proj.scales: missing"},
        {"gptq", "scales-shape", "model.layers.0.self_attn.q_proj.scales: F16 [2, 56]"},
        {"gptq", "g-idx-out-of-range",
         "model.layers.0.self_attn.q_proj.g_idx: value 2 at input column 63 is not a group"},
        {"gptq", "unknown-layout", "checkpoint_format 'marlin'"},
        {"gptq", "bits-not-allowed", "bits 5"},
        {"awq", "unknown-layout", "version 'gemv_fast'"},
        {"awq", "missing-scales", "model.layers.0.self_attn.q_proj.scales: missing"},
        {"compressed-tensors", "unknown-layout", "format 'marlin-24'"},
        {"compressed-tensors", "missing-scales",
         "model.layers.0.self_attn.q_proj.weight_scale: missing"},
        {"compressed-tensors", "unknown-quant-method", "quant_method 'hqq'"},
    };
    for (const Case& c : cases) {
        const fs::path dir = work_ / ("defect_" + c.format + "_" + c.defect);
        fs::remove_all(dir);
        const auto made =
            test::run(quoted(test::mkfixture_cli()) + " " + quoted(dir) +
                      " --preset tiny --arch llama " + "--tokenizer small --format " + c.format +
                      (c.format == "awq" ? " --asym" : "") + " --defect " + c.defect);
        ASSERT_EQ(made.exit_code, 0) << made.output;
        const auto result = verify(dir, gguf_);
        EXPECT_EQ(result.exit_code, 3) << c.format << " " << c.defect << "\n" << result.output;
        EXPECT_NE(result.output.find(c.expected), std::string::npos)
            << c.format << " " << c.defect << "\n"
            << result.output;
    }
}

}  // namespace
}  // namespace rebox
