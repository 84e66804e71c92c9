// SPDX-License-Identifier: MIT
// A hash built element by element (layout/collection_key_model.h) must hold what the one-key model
// (describeCollection) gives for the same key made the same way, on every engine line, on both sides of each
// limit; and removals, updates and reads must change it as t_hash.c does.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/collection_key_model.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"

#include "layout_fixtures.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using test::jemalloc;
using test::layout;

CollectionKeyModel hashModel(const LayoutModel& l, const CollectionLimits& limits = {}) {
    auto model = CollectionKeyModel::create(l, jemalloc(), limits, CollectionKind::Hash);
    EXPECT_TRUE(model) << model.error().describe();
    return std::move(*model);
}

// The collection's usable bytes as describeCollection gives them, the key's own parts left out.
double describedUsable(const LayoutModel& l, const CollectionShape& shape, const CollectionLimits& limits = {}) {
    const auto described = describeCollection(l, shape, jemalloc(), limits);
    EXPECT_TRUE(described) << described.error().describe();
    double keyOwn = 0;
    for (const auto& part : hashModel(l).keyParts(shape.keyBytes, shape.hasTtl))
        keyOwn += static_cast<double>(jemalloc().usableSize(part.requestedBytes)) * part.count;
    return described->usableBytes(jemalloc()) - keyOwn;
}

// One HSET of `fields` fields of 10 bytes with values of 10.
void hsetFields(const CollectionKeyModel& model, CollectionKeyState& key, int fields) {
    model.command(key, static_cast<std::uint64_t>(fields), 10);
    for (int f = 0; f < fields; ++f)
        model.add(key, { 10 }, { 10 });
}

const char* const kLayouts[] = { "redis-7.0", "redis-7.2", "valkey-8.0", "valkey-8.1", "valkey-9.0", "valkey-9.1" };

TEST(CollectionKeyModel, AHashBuiltFieldByFieldHoldsWhatTheOneKeyModelGives) {
    for (const char* spec : kLayouts) {
        const auto l = layout(spec);
        const CollectionKeyModel model = hashModel(*l);
        for (const std::uint64_t fields : { 1, 2, 7, 100, 512, 513, 600, 1000, 4096 }) {
            for (const std::uint32_t valueBytes : { 8u, 64u, 65u, 200u }) {
                for (const bool oneCommand : { true, false }) {
                    CollectionShape shape;
                    shape.entries = fields;
                    shape.elementBytes = 10;
                    shape.valueBytes = valueBytes;
                    shape.oneCommand = oneCommand;
                    CollectionKeyState key = model.created();
                    if (oneCommand)
                        model.command(key, fields, std::max<std::uint32_t>(10, valueBytes));
                    for (std::uint64_t f = 0; f < fields; ++f) {
                        if (!oneCommand)
                            model.command(key, 1, std::max<std::uint32_t>(10, valueBytes));
                        model.add(key, { 10 }, { valueBytes });
                    }
                    const auto described = describeCollection(*l, shape, jemalloc());
                    ASSERT_TRUE(described);
                    EXPECT_EQ(model.encoding(key), described->encoding) << spec << " " << fields << "x" << valueBytes;
                    EXPECT_NEAR(model.footprint(key).usableBytes, describedUsable(*l, shape), 1e-6)
                        << spec << ": " << fields << " fields of " << valueBytes << "-byte values, "
                        << (oneCommand ? "one HSET" : "one HSET each");
                    EXPECT_EQ(key.payloadBytes, fields * (10 + valueBytes));
                }
            }
        }
    }
}

TEST(CollectionKeyModel, IntegerValuesTakeTheirListpackClass) {
    const auto l = layout("valkey-9.1");
    const CollectionKeyModel model = hashModel(*l);
    CollectionKeyState small = model.created(), large = model.created(), text = model.created();
    model.add(small, { 3 }, { 3, IntegerClass::Uint7 }); // "100": a 7-bit integer, 1 byte and its backlen
    model.add(large, { 3 }, { 3, IntegerClass::Int13 }); // "999": 13-bit, 2 bytes
    model.add(text, { 3 }, { 3 });
    EXPECT_EQ(small.listpackBytes, 7u + 5u + 2u);
    EXPECT_EQ(large.listpackBytes, 7u + 5u + 3u);
    EXPECT_EQ(text.listpackBytes, 7u + 5u + 5u);
}

