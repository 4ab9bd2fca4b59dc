// End to end: a tiny fixture converted by `rebox convert --no-verify` must verify (exit 0, N/N),
// and every single mutation of a copy of the GGUF (bytes patched at offsets found through GgufFile,
// or the metadata rewritten through GgufLayout) must make `rebox verify` exit 3 naming the tensor
// or key. A fixture whose mcq metadata lies (--defect metadata-lie) must never verify as identical.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "format/gguf_file.hpp"
#include "format/gguf_layout.hpp"
#include "format/safetensors.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

using test::quoted;
using test::RunResult;

uint16_t u16_at(const std::vector<uint8_t>& bytes, uint64_t at) {
    return static_cast<uint16_t>(bytes[at] | (bytes[at + 1] << 8));
}

// Tiny preset (tools/mkfixture): embedding + 2 layers x 7 projections are quantized.
constexpr int kTinyQuantizedTensors = 1 + 2 * 7;
constexpr GgmlType kQ4_1 = GgmlType::Q4_1, kF32 = GgmlType::F32;
constexpr uint64_t kQ4_1Block = 20;

class VerifyMutation : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        scratch_ = std::make_unique<test::ScratchDir>();
        work_ = scratch_->path();
        model_ = work_ / "model";
        gguf_ = work_ / "out.gguf";
        const RunResult fixture = test::run(quoted(test::mkfixture_cli()) + " " + quoted(model_) +
                                            " --preset tiny --tokenizer small");
        ASSERT_EQ(fixture.exit_code, 0) << fixture.output;
        const RunResult convert =
            test::run(quoted(test::rebox_cli()) + " convert " + quoted(model_) + " -o " +
                      quoted(gguf_) + " --no-verify -q");
        ASSERT_EQ(convert.exit_code, 0) << convert.output;
    }
    static void TearDownTestSuite() { scratch_.reset(); }

    static RunResult verify(const fs::path& model, const fs::path& gguf,
                            const std::string& extra = "") {
        return test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " +
                         quoted(gguf) + " " + extra);
    }

    // Applies `patch` to a copy of the converted GGUF and runs verify on it.
    static RunResult verify_patched(
        const std::function<void(const GgufFile&, std::vector<uint8_t>&)>& patch) {
        const auto original = GgufFile::open(gguf_);
        std::vector<uint8_t> bytes = test::read_file_bytes(gguf_);
        patch(*original, bytes);
        const fs::path mutated = work_ / "mutated.gguf";
        test::write_file(mutated, bytes);
        return verify(model_, mutated);
    }

    struct OutTensor {
        std::string name;
        std::vector<int64_t> ne;
        GgmlType type;
        std::vector<uint8_t> data;
    };

    // Rebuilds the GGUF through GgufLayout: KVs and tensors (with their bytes) as edited.
    static std::vector<uint8_t> rebuild(
        const GgufFile& file, const std::function<void(GgufLayout&)>& edit_kvs,
        const std::function<void(std::vector<OutTensor>&)>& edit_tensors) {
        GgufLayout layout;
        for (const GgufKV& kv : file.kvs()) layout.add_kv(kv.key, kv.value);
        edit_kvs(layout);
        std::vector<OutTensor> tensors;
        for (const GgufTensorInfo& t : file.tensors()) {
            const auto data = file.tensor_data(t);
            tensors.push_back({t.name, t.ne, t.type, {data.begin(), data.end()}});
        }
        edit_tensors(tensors);
        for (const OutTensor& t : tensors) layout.add_tensor(t.name, t.ne, t.type);
        std::vector<uint8_t> bytes = layout.serialize_metadata();
        bytes.resize(layout.file_size(), 0);
        for (size_t i = 0; i < tensors.size(); ++i)
            std::copy(tensors[i].data.begin(), tensors[i].data.end(),
                      bytes.begin() + layout.data_offset() + layout.tensors()[i].offset);
        return bytes;
    }
    static void keep_kvs(GgufLayout&) {}
    static void keep_tensors(std::vector<OutTensor>&) {}

    // Absolute offset of block `block` of a Q4_1 tensor.
    static uint64_t block_at(const GgufFile& file, const GgufTensorInfo& t, uint64_t block) {
        return file.data_offset() + t.offset + block * kQ4_1Block;
    }

    // The first block of a Q4_1 tensor with a usable scale (not +-0) and a code pair whose nibbles
    // differ, so a change of d, m or of a nibble must change a value.
    static uint64_t lively_block(const GgufFile& file, const GgufTensorInfo& t,
                                 const std::vector<uint8_t>& bytes) {
        for (uint64_t b = 0; b < t.nbytes / kQ4_1Block; ++b) {
            const uint64_t at = block_at(file, t, b);
            if ((u16_at(bytes, at) & 0x7fff) == 0) continue;
            for (int j = 0; j < 16; ++j) {
                const uint8_t qs = bytes[at + 4 + j];
                if ((qs & 0x0f) != (qs >> 4) && (qs & 0x0f) != 0) return b;
            }
        }
        ADD_FAILURE() << "no lively block in " << t.name;
        return 0;
    }

    static const GgufTensorInfo& tensor(const GgufFile& file, const std::string& name,
                                        GgmlType type) {
        const GgufTensorInfo* t = file.find_tensor(name);
        EXPECT_NE(t, nullptr) << name;
        EXPECT_EQ(t->type, type) << name;
        return *t;
    }

    static void expect_fails_naming(const RunResult& result, const std::string& name) {
        EXPECT_EQ(result.exit_code, 3) << result.output;
        EXPECT_NE(result.output.find(name), std::string::npos) << result.output;
    }

    static inline std::unique_ptr<test::ScratchDir> scratch_;  // removed in TearDownTestSuite
    static inline fs::path work_, model_, gguf_;
};

