// SPDX-License-Identifier: MIT
// A set built member by member (layout/collection_key_model.h) must hold what the one-key model
// (describeCollection) gives for the same set made the same way, on every engine line, on both sides of each
// limit; and removals and conversions must change it as t_set.c does.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/collection_key_model.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"

#include "layout_fixtures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using test::jemalloc;
using test::layout;

CollectionKeyModel setModel(const LayoutModel& l, const CollectionLimits& limits = {}) {
    auto model = CollectionKeyModel::create(l, jemalloc(), limits, CollectionKind::Set);
    EXPECT_TRUE(model) << model.error().describe();
    return std::move(*model);
}

double describedUsable(const LayoutModel& l, const CollectionShape& shape) {
    const auto described = describeCollection(l, shape, jemalloc());
    EXPECT_TRUE(described) << described.error().describe();
    double keyOwn = 0;
    for (const auto& part : setModel(l).keyParts(shape.keyBytes, shape.hasTtl))
        keyOwn += static_cast<double>(jemalloc().usableSize(part.requestedBytes)) * part.count;
    return described->usableBytes(jemalloc()) - keyOwn;
}

const char* const kLayouts[] = { "redis-7.0", "redis-7.2", "valkey-8.0", "valkey-8.1", "valkey-9.0", "valkey-9.1" };

struct MemberShape {
    std::uint32_t bytes;
    bool integer;
};

TEST(SetKeyModel, ASetBuiltMemberByMemberHoldsWhatTheOneKeyModelGives) {
    for (const char* spec : kLayouts) {
        const auto l = layout(spec);
        const CollectionKeyModel model = setModel(*l);
        for (const std::uint64_t members : { 1, 2, 100, 128, 129, 512, 513, 1000, 4096 }) {
            for (const MemberShape m : { MemberShape { 3, true }, MemberShape { 10, true }, MemberShape { 19, true },
                     MemberShape { 10, false }, MemberShape { 64, false }, MemberShape { 65, false } }) {
                for (const bool oneCommand : { true, false }) {
                    CollectionShape shape;
                    shape.type = CollectionType::Set;
                    shape.entries = members;
                    shape.elementBytes = m.bytes;
                    shape.integerElements = m.integer;
                    shape.oneCommand = oneCommand;
                    const ElementValue member { m.bytes,
                        m.integer ? integerClassOf(largestOfDigits(m.bytes)) : IntegerClass::None };
                    CollectionKeyState key = model.created();
                    for (std::uint64_t i = 0; i < members; ++i) {
                        if (i == 0 || !oneCommand)
                            model.command(key, oneCommand ? members : 1, m.bytes, member.integer);
                        model.add(key, member);
                    }
                    const auto described = describeCollection(*l, shape, jemalloc());
                    ASSERT_TRUE(described);
                    const std::string what = fmt::format("{}: {} {}{}-byte members, {}", spec, members,
                        m.integer ? "integer " : "", m.bytes, oneCommand ? "one SADD" : "one SADD each");
                    EXPECT_EQ(model.encoding(key), described->encoding) << what;
                    EXPECT_NEAR(model.footprint(key).usableBytes, describedUsable(*l, shape), 1e-6) << what;
                    EXPECT_EQ(key.payloadBytes, members * m.bytes);
                }
            }
        }
    }
}

TEST(SetKeyModel, AnIntsetWidensForItsWidestMemberAndKeepsThatWidth) {
    const CollectionKeyModel model = setModel(*layout("valkey-9.1"));
    CollectionKeyState key = model.created();
    model.command(key, 2, 5, IntegerClass::Uint7);
    model.add(key, { 2, IntegerClass::Uint7 });
    model.add(key, { 3, IntegerClass::Int13 });
    EXPECT_EQ(model.encoding(key), "intset");
    EXPECT_EQ(model.footprint(key).requestedBytes, 8 + 2 * 2); // intset.h header, INTSET_ENC_INT16
    model.add(key, { 10, IntegerClass::Int64 });
    EXPECT_EQ(model.footprint(key).requestedBytes, 8 + 3 * 8); // intsetUpgradeAndAdd
    model.remove(key, { 10, IntegerClass::Int64 });
    EXPECT_EQ(model.footprint(key).requestedBytes, 8 + 2 * 8); // intsetRemove never narrows
}

