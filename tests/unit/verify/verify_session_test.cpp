// VerifySession, the verification that runs while convert writes: a converted tiny fixture is
// written again into a file that at first holds only its header (tensor bytes zero), region by
// region through pwrite, reporting each region as written. No value check may run before its
// bytes are there (a unit run early would read zeros and fail), every check reads the bytes from
// the file (the verdict follows the file's bytes, flipped bit included), and finish() gives the
// same verdict as verify_gguf on the finished file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "../fixtures/fixture_reader.hpp"
#include "../test_process.hpp"
#include "format/gguf_file.hpp"
#include "format/gguf_shards.hpp"
#include "test_files.hpp"
#include "test_process.hpp"
#include "verify/verify.hpp"

namespace rebox::test {
namespace {

namespace fs = std::filesystem;

struct Converted {
    fs::path model, gguf;
    std::vector<uint8_t> bytes;
    uint64_t data_offset = 0;
    std::vector<GgufTensorInfo> tensors;
};

Converted convert_tiny(const fs::path& dir, const std::string& fixture_args) {
    Converted c{dir / "model", dir / "good.gguf", {}, 0, {}};
    EXPECT_EQ(run_mkfixture(c.model, "--preset tiny " + fixture_args), 0);
    const RunResult r = run(quoted(rebox_cli()) + " convert " + quoted(c.model) + " -o " +
                            quoted(c.gguf) + " -q -f --no-verify");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    c.bytes = read_file_bytes(c.gguf);
    const auto file = GgufFile::open(c.gguf);
    c.data_offset = file->data_offset();
    c.tensors = file->tensors();
    return c;
}

// Writes c's header into `path` (the data section zero), opens a session on it, then writes every
// tensor's bytes from `data` in two halves, reporting each half; returns the verdict.
VerifyReport stream_into(const Converted& c, const std::vector<uint8_t>& data, const fs::path& path,
                         bool* ran_early) {
    std::vector<uint8_t> header_only(c.bytes.size(), 0);
    std::copy(c.bytes.begin(), c.bytes.begin() + static_cast<long>(c.data_offset),
              header_only.begin());
    write_file(path, header_only);
    VerifyOptions options;
    options.threads = 2;
    VerifySession session(c.model, GgufSet::open_files({path}), options);
    *ran_early = session.run_ready_unit();
    const int fd = ::open(path.c_str(), O_WRONLY);
    EXPECT_GE(fd, 0);
    for (const GgufTensorInfo& t : c.tensors) {
        const uint64_t begin = c.data_offset + t.offset;
        const uint64_t half = t.nbytes / 2;
        EXPECT_EQ(::pwrite(fd, data.data() + begin, half, static_cast<off_t>(begin)),
                  static_cast<ssize_t>(half));
        session.region_written(0, begin, half);
        // Half a tensor written: none of its values is checked yet (tiny tensors are one unit).
        if (half > 0 && session.run_ready_unit()) *ran_early = true;
        EXPECT_EQ(::pwrite(fd, data.data() + begin + half, t.nbytes - half,
                           static_cast<off_t>(begin + half)),
                  static_cast<ssize_t>(t.nbytes - half));
        session.region_written(0, begin + half, t.nbytes - half);
        while (session.run_ready_unit()) {
        }
    }
    ::close(fd);
    return session.finish();
}

// One case per input kind: `Inputs/VerifySessionStreamed.VerifiesLikeTheFinishedFile/<name>`.
struct StreamedCase {
    const char* name;
    const char* fixture_args;
};
void PrintTo(const StreamedCase& c, std::ostream* os) { *os << c.fixture_args; }

class VerifySessionStreamed : public ::testing::TestWithParam<StreamedCase> {};

TEST_P(VerifySessionStreamed, VerifiesLikeTheFinishedFile) {
    const char* args = GetParam().fixture_args;
    SCOPED_TRACE(args);
    const test::ScratchDir scratch;
    const fs::path dir = scratch / "verify_session";
    const Converted c = convert_tiny(dir, args);
    bool ran_early = false;
    const VerifyReport streamed = stream_into(c, c.bytes, dir / "streamed.gguf", &ran_early);
    EXPECT_FALSE(ran_early) << "a value check ran before its bytes were written";
    EXPECT_TRUE(streamed.ok()) << streamed.summary();
    const VerifyReport whole = verify_gguf(c.model, c.gguf);
    EXPECT_EQ(streamed.summary(), whole.summary());
    EXPECT_GT(streamed.tensors.size(), 10u);
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, VerifySessionStreamed,
    ::testing::Values(StreamedCase{"mcq", "--format mcq"},
                      StreamedCase{"mlx_mixed_4_5", "--format mlx --recipe mixed_4_5"},
                      StreamedCase{"float_bf16", "--format float --dtype bf16"},
                      StreamedCase{"llama_mcq", "--arch llama --format mcq"}),
    [](const ::testing::TestParamInfo<StreamedCase>& info) {
        return std::string(info.param.name);
    });

TEST(VerifySession, FlippedBitInTheFileFailsNamingTheTensor) {
    const test::ScratchDir scratch;
    const fs::path dir = scratch / "verify_session_flip";
    const Converted c = convert_tiny(dir, "--format mcq");
    const GgufTensorInfo* target = nullptr;
    for (const GgufTensorInfo& t : c.tensors)
        if (t.name == "blk.1.ffn_down.weight") target = &t;
    ASSERT_NE(target, nullptr);
    std::vector<uint8_t> bad = c.bytes;
    bad[c.data_offset + target->offset + target->nbytes - 3] ^= 0x10;  // a code nibble, last block
    bool ran_early = false;
    const VerifyReport report = stream_into(c, bad, dir / "streamed.gguf", &ran_early);
    EXPECT_FALSE(report.ok());
    size_t failing = 0;
    for (const TensorCheck& t : report.tensors) {
        if (t.identical) continue;
        ++failing;
        EXPECT_EQ(t.gguf_name, "blk.1.ffn_down.weight");
        EXPECT_EQ(t.mismatches, 1u);
    }
    EXPECT_EQ(failing, 1u);
}

}  // namespace
}  // namespace rebox::test