constexpr const char* kAttnQ =
    "blk.0.attn_q.weight";  // layer 0: 4 bits, group 64 in the tiny preset

TEST_F(VerifyMutation, ConvertedFixtureVerifies) {
    const fs::path report = work_ / "report.json";
    const RunResult result = verify(model_, gguf_, "--json " + quoted(report) + " --threads 2");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    std::smatch match;
    const std::string output = result.output;
    ASSERT_TRUE(std::regex_search(
        output, match,
        std::regex(R"(re-encoded tensors bit-identical: (\d+)/(\d+), max abs error 0\.0)")))
        << output;
    EXPECT_EQ(match[1], match[2]);
    EXPECT_EQ(std::stoi(match[1]), kTinyQuantizedTensors);
    const nlohmann::json json = nlohmann::json::parse(test::read_file_bytes(report));
    EXPECT_TRUE(json["ok"].get<bool>());
    EXPECT_EQ(json["re_encoded_total"], kTinyQuantizedTensors);
    EXPECT_TRUE(json["problems"].empty());
}

TEST_F(VerifyMutation,
       RebuiltUnchangedStillVerifies) {  // the rebuild helper itself changes nothing
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        bytes = rebuild(file, keep_kvs, keep_tensors);
    });
    EXPECT_EQ(result.exit_code, 0) << result.output;
}

TEST_F(VerifyMutation, FlippedBitInD) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        const GgufTensorInfo& t = tensor(file, kAttnQ, kQ4_1);
        bytes[block_at(file, t, lively_block(file, t, bytes)) + 1] ^= 0x02;  // d bit 9
    });
    expect_fails_naming(result, std::string("MISMATCH ") + kAttnQ);
}

TEST_F(VerifyMutation, FlippedBitInM) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        const GgufTensorInfo& t = tensor(file, kAttnQ, kQ4_1);
        bytes[block_at(file, t, 0) + 2] ^= 0x01;  // m's lowest bit: every value of the block moves
    });
    expect_fails_naming(result, std::string("MISMATCH ") + kAttnQ);
}

TEST_F(VerifyMutation, FlippedBitInANibble) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        const GgufTensorInfo& t = tensor(file, kAttnQ, kQ4_1);
        bytes[block_at(file, t, lively_block(file, t, bytes)) + 4] ^= 0x01;
    });
    expect_fails_naming(result, std::string("MISMATCH ") + kAttnQ);
}

