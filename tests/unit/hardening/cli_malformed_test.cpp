// Malformed input as a user meets it: the built `rebox` binary on corrupt GGUF and safetensors
// files (bytes assembled here per docs/gguf.md and the safetensors format) and on bad command
// lines. Each case asserts exit code 1, exactly one stderr line "rebox: FILE: ...", and the rule
// broken.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "format/gguf_test_bytes.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::GgufBytes;

using RunResult = test::RunResult;

class CliMalformed : public ::testing::Test {
  protected:
    static std::string current_name() {
        return ::testing::UnitTest::GetInstance()->current_test_info()->name();
    }

    fs::path write(const std::string& name, const std::vector<uint8_t>& bytes) const {
        const fs::path path = dir_ / name;
        test::write_file(path, bytes);
        return path;
    }

    // Runs `rebox ARGS`; returns the exit code, stdout and stderr.
    RunResult rebox(const std::string& args) const {
        return test::run(test::quoted(test::rebox_cli()) + " " + args);
    }

    // The one-line contract for a malformed file given to `rebox inspect`.
    void expect_inspect_refuses(const std::string& name, const std::vector<uint8_t>& bytes,
                                const std::string& rule) const {
        const fs::path path = write(name, bytes);
        const RunResult r = rebox("inspect '" + path.string() + "'");
        EXPECT_EQ(r.exit_code, 1) << name << ": " << r.err;
        EXPECT_EQ(r.err.rfind("rebox: " + path.string() + ": ", 0), 0u) << name << ": " << r.err;
        EXPECT_NE(r.err.find(rule), std::string::npos)
            << name << ": want '" << rule << "' in " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << ": " << r.err;
    }

    test::ScratchDir scratch_;
    fs::path dir_ = scratch_.path();
};

std::vector<uint8_t> one_tensor(const std::vector<int64_t>& ne, uint32_t type,
                                uint64_t offset = 0) {
    GgufBytes b;
    b.header(1, 0).tensor("t", ne, type, offset).pad();
    return b.v;
}

std::vector<uint8_t> with_fill(std::vector<uint8_t> bytes, size_t count) {
    bytes.insert(bytes.end(), count, 0);
    return bytes;
}

// ---- GGUF (rules from docs/gguf.md §1.6) ------------------------------------------------------

