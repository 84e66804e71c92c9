// SPDX-License-Identifier: MIT
// The slab model through simulate(): memcached's pages per class, and the timeline.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/eviction.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/memory_trace.h"

#include "generated_requests.h"
#include "set_request.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>

using namespace layoutlab;

namespace {

SimulationConfig slabConfig(const char* layout, const char* alloc, std::vector<std::uint32_t> thresholds,
    std::uint32_t moverWindow = 0, std::uint32_t timeline = 0, bool expireCycle = false) {
    auto l = parseLayout(layout);
    auto a = parseAllocator(alloc);
    EXPECT_TRUE(l && a);
    SimulationConfig config { *l, *a, std::move(thresholds) };
    config.slabs = SlabModelOptions { true, moverWindow };
    config.slabs->expireCycle = expireCycle;
    config.timelineSamples = timeline;
    return config;
}

// Every request `gen` makes of `config`.
std::vector<Request> generated(const Expected<GeneratorConfig>& config) {
    return test::generatedRequests(config);
}

// A churn: keys written with log-normal sizes, overwritten, deleted, expired.
std::vector<Request> churn(std::uint64_t seed) {
    return generated(makeGeneratorConfig(
        20000, 80000, "lognormal:3:0.5:4:200", "lognormal:5:1.2:1:20000", 0.2, 0.0, 0.25, 0.2, "zipf:0.8", seed));
}

Expected<SimulationResult> simulateFirst(
    const SimulationConfig& config, const std::vector<Request>& requests, std::size_t count) {
    MemoryTrace trace(std::vector<Request>(requests.begin(), requests.begin() + static_cast<std::ptrdiff_t>(count)));
    return simulate(config, trace);
}

TEST(SlabModel, MemcachedPagesPerClassFollowTheMostChunksEachClassHeld) {
    // Without the page mover, a class holds pages for the most chunks it ever had in use at once: counted
    // here from the items, request by request, by class.
    const auto requests = churn(5);
    const auto config = slabConfig("memcached-1.6", "memcached", {});
    MemoryTrace trace(requests);
    auto result = simulate(config, trace);
    ASSERT_TRUE(result) << result.error().describe();
    const auto& point = result->points.front();
    ASSERT_TRUE(point.arena);
    // Replay the items by hand: the class of each key's item, live or not.
    const auto& layout = *config.layout;
    const auto& slabs = dynamic_cast<const MemcachedSlabModel&>(*config.allocator);
    std::map<std::uint32_t, std::uint32_t> itemClass; // key id -> class id of its item
    std::map<std::uint32_t, std::int64_t> used, peak;
    for (const Request& r : requests) {
        auto drop = [&] {
            if (auto it = itemClass.find(r.keyId); it != itemClass.end()) {
                --used[it->second];
                itemClass.erase(it);
            }
        };
        if (r.op == Op::Set) {
            const KeyLayout kl = layout.describe({ r.keyBytes, r.valueBytes }, 0, slabs);
            ASSERT_EQ(kl.allocationCount, 1) << "the churn's items are not chunked";
            const std::uint32_t id = slabs.classId(kl.allocations[0].requestedBytes);
            peak[id] = std::max(peak[id], ++used[id]); // the new item before the old one is freed
            drop();
            itemClass[r.keyId] = id;
        } else if (r.op == Op::Delete) {
            drop();
        }
    }
    ASSERT_EQ(result->trace.expiredKeys, 0u) << "the churn has no TTLs to expire within its seconds";
    std::uint64_t pages = 0;
    for (const auto& c : point.sizeClasses) {
        const std::uint32_t id = slabs.classId(c.classBytes);
        const auto perPage = static_cast<std::uint64_t>(slabs.slabClasses()[id - 1].perSlab);
        EXPECT_EQ(c.heldSlabs, (static_cast<std::uint64_t>(peak[id]) + perPage - 1) / perPage) << "class " << id;
        EXPECT_EQ(c.allocations, static_cast<std::uint64_t>(used[id])) << "class " << id;
        pages += c.heldSlabs;
    }
    EXPECT_EQ(point.arena->activeBytes, pages << 20);
    EXPECT_EQ(point.arena->allocatedBytes, point.usableBytes - point.indexBytes);
}

TEST(SlabModel, TimelineSamplesEqualTheTraceCutShortThere) {
    // Each sample is what the slab model holds after that many requests: the same as a run of the trace cut
    // there, for memcached (no index tables to settle at the end).
    const auto requests = churn(7);
    const auto config = slabConfig("memcached-1.6", "memcached", {}, 0, 5);
    MemoryTrace trace(requests);
    auto result = simulate(config, trace);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(result->timeline.size(), 5u);
    EXPECT_EQ(result->timeline.back().requests, requests.size());
    for (std::size_t k = 0; k < result->timeline.size(); ++k) {
        const auto& sample = result->timeline[k];
        EXPECT_EQ(sample.requests, (k + 1) * requests.size() / 5);
        auto cut = simulateFirst(config, requests, sample.requests);
        ASSERT_TRUE(cut) << cut.error().describe();
        SCOPED_TRACE(sample.requests);
        EXPECT_EQ(sample.liveKeys, cut->trace.liveKeys);
        EXPECT_EQ(sample.timeMs, requests[sample.requests - 1].timeMs);
        ASSERT_EQ(sample.allocatedBytes.size(), 1u);
        EXPECT_EQ(sample.allocatedBytes[0], cut->points[0].arena->allocatedBytes);
        EXPECT_EQ(sample.activeBytes[0], cut->points[0].arena->activeBytes);
    }
}

TEST(SlabModel, TimelineEndsWithEveryThresholdsFigures) {
    const auto requests = churn(9);
    MemoryTrace trace(requests);
    auto result = simulate(slabConfig("valkey-9.1", "jemalloc:quantum=8,page=4096", { 48, 64, 128 }, 0, 7), trace);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(result->timeline.size(), 7u);
    for (std::size_t i = 0; i < result->points.size(); ++i) {
        EXPECT_EQ(result->timeline.back().allocatedBytes[i], result->points[i].arena->allocatedBytes);
        EXPECT_EQ(result->timeline.back().activeBytes[i], result->points[i].arena->activeBytes);
        std::uint64_t most = 0;
        for (const auto& s : result->timeline)
            most = std::max(most, s.activeBytes[i]);
        EXPECT_LE(most, result->points[i].arena->peakActiveBytes);
    }
    for (std::size_t k = 1; k < result->timeline.size(); ++k)
        EXPECT_GT(result->timeline[k].requests, result->timeline[k - 1].requests);
}

// More writes than one log of the slab replay holds (SlabReplay plays its arenas a log at a time, on other
// threads, while the next log fills): a sweep's arenas end where each threshold's own run ends, whether a
// timeline made them catch up in the middle of a log or not.
TEST(SlabModel, ASweepsArenasEqualEachThresholdsOwnRunOverSeveralLogs) {
    const auto requests = generated(makeGeneratorConfig(
        150000, 350000, "lognormal:3:0.5:4:200", "lognormal:4.5:1:1:5000", 0.2, 0.0, 0.2, 0.1, "zipf:0.8", 11));
    std::size_t writes = 0;
    for (const Request& r : requests)
        writes += r.op != Op::Get;
    ASSERT_GT(writes, std::size_t { 1 } << 18) << "the trace fills more than one log";
    const std::vector<std::uint32_t> thresholds { 48, 64, 128 };
    for (const auto [timeline, cycles] : { std::pair { 0u, false }, std::pair { 5u, false }, std::pair { 0u, true } }) {
        MemoryTrace trace(requests);
        auto sweep = simulate(
            slabConfig("valkey-9.1", "jemalloc:quantum=8,page=4096", thresholds, 0, timeline, cycles), trace);
        ASSERT_TRUE(sweep) << sweep.error().describe();
        for (std::size_t i = 0; i < thresholds.size(); ++i) {
            SCOPED_TRACE(testing::Message()
                << "threshold " << thresholds[i] << ", timeline " << timeline << (cycles ? ", expire cycles" : ""));
            MemoryTrace again(requests);
            auto own = simulate(
                slabConfig("valkey-9.1", "jemalloc:quantum=8,page=4096", { thresholds[i] }, 0, 0, cycles), again);
            ASSERT_TRUE(own) << own.error().describe();
            const auto& a = *sweep->points[i].arena;
            const auto& b = *own->points[0].arena;
            EXPECT_EQ(a.allocatedBytes, b.allocatedBytes);
            EXPECT_EQ(a.activeBytes, b.activeBytes);
            EXPECT_EQ(a.peakAllocatedBytes, b.peakAllocatedBytes);
            EXPECT_EQ(a.peakActiveBytes, b.peakActiveBytes);
            ASSERT_EQ(sweep->points[i].sizeClasses.size(), own->points[0].sizeClasses.size());
            for (std::size_t k = 0; k < own->points[0].sizeClasses.size(); ++k)
                EXPECT_EQ(sweep->points[i].sizeClasses[k].heldSlabs, own->points[0].sizeClasses[k].heldSlabs);
        }
        if (timeline)
            EXPECT_EQ(sweep->timeline.size(), timeline);
    }
}

TEST(SlabModel, ExpireCyclesFreeWhatTheReplayExpiredByTheEnd) {
    // 3,000 keys with a 1-second TTL set over 300 ms; as each one's time passes, it is written again (a
    // third of them, without a TTL) or a new key is: with the cycles the arena frees the expired keys up to
    // a cycle later and in the table's order, each with the object of its name (activeExpireCycleTryExpire),
    // and a rewritten one first (expireIfNeeded). Without a thread cache nothing is held back, so at the end
    // both arenas hold exactly the replay's keys (Valkey 8.0's dicts: a hashtable's child buckets depend on
    // which keys shared a bucket on the way); on the way, the cycles' held the expired keys longer.
    std::vector<Request> requests;
    for (std::uint32_t i = 0; i < 3000; ++i)
        requests.push_back(test::set(i, 20 + i % 150, 1, i / 10, 12));
    for (std::uint32_t i = 0; i < 3000; ++i) // past the key's time (1,000 + i / 10), before the next cycle
        requests.push_back(test::set(i % 3 == 0 ? i : 3000 + i, 20 + i % 150, 0, 1000 + i / 10 + 1, 12));
    std::optional<ArenaUsage> figures[2];
    for (const bool cycles : { false, true }) {
        auto config = slabConfig("valkey-8.0", "jemalloc:quantum=8,page=4096", {}, 0, 0, cycles);
        config.slabs->threadCache = false;
        MemoryTrace trace(requests);
        auto result = simulate(config, trace);
        ASSERT_TRUE(result) << result.error().describe();
        EXPECT_EQ(result->trace.expiredKeys, 3000u);
        EXPECT_EQ(result->trace.liveKeys, 3000u);
        figures[cycles] = result->points.front().arena;
    }
    ASSERT_TRUE(figures[0] && figures[1]);
    EXPECT_EQ(figures[1]->allocatedBytes, figures[0]->allocatedBytes);
    EXPECT_GT(figures[1]->peakAllocatedBytes, figures[0]->peakAllocatedBytes);
}

TEST(SlabModel, TimelineOfAStreamOfUnknownLengthStaysEven) {
    // A reader that does not know its length: the sampler halves its samples as the trace goes on.
    class Stream final : public TraceReader {
    public:
        explicit Stream(std::vector<Request> r)
            : m_trace(std::move(r)) { }
        Expected<std::size_t> read(std::span<Request> out) override { return m_trace.read(out); }
        std::uint64_t totalRequests() const override { return 0; }
        std::uint64_t keyIdLimit() const override { return m_trace.keyIdLimit(); }
        std::string name() const override { return "stream"; }

    private:
        MemoryTrace m_trace;
    };
    const auto requests = churn(11);
    Stream stream(requests);
    auto result = simulate(slabConfig("memcached-1.6", "memcached", {}, 0, 10), stream);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_GE(result->timeline.size(), 5u);
    ASSERT_LE(result->timeline.size(), 10u);
    EXPECT_EQ(result->timeline.back().requests, requests.size());
    const std::uint64_t step = result->timeline[1].requests - result->timeline[0].requests;
    for (std::size_t k = 1; k + 1 < result->timeline.size(); ++k)
        EXPECT_EQ(result->timeline[k].requests - result->timeline[k - 1].requests, step);
}

TEST(SlabModel, MemcachedPageMoverRunsOnTheTracesClock) {
    // 30000 items of class 1 in the first second, 28000 deleted; with a 30-second window the mover gives a
    // page to the global pool only once the trace's clock passes it, and a class that grows later takes
    // that page instead of a new one.
    std::vector<Request> requests;
    auto at = [&](Op op, std::uint32_t key, std::uint32_t value, std::uint64_t ms) {
        Request r;
        r.op = op;
        r.keyId = key;
        r.keyBytes = 16;
        r.valueBytes = value;
        r.timeMs = ms;
        requests.push_back(r);
    };
    for (std::uint32_t k = 0; k < 30000; ++k)
        at(Op::Set, k, 16, 100);
    for (std::uint32_t k = 0; k < 28000; ++k)
        at(Op::Delete, k, 0, 200);
    at(Op::Set, 40000, 1000, 20000); // class 12 at 20 s: before the window has passed
    at(Op::Set, 40001, 2000, 60000); // class 15 at 60 s: after
    auto early = [&](std::size_t count, std::uint32_t window) {
        MemoryTrace trace(
            std::vector<Request>(requests.begin(), requests.begin() + static_cast<std::ptrdiff_t>(count)));
        return simulate(slabConfig("memcached-1.6", "memcached", {}, window), trace);
    };
    auto all = early(requests.size(), 30);
    ASSERT_TRUE(all) << all.error().describe();
    // Pages: class 1 kept 2 of its 3, class 12 got a new one at 20 s, class 15 took the pooled one at 60 s.
    EXPECT_EQ(all->points[0].arena->activeBytes, 4u << 20);
    auto off = early(requests.size(), 0);
    ASSERT_TRUE(off);
    EXPECT_EQ(off->points[0].arena->activeBytes, 5u << 20);
    for (const auto& c : all->points[0].sizeClasses)
        if (c.classBytes == 96)
            EXPECT_EQ(c.heldSlabs, 2u);
    auto before = early(requests.size() - 1, 30);
    ASSERT_TRUE(before);
    for (const auto& c : before->points[0].sizeClasses)
        if (c.classBytes == 96)
            EXPECT_EQ(c.heldSlabs, 3u) << "the trace ends at 20 s: the window has not passed";
}

} // namespace