TEST(CollectionKeyModel, UpdatesAndRemovalsChangeTheListpackInPlace) {
    const CollectionKeyModel model = hashModel(*layout("redis-7.2"));
    CollectionKeyState key = model.created();
    model.add(key, { 5 }, { 10 });
    model.add(key, { 6 }, { 20 });
    const std::uint64_t two = key.listpackBytes;
    model.update(key, { 5 }, { 10 }, { 40 }); // lpReplace: the value's entry 30 bytes longer
    EXPECT_EQ(key.listpackBytes, two + 30);
    model.remove(key, { 6 }, { 20 });
    EXPECT_EQ(key.listpackBytes, 7u + 7u + 42u);
    EXPECT_EQ(key.entries, 1u);
    EXPECT_EQ(key.payloadBytes, 45u);
    EXPECT_EQ(model.encoding(key), "listpack");
}

TEST(CollectionKeyModel, ALongValueConvertsAndTheTableStays) {
    const CollectionKeyModel model = hashModel(*layout("valkey-9.0"));
    CollectionKeyState key = model.created();
    model.add(key, { 5 }, { 10 });
    model.update(key, { 5 }, { 10 }, { 100 }); // HINCRBYFLOAT or HSET of a long value: hashTypeSet converts
    EXPECT_EQ(model.encoding(key), "hashtable");
    model.update(key, { 5 }, { 100 }, { 10 });
    EXPECT_EQ(model.encoding(key), "hashtable"); // a hash never converts back
    EXPECT_EQ(key.entries, 1u);
}

TEST(CollectionKeyModel, ATableEmptiedBelowItsFillShrinks) {
    for (const char* spec : kLayouts) {
        const CollectionKeyModel model = hashModel(*layout(spec));
        CollectionKeyState key = model.created();
        hsetFields(model, key, 2000);
        const double full = model.footprint(key).usableBytes;
        const std::uint64_t fullBuckets = key.index->heldBuckets();
        for (int f = 0; f < 1990; ++f)
            model.remove(key, { 10 }, { 10 });
        for (int r = 0; r < 100; ++r)
            model.read(key); // rehashing into the smaller table finishes
        const double emptied = model.footprint(key).usableBytes;
        // Each shrink waits for the rehash before it to finish (one step per delete), so the table comes down
        // in stages and may stop above the smallest that fits.
        EXPECT_LE(key.index->heldBuckets(), fullBuckets / 4) << spec;
        EXPECT_LT(emptied, full / 10) << spec;
    }
}

// The part of a table's bytes a server's hash seed draws (bucketArrayBytes): its arrays, the one being
// rehashed by the chance it is still held, and its child buckets, each at its usable size; none for a
// listpack.
TEST(CollectionKeyModel, TheBucketArraysArePartOfATablesBytes) {
    for (const char* spec : kLayouts) {
        const CollectionKeyModel model = hashModel(*layout(spec));
        CollectionKeyState key = model.created();
        hsetFields(model, key, 20);
        EXPECT_EQ(model.footprint(key).bucketArrayBytes, 0) << spec; // a listpack
        hsetFields(model, key, 2000);
        for (int f = 0; f < 1700; ++f) // a shrink's rehash under way
            model.remove(key, { 10 }, { 10 });
        const IndexFootprint table = key.index->footprint(jemalloc());
        double arrays = 0;
        const std::size_t held = table.parts.size() - (table.childBuckets != 0 ? 1 : 0);
        for (std::size_t i = 0; i < held; ++i) // the array in use last; an old one by its chance
            arrays += static_cast<double>(jemalloc().usableSize(table.parts[i].requestedBytes)) * table.parts[i].count
                * (i + 1 == held ? 1.0 : table.oldArrayHeld);
        arrays += static_cast<double>(table.residualArrayBytes) * table.residualArrayHeld;
        arrays += static_cast<double>(table.childBucketBytes) * table.expectedChildBuckets;
        const CollectionFootprint f = model.footprint(key);
        EXPECT_GT(arrays, 0) << spec;
        EXPECT_NEAR(f.bucketArrayBytes, arrays, 1e-6 * arrays) << spec;
        EXPECT_LT(f.bucketArrayBytes, f.usableBytes) << spec;
    }
}

