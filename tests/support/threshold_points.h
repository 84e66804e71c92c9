// SPDX-License-Identifier: MIT
#pragma once

// The check that two threshold points describe the same placement: the byte totals, the embedding and
// the access path, and the per-class table.

#include "layoutlab/sim/results.h"

#include <gtest/gtest.h>

namespace layoutlab::test {

inline void expectSamePoint(const ThresholdPoint& a, const ThresholdPoint& b) {
    EXPECT_EQ(a.threshold, b.threshold);
    EXPECT_EQ(a.usableBytes, b.usableBytes);
    EXPECT_EQ(a.requestedBytes, b.requestedBytes);
    EXPECT_EQ(a.embeddedKeys, b.embeddedKeys);
    EXPECT_DOUBLE_EQ(a.linesTouchedPerGet, b.linesTouchedPerGet);
    EXPECT_EQ(a.sizeClasses, b.sizeClasses);
}

} // namespace layoutlab::test