TEST_F(CliMalformed, GgufBadMagic) {
    expect_inspect_refuses("magic.gguf", GgufBytes{}.raw("GGML").u32(3).i64(0).i64(0).v,
                           "magic: not a GGUF file (starts with 'GGML') (expected 'GGUF')");
}
TEST_F(CliMalformed, GgufEmptyFile) {
    expect_inspect_refuses("empty.gguf", {}, "magic: truncated at byte 0");
}
TEST_F(CliMalformed, GgufVersion1) {
    expect_inspect_refuses("v1.gguf", GgufBytes{}.header(0, 0, 1).v,
                           "version: GGUFv1 is no longer supported");
}
TEST_F(CliMalformed, GgufByteSwappedVersion) {
    expect_inspect_refuses("swapped.gguf", GgufBytes{}.header(0, 0, 0x03000000).v, "byte-swapped");
}
TEST_F(CliMalformed, GgufNegativeTensorCount) {
    expect_inspect_refuses("ntensors.gguf", GgufBytes{}.header(-1, 0).v,
                           "tensor_count: -1 is negative");
}
TEST_F(CliMalformed, GgufHugeKvCount) {
    expect_inspect_refuses("nkv.gguf", GgufBytes{}.header(0, INT64_MAX).fill(64, 0).v,
                           "kv_count: 9223372036854775807 pairs cannot fit");
}
TEST_F(CliMalformed, GgufKeyLengthOverCap) {
    expect_inspect_refuses("keylen.gguf", GgufBytes{}.header(0, 1).u64(~0ull).fill(32, 0).v,
                           "kv[0] key: string length 18446744073709551615 exceeds 1 GiB");
}
TEST_F(CliMalformed, GgufArrayLongerThanFile) {
    expect_inspect_refuses("array.gguf",
                           GgufBytes{}.header(0, 1).str("k").u32(9).u32(4).u64(1000).fill(40, 0).v,
                           "k: array of 1000 elements needs at least 4000 bytes");
}
TEST_F(CliMalformed, GgufArrayOverTheMemoryCap) {
    // Fits the file (one byte per element) but would decode to 40 bytes each: > 256 MiB.
    const uint64_t n = (256ull << 20) / 40 + 1;
    expect_inspect_refuses("budget.gguf",
                           GgufBytes{}.header(0, 1).str("k").u32(9).u32(0).u64(n).fill(n, 1).v,
                           "k: the header would need more than 256 MiB of memory once decoded");
}
TEST_F(CliMalformed, GgufInvalidValueType) {
    expect_inspect_refuses("vtype.gguf", GgufBytes{}.header(0, 1).str("k").u32(13).u32(1).v,
                           "k: invalid value type 13 (expected 0..12)");
}
TEST_F(CliMalformed, GgufDuplicateKey) {
    expect_inspect_refuses("dupkey.gguf",
                           GgufBytes{}.header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2).v,
                           "a.b: duplicate key");
}
TEST_F(CliMalformed, GgufAlignmentNotPowerOfTwo) {
    expect_inspect_refuses("align.gguf", GgufBytes{}.header(0, 1).kv_u32("general.alignment", 24).v,
                           "general.alignment: 24 is not a power of two");
}
TEST_F(CliMalformed, GgufFiveDimensions) {
    expect_inspect_refuses("ndims.gguf",
                           GgufBytes{}.header(1, 0).str("t").u32(5).fill(48, 1).u32(0).u64(0).v,
                           "tensor 't': n_dims = 5 (expected 1..4)");
}
TEST_F(CliMalformed, GgufUnknownTensorType) {
    expect_inspect_refuses("type.gguf", with_fill(one_tensor({32}, 43), 128),
                           "tensor 't': type id 43 is unknown (expected 0..42)");
}
TEST_F(CliMalformed, GgufRowNotABlockMultiple) {
    expect_inspect_refuses("block.gguf", with_fill(one_tensor({48, 2}, 3), 64),
                           "tensor 't': ne[0] = 48 is not a multiple of the Q4_1 block size 32");
}
TEST_F(CliMalformed, GgufNonCanonicalOffset) {
    expect_inspect_refuses("offset.gguf", with_fill(one_tensor({8}, 0, 64), 128),
                           "tensor 't': offset 64 is not canonical (expected 0");
}
TEST_F(CliMalformed, GgufDataPastEndOfFile) {
    expect_inspect_refuses(
        "short.gguf", with_fill(one_tensor({8}, 0), 31),
        "tensor 't': data (32 bytes at data offset 0) runs past the end of the file");
}

// ---- safetensors (the HF crate's validation rules) ---------------------------------------------

std::vector<uint8_t> st_file(uint64_t declared, const std::string& header, size_t data_bytes) {
    std::vector<uint8_t> bytes;
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(declared >> (8 * i)));
    bytes.insert(bytes.end(), header.begin(), header.end());
    bytes.insert(bytes.end(), data_bytes, 0);
    return bytes;
}
std::vector<uint8_t> st_file(const std::string& header, size_t data_bytes) {
    return st_file(header.size(), header, data_bytes);
}