// Valkey 9.1's HDEL pauses its table's auto shrink until the command's last field (t_hash.c hdelCommand:
// hashtablePauseAutoShrink ... hashtableResumeAutoShrink); 9.0 shrinks at the field that crosses 13%. The
// removals a command's last one follows carry atHead (request.h).
TEST(CollectionKeyModel, ARemovalCommandShrinksAtItsEndOnValkey91) {
    for (const char* spec : { "valkey-9.0", "valkey-9.1" }) {
        const CollectionKeyModel model = hashModel(*layout(spec));
        CollectionKeyState key = model.created();
        hsetFields(model, key, 2000);
        ASSERT_EQ(key.index->buckets(), 512u) << spec;
        // Down to 466 fields: 13% of 512 buckets' 3,584 slots is 465.9, so the next removal crosses it.
        for (int f = 0; f < 1534; ++f)
            model.remove(key, { 10 }, { 10 });
        ASSERT_EQ(key.index->targetBuckets(), 0u) << spec;
        // One command of five fields: on 9.1 the first four wait, the fifth shrinks.
        for (int f = 0; f < 4; ++f)
            model.remove(key, { 10 }, { 10 }, {}, true);
        EXPECT_EQ(key.index->targetBuckets() != 0, std::string_view(spec) == "valkey-9.0") << spec;
        model.remove(key, { 10 }, { 10 });
        EXPECT_NE(key.index->targetBuckets(), 0u) << spec;
    }
}

// `gen --hash-fields N` then `sim`: every key is the one-key model's hash of N fields made by one HSET, plus
// the keyspace's table; on every engine line, on both sides of the entries limit.
TEST(CollectionKeyModel, AGeneratedHashKeyspaceIsTheOneKeyModelTimesItsKeys) {
    for (const char* spec : kLayouts) {
        for (const char* fields : { "20", "600" }) {
            auto config = makeGeneratorConfig(300, std::nullopt, "16", "24", 0, 0, 0.8, 0, "uniform", 5);
            ASSERT_TRUE(config);
            ASSERT_TRUE(setCollectionElements(*config, CollectionKind::Hash, fields, "10"));
            SyntheticTrace trace(*config);
            const auto l = layout(spec);
            auto allocator = parseAllocator("jemalloc:quantum=8,page=4096");
            auto result = simulate({ l, *allocator, {} }, trace);
            ASSERT_TRUE(result) << result.error().describe();
            CollectionShape shape;
            shape.entries = std::stoull(fields);
            shape.elementBytes = 10;
            shape.valueBytes = 24;
            const auto key = describeCollection(*l, shape, jemalloc());
            ASSERT_TRUE(key);
            IndexTableModel index(l->indexPolicy().kind, l->indexPolicy().params);
            for (int k = 0; k < 300; ++k)
                index.insert();
            index.settle();
            const double expected = key->usableBytes(jemalloc()) * 300 + index.footprint(jemalloc()).usableBytes;
            EXPECT_NEAR(static_cast<double>(result->points.at(0).usableBytes), expected, 1.0) << spec << " " << fields;
            ASSERT_EQ(result->collections.size(), 1u);
            EXPECT_EQ(result->collections[0].encoding, key->encoding);
        }
    }
}

TEST(CollectionKeyModel, LayoutsWithoutACollectionModelAreRefusedByName) {
    const auto l = layout("valkey-9.1");
    EXPECT_TRUE(CollectionKeyModel::create(*l, jemalloc(), {}, CollectionKind::List));
    const auto memcached = CollectionKeyModel::create(*layout("memcached-1.6"), jemalloc(), {}, CollectionKind::Hash);
    ASSERT_FALSE(memcached);
    EXPECT_NE(memcached.error().describe().find("no collection model"), std::string::npos);
}

} // namespace

