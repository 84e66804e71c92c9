// SPDX-License-Identifier: MIT
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/cache_model.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/memory_trace.h"
#include "layoutlab/trace/random.h"

#include "generated_requests.h"

#include <algorithm>
#include <map>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

TEST(CacheGeometry, ParsesLevelsAndRefusesNonsense) {
    auto g = CacheGeometry::parse("32K:8,512K:8,32M:16");
    ASSERT_TRUE(g) << g.error().describe();
    ASSERT_EQ(g->levels.size(), 3u);
    EXPECT_EQ(g->levels[0].sizeBytes, 32u * 1024);
    EXPECT_EQ(g->levels[2].ways, 16u);
    EXPECT_EQ(g->describe(), "32K:8,512K:8,32M:16");
    EXPECT_TRUE(CacheGeometry::parse("32K:8,1M:16"));
    for (const char* bad :
        { "32K:8", "32K:8,1M:16,32M:16,64M:16", "32K,1M:16", "32K:0,1M:16", "100:8,1M:16", "32X:8,1M:16" }) {
        auto b = CacheGeometry::parse(bad);
        ASSERT_FALSE(b) << bad;
        EXPECT_EQ(b.error().field, field::kCacheGeometry); // the core names the field; the CLI shows its flag
    }
}

TEST(CacheGeometry, DetectsFromSysfs) {
    const auto dir = std::filesystem::temp_directory_path() / "layoutlab-fake-cpu-cache";
    std::filesystem::remove_all(dir);
    auto level = [&dir](const char* name, const char* lvl, const char* type, const char* size, const char* ways) {
        const auto d = dir / name;
        std::filesystem::create_directories(d);
        std::ofstream(d / "level") << lvl << "\n";
        std::ofstream(d / "type") << type << "\n";
        std::ofstream(d / "size") << size << "\n";
        std::ofstream(d / "ways_of_associativity") << ways << "\n";
    };
    level("index0", "1", "Data", "48K", "12");
    level("index1", "1", "Instruction", "32K", "8");
    level("index2", "2", "Unified", "2048K", "16");
    level("index3", "3", "Unified", "307200K", "20");
    const auto g = CacheGeometry::detect(dir.string());
    EXPECT_EQ(g.describe(), "48K:12,2M:16,300M:20");
    std::filesystem::remove_all(dir);
    EXPECT_EQ(CacheGeometry::detect("/nonexistent").describe(), "32K:8,1M:16,32M:16"); // the fallback
}

TEST(CacheHierarchy, LruWithinASet) {
    // One set of 2 ways at L1 (128 B), a larger L2.
    CacheHierarchy cache(*CacheGeometry::parse("128:2,8K:4"));
    cache.access(0);
    cache.access(64);
    cache.access(0); // hit
    EXPECT_EQ(cache.misses()[0], 2u);
    cache.access(128); // evicts line 64 (least recently used)
    cache.access(0); // still there
    EXPECT_EQ(cache.misses()[0], 3u);
    cache.access(64); // gone from L1, but in L2
    EXPECT_EQ(cache.misses()[0], 4u);
    EXPECT_EQ(cache.misses()[1], 3u);
    EXPECT_EQ(cache.accesses(), 6u);
    cache.clear(); // a cold cache again
    cache.access(0);
    EXPECT_EQ(cache.misses()[0], 1u);
    EXPECT_EQ(cache.misses()[1], 1u);
}

TEST(CacheHierarchy, WorkingSetThatFitsOnlyMissesOnce) {
    CacheHierarchy cache(*CacheGeometry::parse("32K:8,1M:16"));
    for (int round = 0; round < 3; ++round)
        for (std::uint64_t a = 0; a < 16 * 1024; a += 64)
            cache.access(a);
    EXPECT_EQ(cache.misses()[0], 256u); // 16 KiB = 256 lines, cold misses only
    for (std::uint64_t a = 0; a < 64 * 1024; a += 64)
        cache.access(a); // 64 KiB does not fit L1
    cache.resetCounters();
    for (std::uint64_t a = 0; a < 64 * 1024; a += 64)
        cache.access(a);
    EXPECT_EQ(cache.misses()[0], 1024u); // LRU streaming thrashes L1
    EXPECT_EQ(cache.misses()[1], 0u); // but fits L2
}