TEST(SetKeyModel, AStringMemberTurnsASmallIntsetIntoAListpackOfItsIntegers) {
    const CollectionKeyModel model = setModel(*layout("redis-7.2"));
    CollectionKeyState key = model.created();
    model.command(key, 1, 3, IntegerClass::Int13);
    model.add(key, { 3, IntegerClass::Int13 });
    model.add(key, { 5, IntegerClass::None });
    EXPECT_EQ(model.encoding(key), "listpack");
    EXPECT_EQ(model.footprint(key).requestedBytes,
        listpack::kHeaderBytes + listpack::kEndBytes + listpack::entryBytes(3, IntegerClass::Int13)
            + listpack::stringEntryBytes(5));
    // Redis 7.0 has no listpack sets: the intset becomes a table.
    const CollectionKeyModel old = setModel(*layout("redis-7.0"));
    CollectionKeyState table = old.created();
    old.command(table, 1, 3, IntegerClass::Int13);
    old.add(table, { 3, IntegerClass::Int13 });
    old.add(table, { 5, IntegerClass::None });
    EXPECT_EQ(old.encoding(table), "hashtable");
}

TEST(SetKeyModel, AnSaddOfMoreMembersThanTheLimitConvertsAnExistingListpackFirst) {
    const CollectionKeyModel model = setModel(*layout("valkey-9.1"));
    CollectionKeyState key = model.created();
    model.command(key, 1, 8, IntegerClass::None);
    model.add(key, { 8 });
    // setTypeMaybeConvert: a table expanded for the count, though every member could repeat; as large as
    // the one a new key's SADD of 200 makes (setTypeCreate).
    model.command(key, 200, 8, IntegerClass::None);
    EXPECT_EQ(model.encoding(key), "hashtable");
    CollectionKeyState made = model.created();
    model.command(made, 200, 8, IntegerClass::None);
    model.add(made, { 8 });
    ASSERT_TRUE(key.index && made.index);
    EXPECT_EQ(key.index->buckets(), made.index->buckets());
    EXPECT_EQ(model.footprint(key).usableBytes, model.footprint(made).usableBytes);
}

// SINTERSTORE's result (t_set.c sinterGenericCommand): a listpack whatever its members unless the smallest source
// is an intset, a table past set-max-listpack-entries (expanded for lpLength + 1), then, integers only, an intset
// at the end within set-max-intset-entries (maybeConvertToIntset). Redis 7.0 starts from an intset.
TEST(SetKeyModel, AnIntersectionOfIntegersIsBuiltAsAListpackThenMadeAnIntset) {
    const ElementValue member { 3, IntegerClass::Int13 };
    auto intersection = [&](const CollectionKeyModel& model, std::uint64_t members, std::uint32_t source) {
        CollectionKeyState key = model.created();
        model.command(key, members, 3, member.integer, source);
        for (std::uint64_t i = 0; i < members; ++i)
            model.add(key, member);
        return key;
    };
    auto known = [&](const CollectionKeyModel& model, CollectionKeyState& key) {
        for (std::uint64_t i = 0; i < key.entries; ++i)
            model.knownSize(key, i == 0 ? key.entries : 0, member);
    };
    for (const char* spec : { "redis-7.2", "valkey-8.0", "valkey-9.1" }) {
        const CollectionKeyModel model = setModel(*layout(spec));
        // From a table of integers (600 members: no intset) or of strings: built in a listpack, a table at 129
        // as SADDs of one member to a listpack make it.
        for (const std::uint32_t source : { kIntersectionOfIntegers + 600, kIntersectionOfNonIntegers }) {
            CollectionKeyState built = intersection(model, 300, source);
            EXPECT_EQ(model.encoding(built), "hashtable") << spec;
            CollectionKeyState listpackFirst = model.created();
            model.command(listpackFirst, 1, 8, IntegerClass::None);
            model.add(listpackFirst, { 8 }); // a string: a listpack, which the integers then join
            for (int i = 1; i < 300; ++i)
                model.add(listpackFirst, member);
            ASSERT_TRUE(built.index && listpackFirst.index);
            EXPECT_EQ(built.index->buckets(), listpackFirst.index->buckets()) << spec;
            EXPECT_EQ(built.index->targetBuckets(), listpackFirst.index->targetBuckets()) << spec;
            // Integers only: an intset at the end, as large as one built of the same members.
            known(model, built);
            EXPECT_EQ(model.encoding(built), "intset") << spec;
            EXPECT_EQ(model.footprint(built).requestedBytes, 8 + 300 * 2) << spec;
            EXPECT_FALSE(built.index);
            // Past set-max-intset-entries the table stays.
            CollectionKeyState big = intersection(model, 600, source);
            known(model, big);
            EXPECT_EQ(model.encoding(big), "hashtable") << spec;
        }
        // From an intset: an intset all along, which the Sizes leave as it is.
        CollectionKeyState fromIntset = intersection(model, 300, kIntersectionOfIntegers + 400);
        EXPECT_EQ(model.encoding(fromIntset), "intset") << spec;
        const double before = model.footprint(fromIntset).usableBytes;
        known(model, fromIntset);
        EXPECT_EQ(model.footprint(fromIntset).usableBytes, before) << spec;
    }
    // Redis 7.0: an intset, converted to a table past set-max-intset-entries, which stays one.
    const CollectionKeyModel old = setModel(*layout("redis-7.0"));
    CollectionKeyState small = intersection(old, 300, kIntersectionOfNonIntegers);
    EXPECT_EQ(old.encoding(small), "intset");
    CollectionKeyState big = intersection(old, 600, kIntersectionOfNonIntegers);
    known(old, big);
    EXPECT_EQ(old.encoding(big), "hashtable");
}

