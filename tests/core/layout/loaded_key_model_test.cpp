// SPDX-License-Identifier: MIT
// Collection keys loaded from a snapshot (CollectionKeyModel::load, then each element): the encoding and the
// memory rdb.c rdbLoadObject leaves on each engine line, on both sides of each limit: the file's compact
// encodings kept as they are within the entries limits, tables expanded once for all their elements, a set
// saved as a table that comes back as an intset or a listpack, a sorted set converted after its last member,
// a list's nodes as the file holds them. collection_trace_test holds them to real servers' memory.

#include "layoutlab/layout/collection_key_model.h"
#include "layoutlab/layout/layout_registry.h"

#include "layout_fixtures.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using test::jemalloc;
using test::layout;

const char* const kLayouts[] = { "redis-7.0", "redis-7.2", "valkey-8.0", "valkey-8.1", "valkey-9.0", "valkey-9.1" };

CollectionKeyModel modelOf(const LayoutModel& l, CollectionKind kind, const CollectionLimits& limits = {}) {
    auto model = CollectionKeyModel::create(l, jemalloc(), limits, kind);
    EXPECT_TRUE(model) << model.error().describe();
    return std::move(*model);
}

// A key loaded whole: its Load, then its elements.
CollectionKeyState loaded(const CollectionKeyModel& model, const std::vector<ElementValue>& elements, SnapshotForm form,
    ElementValue value = {}) {
    CollectionKeyState key = model.created();
    model.load(key, elements.size(), form);
    for (const ElementValue& e : elements)
        model.add(key, e, value);
    return key;
}

// The same elements added by one command, as a client would (a set's first member's class, a sorted set's
// longest member).
CollectionKeyState built(
    const CollectionKeyModel& model, const std::vector<ElementValue>& elements, ElementValue value = {}) {
    CollectionKeyState key = model.created();
    std::uint32_t longest = value.bytes;
    for (const ElementValue& e : elements)
        longest = std::max(longest, e.bytes);
    model.command(key, elements.size(), longest, elements.front().integer, elements.front().bytes);
    for (const ElementValue& e : elements)
        model.add(key, e, value);
    return key;
}

std::vector<ElementValue> strings(std::size_t n, std::uint32_t bytes) {
    return std::vector<ElementValue>(n, ElementValue { bytes });
}

TEST(LoadedKeyModel, AHashComesBackAsTheFileHoldsItWithinItsEntriesLimit) {
    for (const char* spec : kLayouts) {
        SCOPED_TRACE(spec);
        const auto l = layout(spec);
        const CollectionKeyModel model = modelOf(*l, CollectionKind::Hash);
        // A listpack in the file, small: the same listpack a client's HSET makes.
        const auto small = loaded(model, strings(10, 8), { true }, { 20 });
        EXPECT_EQ(model.encoding(small), "listpack");
        EXPECT_EQ(
            model.footprint(small).usableBytes, model.footprint(built(model, strings(10, 8), { 20 })).usableBytes);
        // A listpack holding a value longer than the loading server's limit stays one (only its length is
        // checked); a table in the file with such a value converts at it.
        CollectionLimits lowValue;
        lowValue.hashMaxListpackValue = 10;
        const CollectionKeyModel strict = modelOf(*l, CollectionKind::Hash, lowValue);
        EXPECT_EQ(strict.encoding(loaded(strict, strings(10, 8), { true }, { 20 })), "listpack");
        EXPECT_EQ(strict.encoding(loaded(strict, strings(10, 8), { false }, { 20 })), "hashtable");
        // More fields than the limit: a table expanded once for them all, whatever the file held.
        const auto big = loaded(model, strings(600, 8), { true }, { 20 });
        EXPECT_EQ(model.encoding(big), "hashtable");
        EXPECT_EQ(big.entries, 600u);
        EXPECT_EQ(big.index->targetBuckets(), 0u) << "no rehash left running";
        EXPECT_EQ(model.footprint(big).usableBytes,
            model.footprint(loaded(model, strings(600, 8), { false }, { 20 })).usableBytes);
    }
}