// A last level simulated in one set of eight estimates the whole level's misses: a random working set a bit
// larger than the level, with objects of a 512-byte stride (which would line up with every eighth set if
// the sampled sets were chosen by index).
TEST(CacheHierarchy, SampledLastLevelEstimatesTheWholeLevel) {
    const auto geometry = *CacheGeometry::parse("32K:8,8M:16");
    CacheHierarchy whole(geometry), sampled(geometry);
    sampled.sampleLastLevel(8);
    EXPECT_EQ(sampled.lastLevelSampling(), 8u);
    Random random(7);
    constexpr std::uint64_t kObjects = 24000; // 12 MiB of 512-byte objects: 1.5 times the last level
    for (int i = 0; i < 400000; ++i) {
        const std::uint64_t address = random.below(kObjects) * 512;
        whole.access(address);
        sampled.access(address);
        if (i == 100000) {
            whole.resetCounters();
            sampled.resetCounters();
        }
    }
    EXPECT_EQ(sampled.misses()[0], whole.misses()[0]); // the first level is whole
    const double estimate = 8.0 * static_cast<double>(sampled.misses()[1]);
    EXPECT_NEAR(estimate, static_cast<double>(whole.misses()[1]), 0.03 * static_cast<double>(whole.misses()[1]));
    // Warming the last level alone fills it without counting anything.
    CacheHierarchy warmed(geometry);
    for (std::uint64_t a = 0; a < (std::uint64_t { 4 } << 20); a += 64)
        warmed.accessLastLevel(a);
    EXPECT_EQ(warmed.misses()[1], 0u);
    for (std::uint64_t a = 0; a < (std::uint64_t { 4 } << 20); a += 64)
        warmed.access(a);
    EXPECT_EQ(warmed.misses()[1], 0u); // all in the last level already
    EXPECT_EQ(warmed.misses()[0], (std::uint64_t { 4 } << 20) / 64); // the first level was cold
}

// A simulation of this layout preset (default allocator) with the cache model on.
SimulationConfig cacheConfig(
    const std::string& layout, const std::string& geometry, std::vector<std::uint32_t> thresholds = {}) {
    auto models = parseLayoutAndAllocator(layout, "");
    SimulationConfig config;
    config.layout = models->layout;
    config.allocator = models->allocator;
    config.thresholds = std::move(thresholds);
    config.cache = *CacheGeometry::parse(geometry);
    return config;
}

SimulationResult seedCase(std::vector<std::uint32_t> thresholds) {
    auto cfg = makeGeneratorConfig(100000, 100000, "16", "96", 0, 0, 1.0, 0, "uniform", 1);
    SyntheticTrace trace(*cfg);
    const auto config = cacheConfig("valkey-9.1", "32K:8,1M:16,8M:16", std::move(thresholds));
    auto result = simulate(config, trace);
    EXPECT_TRUE(result) << result.error().describe();
    return *result;
}

// The model starts from what loading the keyspace leaves cached: a keyspace that fits the last level
// misses there only where GETs evict each other, one far larger misses nearly always.
TEST(CacheModel, TheLoadLeavesAKeyspaceThatFitsCached) {
    auto cfg = makeGeneratorConfig(100000, 100000, "16", "96", 0, 0, 1.0, 0, "uniform", 1);
    SyntheticTrace fitting(*cfg);
    auto fits = simulate(cacheConfig("valkey-9.1", "32K:8,64M:16", { 128 }), fitting);
    ASSERT_TRUE(fits) << fits.error().describe();
    EXPECT_LT(fits->points[0].missesPerGet.back(), 0.01); // 13.5 MiB in 64 MiB
    SyntheticTrace large(*cfg);
    auto misses = simulate(cacheConfig("valkey-9.1", "32K:8,1M:16", { 128 }), large);
    ASSERT_TRUE(misses) << misses.error().describe();
    EXPECT_GT(misses->points[0].missesPerGet.back(), 2.5); // 3 lines per GET, 1 MiB of 13.5 cached
    EXPECT_EQ(warmKeyCount(100000, 141.37, 1 << 20), 14835u); // 2 MiB of keys
    EXPECT_EQ(warmKeyCount(100000, 141.37, 64 << 20), 100000u); // every key
}

TEST(CacheModel, SeedCaseEmbeddingSavesALoadLinesAndMisses) {
    // 16-byte keys, 96-byte values: at 128 the value is embedded (9.1 rules).
    const auto r = seedCase({ 64, 128 });
    ASSERT_EQ(r.points.size(), 2u);
    const auto& at64 = r.points[0];
    const auto& at128 = r.points[1];
    EXPECT_EQ(at64.dependentLoadsPerGet - at128.dependentLoadsPerGet, 1.0);
    EXPECT_LT(at128.linesTouchedPerGet, at64.linesTouchedPerGet);
    ASSERT_EQ(at64.missesPerGet.size(), 3u);
    for (std::size_t level = 0; level < 3; ++level)
        EXPECT_LT(at128.missesPerGet[level], at64.missesPerGet[level]) << "level " << level;
    EXPECT_EQ(r.cacheGeometry, "32K:8,1M:16,8M:16");
    EXPECT_EQ(r.cacheSampledGets, 90000u); // the last 100000 GETs, the first tenth warming the cache
}

