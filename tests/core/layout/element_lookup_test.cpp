// SPDX-License-Identifier: MIT
// The lines an element lookup reads (CollectionKeyModel::lookupLines, element_lookup.cpp), worked by hand for
// small keys of each encoding, and the orderings any layout must keep: a listpack's lookups grow with its
// entries, a table's do not; the dict lines' tables read more than Valkey's hashtable.

#include "layoutlab/layout/collection_key_model.h"

#include "layout_fixtures.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using test::jemalloc;
using test::layout;

CollectionKeyModel modelOf(const std::string& spec, CollectionKind kind, const CollectionLimits& limits = {}) {
    static std::vector<LayoutPtr> kept; // the model keeps a pointer to its layout
    kept.push_back(layout(spec));
    auto model = CollectionKeyModel::create(*kept.back(), jemalloc(), limits, kind);
    EXPECT_TRUE(model) << model.error().describe();
    return std::move(*model);
}

// A key of `n` elements of `bytes` each made by one command (a hash's values `valueBytes` long).
CollectionKeyState keyOf(const CollectionKeyModel& model, std::uint64_t n, std::uint32_t bytes,
    std::uint32_t valueBytes = 0, IntegerClass integer = IntegerClass::None) {
    CollectionKeyState key = model.created();
    model.command(key, n, std::max(bytes, valueBytes), integer, bytes);
    for (std::uint64_t i = 0; i < n; ++i)
        model.add(key, { bytes, integer },
            model.kind() == CollectionKind::Hash ? ElementValue { valueBytes, IntegerClass::None } : ElementValue {});
    return key;
}

// Three 10-byte members in a 43-byte listpack (class 48: it starts 0, 16, 32 or 48 bytes into a line). Each
// SISMEMBER reads the header, the encoding byte of each member before, the member: at 0 and 16 one line each;
// at 32 the third member crosses into the next line; at 48 every one does. (3 + 3 + 4 + 6) / 4.
TEST(ElementLookup, AListpackSetIsReadFromItsHead) {
    const auto model = modelOf("valkey-9.1", CollectionKind::Set);
    const auto key = keyOf(model, 3, 10);
    ASSERT_EQ(model.encoding(key), "listpack");
    ASSERT_EQ(key.listpackBytes, 43u);
    EXPECT_DOUBLE_EQ(model.lookupLines(key), 4.0);
}

// Four 2-byte integers: a 16-byte intset, one line wherever it starts: a line per lookup.
TEST(ElementLookup, ASmallIntsetIsOneLine) {
    const auto model = modelOf("valkey-9.1", CollectionKind::Set);
    const auto key = keyOf(model, 4, 3, 0, IntegerClass::Uint7);
    ASSERT_EQ(model.encoding(key), "intset");
    EXPECT_DOUBLE_EQ(model.lookupLines(key), 4.0);
}

// Valkey 9.1's set table holds each member's sds (24 bytes for 20: class 24, starting at any multiple of 8 in
// its line, across two lines from 48 on): the bucket's line and 1.25 lines of the member.
TEST(ElementLookup, AValkeyTableReadsItsBucketAndTheMember) {
    const auto model = modelOf("valkey-9.1", CollectionKind::Set);
    const auto key = keyOf(model, 200, 20);
    ASSERT_EQ(model.encoding(key), "hashtable");
    EXPECT_NEAR(model.lookupLines(key) / 200, 2.25, 1e-9);
}

// Four 8-byte elements in a 47-byte listpack: LINDEX 0..2 walk from the head (1, 1.25, 1.5 lines over the four
// places it can start at), LINDEX 3 from the tail with the header read for the size (1.5).
TEST(ElementLookup, AListIsSoughtFromItsNearerEnd) {
    const auto model = modelOf("valkey-9.1", CollectionKind::List);
    CollectionKeyState key = model.created();
    model.command(key, 4, 8);
    for (int i = 0; i < 4; ++i)
        model.add(key, { 8, IntegerClass::None });
    ASSERT_EQ(model.encoding(key), "listpack");
    EXPECT_DOUBLE_EQ(model.lookupLines(key), 5.25);
}

TEST(ElementLookup, AListpackCostsMoreLinesAsItGrowsATableDoesNot) {
    for (const char* spec : { "redis-7.0", "redis-7.2", "valkey-8.0", "valkey-8.1", "valkey-9.0", "valkey-9.1" }) {
        CollectionLimits roomy;
        roomy.hashMaxListpackEntries = 100000;
        const auto compact = modelOf(spec, CollectionKind::Hash, roomy);
        const auto tabled = modelOf(spec, CollectionKind::Hash, CollectionLimits { .hashMaxListpackEntries = 0 });
        double lastCompact = 0, lastTable = 0;
        for (const std::uint64_t n : { 16, 128, 1024 }) {
            const auto a = compact.lookupLines(keyOf(compact, n, 8, 16)) / static_cast<double>(n);
            const auto b = tabled.lookupLines(keyOf(tabled, n, 8, 16)) / static_cast<double>(n);
            EXPECT_GT(a, lastCompact) << spec << ", " << n << " fields";
            EXPECT_LT(b, 6.0) << spec << ", " << n << " fields";
            if (lastTable > 0)
                EXPECT_NEAR(b, lastTable, 1.0) << spec << ", " << n << " fields";
            lastCompact = a;
            lastTable = b;
        }
        EXPECT_GT(lastCompact, 10 * lastTable) << spec; // 1,024 pairs scanned against a bucket and an entry
    }
    // A dict's entry is a dictEntry, the field's sds and the value's; Valkey 9.1's is one allocation.
    const auto redis = modelOf("redis-7.0", CollectionKind::Hash, CollectionLimits { .hashMaxListpackEntries = 0 });
    const auto valkey = modelOf("valkey-9.1", CollectionKind::Hash, CollectionLimits { .hashMaxListpackEntries = 0 });
    EXPECT_GT(redis.lookupLines(keyOf(redis, 100, 8, 16)), valkey.lookupLines(keyOf(valkey, 100, 8, 16)) + 150);
}

} // namespace
