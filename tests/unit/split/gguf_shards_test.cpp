// Split GGUF sets: shard names and size parsing as llama-gguf-split spells them, the distribution
// of tensors over shards (worked by hand), and split/merge/convert --split-max-size through the
// CLI, including damaged sets that must fail with a clear error and write nothing.
#include "format/gguf_shards.hpp"

#include <gtest/gtest.h>

#include "format/gguf_file.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::run;

TEST(GgufShards, NamesFollowLlamaSplitPath) {
    EXPECT_EQ(shard_path("out/model", 0, 5), "out/model-00001-of-00005.gguf");
    EXPECT_EQ(shard_path("m", 11, 12), "m-00012-of-00012.gguf");
    EXPECT_EQ(shard_prefix("out/model-00001-of-00005.gguf", 0, 5), "out/model");
    EXPECT_FALSE(shard_prefix("out/model-00002-of-00005.gguf", 0, 5).has_value());
    EXPECT_FALSE(shard_prefix("model.gguf", 0, 1).has_value());
}

TEST(GgufShards, SplitSizeUsesDecimalUnits) {
    EXPECT_EQ(parse_split_size("500M"), 500000000u);
    EXPECT_EQ(parse_split_size("2G"), 2000000000u);
    EXPECT_EQ(parse_split_size("4096"), 4096u);
    for (const char* bad : {"", "M", "12K", "1.5G", "-1", "0", "99999999999999999999G"})
        EXPECT_THROW(parse_split_size(bad), Error) << bad;
}

std::vector<GgufTensorInfo> f32_tensors(const std::vector<int64_t>& lengths) {
    std::vector<GgufTensorInfo> infos;
    for (size_t i = 0; i < lengths.size(); ++i)
        infos.push_back({"t" + std::to_string(i),
                         {lengths[i]},
                         GgmlType::F32,
                         0,
                         static_cast<uint64_t>(lengths[i]) * 4});
    return infos;
}

std::vector<size_t> shard_sizes(const ShardedLayout& layout) {
    std::vector<size_t> sizes;
    for (const auto& shard : layout.shards) sizes.push_back(shard.tensors().size());
    return sizes;
}

TEST(GgufShards, SizeLimitCountsPaddedBytesAndIsolatesHugeTensors) {
    // Padded sizes: 8 values = 32 B, 9 values = 36 -> 64 B, 100 values = 400 -> 416 B.
    const auto tensors = f32_tensors({8, 8, 9, 100, 8});
    const std::vector<GgufKV> kvs = {{"general.architecture", GgufValue::str("qwen3")}};
    const ShardedLayout layout = make_sharded_layout(kvs, tensors, SplitLimits{96, 0, false});
    // 32+32 = 64 <= 96; +64 = 128 > 96 -> new shard; 64 + 416 > 96 -> new; 416 alone (over the
    // limit); then 32 -> new shard.
    EXPECT_EQ(shard_sizes(layout), (std::vector<size_t>{2, 1, 1, 1}));
    ASSERT_EQ(layout.places.size(), 5u);
    EXPECT_EQ(layout.places[3].shard, 2u);
    EXPECT_EQ(layout.places[3].index, 0u);

    const auto& first = layout.shards[0].kvs();
    ASSERT_EQ(first.size(), 4u);
    EXPECT_EQ(first[0].key, "general.architecture");
    EXPECT_EQ(first[1].key, "split.no");
    EXPECT_EQ(first[1].value.type, GgufType::UINT16);
    EXPECT_EQ(first[2].key, "split.count");
    EXPECT_EQ(first[2].value.as_u16(), 4);
    EXPECT_EQ(first[3].key, "split.tensors.count");
    EXPECT_EQ(first[3].value.type, GgufType::INT32);
    EXPECT_EQ(first[3].value.as_i32(), 5);
    const auto& later = layout.shards[2].kvs();
    ASSERT_EQ(later.size(), 3u);  // only the split keys
    EXPECT_EQ(later[0].value.as_u16(), 2);
}

TEST(GgufShards, TensorCountLimitAndMetadataOnlyFirstShard) {
    const auto tensors = f32_tensors({8, 8, 8, 8, 8});
    EXPECT_EQ(shard_sizes(make_sharded_layout({}, tensors, SplitLimits{0, 2, false})),
              (std::vector<size_t>{2, 2, 1}));
    EXPECT_EQ(shard_sizes(make_sharded_layout({}, tensors, SplitLimits{0, 2, true})),
              (std::vector<size_t>{0, 2, 2, 1}));
    // No limit: one layout and no split keys at all.
    const ShardedLayout whole = make_sharded_layout({}, tensors, SplitLimits{});
    ASSERT_EQ(whole.shards.size(), 1u);
    EXPECT_TRUE(whole.shards[0].kvs().empty());
}

class SplitCli : public ::testing::Test {
  protected:
    void SetUp() override {
        model_ = dir_ / "model";
        gguf_ = dir_ / "whole.gguf";
        ASSERT_EQ(run(quoted(test::mkfixture_cli()) + " " + quoted(model_) +
                      " --preset tiny --tokenizer small")
                      .exit_code,
                  0);
        ASSERT_EQ(run(rebox() + " convert " + quoted(model_) + " -o " + quoted(gguf_) + " --quiet")
                      .exit_code,
                  0);
    }
    static std::string rebox() { return quoted(test::rebox_cli()); }
    fs::path shard(uint32_t i, uint32_t n) const {
        return shard_path((dir_ / "part").string(), i, n);
    }

