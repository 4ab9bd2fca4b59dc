// Hand-worked MLX packing vectors for every affine bit width (docs/formats.md §1 "Bit
// packing": code j of a row sits at bits [j*b, j*b+b) of the row's little-endian uint32 words, so
// 3-, 5- and 6-bit codes straddle words). The expected words below were written by hand from that
// rule (the working is in mlx_packing_vectors.hpp); they go through read_mlx_model's QuantView and
// the shared unpack_lsb0, and the codes that come out must be the ones put in.
#include <gtest/gtest.h>

#include <map>

#include "source/lsb0_unpack.hpp"
#include "source/mlx_packing_vectors.hpp"
#include "source/mlx_reader.hpp"
#include "source/mlx_test_writer.hpp"
#include "test_files.hpp"

namespace rebox::test {
namespace {

TEST(MlxPacking, HandWorkedWordsUnpackToTheirCodesForEveryWidth) {
    for (const MlxPackVector& v : kMlxPackVectors) {
        SCOPED_TRACE("bits " + std::to_string(v.bits));
        ASSERT_EQ(v.words0.size(), static_cast<size_t>(v.bits));  // 32 codes = bits words
        std::vector<uint32_t> words = v.words0;
        std::vector<uint32_t> row1(v.words0.size(), 0);
        row1[0] = 1;
        words.insert(words.end(), row1.begin(), row1.end());

        ScratchDir dir("mlx-pack");
        MlxDir mlx;
        mlx.config["quantization"] = {{"group_size", 32}, {"bits", v.bits}, {"mode", "affine"}};
        mlx.quant("model.layers.0.mlp.down_proj", 2, words, 1);
        mlx.write(dir.path());

        const SourceModel model = read_mlx_model(*ModelDir::open(dir.path()));
        ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
        ASSERT_EQ(model.tensors.size(), 1u);
        const SourceTensor& t = model.tensors[0];
        EXPECT_EQ(t.name, "model.layers.0.mlp.down_proj.weight");
        EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 32}));
        ASSERT_TRUE(t.quant);
        EXPECT_EQ(t.quant->bits, v.bits);
        EXPECT_EQ(t.quant->group, 32);

        std::vector<uint8_t> codes(64, 0xFF);
        unpack_lsb0(t.quant->codes, t.quant->bits, 0, 64, codes.data());
        for (int j = 0; j < 64; ++j) {
            int expected = 0;
            if (j < 32 && v.row0.count(j)) expected = v.row0.at(j);
            if (j == 32) expected = 1;
            EXPECT_EQ(codes[j], expected) << "code " << j;
        }
    }
}

}  // namespace
}  // namespace rebox::test
