// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/glibc_model.h"

#include <gtest/gtest.h>

using namespace layoutlab;

TEST(GlibcModel, ChunkHeaderAlignmentAndMinimum) {
    const GlibcModel glibc;
    // request2size(): max(32, (n + 8 + 15) & ~15); malloc_usable_size = chunk - 8.
    EXPECT_EQ(glibc.footprintBytes(1), 32u);
    EXPECT_EQ(glibc.usableSize(1), 24u);
    EXPECT_EQ(glibc.usableSize(24), 24u);
    EXPECT_EQ(glibc.footprintBytes(25), 48u);
    EXPECT_EQ(glibc.usableSize(25), 40u);
    EXPECT_EQ(glibc.usableSize(100), 104u);
    // mmapped from 128 KiB: page-rounded with a 16-byte header.
    EXPECT_EQ(glibc.footprintBytes(200000), 200704u);
    EXPECT_EQ(glibc.usableSize(200000), 200688u);
}
