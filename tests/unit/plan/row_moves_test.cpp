// plan_detail::row_move_problem on hand-worked cases: rows move exactly in a block type whenever
// each 32-value block lies inside one row and one group (groups across rows included), always in a
// float type, and never when a block would straddle two rows or two groups.
#include "plan/row_moves.hpp"

#include <gtest/gtest.h>

namespace rebox::plan_detail {
namespace {

TEST(RowMoves, BlocksInsideOneRowAndOneGroupMove) {
    EXPECT_EQ(row_move_problem(GgmlType::Q4_1, 64, 64), std::nullopt);   // one group per row
    EXPECT_EQ(row_move_problem(GgmlType::Q4_1, 96, 64), std::nullopt);   // groups cross rows
    EXPECT_EQ(row_move_problem(GgmlType::Q5_1, 64, 128), std::nullopt);  // two rows per group
    EXPECT_EQ(row_move_problem(GgmlType::Q8_0, 32, 0), std::nullopt);    // float source
}

TEST(RowMoves, FloatOutputsAlwaysMove) {
    EXPECT_EQ(row_move_problem(GgmlType::F32, 48, 64), std::nullopt);
    EXPECT_EQ(row_move_problem(GgmlType::F16, 7, 0), std::nullopt);
    EXPECT_EQ(row_move_problem(GgmlType::BF16, 1, 16), std::nullopt);
}

TEST(RowMoves, ABlockThatWouldMixRowsOrGroupsIsRefused) {
    EXPECT_EQ(row_move_problem(GgmlType::Q4_1, 48, 16),
              "a 32-value Q4_1 block would mix two rows of 48 values");
    EXPECT_EQ(row_move_problem(GgmlType::Q4_0, 0, 0),
              "a 32-value Q4_0 block would mix two rows of 0 values");
    EXPECT_EQ(row_move_problem(GgmlType::Q5_1, 64, 48),
              "a 32-value Q5_1 block would mix two quantization groups of 48 values");
}

}  // namespace
}  // namespace rebox::plan_detail