// LSET (replaceAt): the element changes in its node's listpack, in place; a listpack the new element would
// pass the node limit with becomes a quicklist first, and one node back within half the limits a listpack.
TEST(CollectionKeyModel, AListElementReplacedChangesItsNode) {
    for (const char* spec : kLayouts) {
        SCOPED_TRACE(spec);
        const auto l = layout(spec);
        auto made = CollectionKeyModel::create(*l, jemalloc(), {}, CollectionKind::List);
        ASSERT_TRUE(made);
        const CollectionKeyModel& model = *made;
        const bool redis70 = std::string_view(spec) == "redis-7.0";
        CollectionKeyState key = model.created();
        model.command(key, 3, 30);
        for (int i = 0; i < 3; ++i)
            model.add(key, { 10 });
        const double before = model.footprint(key).requestedBytes;
        model.replaceAt(key, 1, { 10 }, { 5, IntegerClass::Int24 }); // "12345": a 4-byte integer entry
        EXPECT_EQ(model.footprint(key).requestedBytes, before - 12 + 5);
        EXPECT_EQ(key.entries, 3u);
        EXPECT_EQ(key.payloadBytes, 25u);
        // An element that takes the listpack past the 8 KiB node limit (not itself past it, which Valkey would
        // give a node of its own): the listpack becomes a quicklist before it (7.2 and Valkey).
        model.replaceAt(key, 0, { 10 }, { 8180 });
        EXPECT_EQ(model.encoding(key), "quicklist");
        // ... and shrunk again, one node within half the limits: a listpack.
        model.replaceAt(key, 0, { 8180 }, { 10 });
        EXPECT_EQ(model.encoding(key), redis70 ? "quicklist" : "listpack");
        ASSERT_EQ(key.nodes.size(), 1u);
        EXPECT_EQ(key.nodes[0].count, 3u);
    }
}

namespace {
std::vector<std::uint32_t> nodeCounts(const CollectionKeyState& key) {
    std::vector<std::uint32_t> counts;
    for (const ListNode& node : key.nodes) {
        counts.push_back(node.count);
        EXPECT_EQ(node.bytes, 7u + 12u * node.count); // a listpack's header and end, an entry of 12 per element
        if (key.listSizesKept) // from the list's first LINSERT on
            EXPECT_EQ(node.entries.size(), node.count);
    }
    return counts;
}
} // namespace

