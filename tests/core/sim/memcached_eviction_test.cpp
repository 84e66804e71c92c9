// SPDX-License-Identifier: MIT
// memcached under -m beside the replay (sim/memcached_eviction.h): pages up to the limit, a class's first
// page past it, the COLD tail evicted in the order items came, a twice-fetched item bumped out of reach.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/memcached_eviction.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

Request set(std::uint32_t key, std::uint32_t valueBytes = 96) {
    Request r;
    r.op = Op::Set;
    r.keyId = key;
    r.keyBytes = 16;
    r.valueBytes = valueBytes;
    return r;
}

Request get(std::uint32_t key) {
    Request r = set(key);
    r.op = Op::Get;
    r.valueBytes = 0;
    return r;
}

// A replay of memcached 1.6's defaults under -m `limitBytes`.
struct MemcachedCache {
    LayoutPtr layout = *parseLayout("memcached-1.6");
    AllocatorPtr allocator = *parseAllocator("memcached:min=48,factor=1.25");
    KeyspaceReplay replay;
    MemcachedEviction budget;

    explicit MemcachedCache(std::uint64_t limitBytes)
        : replay(layout->indexPolicy(), 1 << 16)
        , budget(options(limitBytes), *layout, dynamic_cast<const MemcachedSlabModel&>(*allocator), 0, replay) {
        replay.setBudget(&budget);
    }
    static EvictionOptions options(std::uint64_t limitBytes) {
        EvictionOptions o;
        o.maxmemoryBytes = limitBytes;
        return o;
    }
    void apply(const std::vector<Request>& requests) {
        auto ok = replay.apply(requests, replay.summary().requests);
        ASSERT_TRUE(ok) << ok.error().describe();
    }
    bool live(std::uint32_t key) const { return replay.keys().at(key).live(); }
    // Chunks of a page of the class a 16-byte key with a 96-byte value lands in.
    std::uint64_t perPage() const {
        const auto& slabs = dynamic_cast<const MemcachedSlabModel&>(*allocator);
        // item header 48 + CAS 8 + key 16 + NUL + value 96 + "\r\n" (memcached_layout.h)
        return slabs.slabClasses().at(slabs.classId(48 + 8 + 17 + 98) - 1).perSlab;
    }
};

std::vector<Request> sets(std::uint32_t from, std::uint32_t to, std::uint32_t valueBytes = 96) {
    std::vector<Request> out;
    for (std::uint32_t k = from; k < to; ++k)
        out.push_back(set(k, valueBytes));
    return out;
}

TEST(MemcachedEviction, OnePageHoldsItsChunksAndTheOldestItemsGoFirst) {
    MemcachedCache cache(kMiB);
    const std::uint64_t perPage = cache.perPage(); // 5461 chunks of 192 bytes
    const auto keys = static_cast<std::uint32_t>(perPage + 500);
    cache.apply(sets(0, keys));
    EXPECT_EQ(cache.budget.pages().mallocedPages(), 1u) << "a second page would pass -m 1";
    EXPECT_EQ(cache.replay.summary().liveKeys, perPage);
    EXPECT_EQ(cache.replay.summary().evictedKeys, 500u);
    // HOT's tail drains to COLD in the order items came; COLD's tail is evicted.
    for (std::uint32_t k = 0; k < 500; ++k)
        ASSERT_FALSE(cache.live(k)) << k;
    for (std::uint32_t k = 500; k < keys; ++k)
        ASSERT_TRUE(cache.live(k)) << k;
}

TEST(MemcachedEviction, AnItemFetchedTwiceIsBumpedToWarmAndOutlivesOlderOnes) {
    MemcachedCache cache(kMiB);
    const auto perPage = static_cast<std::uint32_t>(cache.perPage());
    cache.apply(sets(0, perPage));
    // Key 0 is in COLD by now (HOT keeps 20% of the class's bytes): its second fetch makes it ACTIVE, and
    // the bump moves it to WARM.
    cache.apply({ get(0), get(0) });
    cache.apply(sets(perPage, perPage + 100));
    EXPECT_TRUE(cache.live(0));
    for (std::uint32_t k = 1; k <= 100; ++k)
        ASSERT_FALSE(cache.live(k)) << k;
    EXPECT_TRUE(cache.live(101));
}

TEST(MemcachedEviction, AFetchOnceIsNotEnough) {
    MemcachedCache cache(kMiB);
    const auto perPage = static_cast<std::uint32_t>(cache.perPage());
    cache.apply(sets(0, perPage));
    cache.apply({ get(0) }); // FETCHED only
    cache.apply(sets(perPage, perPage + 1));
    EXPECT_FALSE(cache.live(0));
    EXPECT_EQ(cache.replay.summary().getHits, 1u);
}

TEST(MemcachedEviction, AClassGetsItsFirstPagePastTheLimit) {
    MemcachedCache cache(kMiB);
    const auto perPage = static_cast<std::uint32_t>(cache.perPage());
    cache.apply(sets(0, perPage));
    // Items of another class: do_slabs_newslab gives a class without pages one, whatever mem_limit says.
    cache.apply(sets(perPage, perPage + 100, 500));
    EXPECT_EQ(cache.budget.pages().mallocedPages(), 2u);
    EXPECT_EQ(cache.replay.summary().evictedKeys, 0u);
    EXPECT_EQ(cache.replay.summary().liveKeys, std::uint64_t { perPage } + 100);
    EXPECT_EQ(cache.budget.usedBytes(), 2 * kMiB);
}

TEST(MemcachedEviction, AnOverwriteTakesItsNewChunkBeforeTheOldOneIsFreed) {
    MemcachedCache cache(kMiB);
    const auto perPage = static_cast<std::uint32_t>(cache.perPage());
    cache.apply(sets(0, perPage));
    // The page is full: rewriting the newest key needs a chunk before its old one is free (item_replace), so
    // the oldest item goes.
    cache.apply({ set(perPage - 1) });
    EXPECT_FALSE(cache.live(0));
    EXPECT_TRUE(cache.live(perPage - 1));
    EXPECT_EQ(cache.replay.summary().liveKeys, std::uint64_t { perPage } - 1);
}

TEST(MemcachedEviction, DeletesFreeChunksForLaterItems) {
    MemcachedCache cache(kMiB);
    const auto perPage = static_cast<std::uint32_t>(cache.perPage());
    cache.apply(sets(0, perPage));
    std::vector<Request> deletes;
    for (std::uint32_t k = 0; k < 10; ++k) {
        Request d = set(perPage - 1 - k);
        d.op = Op::Delete;
        deletes.push_back(d);
    }
    cache.apply(deletes);
    cache.apply(sets(perPage, perPage + 10));
    EXPECT_EQ(cache.replay.summary().evictedKeys, 0u);
    EXPECT_TRUE(cache.live(0));
}

} // namespace
