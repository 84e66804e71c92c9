// SPDX-License-Identifier: MIT
#include "budget_simulation.h"

#include "layoutlab/resources.h"
#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/key_sample.h"
#include "layoutlab/sim/memcached_eviction.h"
#include "stack_distance_curve.h"
#include "threshold_evaluation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <future>
#include <map>

namespace layoutlab {

namespace {
constexpr std::size_t kBatchRequests = 4096;
// A sampled replay sees `rate` of each batch: larger batches give it runs of requests long enough to keep
// its state in the caches while it works (measured: 65,536 takes a 100-budget curve from 5.8 s to ...).
constexpr std::size_t kSampledBatchRequests = 65536;
// Sampled runs replay the sampled keys as two independent samples of half the rate each: each point is
// their pooled figure, and half the largest difference between the two is the sampling error the result
// states.
constexpr std::size_t kSamples = 2;
constexpr std::uint64_t kSampleSalts[kSamples] = { 0x5EED0001, 0x5EED0002 };

// How many samples a run replays (1: every key, no sampling).
std::size_t samplesOf(const SimulationConfig& config) {
    return config.budgetSampleRate < 1.0 ? kSamples : 1;
}

// One replay: a threshold, a budget, and which sample of the keys it sees (0 when not sampling).
struct BudgetCell {
    std::uint32_t threshold = 0;
    std::uint64_t budget = 0;
    std::size_t sample = 0;
};

Status checkBudgetConfig(const SimulationConfig& config) {
    if (config.slabs || config.cache || config.timelineSamples)
        return usageError("a memory budget is not modelled together with the slab model, the cache model or a "
                          "timeline (yet): run them separately",
            field::kMaxmemory);
    const auto* slabs = dynamic_cast<const MemcachedSlabModel*>(config.allocator.get());
    if ((config.layout->indexPolicy().kind == IndexKind::MemcachedAssoc) != (slabs != nullptr))
        return usageError(fmt::format("layout '{}' and allocator '{}' are not one engine's: a memory budget needs "
                                      "both to be memcached's, or neither",
                              config.layout->spec(), config.allocator->spec()),
            field::kMaxmemory);
    const double rate = config.budgetSampleRate;
    if (!(rate > 0.0 && rate <= 1.0))
        return usageError(fmt::format("a sample rate is a fraction of the keys, above 0 and at most 1, not {}", rate),
            field::kSampleRate);
    if (rate < 1.0 && slabs)
        return usageError("memcached's budget is whole 1 MiB pages, which a sample of the keys cannot scale down: no "
                          "sampling with --memory-limit",
            field::kSampleRate);
    return Ok {};
}

// A sampled replay's figures as the whole trace's: counts and bytes over the sample's share.
void scaleCounts(ThresholdPoint& p, double factor) {
    auto scale = [factor](std::uint64_t& v) { v = static_cast<std::uint64_t>(std::llround(double(v) * factor)); };
    for (std::uint64_t* v : { &p.keys, &p.unstorableKeys, &p.payloadBytes, &p.requestedBytes, &p.usableBytes,
             &p.internalFragmentationBytes, &p.indexBytes, &p.allocations, &p.pointerBytes, &p.embeddedKeys })
        scale(*v);
    for (SizeClassUsage& c : p.sizeClasses)
        for (std::uint64_t* v : { &c.allocations, &c.requestedBytes, &c.usableBytes, &c.payloadBytes, &c.slabs })
            scale(*v);
    if (p.budget)
        for (std::uint64_t* v : { &p.budget->getHits, &p.budget->getMisses, &p.budget->fills, &p.budget->evictedKeys,
                 &p.budget->refusedWrites, &p.budget->usedBytes })
            scale(*v);
}

BudgetUsage usageOf(const KeyspaceReplay& replay, KeyspaceBudget& budget, std::uint64_t maxmemory) {
    BudgetUsage usage;
    usage.maxmemoryBytes = maxmemory;
    usage.getHits = replay.summary().getHits;
    usage.getMisses = replay.summary().getMisses;
    usage.fills = replay.summary().fills;
    usage.evictedKeys = replay.summary().evictedKeys;
    usage.refusedWrites = replay.summary().refusedWrites;
    usage.usedBytes = budget.usedBytes();
    return usage;
}

// Every replay of a budgeted run, fed from one pass over the trace.
class BudgetReplays {
public:
    BudgetReplays(const SimulationConfig& config, const std::vector<std::uint32_t>& thresholds,
        const std::vector<std::uint64_t>& budgets, std::uint64_t keysSeen);
    // The pass: every replay its requests (a sample's only its keys'), half of them on a second core.
    Status run(TraceReader& trace, ProgressSink* progress, std::stop_token stop);
    // The points, by threshold then budget; a sampled point pools its samples, scaled to the whole trace.
    Expected<SimulationResult> results(const TraceReader& trace, std::stop_token stop);

private:
    Status applyHalf(std::span<const Request> batch, std::size_t from, std::size_t to);
    // Replay `index`'s usage; a sample's GETs made up to its share of the trace's.
    BudgetUsage usageAt(std::size_t index, const std::vector<double>& unboundedHitRatio);