TEST(CacheModel, ThresholdsAreIndependentOfTheSweepAroundThem) {
    const auto alone = seedCase({ 128 });
    const auto swept = seedCase({ 64, 96, 128 });
    EXPECT_EQ(alone.points[0].missesPerGet, swept.points[2].missesPerGet);
}

TEST(CacheModel, RedisWithTtlsIsDeterministicAcrossWorkers) {
    // Regression: expires-table lines once reached the cache model's generation bits, so a line left
    // from an earlier threshold could hit in a later one, depending on how workers shared thresholds.
    auto run = [](std::vector<std::uint32_t> thresholds) {
        auto cfg
            = makeGeneratorConfig(20000, 40000, "uniform:8:32", "lognormal:3.5:1:1:500", 0.5, 0, 0.9, 0, "zipf:0.9", 5);
        SyntheticTrace trace(*cfg);
        // An LLC large enough that lines survive between thresholds.
        return *simulate(cacheConfig("redis-7.0", "32K:8,8M:16", std::move(thresholds)), trace);
    };
    const auto swept = run({ 0, 16, 32, 48, 64 });
    for (std::size_t i = 0; i < swept.points.size(); ++i) {
        const auto alone = run({ swept.points[i].threshold });
        EXPECT_EQ(alone.points[0].missesPerGet, swept.points[i].missesPerGet) << swept.points[i].threshold;
    }
}

TEST(CacheModel, GetsOfUnstoredItemsAreNotReplayed) {
    // Regression: a sampled key whose item is too large for memcached was replayed with another shape's
    // plan at address 0. Half of these values exceed item_size_max (1 MiB), so about half the GETs count.
    auto cfg = makeGeneratorConfig(2000, 4000, "16", "uniform:100:2097152", 0, 0, 1.0, 0, "uniform", 7);
    SyntheticTrace trace(*cfg);
    auto result = simulate(cacheConfig("memcached-1.6", "32K:8,1M:16"), trace);
    ASSERT_TRUE(result) << result.error().describe();
    const auto& point = result->points[0];
    ASSERT_GT(point.unstorableKeys, 0u);
    const double storedFraction = 1.0 - static_cast<double>(point.unstorableKeys) / 2000.0;
    const double gets = static_cast<double>(result->trace.getHits) * 0.9; // the first tenth warms the cache
    EXPECT_NEAR(static_cast<double>(result->cacheSampledGets) / gets, storedFraction, 0.05);
}

TEST(CacheModel, OffByDefault) {
    auto cfg = makeGeneratorConfig(1000, 1000, "16", "96", 0, 0, 1.0, 0, "uniform", 1);
    SyntheticTrace trace(*cfg);
    auto models = parseLayoutAndAllocator("valkey-9.1", "");
    auto result = simulate({ models->layout, models->allocator, {} }, trace);
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->points[0].missesPerGet.empty());
    EXPECT_TRUE(result->cacheGeometry.empty());
}

} // namespace

namespace {

void matchesAPlainLru(const CacheGeometry& geometry);

// A plain reference: per level, per set, a list of lines with the most recently used first.
class ReferenceLru {
public:
    explicit ReferenceLru(const CacheGeometry& g) {
        for (const auto& level : g.levels)
            m_levels.push_back({ level.ways, level.sizeBytes / (64 * level.ways), {} });
        m_misses.assign(g.levels.size(), 0);
    }
    void access(std::uint64_t address) {
        const std::uint64_t line = address / 64;
        for (std::size_t i = 0; i < m_levels.size(); ++i) {
            auto& level = m_levels[i];
            auto& set = level.sets[line % level.setCount];
            const auto it = std::find(set.begin(), set.end(), line);
            const bool hit = it != set.end();
            if (hit)
                set.erase(it);
            else if (set.size() == level.ways)
                set.pop_back();
            set.insert(set.begin(), line);
            if (hit)
                return;
            ++m_misses[i];
        }
    }
    void clear() {
        for (auto& level : m_levels)
            level.sets.clear();
        std::fill(m_misses.begin(), m_misses.end(), 0);
    }
    const std::vector<std::uint64_t>& misses() const { return m_misses; }

private:
    struct Level {
        std::uint32_t ways;
        std::uint64_t setCount;
        std::map<std::uint64_t, std::vector<std::uint64_t>> sets;
    };
    std::vector<Level> m_levels;
    std::vector<std::uint64_t> m_misses;
};

TEST(CacheHierarchy, MatchesAPlainLruForLargeAndOddSizedLevels) {
    // L2 has a power-of-two set count, the LLC does not (24576 sets); both keep 32-bit tags, L1 64-bit ones.
    // The LLCs' tag arrays are large enough for compact sets: 20 ways (6 inline, 14 in overflow blocks),
    // 16, and 7 (a one-way overflow block).
    for (const char* text : { "48K:12,2M:16,30M:20", "32K:8,4M:8,64M:16", "32K:8,28M:7" }) {
        SCOPED_TRACE(text);
        matchesAPlainLru(*CacheGeometry::parse(text));
    }
}

void matchesAPlainLru(const CacheGeometry& geometry) {
    CacheHierarchy cache(geometry);
    ReferenceLru reference(geometry);
    std::uint64_t state = 7;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 200000; ++i) {
            const std::uint64_t r = Random::splitmix64(state);
            // A hot region, a warm one, and addresses spread over the whole simulated space.
            const std::uint64_t address = (r % 4 == 0) ? (r >> 8) % (64 * 1024)
                : (r % 4 == 1)                         ? (std::uint64_t { 1 } << 40) + (r >> 8) % (64 << 20)
                               : (r >> 16) % (std::uint64_t { 1 } << CacheHierarchy::kMaxAddressBits);
            cache.access(address);
            reference.access(address);
        }
        EXPECT_EQ(cache.misses(), reference.misses()) << "round " << round;
        cache.clear();
        reference.clear();
    }
}

} // namespace

