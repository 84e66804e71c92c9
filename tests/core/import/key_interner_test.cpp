// SPDX-License-Identifier: MIT
// The key table behind every importer's dense ids: ids by first appearance, kept through every
// doubling of the table, whether it grows in place (in reserved address space) or on the heap, and
// however its keys crowd its last slots.

#include "layoutlab/growable_memory.h"
#include "layoutlab/import/importer.h"

#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using namespace layoutlab;

namespace {

// A hash whose home slot is the table's last at every size: the interner's home is the low bits of
// hash ^ (hash >> 32), all ones here.
std::uint64_t hashHomedAtTheEnd(std::uint32_t n) {
    return (std::uint64_t { n } << 32) | (0xFFFFFFFFu ^ n);
}

// Interns `hashes` in order, then looks every one up again: each must keep the id of its first
// appearance, and ids must be dense.
void expectDenseIdsKept(KeyInterner& keys, const std::vector<std::uint64_t>& hashes) {
    std::vector<std::uint32_t> first;
    std::uint32_t next = 0;
    for (std::size_t i = 0; i < hashes.size(); ++i) {
        const std::uint32_t id = keys.idForHash(hashes[i]);
        first.push_back(id);
        // Ids are dense, by first appearance (every hash here is new the first time).
        ASSERT_EQ(id, next++) << "hash " << i;
        // Now and then, an earlier key again, across the table's doublings since.
        if (i % 97 == 0)
            ASSERT_EQ(keys.idForHash(hashes[i / 2]), first[i / 2]) << "hash " << i / 2 << " after " << i;
    }
    ASSERT_EQ(keys.size(), hashes.size());
    for (std::size_t i = 0; i < hashes.size(); ++i)
        ASSERT_EQ(keys.idForHash(hashes[i]), first[i]) << "hash " << i;
    EXPECT_EQ(keys.size(), hashes.size()); // lookups added nothing
}

std::vector<std::uint64_t> distinctRandomHashes(std::size_t count, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::uint64_t> hashes { 0 }; // a hash of 0 is a key like any other
    while (hashes.size() < count)
        hashes.push_back(random());
    return hashes; // 64-bit draws: a repeat among them is a 1-in-10^8 chance
}

// Where the table grows: in address space reserved for its largest size (as importers have it), on
// the heap from the start (where the reservation cannot be had), or first in place and then, past a
// small reservation, on the heap.
enum class Growth { InPlace, OnTheHeap, InPlaceThenOnTheHeap };

KeyInterner makeInterner(Growth growth) {
    switch (growth) {
    case Growth::InPlace:
        return KeyInterner();
    case Growth::OnTheHeap:
        return KeyInterner(0);
    case Growth::InPlaceThenOnTheHeap:
        break;
    }
    return KeyInterner(20000);
}

class KeyInternerTest : public ::testing::TestWithParam<Growth> { };

} // namespace

TEST_P(KeyInternerTest, EveryKeyKeepsItsIdThroughEveryDoubling) {
    // 300,000 keys: the table doubles from 1,024 homes to 512 Ki.
    KeyInterner keys = makeInterner(GetParam());
    expectDenseIdsKept(keys, distinctRandomHashes(300000, 1));
}

TEST_P(KeyInternerTest, KeysCrowdingTheLastSlotsGetMoreOverflowSlots) {
    // Thousands of keys whose home is the last slot at every size, among ordinary ones: they fill the
    // overflow slots past the last home again and again, before and after each doubling.
    KeyInterner keys = makeInterner(GetParam());
    std::vector<std::uint64_t> hashes = distinctRandomHashes(60000, 2);
    for (std::uint32_t n = 0; n < 3000; ++n)
        hashes.insert(hashes.begin() + 20 * n + 1, hashHomedAtTheEnd(n));
    expectDenseIdsKept(keys, hashes);
}

std::string growthName(const ::testing::TestParamInfo<Growth>& info) {
    switch (info.param) {
    case Growth::InPlace:
        return "InPlace";
    case Growth::OnTheHeap:
        return "OnTheHeap";
    case Growth::InPlaceThenOnTheHeap:
        break;
    }
    return "InPlaceThenOnTheHeap";
}

INSTANTIATE_TEST_SUITE_P(Growth, KeyInternerTest,
    ::testing::Values(Growth::InPlace, Growth::OnTheHeap, Growth::InPlaceThenOnTheHeap), growthName);

TEST(GrowableMemoryTest, GrowingKeepsTheContentsWhereTheyAreAndAddsZeros) {
    GrowableMemory memory(std::size_t { 64 } << 20);
    ASSERT_TRUE(memory.reserved());
    EXPECT_EQ(memory.usable(), 0u);
    ASSERT_TRUE(memory.grow(1000));
    void* const base = memory.data();
    EXPECT_GE(memory.usable(), 1000u);
    std::memset(base, 0x5a, 1000);
    // Past a huge page, then to the reservation's end.
    for (const std::size_t bytes : { std::size_t { 3 } << 20, std::size_t { 64 } << 20 }) {
        ASSERT_TRUE(memory.grow(bytes));
        EXPECT_EQ(memory.data(), base);
        EXPECT_GE(memory.usable(), bytes);
        const auto* bytesAt = static_cast<const unsigned char*>(base);
        EXPECT_EQ(bytesAt[0], 0x5a);
        EXPECT_EQ(bytesAt[999], 0x5a);
        EXPECT_EQ(bytesAt[1000], 0);
        EXPECT_EQ(bytesAt[bytes - 1], 0);
    }
    EXPECT_FALSE(memory.grow((std::size_t { 64 } << 20) + 1)); // past the reservation
    EXPECT_EQ(memory.usable(), std::size_t { 64 } << 20);
    memory.release();
    EXPECT_FALSE(memory.reserved());
    EXPECT_FALSE(memory.grow(1));
}