TEST_F(VerifyMutation, NibbleHalvesSwapped) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        const GgufTensorInfo& t = tensor(file, kAttnQ, kQ4_1);
        const uint64_t at = block_at(file, t, lively_block(file, t, bytes));
        for (int j = 0; j < 16; ++j) {
            const uint8_t qs = bytes[at + 4 + j];
            bytes[at + 4 + j] = static_cast<uint8_t>((qs << 4) | (qs >> 4));
        }
    });
    expect_fails_naming(result, std::string("MISMATCH ") + kAttnQ);
}

TEST_F(VerifyMutation, TwoBlocksSwapped) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        const GgufTensorInfo& t = tensor(file, kAttnQ, kQ4_1);
        const uint64_t a = block_at(file, t, 0), b = block_at(file, t, 1);
        ASSERT_NE(std::memcmp(&bytes[a], &bytes[b], kQ4_1Block), 0);
        std::swap_ranges(bytes.begin() + a, bytes.begin() + a + kQ4_1Block, bytes.begin() + b);
    });
    expect_fails_naming(result, std::string("MISMATCH ") + kAttnQ);
}

TEST_F(VerifyMutation, ScaleAndMinFromTheNeighbouringGroup) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        const GgufTensorInfo& t = tensor(file, kAttnQ, kQ4_1);
        const uint64_t target = block_at(file, t, 0);
        for (uint64_t b = 1; b < t.nbytes / kQ4_1Block;
             ++b) {  // first later block of another group
            const uint64_t donor = block_at(file, t, b);
            if (std::memcmp(&bytes[donor], &bytes[target], 4) != 0) {
                std::memcpy(&bytes[target], &bytes[donor], 4);
                return;
            }
        }
        FAIL() << "every block shares one scale and min";
    });
    expect_fails_naming(result, std::string("MISMATCH ") + kAttnQ);
}

TEST_F(VerifyMutation, NormChangedByOneUlp) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        const GgufTensorInfo& t = tensor(file, "blk.0.attn_norm.weight", kF32);
        const uint64_t at = file.data_offset() + t.offset;
        uint32_t bits;
        std::memcpy(&bits, &bytes[at], 4);
        ++bits;
        std::memcpy(&bytes[at], &bits, 4);
    });
    expect_fails_naming(result, "MISMATCH blk.0.attn_norm.weight");
}

TEST_F(VerifyMutation, WrongPoolingType) {
    std::string key;
    const RunResult result =
        verify_patched([&key](const GgufFile& file, std::vector<uint8_t>& bytes) {
            const std::string* arch = file.find("general.architecture")->as_string();
            ASSERT_NE(arch, nullptr);
            key = *arch + ".pooling_type";
            const GgufValue* pooling = file.find(key);
            const uint32_t wrong = pooling && pooling->as_u32() == 3u ? 1u : 3u;  // LAST <-> MEAN
            bytes = rebuild(
                file, [&](GgufLayout& layout) { layout.set_kv(key, GgufValue::u32(wrong)); },
                keep_tensors);
        });
    expect_fails_naming(result, key);
}

TEST_F(VerifyMutation, TensorMissing) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        bytes = rebuild(file, keep_kvs, [](std::vector<OutTensor>& tensors) {
            std::erase_if(tensors,
                          [](const OutTensor& t) { return t.name == "blk.1.ffn_down.weight"; });
        });
    });
    expect_fails_naming(result, "layers.1.mlp.down_proj.weight");
    EXPECT_NE(result.output.find("blk.1.ffn_down.weight"), std::string::npos) << result.output;
}

TEST_F(VerifyMutation, ExtraTensor) {
    const RunResult result = verify_patched([](const GgufFile& file, std::vector<uint8_t>& bytes) {
        bytes = rebuild(file, keep_kvs, [](std::vector<OutTensor>& tensors) {
            // lm_head: the tied fixture has none
            tensors.push_back({"output.weight", {64}, kF32, std::vector<uint8_t>(64 * 4, 0)});
        });
    });
    expect_fails_naming(result, "output.weight");
}

TEST_F(VerifyMutation, UnreadableGgufIsAnInputError) {
    EXPECT_EQ(verify(model_, work_ / "does-not-exist.gguf").exit_code, 1);
    std::vector<uint8_t> bytes = test::read_file_bytes(gguf_);
    bytes.resize(bytes.size() / 2);  // cut inside the data section
    test::write_file(work_ / "truncated.gguf", bytes);
    EXPECT_EQ(verify(model_, work_ / "truncated.gguf").exit_code, 1);
}

