// SPDX-License-Identifier: MIT
// The memory budget beside the replay (sim/eviction.h): which keys evict.c's rules take, when writes are
// refused, what the budget counts, look-aside filling, and a budgeted sweep through simulate().
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/eviction.h"
#include "layoutlab/sim/key_sample.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/spec.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/memory_trace.h"

#include <gtest/gtest.h>

#include <limits>

using namespace layoutlab;

namespace {

Request set(std::uint32_t key, std::uint64_t second, std::uint32_t ttl = 0) {
    Request r;
    r.op = Op::Set;
    r.keyId = key;
    r.keyBytes = 16;
    r.valueBytes = 96;
    r.timeMs = second * 1000;
    r.ttlSeconds = ttl;
    return r;
}

Request get(std::uint32_t key, std::uint64_t second) {
    Request r = set(key, second);
    r.op = Op::Get;
    r.valueBytes = 0;
    return r;
}

// A replay of valkey-9.1 under a budget, as simulate() makes one for a threshold.
struct BudgetedReplay {
    LayoutPtr layout = *parseLayout("valkey-9.1");
    AllocatorPtr allocator = *parseAllocator("jemalloc:quantum=8,page=4096");
    KeyspaceReplay replay;
    ServerEviction budget;

    explicit BudgetedReplay(EvictionOptions options, std::uint32_t fillBatch = 0)
        : replay(layout->indexPolicy(), 64)
        , budget(std::move(options), *layout, *allocator, layout->threshold()->value, replay) {
        replay.setBudget(&budget);
        replay.setFillOnMiss(fillBatch);
    }
    void apply(const std::vector<Request>& requests) {
        auto ok = replay.apply(requests, replay.summary().requests);
        ASSERT_TRUE(ok) << ok.error().describe();
    }
    bool live(std::uint32_t key) const { return replay.keys().at(key).live(); }
};

EvictionOptions unbounded(EvictionPolicy policy = EvictionPolicy::AllKeysLru) {
    EvictionOptions o;
    o.maxmemoryBytes = std::numeric_limits<std::uint64_t>::max() / 2;
    o.policy = policy;
    o.samples = kMaxEvictionSamples; // every key of these small keyspaces is sampled
    return o;
}

// used_memory after `requests` with no limit.
std::uint64_t usedAfter(const std::vector<Request>& requests) {
    BudgetedReplay r(unbounded());
    r.apply(requests);
    return r.budget.usedBytes();
}

// A budget that holds the keys of `fits` but not those of `overflows`.
EvictionOptions between(
    const std::vector<Request>& fits, const std::vector<Request>& overflows, EvictionPolicy policy) {
    EvictionOptions o = unbounded(policy);
    o.maxmemoryBytes = (usedAfter(fits) + usedAfter(overflows)) / 2;
    return o;
}

TEST(Eviction, PolicyNamesAreTheServersAndUnknownOnesListThem) {
    for (const char* name : { "noeviction", "allkeys-lru", "volatile-lru", "allkeys-lfu", "volatile-lfu",
             "allkeys-random", "volatile-random", "volatile-ttl" }) {
        const auto policy = parseEvictionPolicy(name);
        ASSERT_TRUE(policy) << name;
        EXPECT_EQ(evictionPolicyName(*policy), name);
    }
    EXPECT_FALSE(parseEvictionPolicy("lru"));
    const auto unknown = makeEvictionOptions("64mb", "lru", 5, 10, 1);
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("allkeys-lfu"), std::string::npos) << unknown.error().message;
    EXPECT_EQ(unknown.error().field, field::kEvictionPolicy);
    EXPECT_FALSE(makeEvictionOptions("0", "allkeys-lru", 5, 10, 1)); // maxmemory 0: no limit, not a budget
    EXPECT_FALSE(makeEvictionOptions("64mb", "allkeys-lru", 0, 10, 1));
    EXPECT_FALSE(makeEvictionOptions("64mb", "allkeys-lru", 65, 10, 1));
    const auto made = makeEvictionOptions("64mb", "allkeys-lfu", 10, 100, 5);
    ASSERT_TRUE(made);
    EXPECT_EQ(made->maxmemoryBytes, 64u << 20);
    EXPECT_EQ(made->samples, 10u);
}