    const SimulationConfig& m_config;
    std::size_t m_samples;
    double m_each; // each sample's share of the keys: together, the rate
    std::vector<BudgetCell> m_cells; // by sample, then threshold, then budget
    std::size_t m_perSample;
    std::vector<std::unique_ptr<KeyspaceReplay>> m_replays;
    // Each replay's collection keys (m_replays' first, then m_unbounded's).
    std::vector<std::unique_ptr<CollectionReplay>> m_collections;
    std::vector<std::unique_ptr<KeyspaceBudget>> m_evictors;
    std::map<std::pair<bool, std::uint32_t>, ShapeHistogram> m_shapeBytes;
    std::vector<SpatialKeySample> m_keySamples;
    // Per sample, a replay with room for every key: the hit ratio the sample's GETs reach without a budget,
    // at which the GETs it holds above or below its share are counted (usageAt).
    std::vector<std::unique_ptr<KeyspaceReplay>> m_unbounded;
    std::vector<std::vector<Request>> m_sampled;
    std::vector<std::uint64_t> m_sampledDone;
    std::uint64_t m_allGets = 0; // the trace's
    std::uint64_t m_done = 0;
};

BudgetReplays::BudgetReplays(const SimulationConfig& config, const std::vector<std::uint32_t>& thresholds,
    const std::vector<std::uint64_t>& budgets, std::uint64_t keysSeen)
    : m_config(config)
    , m_samples(samplesOf(config))
    , m_each(config.budgetSampleRate / double(m_samples)) {
    // With two samples each thread takes one sample's replays (and filters the trace for it).
    for (std::size_t s = 0; s < m_samples; ++s)
        for (std::uint32_t t : thresholds)
            for (std::uint64_t b : budgets)
                m_cells.push_back({ t, b, s });
    m_perSample = m_cells.size() / m_samples;
    const std::size_t half = m_cells.size() / 2;
    const EvictionOptions& budget = *config.eviction;
    // Fills after every N of the trace's requests are after every rate x N of a sample's.
    const std::uint32_t fillBatch = config.fillOnMiss == 0
        ? 0
        : std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::llround(double(config.fillOnMiss) * m_each)));
    auto withCollections = [&](std::unique_ptr<KeyspaceReplay> replay) {
        m_collections.push_back(
            std::make_unique<CollectionReplay>(*config.layout, *config.allocator, config.collectionLimits));
        m_collections.back()->setElementsMayBeGone(true);
        replay->setCollections(m_collections.back().get());
        return replay;
    };
    for (const BudgetCell& cell : m_cells) {
        m_replays.push_back(withCollections(budgetReplayAt(config, cell.threshold, keysSeen)));
        EvictionOptions options = budget;
        // A sample of the keys under the same share of the budget (SHARDS), the server's own memory included.
        options.maxmemoryBytes = static_cast<std::uint64_t>(std::llround(double(cell.budget) * m_each));
        options.baseBytes = static_cast<std::uint64_t>(std::llround(double(budget.baseBytes) * m_each));
        m_evictors.push_back(makeBudget(config, std::move(options), cell.threshold, *m_replays.back()));
        // Each thread's budgets of one threshold share what each shape costs there.
        if (auto* server = dynamic_cast<ServerEviction*>(m_evictors.back().get()))
            server->shareShapeBytes(m_shapeBytes[{ m_evictors.size() - 1 >= half && half > 0, cell.threshold }]);
        m_replays.back()->setBudget(m_evictors.back().get());
        m_replays.back()->setFillOnMiss(fillBatch);
    }
    for (std::size_t s = 0; s < m_samples && m_samples > 1; ++s) {
        m_keySamples.emplace_back(m_each, kSampleSalts[s]);
        m_unbounded.push_back(withCollections(budgetReplayAt(config, thresholds.front(), keysSeen)));
        m_unbounded.back()->setFillOnMiss(fillBatch);
    }
    m_sampled.resize(m_samples);
    m_sampledDone.assign(m_samples, 0);
}