// Circularity: the converter and a naive verifier would both trust the lying metadata (bits 2 /
// group 128 / twice the rows for a tensor written at bits 4 / group 64); verify must not.
TEST_F(VerifyMutation, MetadataLieNeverVerifies) {
    const fs::path lie = work_ / "lie";
    const RunResult fixture = test::run(quoted(test::mkfixture_cli()) + " " + quoted(lie) +
                                        " --preset tiny --tokenizer small --defect metadata-lie");
    ASSERT_EQ(fixture.exit_code, 0) << fixture.output;
    const fs::path lie_gguf = work_ / "lie.gguf";
    const RunResult convert = test::run(quoted(test::rebox_cli()) + " convert " + quoted(lie) +
                                        " -o " + quoted(lie_gguf) + " --no-verify -q");
    if (convert.exit_code == 0) {
        const RunResult result = verify(lie, lie_gguf);
        EXPECT_EQ(result.exit_code, 3) << result.output;
        EXPECT_NE(result.output.find("q_proj"), std::string::npos) << result.output;
    } else {
        EXPECT_FALSE(fs::exists(lie_gguf)) << convert.output;
    }
    // The honest GGUF against the lying source must not pass either.
    const RunResult cross = verify(lie, gguf_);
    EXPECT_EQ(cross.exit_code, 3) << cross.output;
}

// The real circle: a converter that trusts the lying metadata (bits 2, group 128, shape [128, 64])
// writes a GGUF whose values match that reading exactly. Only the shape from config.json can tell.
TEST_F(VerifyMutation, GgufThatTrustsTheLyingMetadataIsRefused) {
    const fs::path lie = work_ / "lie2";
    const RunResult fixture = test::run(quoted(test::mkfixture_cli()) + " " + quoted(lie) +
                                        " --preset tiny --tokenizer small --defect metadata-lie");
    ASSERT_EQ(fixture.exit_code, 0) << fixture.output;
    const auto source = SafetensorsFile::open(lie / "model.safetensors");
    const std::string base = "layers.0.self_attn.q_proj.weight";
    const StTensorInfo* qcodes = source->find(base + ".qcodes");
    const StTensorInfo* scales = source->find(base + ".scales");
    const StTensorInfo* mins = source->find(base + ".mins");
    ASSERT_TRUE(qcodes && scales && mins);
    const auto codes = source->data(*qcodes);
    const auto scale_bytes = source->data(*scales), min_bytes = source->data(*mins);
    // The lie's reading: 2-bit lsb0 codes, groups of 128, 128 x 64 values; Q4_1 block b copies its
    // group's fp16 scale/min and puts value j in the low, value j+16 in the high nibble.
    constexpr int64_t kRows = 128, kCols = 64, kGroup = 128;
    const auto code = [&](int64_t i) { return (codes[(2 * i) / 8] >> ((2 * i) % 8)) & 3; };
    std::vector<uint8_t> blocks;
    for (int64_t b = 0; b < kRows * kCols / 32; ++b) {
        const int64_t g = b * 32 / kGroup;
        blocks.insert(blocks.end(), {scale_bytes[2 * g], scale_bytes[2 * g + 1], min_bytes[2 * g],
                                     min_bytes[2 * g + 1]});
        for (int j = 0; j < 16; ++j)
            blocks.push_back(static_cast<uint8_t>(code(32 * b + j) | (code(32 * b + j + 16) << 4)));
    }
    const fs::path trusting = work_ / "trusting.gguf";
    {
        const auto honest = GgufFile::open(gguf_);
        test::write_file(trusting, rebuild(*honest, keep_kvs, [&](std::vector<OutTensor>& tensors) {
                             for (OutTensor& t : tensors)
                                 if (t.name == kAttnQ) t = {kAttnQ, {kCols, kRows}, kQ4_1, blocks};
                         }));
    }
    const RunResult result = verify(lie, trusting);
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_NE(result.output.find("disagrees with config.json"), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("bit-identical: 15/15"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace rebox
