// SPDX-License-Identifier: MIT
// What a rewrite of a live key keeps in place (LayoutModel::keptOnRewrite), as the engines' db.c and
// object.c do it: the slab model keeps those regions instead of making new ones.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

struct Rewrite {
    LayoutPtr layout;
    AllocatorPtr allocator;
    std::uint32_t threshold;

    // The purposes of the allocations of `after` that stay, in its order.
    std::vector<Purpose> kept(const KeyShape& before, const KeyShape& after, Op op) const {
        const KeyLayout b = layout->describe(before, threshold, *allocator);
        const KeyLayout a = layout->describe(after, threshold, *allocator);
        const KeptAllocations k = layout->keptOnRewrite(b, a, after, op, threshold, *allocator);
        std::vector<Purpose> out;
        for (std::size_t i = 0; i < a.allocationCount; ++i)
            if (k.from[i] != KeptAllocations::kMade) {
                EXPECT_EQ(b.allocations[k.from[i]].purpose, a.allocations[i].purpose);
                out.push_back(a.allocations[i].purpose);
            }
        return out;
    }
};

Rewrite rewriteOf(const char* spec) {
    auto models = parseLayoutAndAllocator(spec, "");
    EXPECT_TRUE(models);
    return { models->layout, models->allocator, models->layout->threshold()->value };
}

KeyShape raw(std::uint32_t value, bool ttl = false) {
    return { 16, value, ttl, ValueKind::String };
}

TEST(RewriteRules, ValkeySwapsAnUnembeddedValueIntoTheOldObject) {
    const auto valkey = rewriteOf("valkey-8.1");
    using V = std::vector<Purpose>;
    // db.c dbSetValue: both RAW (values above the client's EMBSTR limit, 44): the object stays.
    EXPECT_EQ(valkey.kept(raw(100), raw(110), Op::Set), V { Purpose::Object });
    // A new value that arrives EMBSTR (at most 44 bytes): objectSetKeyAndExpire makes a new object.
    EXPECT_EQ(valkey.kept(raw(100), raw(30), Op::Set), V {});
    // An embedded old object: a new one.
    EXPECT_EQ(valkey.kept(raw(20), raw(100), Op::Set), V {});
    // A TTL set on an object with room for it, or cleared (the field stays): everything stays.
    EXPECT_EQ(valkey.kept(raw(100, true), raw(100, true), Op::Expire).size(), 2u);
    EXPECT_EQ(valkey.kept(raw(100, true), raw(100, false), Op::Persist).size(), 1u) << "the object shrinks: new";
    // APPEND on a RAW value: in place while the value's size class holds.
    EXPECT_EQ(valkey.kept(raw(100), raw(101), Op::Append).size(), 2u);
}

TEST(RewriteRules, DictEnginesKeepTheEntryAndKeyOfAnOverwrittenKey) {
    const auto redis = rewriteOf("redis-7.0");
    const auto kept = redis.kept(raw(100), raw(110), Op::Set);
    EXPECT_NE(std::find(kept.begin(), kept.end(), Purpose::Entry), kept.end());
    EXPECT_NE(std::find(kept.begin(), kept.end(), Purpose::Key), kept.end());
    EXPECT_EQ(std::find(kept.begin(), kept.end(), Purpose::Object), kept.end()) << "the client's object replaces it";
    // EXPIRE adds an expires entry; the key's own allocations stay.
    const auto expire = redis.kept(raw(100), raw(100, true), Op::Expire);
    EXPECT_EQ(std::count(expire.begin(), expire.end(), Purpose::ExpireEntry), 0);
    EXPECT_GE(expire.size(), 3u);
}

} // namespace