TEST(SetKeyModel, RemovalsEmptyTheSetAndShrinkItsTable) {
    for (const char* spec : kLayouts) {
        const CollectionKeyModel model = setModel(*layout(spec));
        CollectionKeyState key = model.created();
        model.command(key, 1000, 12, IntegerClass::None);
        for (int i = 0; i < 1000; ++i)
            model.add(key, { 12 });
        const double full = model.footprint(key).usableBytes;
        for (int i = 0; i < 990; ++i)
            model.remove(key, { 12 });
        for (int i = 0; i < 1000; ++i) // lookups that finish the shrink's rehash
            model.read(key);
        EXPECT_EQ(key.entries, 10u) << spec;
        // A shrink starts only on a delete, and not while one rehashes (hashtable.c hashtableShrinkIfNeeded,
        // dict.c dictResize): a table can be left larger than its 10 members need, never as large as before.
        EXPECT_LT(model.footprint(key).usableBytes, full / 5) << spec;
        EXPECT_GT(model.footprint(key).usableBytes, 0) << spec;
    }
}

// `gen --set-members N` then `sim`: every key is the one-key model's set of N members made by one SADD, plus
// the keyspace's table; on every engine line, on both sides of each entries limit, of strings and integers.
TEST(SetKeyModel, AGeneratedSetKeyspaceIsTheOneKeyModelTimesItsKeys) {
    for (const char* spec : kLayouts) {
        for (const char* members : { "20", "200", "600" }) {
            for (const bool integers : { false, true }) {
                auto config
                    = makeGeneratorConfig(300, std::nullopt, "16", "24", 0, integers ? 1 : 0, 0.8, 0, "uniform", 5);
                ASSERT_TRUE(config);
                ASSERT_TRUE(setCollectionElements(*config, CollectionKind::Set, members, integers ? "4" : "10"));
                SyntheticTrace trace(*config);
                const auto l = layout(spec);
                auto allocator = parseAllocator("jemalloc:quantum=8,page=4096");
                auto result = simulate({ l, *allocator, {} }, trace);
                ASSERT_TRUE(result) << result.error().describe();
                CollectionShape shape;
                shape.type = CollectionType::Set;
                shape.entries = std::stoull(members);
                shape.elementBytes = integers ? 4 : 10;
                shape.integerElements = integers;
                const auto key = describeCollection(*l, shape, jemalloc());
                ASSERT_TRUE(key);
                IndexTableModel index(l->indexPolicy().kind, l->indexPolicy().params);
                for (int k = 0; k < 300; ++k)
                    index.insert();
                index.settle();
                const double expected = key->usableBytes(jemalloc()) * 300 + index.footprint(jemalloc()).usableBytes;
                const std::string what = fmt::format("{}: {} {}members", spec, members, integers ? "integer " : "");
                EXPECT_NEAR(static_cast<double>(result->points.at(0).usableBytes), expected, 1.0) << what;
                ASSERT_EQ(result->collections.size(), 1u) << what;
                EXPECT_EQ(result->collections[0].encoding, key->encoding) << what;
                EXPECT_EQ(result->collections[0].type, "set");
            }
        }
    }
}

} // namespace