Status BudgetReplays::applyHalf(std::span<const Request> batch, std::size_t from, std::size_t to) {
    if (m_samples > 1) { // this half is one sample's
        const std::size_t s = m_cells[from].sample;
        m_keySamples[s].filter(batch, m_sampled[s]);
        if (auto ok = m_unbounded[s]->apply(m_sampled[s], m_sampledDone[s]); !ok)
            return ok;
    }
    for (std::size_t i = from; i < to; ++i) {
        const std::size_t s = m_cells[i].sample;
        if (auto ok
            = m_samples > 1 ? m_replays[i]->apply(m_sampled[s], m_sampledDone[s]) : m_replays[i]->apply(batch, m_done);
            !ok)
            return ok;
    }
    return Ok {};
}

Status BudgetReplays::run(TraceReader& trace, ProgressSink* progress, std::stop_token stop) {
    const std::uint64_t total = trace.totalRequests();
    const std::size_t half = m_replays.size() / 2;
    const std::size_t batchRequests = m_samples > 1 ? kSampledBatchRequests : kBatchRequests;
    auto replayed = forEachBatch(trace, batchRequests, stop, [&](std::span<const Request> batch) -> Status {
        if (m_samples > 1)
            m_allGets += static_cast<std::uint64_t>(
                std::count_if(batch.begin(), batch.end(), [](const Request& r) { return r.op == Op::Get; }));
        std::future<Status> other;
        if (half > 0)
            other = std::async(std::launch::async, [&] { return applyHalf(batch, half, m_replays.size()); });
        Status mine = applyHalf(batch, 0, half > 0 ? half : m_replays.size());
        Status theirs = half > 0 ? other.get() : Status(Ok {});
        if (!mine || !theirs) {
            Error e = !mine ? mine.error() : theirs.error();
            e.file = trace.name();
            return e;
        }
        m_done += batch.size();
        for (std::size_t s = 0; s < m_samples && m_samples > 1; ++s)
            m_sampledDone[s] += m_sampled[s].size();
        if (progress && (m_done / batchRequests) % (m_samples > 1 ? 1 : 16) == 0)
            progress->progress(total ? static_cast<double>(m_done) / static_cast<double>(total) : -1.0, m_done);
        return Ok {};
    });
    if (progress && replayed)
        progress->progress(1.0, m_done);
    return replayed;
}

BudgetUsage BudgetReplays::usageAt(std::size_t index, const std::vector<double>& unboundedHitRatio) {
    KeyspaceReplay& replay = *m_replays[index];
    replay.finish(); // fills still pending at the end are made first
    BudgetUsage usage = usageOf(replay, *m_evictors[index], m_cells[index].budget);
    if (m_samples > 1) {
        // A sample holds more or fewer GETs than its share of the trace's, mostly by holding a hot key or not.
        // As SHARDS_adj (Waldspurger et al., section 3.3) the difference is made up to the share, counted at
        // the hit ratio the sample reaches with room for every key (SHARDS_adj counts it all as hits; a hot
        // key of a trace that is not a look-aside cache's can miss as often).
        const double expected = double(m_allGets) * m_each;
        const double got = double(usage.getHits + usage.getMisses);
        const double hits
            = std::clamp(double(usage.getHits) + (expected - got) * unboundedHitRatio[m_cells[index].sample], 0.0,
                std::max(expected, 0.0));
        usage.getHits = static_cast<std::uint64_t>(std::llround(hits));
        usage.getMisses = static_cast<std::uint64_t>(std::llround(std::max(expected - hits, 0.0)));
    }
    return usage;
}

