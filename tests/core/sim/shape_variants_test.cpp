// SPDX-License-Identifier: MIT
// The cache model's per-shape variants (core/src/sim/cache_keyspace.h), checked against describing every
// shape at every threshold: the shortcuts the placement pass takes must give what the layout says.
#include "cache_keyspace.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/shape_histogram.h"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

using namespace layoutlab;
using namespace layoutlab::cache_detail;

namespace {

struct Keyspace {
    std::vector<ShapeHistogram::Entry> entries; // sorted by shape, as the replay gives it
    std::vector<std::uint32_t> byRank; // most keys first
};

// Values across every limit of the layouts under test (embedding thresholds, EMBSTR limits, size
// classes), keys short and long, with and without a TTL.
Keyspace mixedKeyspace() {
    ShapeHistogram histogram;
    std::uint64_t count = 1;
    for (const std::uint32_t keyBytes : { 8u, 16u, 21u, 40u })
        for (const std::uint32_t valueBytes :
            { 0u, 1u, 20u, 32u, 44u, 45u, 64u, 80u, 96u, 108u, 128u, 200u, 513u, 4000u })
            for (const bool ttl : { false, true })
                histogram.add(packShape(keyBytes, valueBytes, ttl, ValueKind::String, false), count++ % 7 + 1);
    Keyspace k;
    k.entries = histogram.sorted();
    k.byRank.resize(k.entries.size());
    for (std::uint32_t s = 0; s < k.byRank.size(); ++s)
        k.byRank[s] = s;
    std::stable_sort(k.byRank.begin(), k.byRank.end(),
        [&](std::uint32_t a, std::uint32_t b) { return k.entries[a].count > k.entries[b].count; });
    return k;
}

std::vector<std::uint32_t> thresholdRange(std::uint32_t from, std::uint32_t to, std::uint32_t step) {
    std::vector<std::uint32_t> t;
    for (std::uint32_t v = from; v <= to; v += step)
        t.push_back(v);
    return t;
}

class ShapeVariantsTest : public ::testing::TestWithParam<const char*> { };

TEST_P(ShapeVariantsTest, EveryThresholdsVariantIsTheLayoutsOwnDescription) {
    auto models = parseLayoutAndAllocator(GetParam(), "");
    ASSERT_TRUE(models) << models.error().describe();
    const auto& layout = *models->layout;
    const auto& alloc = *models->allocator;
    const Keyspace k = mixedKeyspace();
    const auto thresholds = thresholdRange(16, 512, 16);
    const ShapeVariants v = describeVariants(layout, alloc, k.entries, k.byRank, thresholds);
    ASSERT_EQ(v.low.size(), k.byRank.size());

    std::map<std::uint64_t, std::uint32_t> classOf; // usable size -> the variants' class id
    for (const auto& a : v.allocations)
        classOf[a.usable] = a.classId;
    for (const auto& t : v.transients)
        classOf[t.usable] = t.classId;

    for (std::size_t t = 0; t < thresholds.size(); ++t) {
        std::set<std::uint32_t> keysUse;
        for (std::size_t r = 0; r < k.byRank.size(); ++r) {
            const KeyShape shape = unpackShape(k.entries[k.byRank[r]].shape);
            const KeyLayout kl = layout.describe(shape, thresholds[t], alloc);
            const Variant& variant = v.at(r, t);
            SCOPED_TRACE(testing::Message() << "threshold " << thresholds[t] << ", key " << shape.keyBytes << " value "
                                            << shape.valueBytes << " ttl " << shape.hasTtl);
            ASSERT_EQ(variant.stored, kl.stored);
            ASSERT_EQ(variant.allocations, kl.allocationCount);
            for (std::size_t a = 0; a < kl.allocationCount; ++a) {
                const auto& va = v.allocations[variant.first + a];
                EXPECT_EQ(va.usable, alloc.usableSize(kl.allocations[a].requestedBytes));
                EXPECT_EQ(va.made, kl.made(a));
                if (kl.stored)
                    keysUse.insert(va.classId);
            }
            // The write's transients, merged by class in the order their classes first appear.
            std::vector<std::pair<std::uint64_t, std::uint32_t>> merged;
            for (std::size_t i = 0; i < kl.transientCount; ++i) {
                const std::uint64_t usable = alloc.usableSize(kl.transients[i]);
                const auto same
                    = std::find_if(merged.begin(), merged.end(), [usable](const auto& m) { return m.first == usable; });
                if (same != merged.end())
                    ++same->second;
                else
                    merged.emplace_back(usable, 1);
            }
            ASSERT_EQ(variant.transients, merged.size());
            for (std::size_t i = 0; i < merged.size(); ++i) {
                const auto& vt = v.transients[variant.firstTransient + i];
                EXPECT_EQ(vt.usable, merged[i].first);
                EXPECT_EQ(vt.count, merged[i].second);
                EXPECT_EQ(vt.classId, classOf.at(vt.usable));
            }
        }
        for (std::uint32_t c = 0; c < v.classes; ++c)
            EXPECT_EQ(v.keysUse(t, c), keysUse.count(c) == 1) << "threshold " << thresholds[t] << ", class " << c;
    }
}

// Valkey 9.1 (embedded key and value), 8.1, 8.0's dict and Redis 7.0: each writes with its own argv rules
// and allocation order.
INSTANTIATE_TEST_SUITE_P(Layouts, ShapeVariantsTest,
    ::testing::Values("valkey-9.1", "valkey-8.1", "valkey-8.0", "redis-7.0", "memcached-1.6"));

} // namespace