// LINSERT (insertAt) into a quicklist of nodes of at most four elements (list-max-listpack-size 4), as
// quicklist.c _quicklistInsert does it: into the pivot's node while it has room; beside a pivot at its node's
// end into the neighbour while it has room, else a node of its own; else the node split at the pivot and the
// nodes around merged where they fit (_quicklistMergeNodes).
TEST(CollectionKeyModel, AListElementInsertedSplitsAndMergesNodesAsQuicklistDoes) {
    using Counts = std::vector<std::uint32_t>;
    CollectionLimits limits;
    limits.listMaxListpackSize = 4;
    for (const char* spec : kLayouts) {
        SCOPED_TRACE(spec);
        const auto l = layout(spec);
        auto made = CollectionKeyModel::create(*l, jemalloc(), limits, CollectionKind::List);
        ASSERT_TRUE(made);
        const CollectionKeyModel& model = *made;
        CollectionKeyState key = model.created();
        model.command(key, 12, 120);
        for (int i = 0; i < 12; ++i)
            model.add(key, { 10 });
        EXPECT_EQ(nodeCounts(key), (Counts { 4, 4, 4 }));
        model.insertAt(key, 5, false, { 10 }); // after the second of the full middle node: split, nothing merges
        EXPECT_EQ(nodeCounts(key), (Counts { 4, 2, 3, 4 }));
        model.insertAt(key, 4, true, { 10 }); // before the head of a node with room: into it
        EXPECT_EQ(nodeCounts(key), (Counts { 4, 3, 3, 4 }));
        model.insertAt(key, 0, true, { 10 }); // before the list's head, its node full: a node of its own
        EXPECT_EQ(nodeCounts(key), (Counts { 1, 4, 3, 3, 4 }));
        model.insertAt(key, 4, false, { 10 }); // after a full node's tail, the next with room: its head
        EXPECT_EQ(nodeCounts(key), (Counts { 1, 4, 4, 3, 4 }));
        model.insertAt(key, 15, false, { 10 }); // after the list's tail, its node full: a node of its own
        EXPECT_EQ(nodeCounts(key), (Counts { 1, 4, 4, 3, 4, 1 }));
        EXPECT_EQ(key.entries, 17u);
        model.insertAt(key, 17, false, { 10 }); // no such pivot
        EXPECT_EQ(key.entries, 17u);
        // Split, then merged: {1} {4} {1} with the middle split after its second, {1} {2} {3} {1}: the two
        // after the centre join ({1} {2} {4}), then the centre and the one before it ({3} {4}).
        CollectionKeyState small = model.created();
        model.command(small, 12, 120);
        for (int i = 0; i < 12; ++i)
            model.add(small, { 10 });
        for (const std::uint64_t place : { 0, 0, 0, 5, 5, 5 })
            model.removeAt(small, place, { 10 });
        EXPECT_EQ(nodeCounts(small), (Counts { 1, 4, 1 }));
        model.insertAt(small, 2, false, { 10 });
        EXPECT_EQ(nodeCounts(small), (Counts { 3, 4 }));
        // Before a middle element: the node keeps the pivot and what follows, the element joins the part before.
        model.insertAt(small, 5, true, { 10 });
        EXPECT_EQ(nodeCounts(small), (Counts { 3, 3, 2 }));
        EXPECT_EQ(small.entries, 8u);

        // The sizes of what a list held before its first LINSERT are its node's mean until the trace gives
        // them (ElementAction::Size, mean 34.75: 35, 35, 35 and 34): elements of 10, 10, 10 and 100 bytes (entries of
        // 12, 12, 12 and 103: a 12-bit length), split after the second, leave 7 + 24 bytes where they are, not 7 + 70.
        for (const bool given : { false, true }) {
            CollectionKeyState mixed = model.created();
            model.command(mixed, 4, 130);
            for (const std::uint32_t bytes : { 10, 10, 10, 100 })
                model.add(mixed, { bytes });
            model.command(mixed, 1, 10); // the LINSERT's conversion: a quicklist of one node, on every line
            if (given)
                for (std::uint64_t place = 0; place < 4; ++place)
                    model.knownSize(mixed, place, { place == 3 ? 100u : 10u });
            model.insertAt(mixed, 1, false, { 10 });
            ASSERT_EQ(mixed.nodes.size(), 2u);
            EXPECT_EQ(mixed.nodes[0].bytes, given ? 7u + 24u : 7u + 35u + 35u);
            EXPECT_EQ(mixed.nodes[1].bytes, given ? 7u + 12u + 12u + 103u : 7u + 12u + 35u + 34u);
        }
    }
}

// The slab model takes a key's memory allocation by allocation (CollectionKeyModel::allocations): by size, they
// must be its footprint, through growth, conversion, removals and a table's rehashes and shrinks, on every line
// and type.
TEST(CollectionKeyModel, AKeysAllocationsBySizeAreItsFootprint) {
    for (const char* spec : kLayouts) {
        const auto l = layout(spec);
        for (const auto kind :
            { CollectionKind::Hash, CollectionKind::Set, CollectionKind::SortedSet, CollectionKind::List }) {
            auto model = CollectionKeyModel::create(*l, jemalloc(), {}, kind);
            ASSERT_TRUE(model) << model.error().describe();
            CollectionKeyState key = model->created();
            auto expectSame = [&](const char* when) {
                const CollectionFootprint f = model->footprint(key);
                double usable = 0, count = 0;
                for (const SizedAllocations& a : model->allocations(key)) {
                    usable += static_cast<double>(jemalloc().usableSize(a.bytes)) * a.count;
                    count += a.count;
                }
                EXPECT_NEAR(usable, f.usableBytes, 1e-6 * std::max(1.0, f.usableBytes))
                    << spec << " " << collectionKindName(kind) << " " << when;
                EXPECT_NEAR(count, f.allocations, 1e-6 * std::max(1.0, f.allocations))
                    << spec << " " << collectionKindName(kind) << " " << when;
            };
            const bool valued = kind == CollectionKind::Hash || kind == CollectionKind::SortedSet;
            // Elements of 1 to 90 bytes: past every length limit at times, so the key converts.
            for (std::uint32_t e = 0; e < 1500; ++e) {
                const ElementValue element { 1 + (e * 37) % 90 };
                model->command(key, 1, element.bytes, IntegerClass::None, element.bytes);
                model->add(key, element, valued ? ElementValue { 5 } : ElementValue {});
                if (e % 250 == 0)
                    expectSame("while growing");
            }
            expectSame("grown");
            for (std::uint32_t e = 0; e < 1400; ++e) {
                const ElementValue element { 1 + (e * 37) % 90 };
                model->remove(
                    key, element, valued ? ElementValue { 5 } : ElementValue {}, {}, kind == CollectionKind::List);
                if (e % 350 == 0)
                    expectSame("while shrinking");
            }
            expectSame("shrunk");
        }
    }
}