TEST(Eviction, MemorySizesReadAsTheServerReadsMaxmemory) {
    // util.c memtoll: k and m are powers of ten, kb and mb powers of two.
    EXPECT_EQ(*parseMemorySize("100", "f"), 100u);
    EXPECT_EQ(*parseMemorySize("100b", "f"), 100u);
    EXPECT_EQ(*parseMemorySize("1k", "f"), 1000u);
    EXPECT_EQ(*parseMemorySize("1kb", "f"), 1024u);
    EXPECT_EQ(*parseMemorySize("100m", "f"), 100000000u);
    EXPECT_EQ(*parseMemorySize("100MB", "f"), 100u << 20);
    EXPECT_EQ(*parseMemorySize("2gb", "f"), 2ull << 30);
    EXPECT_EQ(*parseMemorySize("3G", "f"), 3000000000u);
    for (const char* bad : { "", "mb", "12x", "-5", "1.5gb", "99999999999999999999gb" })
        EXPECT_FALSE(parseMemorySize(bad, "f")) << bad;
}

TEST(Eviction, BudgetsReadAsAListOrALogSpacedRange) {
    const auto list = parseBudgets("128mb,64mb,128mb");
    ASSERT_TRUE(list);
    EXPECT_EQ(*list, (std::vector<std::uint64_t> { 64u << 20, 128u << 20 }));
    const auto range = parseBudgets("16mb:1gb:7");
    ASSERT_TRUE(range);
    ASSERT_EQ(range->size(), 7u);
    EXPECT_EQ(range->front(), 16u << 20);
    EXPECT_EQ(range->back(), 1u << 30);
    EXPECT_EQ((*range)[3], 128u << 20); // 16 MiB x 2^3: doubling at each step
    for (const char* bad : { "0", "1gb:16mb:4", "16mb:1gb:1", "16mb:1gb", "x", "16mb:1gb:1000" })
        EXPECT_FALSE(parseBudgets(bad)) << bad;
}

TEST(Eviction, LruTakesTheKeyLeastRecentlyUsed) {
    // 20 keys written a second apart; key 0 is read before key 20 arrives: key 1 is then the least
    // recently used, and the one a pool that sees every key evicts.
    std::vector<Request> twenty;
    for (std::uint32_t k = 0; k < 20; ++k)
        twenty.push_back(set(k, k));
    auto overflow = twenty;
    overflow.push_back(set(20, 21));
    auto requests = twenty;
    requests.push_back(get(0, 20));
    requests.push_back(set(20, 21));
    requests.push_back(get(5, 22)); // a command after the write: the server evicts before it
    BudgetedReplay r(between(twenty, overflow, EvictionPolicy::AllKeysLru));
    r.apply(requests);
    EXPECT_TRUE(r.live(0));
    EXPECT_FALSE(r.live(1));
    for (std::uint32_t k = 2; k <= 20; ++k)
        EXPECT_TRUE(r.live(k)) << k;
    EXPECT_EQ(r.replay.summary().evictedKeys, 1u);
    EXPECT_LE(r.budget.usedBytes(), between(twenty, overflow, EvictionPolicy::AllKeysLru).maxmemoryBytes);
}

// The LFU tests' start: twenty keys written, keys 0-9 read 50 times each, under an allkeys-lfu budget that holds
// the twenty but not five more, every read counting (lfu-log-factor 0).
struct LfuStart {
    std::vector<Request> requests;
    EvictionOptions options;
};
LfuStart lfuStart() {
    std::vector<Request> twenty;
    for (std::uint32_t k = 0; k < 20; ++k)
        twenty.push_back(set(k, 0));
    auto overflow = twenty;
    for (std::uint32_t k = 20; k < 25; ++k)
        overflow.push_back(set(k, 1));
    LfuStart start { twenty, between(twenty, overflow, EvictionPolicy::AllKeysLfu) };
    start.options.lfuLogFactor = 0;
    for (int round = 0; round < 50; ++round)
        for (std::uint32_t k = 0; k < 10; ++k)
            start.requests.push_back(get(k, 0));
    return start;
}
// The five keys past the budget (20-24), each read once after its write: more than the unread keys have.
void addFiveReadOnce(std::vector<Request>& requests) {
    for (std::uint32_t k = 20; k < 25; ++k) {
        requests.push_back(set(k, 1));
        requests.push_back(get(k, 1));
    }
}