TEST_F(CliMalformed, SafetensorsShorterThanLengthPrefix) {
    expect_inspect_refuses("tiny.safetensors", {1, 2, 3},
                           "file is 3 bytes, too short for the 8-byte header length");
}
TEST_F(CliMalformed, SafetensorsHeaderLengthPastEnd) {
    expect_inspect_refuses("hlen.safetensors", st_file(1000, "{}", 0),
                           "header length 1000 runs past the end of the file (10 bytes)");
}
TEST_F(CliMalformed, SafetensorsHeaderNotJson) {
    expect_inspect_refuses("json.safetensors", st_file("{\"w\": nope", 0),
                           "header: not valid JSON");
}
TEST_F(CliMalformed, SafetensorsUnknownDtype) {
    expect_inspect_refuses("dtype.safetensors",
                           st_file(R"({"w":{"dtype":"F7","shape":[1],"data_offsets":[0,4]}})", 4),
                           "w: unknown dtype \"F7\"");
}
TEST_F(CliMalformed, SafetensorsOverlappingTensors) {
    expect_inspect_refuses("overlap.safetensors",
                           st_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                   12),
                           "b: data_offsets [4, 12] overlaps tensor \"a\"");
}
TEST_F(CliMalformed, SafetensorsShapeDisagreesWithSpan) {
    expect_inspect_refuses(
        "span.safetensors", st_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
        "w: shape [3] x F32 (4 bytes) is 12 bytes but data_offsets [0, 8] span 8");
}
TEST_F(CliMalformed, SafetensorsTrailingBytes) {
    expect_inspect_refuses("trailing.safetensors",
                           st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 6),
                           "tensors cover 4 bytes but the data area has 6");
}
TEST_F(CliMalformed, SafetensorsMetadataValueNotAString) {
    expect_inspect_refuses("meta.safetensors", st_file(R"({"__metadata__":{"n":1}})", 0),
                           "__metadata__: value of \"n\" is 1, not a string");
}

// ---- command lines -----------------------------------------------------------------------------

TEST_F(CliMalformed, ConfigJsonOverTheSizeCap) {
    // A 1 MiB + 1 config.json (sparse): refused from its size before it is read.
    write("model.safetensors", st_file(R"({"__metadata__":{"format":"mcq-v1"}})", 0));
    const fs::path config = write("config.json", {'{'});
    fs::resize_file(config, (1ull << 20) + 1);
    const RunResult r = rebox("plan '" + dir_.string() + "'");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.err, "rebox: " + config.string() +
                         ": is 1048577 bytes, over rebox's 1 MiB limit for this file (expected "
                         "the model's own config.json)\n");
}
TEST_F(CliMalformed, InspectMissingFileNamesIt) {
    const fs::path missing = dir_ / "missing.gguf";
    const RunResult r = rebox("inspect '" + missing.string() + "'");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.rfind("rebox: " + missing.string() + ": cannot open", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}
TEST_F(CliMalformed, UsageErrorsExit1AndNameTheProblem) {
    struct Usage {
        std::string args, names;
    };
    const std::vector<Usage> cases = {
        {"", "Usage: rebox COMMAND"},  // the command list, on stderr
        {"frobnicate",
         "rebox: unknown command 'frobnicate' (expected one of convert, plan, verify, inspect, "
         "split, merge, batch, meta, diff, hash, quantize, check; see --help)"},
        {"inspect", "FILE"},
        {"convert " + dir_.string(), "--output"},
        {"convert " + dir_.string() + " -o x.gguf --outtype q8_0", "q8_0"},
        // A quantization type as --outtype: the line says how to get that file.
        {"convert " + dir_.string() + " -o x.gguf --outtype Q4_K_M",
         "--quantize Q4_K_M writes it in one pass"},
        // A recipe option needs --quantize.
        {"convert " + dir_.string() + " -o x.gguf --pure", "no --quantize was given"},
        {"convert " + dir_.string() + " -o x.gguf --threads many", "many"},
        {"split a.gguf out --split-max-size 1M --split-max-tensors 2", "excludes"},
        {"inspect a.gguf --no-such-flag", "--no-such-flag"},
    };
    for (const Usage& u : cases) {
        const RunResult r = rebox(u.args);
        EXPECT_EQ(r.exit_code, 1) << "rebox " << u.args << ": " << r.err;
        EXPECT_NE(r.err.find(u.names), std::string::npos) << "rebox " << u.args << ": " << r.err;
    }
}

}  // namespace
}  // namespace rebox