TEST(LoadedKeyModel, ASetSavedAsATableComesBackCompactWhereItFits) {
    for (const char* spec : kLayouts) {
        SCOPED_TRACE(spec);
        const auto l = layout(spec);
        const CollectionKeyModel model = modelOf(*l, CollectionKind::Set);
        const bool redis70 = std::string_view(spec) == "redis-7.0";
        std::vector<ElementValue> integers;
        for (std::uint32_t i = 0; i < 100; ++i)
            integers.push_back({ 5, IntegerClass::Int24 });
        const auto ints = loaded(model, integers, { false });
        EXPECT_EQ(model.encoding(ints), "intset");
        EXPECT_EQ(model.footprint(ints).usableBytes, model.footprint(built(model, integers)).usableBytes);
        // Integers, then a string: a listpack of them all (7.2 and Valkey), a table on 7.0.
        auto mixed = integers;
        mixed.push_back({ 6 });
        EXPECT_EQ(model.encoding(loaded(model, mixed, { false })), redis70 ? "hashtable" : "listpack");
        // An intset in the file keeps its width, even when its members would fit a narrower one.
        const auto wide = loaded(model, strings(4, 1), { true, IntegerClass::Int64 });
        EXPECT_EQ(wide.intsetWidth, 8);
        // Past the intset's limit: a table for them all.
        EXPECT_EQ(model.encoding(loaded(model, std::vector<ElementValue>(600, { 5, IntegerClass::Int24 }),
                      { true, IntegerClass::Int32 })),
            "hashtable");
    }
}

TEST(LoadedKeyModel, ASortedSetIsConvertedAfterItsLastMember) {
    for (const char* spec : kLayouts) {
        SCOPED_TRACE(spec);
        const auto l = layout(spec);
        const CollectionKeyModel model = modelOf(*l, CollectionKind::SortedSet);
        // A skiplist in the file of few short members: a listpack once loaded, as ZADD would make it.
        const auto small = loaded(model, strings(20, 10), { false }, { 3 });
        EXPECT_EQ(model.encoding(small), "listpack");
        EXPECT_EQ(
            model.footprint(small).usableBytes, model.footprint(built(model, strings(20, 10), { 3 })).usableBytes);
        // One member past zset-max-listpack-value keeps the skiplist, its table expanded once for all.
        auto withLong = strings(20, 10);
        withLong.back().bytes = 65;
        const auto kept = loaded(model, withLong, { false }, { 3 });
        EXPECT_EQ(model.encoding(kept), "skiplist");
        EXPECT_EQ(kept.index->entries(), 20u);
        EXPECT_EQ(model.encoding(loaded(model, strings(200, 10), { true }, { 3 })), "skiplist");
    }
}

TEST(LoadedKeyModel, AListKeepsTheFilesNodesAndOneSmallNodeIsAListpack) {
    for (const char* spec : kLayouts) {
        SCOPED_TRACE(spec);
        const auto l = layout(spec);
        const CollectionKeyModel model = modelOf(*l, CollectionKind::List);
        const bool redis70 = std::string_view(spec) == "redis-7.0";
        CollectionKeyState one = model.created();
        model.load(one, 3, { false, IntegerClass::None, 0 });
        for (int i = 0; i < 3; ++i)
            model.add(one, { 5 });
        EXPECT_EQ(model.encoding(one), redis70 ? "quicklist" : "listpack");
        // Two nodes, the first larger than the loading server's node limit: both as saved.
        CollectionKeyState two = model.created();
        model.load(two, 2000, { false, IntegerClass::None, 1 });
        for (int i = 0; i < 2000; ++i)
            model.add(two, { 10 });
        model.load(two, 1, { false, IntegerClass::None, 0 });
        model.add(two, { 10 });
        EXPECT_EQ(model.encoding(two), "quicklist");
        ASSERT_EQ(two.nodes.size(), 2u);
        EXPECT_EQ(two.nodes[0].count, 2000u);
        EXPECT_EQ(two.nodes[1].count, 1u);
        EXPECT_EQ(two.entries, 2001u);
    }
}

} // namespace