TEST(Eviction, LfuKeepsTheKeysReadOften) {
    // Keys 0-9 read 50 times each, keys 10-19 never: with lfu-log-factor 0 every read counts, so the
    // evicted keys are all among the unread.
    auto [requests, options] = lfuStart();
    addFiveReadOnce(requests);
    requests.push_back(get(0, 1));
    BudgetedReplay r(options);
    r.apply(requests);
    EXPECT_GT(r.replay.summary().evictedKeys, 0u);
    for (std::uint32_t k = 0; k < 10; ++k)
        EXPECT_TRUE(r.live(k)) << k;
}

// RENAME moves the object, its LFU counter with it (db.c renameGenericCommand adds the source's object under
// the new name): keys read often and then renamed keep the counts that hold them under the budget, where a new
// object's LFU_INIT_VAL would make them the first evicted.
TEST(Eviction, ARenamedKeyKeepsItsObjectsLfuCounter) {
    auto rename = [](std::uint32_t from, std::uint32_t to, std::uint64_t second) {
        Request source = set(from, second);
        source.op = Op::Rename;
        source.valueBytes = kRenameSource;
        Request destination = set(to, second);
        destination.op = Op::Rename;
        destination.valueBytes = kRenameDestination;
        return std::vector<Request> { source, destination };
    };
    auto [requests, options] = lfuStart();
    for (int round = 0; round < 2; ++round) // the others read twice: above a new object's LFU_INIT_VAL
        for (std::uint32_t k = 10; k < 20; ++k)
            requests.push_back(get(k, 0));
    for (std::uint32_t k = 0; k < 10; ++k) // the keys read often renamed: 100 to 109
        for (const Request& r : rename(k, 100 + k, 1))
            requests.push_back(r);
    addFiveReadOnce(requests);
    requests.push_back(get(100, 1));
    BudgetedReplay r(options);
    r.apply(requests);
    EXPECT_GT(r.replay.summary().evictedKeys, 0u);
    for (std::uint32_t k = 100; k < 110; ++k)
        EXPECT_TRUE(r.live(k)) << k;
}

TEST(Eviction, NoevictionAndVolatileWithoutTtlsRefuseWrites) {
    std::vector<Request> ten;
    for (std::uint32_t k = 0; k < 10; ++k)
        ten.push_back(set(k, 0));
    auto more = ten;
    for (std::uint32_t k = 10; k < 20; ++k)
        more.push_back(set(k, 1));
    for (const auto policy : { EvictionPolicy::NoEviction, EvictionPolicy::VolatileLru, EvictionPolicy::VolatileTtl }) {
        BudgetedReplay r(between(ten, more, policy));
        auto requests = more;
        requests.push_back(get(3, 2));
        r.apply(requests);
        EXPECT_EQ(r.replay.summary().evictedKeys, 0u) << evictionPolicyName(policy);
        EXPECT_GT(r.replay.summary().refusedWrites, 0u) << evictionPolicyName(policy);
        EXPECT_LT(r.replay.summary().liveKeys, 20u);
        EXPECT_EQ(r.replay.summary().getHits, 1u); // reads still answer
    }
}

TEST(Eviction, VolatileTtlTakesTheKeyExpiringFirst) {
    // Ten keys without a TTL and three with: the one expiring soonest goes, the others stay.
    std::vector<Request> keys;
    for (std::uint32_t k = 0; k < 10; ++k)
        keys.push_back(set(k, 0));
    keys.push_back(set(10, 0, 500));
    keys.push_back(set(11, 0, 100));
    keys.push_back(set(12, 0, 900));
    auto overflow = keys;
    overflow.push_back(set(13, 1));
    auto requests = overflow;
    requests.push_back(get(0, 1));
    BudgetedReplay r(between(keys, overflow, EvictionPolicy::VolatileTtl));
    r.apply(requests);
    EXPECT_FALSE(r.live(11));
    EXPECT_TRUE(r.live(10));
    EXPECT_TRUE(r.live(12));
    EXPECT_TRUE(r.live(13));
}