Expected<SimulationResult> BudgetReplays::results(const TraceReader& trace, std::stop_token stop) {
    SimulationResult result = resultHeader(m_config, trace);
    result.budgetPolicy = budgetPolicyText(m_config);
    result.budgetBaseBytes = m_config.eviction->baseBytes;
    result.budgetSampleRate = m_config.budgetSampleRate;
    std::vector<double> unboundedHitRatio;
    for (std::size_t s = 0; s < m_unbounded.size(); ++s) {
        m_unbounded[s]->finish();
        const auto& t = m_unbounded[s]->summary();
        unboundedHitRatio.push_back(
            t.getHits + t.getMisses ? double(t.getHits) / double(t.getHits + t.getMisses) : 1.0);
        result.budgetSampledKeys += m_keySamples[s].sampledKeys();
    }
    constexpr std::array<std::uint64_t BudgetUsage::*, 6> kCounts { &BudgetUsage::getHits, &BudgetUsage::getMisses,
        &BudgetUsage::fills, &BudgetUsage::evictedKeys, &BudgetUsage::refusedWrites, &BudgetUsage::usedBytes };
    for (std::size_t i = 0; i < m_perSample; ++i) {
        BudgetUsage pooled;
        std::vector<double> hitRatios;
        for (std::size_t s = 0; s < m_samples; ++s) {
            const BudgetUsage usage = usageAt(s * m_perSample + i, unboundedHitRatio);
            hitRatios.push_back(usage.hitRatio());
            for (auto field : kCounts)
                pooled.*field += usage.*field;
        }
        pooled.maxmemoryBytes = m_cells[i].budget;
        // The first replay describes the trace and the index tables in the result.
        SimulationResult scratch;
        SimulationResult& described = i == 0 ? result : scratch;
        described.trace = m_replays[i]->summary();
        auto points = evaluateReplay(m_config, { m_cells[i].threshold }, *m_replays[i], described, stop);
        if (!points)
            return points.error();
        // The collection keys the budget left, at the point as in a run without one (the first sample's).
        const std::vector<CollectionUsage> collections = m_collections[i]->usage(m_replays[i]->keys());
        addCollections(*points, collections);
        if (i == 0)
            result.collections = collections;
        ThresholdPoint& point = points->front();
        point.budget = pooled;
        if (m_samples == 1)
            addHeldSlabs(point, m_evictors[i]->heldSlabs(), m_config.allocator->classes());
        if (m_samples > 1) {
            // The point's keyspace figures are the first sample's; the budget's counts are both samples'.
            scaleCounts(point, 1.0 / m_each);
            for (auto field : kCounts)
                (*point.budget).*field /= m_samples;
            result.budgetSamplingError
                = std::max(result.budgetSamplingError, std::abs(hitRatios[0] - hitRatios[1]) / 2);
        }
        result.points.push_back(std::move(point));
    }
    return result;
}

// The key ids each replay makes room for (a sample's: its share, and room for chance), once the memory of
// every replay's state is known to be there.
Expected<std::uint64_t> checkReplayMemory(
    const SimulationConfig& config, std::size_t thresholds, std::size_t budgets, const TraceReader& trace) {
    // The budget's bytes per key id (memcached's LRUs, or the server's eviction) beside the replay's.
    const bool memcached = dynamic_cast<const MemcachedSlabModel*>(config.allocator.get()) != nullptr;
    // A server's replay takes collection keys too: what an evicted one lost, by key id (collection_replay.h).
    const std::uint64_t budgetBytes = memcached
        ? MemcachedEviction::kStateBytesPerKey
        : ServerEviction::stateBytesPerKey(config.eviction->policy) + CollectionReplay::kLostBytesPerKey;
    const std::size_t samples = samplesOf(config);
    const double each = config.budgetSampleRate / double(samples);
    const std::uint64_t keyIds = std::min(trace.keyIdLimit(), KeyspaceReplay::kMaxKeyIds);
    const auto keysSeen = static_cast<std::uint64_t>(std::ceil(double(keyIds) * std::min(1.0, each * 1.2))) + 64;
    const std::uint64_t stateBytes = (sizeof(KeyState) + budgetBytes) * thresholds * budgets * samples;
    if (auto ok = checkMemory(keysSeen * stateBytes,
            fmt::format("replaying {} key ids under {} budgets at {} thresholds ({} bytes of state each)", keysSeen,
                budgets, thresholds, stateBytes));
        !ok) {
        Error e = ok.error();
        e.file = trace.name();
        return e;
    }
    return keysSeen;
}

} // namespace