// A compact allocation reallocated within its class stays where it is but counts toward the thread cache's GC
// (CollectionKeyState::reallocatedBytes): listpack.c reallocates on a shrink, and on a growth only past the
// usable size (a new class, which moves); intset.c on every add and removal.
TEST(CollectionKeyModel, ReallocationsInPlaceAreCountedAsTheEnginesMakeThem) {
    const auto l = layout("valkey-9.1");
    const CollectionKeyModel hashes = hashModel(*l);
    CollectionKeyState hash = hashes.created();
    hsetFields(hashes, hash, 20); // 20 pairs of 10-byte entries (12 listpack bytes each): 6 + 20 * 24 + 1 = 487
    EXPECT_EQ(hash.listpackBytes, 487u);
    EXPECT_EQ(hash.reallocatedBytes, 0u) << "lpAppend reallocates only past the usable size, into another class";
    hashes.remove(hash, { 10 }, { 10 }); // 463 bytes: still the 512 class
    EXPECT_EQ(hash.reallocatedBytes, 512u);
    hashes.update(hash, { 10 }, { 10 }, { 12 }); // a longer value: 465 bytes, within the usable size
    EXPECT_EQ(hash.reallocatedBytes, 512u);
    hashes.update(hash, { 10 }, { 12 }, { 3 }); // a shorter one: lpInsert's realloc after, in place
    EXPECT_EQ(hash.reallocatedBytes, 1024u);
    // 456 bytes, then a pair at a time: 432 (into the 448 class: moved), 408 (in place), 384 (into the 384
    // class: moved).
    EXPECT_EQ(hash.listpackBytes, 456u);
    for (int i = 0; i < 3; ++i)
        hashes.remove(hash, { 10 }, { 10 });
    EXPECT_EQ(hash.reallocatedBytes, 1024u + 448);

    auto sets = CollectionKeyModel::create(*l, jemalloc(), {}, CollectionKind::Set);
    ASSERT_TRUE(sets);
    CollectionKeyState set = sets->created();
    sets->command(set, 1, 2, IntegerClass::Uint7);
    sets->add(set, { 2, IntegerClass::Uint7 }); // intsetNew, then one resize: 8 + 2 bytes
    const std::uint64_t first = set.reallocatedBytes;
    sets->add(set, { 2, IntegerClass::Uint7 }); // 12 bytes, the 16 class as before: in place
    EXPECT_EQ(set.reallocatedBytes, first + 16);
    sets->remove(set, { 2, IntegerClass::Uint7 });
    EXPECT_EQ(set.reallocatedBytes, first + 32);

    // A list's pops: one realloc for a single pop, one for a whole range (LPOP with a count, LMPOP).
    auto lists = CollectionKeyModel::create(*l, jemalloc(), {}, CollectionKind::List);
    ASSERT_TRUE(lists);
    CollectionKeyState list = lists->created();
    lists->command(list, 300, 3000);
    for (int i = 0; i < 300; ++i)
        lists->add(list, { 10 });
    EXPECT_EQ(list.nodes.back().bytes, 6u + 300 * 12 + 1); // 3607: the 4096 class
    EXPECT_EQ(list.reallocatedBytes, 0u);
    lists->remove(list, { 10 }, {}, {}, false); // 3595: in place
    EXPECT_EQ(list.reallocatedBytes, 4096u);
    lists->remove(list, { 10 }, {}, {}, false); // 3583: the 3584 class, moved
    EXPECT_EQ(list.reallocatedBytes, 4096u);
    lists->remove(list, { 10 }, {}, {}, false); // 3571: in place
    lists->remove(list, { 10 }, {}, {}, false, false, true);
    lists->remove(list, { 10 }, {}, {}, false, false, true);
    EXPECT_EQ(list.reallocatedBytes, 4096u + 3584) << "a range's pops after its first";
}