TEST(Eviction, RandomEvictionKeepsUsedMemoryWithinTheBudget) {
    std::vector<Request> requests;
    for (std::uint32_t k = 0; k < 2000; ++k)
        requests.push_back(set(k, k / 100));
    EvictionOptions options = unbounded(EvictionPolicy::AllKeysRandom);
    options.maxmemoryBytes = usedAfter(std::vector<Request>(requests.begin(), requests.begin() + 500));
    BudgetedReplay r(options);
    for (const auto& request : requests) {
        r.apply({ request });
        // After each write the server may be over by that write; the next command brings it back.
        EXPECT_LE(r.budget.usedBytes(), options.maxmemoryBytes + 256);
    }
    EXPECT_GT(r.replay.summary().evictedKeys, 1000u);
    EXPECT_EQ(r.replay.summary().liveKeys + r.replay.summary().evictedKeys, 2000u);
}

TEST(Eviction, TheBaseCountsAgainstTheBudget) {
    std::vector<Request> requests;
    for (std::uint32_t k = 0; k < 200; ++k)
        requests.push_back(set(k, 0));
    requests.push_back(get(0, 1));
    EvictionOptions options = unbounded();
    options.maxmemoryBytes = usedAfter(requests);
    BudgetedReplay all(options);
    all.apply(requests);
    EXPECT_EQ(all.replay.summary().evictedKeys, 0u);
    options.baseBytes = 10000; // the server's own memory: some 70 keys' worth less room
    BudgetedReplay based(options);
    based.apply(requests);
    EXPECT_GT(based.replay.summary().evictedKeys, 50u);
    EXPECT_LE(based.budget.usedBytes(), options.maxmemoryBytes);
}

TEST(Eviction, MissesAreFilledAfterEachBatch) {
    // Key 7 is read twice in one batch of four while absent: both reads miss and two SETs fill it, after
    // the batch (a client pipelining its GETs); the read in the next batch hits.
    std::vector<Request> requests { set(1, 0), get(7, 0), get(7, 0), get(1, 0), get(7, 1) };
    requests[1].valueBytes = 40; // the trace gives the size with the read
    requests[2].valueBytes = 40;
    BudgetedReplay r(unbounded(), 4);
    r.apply(requests);
    EXPECT_EQ(r.replay.summary().fills, 2u);
    EXPECT_EQ(r.replay.summary().getMisses, 2u);
    EXPECT_EQ(r.replay.summary().getHits, 2u);
    EXPECT_TRUE(r.live(7));
    EXPECT_EQ(r.replay.keys()[7].valueBytes, 40u);
    // A key never written, read without a size, cannot be filled: counted.
    BudgetedReplay unsized(unbounded(), 1);
    unsized.apply({ get(3, 0) });
    EXPECT_EQ(unsized.replay.summary().fills, 0u);
    EXPECT_EQ(unsized.replay.summary().unfillableMisses, 1u);
}

TEST(Eviction, AKeyWhoseWriteWasRefusedIsFilledWithItsSize) {
    // noeviction at a budget of ten keys: key 15's SET is refused, so the server never held it. The client
    // sent its value all the same and fills the key's misses with it: the fill is a write like any other,
    // refused while the server is over its limit and stored once a DEL has made room (as a look-aside
    // client's fills are; the model had counted such misses unfillable and never wrote them).
    std::vector<Request> ten, eleven;
    for (std::uint32_t k = 0; k < 10; ++k)
        ten.push_back(set(k, 0));
    eleven = ten;
    eleven.push_back(set(10, 0));
    std::vector<Request> requests = eleven;
    requests.push_back(set(15, 0)); // refused: the server is over its limit
    requests.push_back(get(15, 1)); // a miss, filled after the batch: refused again
    Request del = requests.front();
    del.op = Op::Delete;
    del.keyId = 0;
    del.valueBytes = 0;
    requests.push_back(del); // back to ten keys: room for one more
    requests.push_back(get(15, 2)); // a miss, filled: stored
    BudgetedReplay r(between(ten, eleven, EvictionPolicy::NoEviction), 1);
    r.apply(requests);
    EXPECT_EQ(r.replay.summary().unfillableMisses, 0u);
    EXPECT_EQ(r.replay.summary().fills, 2u);
    EXPECT_TRUE(r.live(15));
    EXPECT_EQ(r.replay.keys()[15].valueBytes, 96u);
    EXPECT_EQ(r.replay.summary().refusedWrites, 2u); // key 15's SET and its first fill
}

