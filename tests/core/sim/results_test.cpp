// SPDX-License-Identifier: MIT
// leanestPoint (the GUI's "leanest threshold" marker) and pairByThreshold (its Compare view).

#include "layoutlab/report/compare.h"
#include "layoutlab/sim/results.h"

#include <gtest/gtest.h>

namespace layoutlab {
namespace {

ThresholdPoint point(std::uint32_t threshold, double bytesPerKey, double llcMisses = 0, double lines = 0) {
    ThresholdPoint p;
    p.threshold = threshold;
    p.usableBytesPerKey = bytesPerKey;
    p.linesTouchedPerGet = lines;
    if (llcMisses > 0)
        p.missesPerGet = { 3.0, llcMisses };
    return p;
}

TEST(LeanestPoint, FewestBytesPerKeyWins) {
    EXPECT_EQ(leanestPoint({ point(64, 165.4), point(128, 141.4), point(192, 150) }), 1u);
}

TEST(LeanestPoint, TiesGoToFewerLastLevelMissesThenFewerLinesThenTheLowerThreshold) {
    EXPECT_EQ(leanestPoint({ point(64, 140, 2.0), point(128, 140, 1.5) }), 1u);
    EXPECT_EQ(leanestPoint({ point(64, 140, 0, 4), point(128, 140, 0, 3) }), 1u);
    EXPECT_EQ(leanestPoint({ point(64, 140, 0, 3), point(128, 140, 0, 3) }), 0u);
    EXPECT_EQ(leanestPoint({}), 0u);
}

TEST(PairByThreshold, TheUnionOfThresholdsInOrder) {
    const std::vector<ThresholdPoint> a { point(64, 1), point(128, 2) };
    const std::vector<ThresholdPoint> b { point(32, 3), point(128, 4) };
    const auto pairs = pairByThreshold(a, b);
    ASSERT_EQ(pairs.size(), 3u);
    EXPECT_EQ(pairs[0].threshold, 32u);
    EXPECT_EQ(pairs[0].a, nullptr);
    EXPECT_EQ(pairs[0].b, &b[0]);
    EXPECT_EQ(pairs[1].threshold, 64u);
    EXPECT_EQ(pairs[1].a, &a[0]);
    EXPECT_EQ(pairs[1].b, nullptr);
    EXPECT_EQ(pairs[2].a, &a[1]);
    EXPECT_EQ(pairs[2].b, &b[1]);
}

TEST(RelativeChange, IsUndefinedFromZero) {
    EXPECT_DOUBLE_EQ(*relativeChange(200, 150), -0.25);
    EXPECT_FALSE(relativeChange(0, 1).has_value());
}

} // namespace
} // namespace layoutlab
