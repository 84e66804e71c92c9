// SPDX-License-Identifier: MIT
// sds buffers as sds.c sizes them: sdsnewlen, greedy growth, the types the two flavours pick, Redis
// 7.0's trim. The figures are jemalloc's classes (quantum 8) worked by hand from sds.c.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/sds_buffer.h"

#include "layout_fixtures.h"

#include <gtest/gtest.h>

using namespace layoutlab;
using namespace layoutlab::sds;

namespace {

using test::jemalloc;

TEST(SdsBuffer, NewLenTakesTheAllocationsUsableSize) {
    // 5 bytes: type 5, 7 bytes asked, 8 given; a type-5 string has no free space.
    EXPECT_EQ(newLen(Flavor::Valkey, 5, jemalloc()), (Buffer { 5, Type::Type5 }));
    // 50 bytes: type 8, 54 asked, 56 given: 52 of capacity.
    EXPECT_EQ(newLen(Flavor::Valkey, 50, jemalloc()), (Buffer { 52, Type::Type8 }));
    EXPECT_EQ(newLen(Flavor::Valkey, 50, jemalloc()).bytes(), 56u);
    // 0 bytes: type 8 ("Empty strings are usually created in order to append").
    EXPECT_EQ(newLen(Flavor::Redis70, 0, jemalloc()).type, Type::Type8);
}

TEST(SdsBuffer, GrowthDoublesAndReusesFreeSpace) {
    const Buffer fresh = newLen(Flavor::Valkey, 50, jemalloc()); // capacity 52
    EXPECT_EQ(makeRoomFor(Flavor::Valkey, fresh, 50, 2, jemalloc()), fresh); // fits
    // 50 + 10 = 60, doubled: 120, type 8: 124 asked, 128 given, capacity 124.
    EXPECT_EQ(makeRoomFor(Flavor::Valkey, fresh, 50, 10, jemalloc()), (Buffer { 124, Type::Type8 }));
    // A type-5 string always grows, and never into type 5: 5 + 1 doubled is 12, 16 given.
    EXPECT_EQ(makeRoomFor(Flavor::Valkey, newLen(Flavor::Valkey, 5, jemalloc()), 5, 1, jemalloc()),
        (Buffer { 12, Type::Type8 }));
    // Above 1 MiB the growth adds 1 MiB instead of doubling (past the free space the 2.5 MiB class left).
    const std::uint64_t len = 2u << 20;
    const Buffer roomy = newLen(Flavor::Valkey, len, jemalloc());
    const std::uint64_t add = roomy.capacity - len + 1;
    const Buffer big = makeRoomFor(Flavor::Valkey, roomy, len, add, jemalloc());
    EXPECT_GE(big.capacity, len + add + kMaxPrealloc);
    EXPECT_LT(big.capacity, len + add + 2 * kMaxPrealloc);
}

TEST(SdsBuffer, TheFlavoursDifferWhereTheTypeCannotDescribeTheBuffer) {
    // 120 bytes: 124 asked, 128 given, 4 free. 120 + 7 doubled is 254: Redis 7.0 picks type 8 and caps its
    // capacity at 255 in a 320-byte buffer; Valkey picks type 16 (254 > 252), 260 asked, 320 given: 314.
    const Buffer redis = makeRoomFor(Flavor::Redis70, newLen(Flavor::Redis70, 120, jemalloc()), 120, 7, jemalloc());
    EXPECT_EQ(redis, (Buffer { 255, Type::Type8 }));
    EXPECT_EQ(jemalloc().usableSize(redis.bytes()), 320u);
    const Buffer valkey = makeRoomFor(Flavor::Valkey, newLen(Flavor::Valkey, 120, jemalloc()), 120, 7, jemalloc());
    EXPECT_EQ(valkey, (Buffer { 314, Type::Type16 }));
    EXPECT_EQ(valkey.bytes(), 320u);
}

TEST(SdsBuffer, RedisTrimsAClientsRawValueWithMoreThanATenthFree) {
    const Buffer fresh = newLen(Flavor::Redis70, 45, jemalloc()); // 49 asked, 56 given: capacity 52, 7 free
    EXPECT_EQ(trimmedIfNeeded(fresh, 45), (Buffer { 45, Type::Type8 })); // more than 45 / 10
    const Buffer roomy = newLen(Flavor::Redis70, 60, jemalloc()); // 64 asked and given: capacity 60
    EXPECT_EQ(trimmedIfNeeded(roomy, 60), roomy); // nothing free
    const Buffer wide = newLen(Flavor::Redis70, 66, jemalloc()); // 70 asked, 80 given: capacity 76, 10 free
    EXPECT_EQ(trimmedIfNeeded(wide, 66), (Buffer { 66, Type::Type8 }));
    EXPECT_EQ(jemalloc().usableSize(trimmedIfNeeded(wide, 66).bytes()), 80u); // the allocation stays
}

} // namespace