TEST(Eviction, ExactLruWithRawSizesIsACacheSimulatorsLru) {
    // Raw sizes: each key is 16 + 96 bytes, nothing else counts; a budget of five keys holds the five
    // most recently used, whatever the order they were written in.
    EvictionOptions options = unbounded(EvictionPolicy::ExactLru);
    options.rawSizes = true;
    options.maxmemoryBytes = 5 * 112;
    BudgetedReplay r(options);
    std::vector<Request> requests;
    for (std::uint32_t k = 0; k < 8; ++k)
        requests.push_back(set(k, 0));
    requests.push_back(get(4, 0)); // 4 is recent again: 3, 5, 6, 7 and 4 are the five most recent
    requests.push_back(set(8, 0));
    requests.push_back(get(0, 0));
    r.apply(requests);
    for (std::uint32_t k : { 4u, 5u, 6u, 7u, 8u })
        EXPECT_TRUE(r.live(k)) << k;
    for (std::uint32_t k : { 0u, 1u, 2u, 3u })
        EXPECT_FALSE(r.live(k)) << k;
    EXPECT_EQ(r.budget.usedBytes(), 5u * 112);
    EXPECT_FALSE(serverHasPolicy(EvictionPolicy::ExactLru));
    EXPECT_TRUE(serverHasPolicy(EvictionPolicy::AllKeysLru));
}

class RefusingGate final : public IndexGrowthGate {
public:
    bool allowsAllocation(std::uint64_t) override { return false; }
};

TEST(Eviction, AServerAtItsLimitDoesNotGrowItsTables) {
    // Valkey hashtable.c resize(): a refused growth waits until the table is 500% full.
    RefusingGate gate;
    IndexTableModel valkey(IndexKind::ValkeyHashtable);
    for (int i = 0; i < 100; ++i)
        valkey.insert();
    valkey.settle();
    const auto buckets = valkey.buckets();
    valkey.setGrowthGate(&gate);
    while ((valkey.entries() + 1) * 100 < buckets * 7 * 500) // the insert that reaches 500% grows it
        valkey.insert();
    EXPECT_EQ(valkey.buckets(), buckets);
    EXPECT_EQ(valkey.targetBuckets(), 0u);
    valkey.insert();
    EXPECT_GT(valkey.targetBuckets(), buckets);
    // Redis dict.c dictExpandAllowed: until the load passes 1.618.
    IndexTableModel redis(IndexKind::RedisDict);
    for (int i = 0; i < 64; ++i)
        redis.insert();
    redis.settle();
    const auto slots = redis.buckets();
    redis.setGrowthGate(&gate);
    while (static_cast<double>(redis.entries()) / static_cast<double>(slots) <= 1.618)
        redis.insert();
    EXPECT_EQ(redis.buckets(), slots);
    EXPECT_EQ(redis.targetBuckets(), 0u);
    redis.insert();
    EXPECT_GT(redis.targetBuckets(), slots);
}