namespace {

TEST(CacheModel, ThresholdsWhereNothingSwitchesGetTheirNeighboursMissesAndMatchAnEvaluation) {
    // Values of 20..80 bytes on Valkey 9.1: between 64 and 128 shapes switch to embedded at several
    // thresholds, and none switch between 160 and 256. Each threshold's misses must equal those of a sweep
    // of that threshold alone, whether it was evaluated or copied.
    auto cfg = makeGeneratorConfig(20000, 30000, "uniform:8:24", "uniform:20:80", 0, 0, 0.9, 0, "zipf:0.9", 3);
    const std::vector<std::uint32_t> thresholds { 48, 64, 96, 128, 160, 192, 224, 256 };
    SyntheticTrace swept(*cfg);
    const auto all = simulate(cacheConfig("valkey-9.1", "32K:8,1M:16", thresholds), swept);
    ASSERT_TRUE(all) << all.error().describe();
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
        SyntheticTrace single(*cfg);
        const auto one = simulate(cacheConfig("valkey-9.1", "32K:8,1M:16", { thresholds[i] }), single);
        ASSERT_TRUE(one) << one.error().describe();
        EXPECT_EQ(all->points[i].missesPerGet, one->points[0].missesPerGet) << "threshold " << thresholds[i];
    }
    // Nothing switches above 160 here, so those points are equal.
    EXPECT_EQ(all->points[5].missesPerGet, all->points[7].missesPerGet);
    EXPECT_NE(all->points[0].missesPerGet, all->points[7].missesPerGet);
}

} // namespace

namespace {

// The cache model places string keys only: a trace holding collection keys beside strings gets misses per
// GET of its strings (it crashed here once, looking for a collection key's shape among the strings'), and a
// trace of collections only gets no miss figure at all rather than zeros.
TEST(CacheModel, CollectionKeysAreLeftOutOfThePlacement) {
    auto hashes = makeGeneratorConfig(400, 3000, "16", "uniform:1:60", 0, 0.3, 0.2, 0.1, "uniform", 4);
    ASSERT_TRUE(hashes);
    ASSERT_TRUE(setCollectionElements(*hashes, CollectionKind::Hash, "uniform:1:300", "uniform:1:20"));
    const std::vector<Request> collectionRequests = test::generatedRequests(hashes);
    auto strings = makeGeneratorConfig(2000, 20000, "16", "96", 0, 0, 0.8, 0, "uniform", 4);
    ASSERT_TRUE(strings);
    std::vector<Request> mixed = collectionRequests;
    for (Request r : test::generatedRequests(strings)) {
        r.keyId += 400; // keys of their own, after the hashes'
        mixed.push_back(r);
    }
    const auto config = cacheConfig("valkey-9.1", "32K:8,1M:16", { 64, 128 });
    MemoryTrace both(mixed);
    auto withStrings = simulate(config, both);
    ASSERT_TRUE(withStrings) << withStrings.error().describe();
    EXPECT_GT(withStrings->cacheSampledGets, 0u);
    EXPECT_FALSE(withStrings->collections.empty());
    for (const ThresholdPoint& p : withStrings->points) {
        ASSERT_EQ(p.missesPerGet.size(), 2u);
        EXPECT_GT(p.missesPerGet[0], 0.0);
    }
    MemoryTrace only(collectionRequests);
    auto collectionsOnly = simulate(config, only);
    ASSERT_TRUE(collectionsOnly) << collectionsOnly.error().describe();
    EXPECT_EQ(collectionsOnly->cacheSampledGets, 0u);
    for (const ThresholdPoint& p : collectionsOnly->points)
        EXPECT_TRUE(p.missesPerGet.empty());
}

} // namespace