namespace {
// A trace of `kind` keys (1 to 300 elements of 1 to 40 bytes, half of the sets integers), then lookups,
// removals and adds of one element, three in ten each, and deletes of whole keys.
std::vector<Request> collectionChurn(CollectionKind kind, std::uint64_t seed) {
    auto config = makeGeneratorConfig(700, 6000, "16", "uniform:1:12", 0, 0.5, 0.3, 0.3, "uniform", seed);
    EXPECT_TRUE(config);
    EXPECT_TRUE(setCollectionElements(*config, kind, "uniform:1:300", "uniform:1:40"));
    auto requests = generated(config);
    const std::uint64_t end = requests.back().timeMs;
    for (std::uint32_t key = 0; key < 700; key += 3) // a third of the keys deleted whole
        requests.push_back({ .timeMs = end, .keyId = key, .keyBytes = 16, .op = Op::Delete });
    return requests;
}
} // namespace

// Collection keys in the slab model: the regions each key holds are its allocations as the collection model
// counts them (CollectionKeyModel::allocations, a rehash's old array and a skiplist's levels drawn per key), so
// that the arena's allocated bytes are the replay's usable bytes to within those draws, on every engine line
// and type; and a key's last element, or a DEL, returns every region.
TEST(SlabModel, CollectionKeysHoldWhatTheReplayCountsAndReturnItAll) {
    for (const char* layout : { "redis-7.0", "redis-7.2", "valkey-8.0", "valkey-8.1", "valkey-9.1" })
        for (const auto kind :
            { CollectionKind::Hash, CollectionKind::Set, CollectionKind::SortedSet, CollectionKind::List }) {
            SCOPED_TRACE(fmt::format("{} {}", layout, collectionKindName(kind)));
            const auto requests = collectionChurn(kind, 11);
            MemoryTrace trace(requests);
            // Without a thread cache (the reference engine's arena), whose regions jemalloc counts as allocated.
            auto config = slabConfig(layout, "jemalloc:quantum=16,page=4096", {});
            config.slabs->threadCache = false;
            auto result = simulate(config, trace);
            ASSERT_TRUE(result) << result.error().describe();
            const ThresholdPoint& p = result->points.at(0);
            ASSERT_TRUE(p.arena);
            ASSERT_GT(p.usableBytes, 0u);
            EXPECT_NEAR(static_cast<double>(p.arena->allocatedBytes), static_cast<double>(p.usableBytes),
                0.005 * static_cast<double>(p.usableBytes));
            EXPECT_GE(p.arena->activeBytes, p.arena->allocatedBytes);

            // Every key deleted: nothing left but the keyspace's buckets.
            auto emptied = requests;
            for (std::uint32_t key = 0; key < 700; ++key)
                emptied.push_back({ .timeMs = requests.back().timeMs, .keyId = key, .keyBytes = 16, .op = Op::Delete });
            MemoryTrace emptiedTrace(emptied);
            auto none = simulate(config, emptiedTrace);
            ASSERT_TRUE(none) << none.error().describe();
            EXPECT_EQ(none->trace.liveKeys, 0u);
            EXPECT_LE(none->points.at(0).arena->allocatedBytes, none->points.at(0).indexBytes);
        }
}

// What does not model collection keys refuses a trace that holds them, in one line that names what does take
// them, rather than leave their memory out: a budget of raw sizes, which counts a key and its value only.
TEST(SlabModel, ARawSizesBudgetRefusesATraceOfCollectionKeysNamingWhatTakesThem) {
    auto config = makeGeneratorConfig(50, 100, "16", "8", 0, 0, 0.5, 0.1, "uniform", 3);
    ASSERT_TRUE(config);
    ASSERT_TRUE(setCollectionElements(*config, CollectionKind::Hash, "uniform:1:20", "8"));
    const auto requests = generated(config);
    MemoryTrace trace(requests);
    auto budget = slabConfig("valkey-9.1", "jemalloc", { 128 });
    budget.slabs.reset();
    budget.eviction = *makeEvictionOptions("1mb", "allkeys-lru", 5, 10, 1);
    budget.eviction->rawSizes = true;
    const auto refused = simulate(budget, trace);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().describe().find("collection keys"), std::string::npos) << refused.error().describe();
    EXPECT_NE(refused.error().describe().find("--raw-sizes"), std::string::npos) << refused.error().describe();
    EXPECT_NE(refused.error().describe().find("`sim` or `sweep`"), std::string::npos) << refused.error().describe();
}