    test::ScratchDir scratch_;
    fs::path dir_ = scratch_.path(), model_, gguf_;
};

TEST_F(SplitCli, SplitThenMergeIsByteIdenticalAndEveryShardIsAGguf) {
    ASSERT_EQ(run(rebox() + " split " + quoted(gguf_) + " " + quoted(dir_ / "part") +
                  " --split-max-tensors 10")
                  .exit_code,
              0);
    // 24 tensors, 10 per shard -> 3 shards.
    size_t tensors = 0;
    for (uint32_t i = 0; i < 3; ++i) {
        const auto file = GgufFile::open(shard(i, 3));
        tensors += file->tensors().size();
        EXPECT_EQ(file->find("split.no")->as_u16(), i);
        EXPECT_EQ(file->find("general.architecture") != nullptr, i == 0);
    }
    EXPECT_EQ(tensors, 24u);
    EXPECT_FALSE(fs::exists(shard(3, 4)));

    // verify and inspect take the first shard and see the whole model.
    const auto verified = run(rebox() + " verify " + quoted(model_) + " " + quoted(shard(0, 3)));
    EXPECT_EQ(verified.exit_code, 0) << verified.output;
    EXPECT_NE(verified.output.find("bit-identical: 15/15"), std::string::npos) << verified.output;

    const auto inspected = run(rebox() + " inspect " + quoted(shard(0, 3)));
    EXPECT_EQ(inspected.exit_code, 0) << inspected.output;
    EXPECT_NE(inspected.output.find("* split set: 3 shards, 24 tensors in all"), std::string::npos)
        << inspected.output;
    EXPECT_NE(inspected.output.find("Q4_1     count     15"), std::string::npos)
        << inspected.output;

    const fs::path merged = dir_ / "merged.gguf";
    ASSERT_EQ(run(rebox() + " merge " + quoted(shard(0, 3)) + " " + quoted(merged)).exit_code, 0);
    EXPECT_EQ(test::read_file_bytes(merged), test::read_file_bytes(gguf_));
}

TEST_F(SplitCli, DamagedSetsFailClearlyAndWriteNothing) {
    ASSERT_EQ(run(rebox() + " split " + quoted(gguf_) + " " + quoted(dir_ / "part") +
                  " --split-max-tensors 10")
                  .exit_code,
              0);
    const fs::path merged = dir_ / "merged.gguf";
    auto merge_fails_with = [&](const std::string& needle) {
        const auto result = run(rebox() + " merge " + quoted(shard(0, 3)) + " " + quoted(merged));
        EXPECT_EQ(result.exit_code, 1) << result.output;
        EXPECT_NE(result.output.find(needle), std::string::npos) << result.output;
        EXPECT_FALSE(fs::exists(merged));
        for (const auto& entry : fs::directory_iterator(dir_))
            EXPECT_EQ(entry.path().string().find("rebox-tmp"), std::string::npos) << entry.path();
    };
    // Missing shard.
    fs::rename(shard(1, 3), dir_ / "aside.gguf");
    merge_fails_with("shard 2 of 3 is missing");
    // Shards swapped (renamed): split.no disagrees with the name.
    fs::rename(shard(2, 3), shard(1, 3));
    fs::rename(dir_ / "aside.gguf", shard(2, 3));
    merge_fails_with("is not shard 2 of a 3-shard set");
    fs::rename(shard(1, 3), dir_ / "aside.gguf");
    fs::rename(shard(2, 3), shard(1, 3));
    fs::rename(dir_ / "aside.gguf", shard(2, 3));
    // Truncated shard.
    auto bytes = test::read_file_bytes(shard(2, 3));
    const auto original = bytes;
    bytes.resize(bytes.size() - 100);
    test::write_file(shard(2, 3), bytes);
    merge_fails_with(shard(2, 3).string());
    test::write_file(shard(2, 3), original);
    // A shard from another split of the same model (4 shards): count and numbering disagree.
    ASSERT_EQ(run(rebox() + " split " + quoted(gguf_) + " " + quoted(dir_ / "other") +
                  " --split-max-tensors 7")
                  .exit_code,
              0);
    fs::copy_file(shard_path((dir_ / "other").string(), 1, 4), shard(1, 3),
                  fs::copy_options::overwrite_existing);
    merge_fails_with("is not shard 2 of a 3-shard set");
}

TEST_F(SplitCli, ConvertWritesVerifiedShardsDirectly) {
    const fs::path out = dir_ / "direct.gguf";
    const auto result = run(rebox() + " convert " + quoted(model_) + " -o " + quoted(out) +
                            " --quiet --split-max-size 30000");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_FALSE(fs::exists(out));
    const fs::path first = dir_ / "direct-00001-of-00003.gguf";
    ASSERT_TRUE(fs::exists(first)) << result.output;
    // The same tensors and bytes as the unsplit conversion: merge gives the unsplit file back.
    const fs::path merged = dir_ / "merged.gguf";
    ASSERT_EQ(run(rebox() + " merge " + quoted(first) + " " + quoted(merged)).exit_code, 0);
    EXPECT_EQ(test::read_file_bytes(merged), test::read_file_bytes(gguf_));
}

}  // namespace
}  // namespace rebox