TEST(Eviction, ASweepKeepsEachThresholdWithinTheBudgetOnItsOwn) {
    // 96-byte values embed at 128 and not at 64: each key costs less at 128, so the same budget holds
    // more keys there and hits more.
    auto generated = makeGeneratorConfig(20000, 200000, "16", "96", 0, 0, 1.0, 0, "zipf:0.99", 3);
    ASSERT_TRUE(generated);
    SyntheticTrace probe(*generated);
    SimulationConfig config { *parseLayout("valkey-9.1"), *parseAllocator("jemalloc:quantum=8,page=4096"),
        { 64, 128 } };
    config.eviction = *makeEvictionOptions("1mb", "allkeys-lru", 5, 10, 1);
    config.fillOnMiss = 1;
    auto result = simulate(config, probe);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(result->points.size(), 2u);
    const auto& at64 = result->points[0];
    const auto& at128 = result->points[1];
    ASSERT_TRUE(at64.budget && at128.budget);
    EXPECT_LT(at64.keys, at128.keys);
    EXPECT_LT(at64.budget->hitRatio(), at128.budget->hitRatio());
    EXPECT_GT(at64.budget->evictedKeys, at128.budget->evictedKeys);
    for (const auto& p : result->points) {
        EXPECT_EQ(p.budget->getHits + p.budget->getMisses, 200000u);
        EXPECT_EQ(p.budget->fills, p.budget->getMisses);
        EXPECT_LE(p.budget->usedBytes, (1u << 20) + 256);
    }
    EXPECT_EQ(result->budgetPolicy, "allkeys-lru, 5 samples");
    // A curve: each threshold at each budget, by threshold then budget; more memory, more hits.
    config.budgets = { 512u << 10, 1u << 20, 2u << 20 };
    SyntheticTrace curveTrace(*generated);
    auto curve = simulate(config, curveTrace);
    ASSERT_TRUE(curve) << curve.error().describe();
    ASSERT_EQ(curve->points.size(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(curve->points[i].threshold, i < 3 ? 64u : 128u);
        EXPECT_EQ(curve->points[i].budget->maxmemoryBytes, config.budgets[i % 3]);
        if (i % 3)
            EXPECT_GT(curve->points[i].budget->hitRatio(), curve->points[i - 1].budget->hitRatio());
    }
    EXPECT_EQ(curve->points[1].budget->getHits, at64.budget->getHits); // the same replay as the single budget's
    config.budgets.clear();
    // With the slab model beside it: refused, with the reason.
    config.slabs = SlabModelOptions {};
    SyntheticTrace again(*generated);
    auto refused = simulate(config, again);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().field, field::kMaxmemory);
}

TEST(Eviction, ASpatialSampleKeepsEveryRequestOfItsKeysAndTheirShare) {
    SpatialKeySample sample(0.1, 7);
    std::vector<Request> batch;
    for (std::uint32_t k = 0; k < 100000; ++k)
        for (int twice = 0; twice < 2; ++twice) {
            Request r = get(k, 0);
            batch.push_back(r);
        }
    std::vector<Request> kept;
    sample.filter(batch, kept);
    EXPECT_NEAR(double(sample.sampledKeys()), 10000.0, 400.0); // 10% of the keys, within 4 standard deviations
    EXPECT_EQ(kept.size(), 2 * sample.sampledKeys()) << "a sampled key keeps both its requests";
    for (std::size_t i = 0; i < kept.size(); ++i)
        EXPECT_LT(kept[i].keyId, sample.sampledKeys()) << "renumbered densely";
    SpatialKeySample again(0.1, 7);
    std::vector<Request> keptAgain;
    again.filter(batch, keptAgain);
    EXPECT_EQ(keptAgain.size(), kept.size()) << "the same salt, the same keys";
    SpatialKeySample other(0.1, 8);
    std::vector<Request> keptOther;
    other.filter(batch, keptOther);
    EXPECT_NE(keptOther.size(), kept.size()) << "another salt, other keys";
}

