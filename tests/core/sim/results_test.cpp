// SPDX-License-Identifier: MIT
// leanestPoint (the GUI's "leanest threshold" marker) and pairByThreshold (its Compare view).

#include "layoutlab/report/compare.h"
#include "layoutlab/sim/results.h"

#include <gtest/gtest.h>

namespace layoutlab {
namespace {

ThresholdPoint point(std::uint32_t threshold, std::uint64_t usableBytes, double lines = 0) {
    ThresholdPoint p;
    p.threshold = threshold;
    p.usableBytes = usableBytes;
    p.linesTouchedPerGet = lines;
    return p;
}

TEST(LeanestPoint, FewestUsableBytesWins) {
    EXPECT_EQ(leanestPoint({ point(64, 16540), point(128, 14140), point(192, 15000) }), 1u);
}

TEST(LeanestPoint, TiesGoToFewerLinesPerGetThenTheLowerThreshold) {
    EXPECT_EQ(leanestPoint({ point(64, 14000, 4), point(128, 14000, 3) }), 1u);
    EXPECT_EQ(leanestPoint({ point(64, 14000, 3), point(128, 14000, 3) }), 0u);
    EXPECT_EQ(leanestPoint({ point(128, 14000, 3), point(64, 14000, 3) }), 1u);
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
