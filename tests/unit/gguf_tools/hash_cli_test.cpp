// `rebox hash` against published digests (xxh64("abc") from the xxHash test vectors, sha256 of the
// FIPS 180-2 examples "abc" and the 448-bit message) in a hand-built GGUF, against sha256sum(1) on
// a converted fixture's tensor and KV bytes, and --check on edited, split and corrupted files.
#include <fstream>

#include "format/gguf_file.hpp"
#include "format/gguf_test_bytes.hpp"
#include "gguf_tools/tool_fixture.hpp"
#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::quoted;

class HashCli : public test::GgufToolTest {
  protected:
    // sha256sum(1) of bytes, through a file.
    std::string sha256sum(const std::vector<uint8_t>& bytes) {
        test::write_file(dir_ / "sha.bin", bytes);
        const auto r = test::run("sha256sum " + quoted(dir_ / "sha.bin"));
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return r.output.substr(0, 64);
    }
};

constexpr const char* kFips2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";  // 56 B

TEST_F(HashCli, PublishedVectorsInAHandBuiltFile) {
    // KVs: general.architecture; tensors: I8 [3] "abc" at 0, I8 [56] FIPS message at 32.
    test::GgufBytes b;
    b.header(2, 1).kv_str("general.architecture", "qwen3");
    b.tensor("t.abc", {3}, 24, 0).tensor("t.fips", {56}, 24, 32).pad();
    b.raw("abc").pad().raw(kFips2).pad();
    test::write_file(dir_ / "v.gguf", b.v);
    const auto r = rebox("hash " + quoted(dir_ / "v.gguf"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out,
                         "44bc2cf5ad770999 "
                         "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  "
                         "tensor:t.abc\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out,
                         " 248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1  "
                         "tensor:t.fips\n"))
        << r.out;
    // The kv entry: sha256 of the KVs as GGUF v3 metadata with no tensors, padded to 32.
    test::GgufBytes kv;
    kv.header(0, 1).kv_str("general.architecture", "qwen3").pad();
    const std::string kv_sha = sha256sum(kv.v);
    EXPECT_TRUE(contains(r.out, " " + kv_sha + "  kv\n")) << kv_sha << "\n" << r.out;
    EXPECT_EQ(test::line_count(r.out), 3u);
    EXPECT_TRUE(r.out.starts_with(r.out.substr(0, 16) + " " + kv_sha + "  kv\n")) << r.out;
}

TEST_F(HashCli, TensorDigestsMatchSha256sumAndSurviveSplitAndMerge) {
    const fs::path file = converted("a.gguf");
    const auto r = rebox("hash " + quoted(file));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(test::line_count(r.out), 25u);
    {
        const auto g = GgufFile::open(file);
        const auto data = g->tensor_data(*g->find_tensor("blk.1.ffn_down.weight"));
        const std::string sha = sha256sum(std::vector<uint8_t>(data.begin(), data.end()));
        EXPECT_TRUE(contains(r.out, " " + sha + "  tensor:blk.1.ffn_down.weight\n")) << r.out;
    }
    ASSERT_EQ(rebox("split " + quoted(file) + " " + quoted(dir_ / "s") + " --split-max-tensors 9")
                  .exit_code,
              0);
    const auto split = rebox("hash " + quoted(dir_ / "s-00001-of-00003.gguf"));
    EXPECT_EQ(split.out, r.out);  // kv entry included: split.* keys are left out
    std::ofstream(dir_ / "a.manifest") << r.out;
    const auto check = rebox("hash " + quoted(dir_ / "s-00001-of-00003.gguf") + " --check " +
                             quoted(dir_ / "a.manifest"));
    EXPECT_EQ(check.exit_code, 0) << check.out;
    EXPECT_EQ(check.out, "OK: 25 entries match\n");
}

TEST_F(HashCli, CheckAfterMetaEditNamesOnlyTheKvSection) {
    const fs::path file = converted("a.gguf");
    const auto manifest = rebox("hash " + quoted(file));
    std::ofstream(dir_ / "a.manifest") << manifest.out;
    ASSERT_EQ(rebox("meta " + quoted(file) + " --set general.name=edited").exit_code, 0);
    const auto check = rebox("hash " + quoted(file) + " --check " + quoted(dir_ / "a.manifest"));
    EXPECT_EQ(check.exit_code, 1);
    EXPECT_EQ(check.out, "kv: DIFFERS\nFAILED: 1 differ, 0 missing, 0 new; 24 match\n");
    const auto tensors =
        rebox("hash " + quoted(file) + " --tensors-only --check " + quoted(dir_ / "a.manifest"));
    EXPECT_EQ(tensors.exit_code, 0) << tensors.out;
    EXPECT_EQ(tensors.out, "OK: 24 entries match\n");
}

TEST_F(HashCli, CheckNamesCorruptedRenamedAndMissingTensors) {
    const fs::path file = converted("a.gguf");
    std::ofstream(dir_ / "a.manifest") << rebox("hash " + quoted(file)).out;
    ASSERT_EQ(rebox("meta " + quoted(file) + " -o " + quoted(dir_ / "b.gguf") +
                    " --rename-tensor output_norm.weight=on.weight")
                  .exit_code,
              0);
    uint64_t at = 0;
    {
        const auto g = GgufFile::open(dir_ / "b.gguf");
        const GgufTensorInfo* t = g->find_tensor("blk.0.attn_v.weight");
        at = g->data_offset() + t->offset + t->nbytes - 1;  // the last byte
    }
    auto bytes = test::read_file_bytes(dir_ / "b.gguf");
    bytes[at] ^= 0x80;
    test::write_file(dir_ / "b.gguf", bytes);
    const auto r = rebox("hash " + quoted(dir_ / "b.gguf") + " --tensors-only --check " +
                         quoted(dir_ / "a.manifest"));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out,
              "tensor:blk.0.attn_v.weight: DIFFERS\n"
              "tensor:output_norm.weight: MISSING (in the manifest, not in " +
                  (dir_ / "b.gguf").string() +
                  ")\n"
                  "tensor:on.weight: NEW (in " +
                  (dir_ / "b.gguf").string() +
                  ", not in the manifest)\n"
                  "FAILED: 1 differ, 1 missing, 1 new; 22 match\n");
}

TEST_F(HashCli, UnreadableModelOrManifestExitsTwo) {
    const fs::path file = converted("a.gguf");
    std::ofstream(dir_ / "junk.gguf") << "not a gguf, only text, long enough to have a header";
    std::ofstream(dir_ / "bad.manifest") << "0123 not-a-digest  kv\n";
    std::ofstream(dir_ / "good.manifest") << rebox("hash " + quoted(file)).out;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"hash " + quoted(dir_ / "junk.gguf"), "junk.gguf"},
        {"hash " + quoted(dir_ / "absent.gguf"), "absent.gguf"},
        {"hash " + quoted(file) + " --check " + quoted(dir_ / "bad.manifest"),
         "bad.manifest: line 1: not a manifest line"},
        {"hash " + quoted(file) + " --check " + quoted(dir_ / "no.manifest"), "no.manifest"},
        {"hash " + quoted(dir_ / "junk.gguf") + " --check " + quoted(dir_ / "good.manifest"),
         "junk.gguf"},
    };
    for (const auto& [args, message] : cases) {
        const auto r = rebox(args);
        EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
        EXPECT_EQ(test::line_count(r.err), 1u) << args << "\n" << r.err;
        EXPECT_TRUE(contains(r.err, message)) << args << "\n" << r.err;
        EXPECT_EQ(r.out, "") << args;
    }
}

}  // namespace
}  // namespace rebox