TEST(Eviction, ASampledCurveFollowsTheFullReplayWithinItsStatedError) {
    // 200,000 keys: a 5% sample holds 10,000 of them, as many as the docs ask for.
    auto generated = makeGeneratorConfig(200000, 1000000, "16", "96", 0, 0, 1.0, 0, "zipf:0.99", 3);
    ASSERT_TRUE(generated);
    SimulationConfig config { *parseLayout("valkey-9.1"), *parseAllocator("jemalloc:quantum=8,page=4096"), { 64 } };
    config.eviction = *makeEvictionOptions("2mb", "allkeys-lru", 5, 10, 1);
    config.fillOnMiss = 64;
    config.budgets = { 4u << 20, 8u << 20, 16u << 20 };
    SyntheticTrace fullTrace(*generated);
    auto full = simulate(config, fullTrace);
    ASSERT_TRUE(full) << full.error().describe();
    config.budgetSampleRate = 0.05;
    SyntheticTrace sampledTrace(*generated);
    auto sampled = simulate(config, sampledTrace);
    ASSERT_TRUE(sampled) << sampled.error().describe();
    ASSERT_EQ(sampled->points.size(), 3u);
    EXPECT_GT(sampled->budgetSampledKeys, 8000u);
    EXPECT_GT(sampled->budgetSamplingError, 0.0);
    for (std::size_t i = 0; i < 3; ++i) {
        const double error = sampled->points[i].budget->hitRatio() - full->points[i].budget->hitRatio();
        // Within a point, and within three times the error the run states.
        EXPECT_LT(std::abs(error), 0.01) << i;
        EXPECT_LT(std::abs(error), 3 * sampled->budgetSamplingError + 0.002) << i;
        EXPECT_NEAR(double(sampled->points[i].keys), double(full->points[i].keys), 0.05 * double(full->points[i].keys))
            << "keys held, scaled to the whole trace";
    }
    // memcached's pages do not scale down with a sample.
    SimulationConfig memcached { *parseLayout("memcached-1.6"), *parseAllocator("memcached:min=48,factor=1.25"), {} };
    memcached.eviction = *makeEvictionOptions("8mb", "noeviction", 5, 10, 1);
    memcached.budgetSampleRate = 0.1;
    SyntheticTrace memcachedTrace(*generated);
    auto refused = simulate(memcached, memcachedTrace);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().field, field::kSampleRate);
}

} // namespace

// Collection keys under a budget: each counts as the collection model's allocations, a command's check
// comes before its first element (processCommand -> performEvictions), and the trace goes on naming keys the
// budget evicted: an HDEL of one of their fields changes nothing, an HSET of one makes the key again, as the
// server does. A budget of a third of the keyspace holds a third or so of its bytes, and the keys it keeps
// are what the points count.
TEST(Eviction, CollectionKeysAreEvictedWholeAndMadeAgainByTheirWrites) {
    auto generated = makeGeneratorConfig(600, 6000, "16", "uniform:1:60", 0, 0, 0.3, 0.3, "uniform", 5);
    ASSERT_TRUE(generated);
    ASSERT_TRUE(setCollectionElements(*generated, CollectionKind::Hash, "uniform:1:200", "uniform:1:20"));
    SimulationConfig config { *parseLayout("valkey-9.1"), *parseAllocator("jemalloc:quantum=8,page=4096"), {} };
    SyntheticTrace unbounded(*generated);
    auto all = simulate(config, unbounded);
    ASSERT_TRUE(all) << all.error().describe();
    const std::uint64_t everything = all->points.at(0).usableBytes;
    const std::uint64_t budget = everything / 3;
    config.eviction = *makeEvictionOptions(std::to_string(budget), "allkeys-random", 5, 10, 1);
    SyntheticTrace trace(*generated);
    auto result = simulate(config, trace);
    ASSERT_TRUE(result) << result.error().describe();
    const ThresholdPoint& p = result->points.at(0);
    ASSERT_TRUE(p.budget);
    EXPECT_GT(p.budget->evictedKeys, 300u);
    EXPECT_EQ(p.budget->refusedWrites, 0u);
    // Over the budget by at most the last command's growth (an HSET of up to 200 fields).
    EXPECT_LE(p.budget->usedBytes, budget + 64 * 1024);
    EXPECT_GT(p.budget->usedBytes, budget / 2);
    // The point's keys and bytes are the ones the budget kept: the collection rows and the index.
    std::uint64_t rows = 0, keys = 0;
    for (const CollectionUsage& c : result->collections) {
        rows += static_cast<std::uint64_t>(std::llround(c.usableBytes));
        keys += c.keys;
    }
    EXPECT_EQ(p.keys, keys);
    EXPECT_EQ(p.keys, result->trace.liveKeys);
    EXPECT_NEAR(static_cast<double>(p.usableBytes), static_cast<double>(rows + p.indexBytes), 16.0);
    EXPECT_NEAR(static_cast<double>(p.budget->usedBytes), static_cast<double>(p.usableBytes), 64.0);
    // Keys evicted then written again: more keys made than the trace's 600.
    EXPECT_GT(p.budget->evictedKeys + p.keys, 600u);
}