std::unique_ptr<KeyspaceBudget> makeBudget(
    const SimulationConfig& config, EvictionOptions options, std::uint32_t threshold, KeyspaceReplay& replay) {
    if (const auto* slabs = dynamic_cast<const MemcachedSlabModel*>(config.allocator.get()))
        return std::make_unique<MemcachedEviction>(options, *config.layout, *slabs, threshold, replay);
    return std::make_unique<ServerEviction>(std::move(options), *config.layout, *config.allocator, threshold, replay);
}

std::string budgetPolicyText(const SimulationConfig& config) {
    const EvictionOptions& budget = *config.eviction;
    if (dynamic_cast<const MemcachedSlabModel*>(config.allocator.get()))
        return "memcached's segmented LRU per slab class";
    std::string text = budget.policy == EvictionPolicy::ExactLru
        ? std::string("exact-lru")
        : fmt::format("{}, {} samples", evictionPolicyName(budget.policy), budget.samples);
    if (budget.policy == EvictionPolicy::AllKeysLfu || budget.policy == EvictionPolicy::VolatileLfu)
        text += fmt::format(", lfu-log-factor {}, lfu-decay-time {}", budget.lfuLogFactor, budget.lfuDecayMinutes);
    if (budget.rawSizes)
        text += ", raw object sizes";
    return text;
}

std::unique_ptr<KeyspaceReplay> budgetReplayAt(
    const SimulationConfig& config, std::uint32_t threshold, std::uint64_t keysSeen) {
    auto replay = std::make_unique<KeyspaceReplay>(config.layout->indexPolicy(), keysSeen, 0,
        staleExpireRule(*config.layout, *config.allocator, { threshold }),
        StringRewriteRule(*config.layout, *config.allocator, threshold));
    replay->setCronOnClock(config.cronOnTraceClock);
    return replay;
}

Expected<SimulationResult> simulateWithBudget(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, TraceReader& trace, ProgressSink* progress, std::stop_token stop) {
    if (auto ok = checkBudgetConfig(config); !ok)
        return ok.error();
    const EvictionOptions& budget = *config.eviction;
    const std::vector<std::uint64_t> budgets
        = config.budgets.empty() ? std::vector<std::uint64_t> { budget.maxmemoryBytes } : config.budgets;
    if (budget.baseBytes >= budgets.front())
        return usageError(fmt::format("maxmemory {} bytes leaves nothing for keys: the server holds {} bytes before "
                                      "the trace",
                              budgets.front(), budget.baseBytes),
            field::kMaxmemory);
    // exact-lru over raw sizes takes every budget from one pass where the trace allows (its memory is checked
    // for the pass, not for the replays it spares); where it does not, the budgets are replayed from a second
    // reading of the trace.
    std::unique_ptr<TraceReader> again;
    std::string method = "a replay per budget";
    if (stackDistancesApply(config) && config.reopenTrace) {
        std::string declined;
        auto curve = simulateByStackDistance(config, thresholds, budgets, trace, progress, stop, declined);
        if (!curve)
            return curve.error();
        if (*curve)
            return std::move(**curve);
        auto reopened = config.reopenTrace();
        if (!reopened)
            return reopened.error();
        again = std::move(*reopened);
        method = fmt::format("a replay per budget (not stack distances: {})", declined);
    }
    TraceReader& source = again ? *again : trace;
    auto keysSeen = checkReplayMemory(config, thresholds.size(), budgets.size(), source);
    if (!keysSeen)
        return keysSeen.error();
    BudgetReplays run(config, thresholds, budgets, *keysSeen);
    if (auto ok = run.run(source, progress, stop); !ok)
        return ok.error();
    auto result = run.results(source, stop);
    if (result)
        result->budgetMethod = std::move(method);
    return result;
}

} // namespace layoutlab
