// SPDX-License-Identifier: MIT
#include "cache_evaluation.h"

#include "threshold_pass.h"

#include "layoutlab/trace/random.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

namespace layoutlab {

namespace cache_detail {

std::uint64_t ThresholdPass::run(std::size_t t, ThresholdPoint& point) {
    buildPlans(t);
    m_cache.clear();
    // The last level is warmed by the last keys that take twice its bytes; the inner levels, which those
    // would flush many times over, only by the last keys that take twice the next-to-last's.
    placeKeys(firstWarmKey(warmKeyCount(point.keys, point.usableBytesPerKey, m_lastLevelBytes)),
        firstWarmKey(warmKeyCount(point.keys, point.usableBytesPerKey, m_innerLevelBytes)));
    const std::uint64_t gets = replay();
    point.missesPerGet.clear();
    const auto& misses = m_cache.misses();
    for (std::size_t level = 0; level < misses.size(); ++level) {
        // A sampled last level's misses stand for its other sets' too.
        const double scale = level + 1 == misses.size() ? m_cache.lastLevelSampling() : 1.0;
        point.missesPerGet.push_back(
            gets ? scale * static_cast<double>(misses[level]) / static_cast<double>(gets) : 0.0);
    }
    return gets;
}

void ThresholdPass::visit(const ChainVisit& v) {
    const SampledKey& other = m_sampled[v.sampledSlot];
    if (other.reads == 0)
        return;
    const ReadStep& entry = m_readSteps[v.expires ? other.firstRead + other.reads - 1 : other.firstRead];
    touch(m_cache, entry.address, entry.bytes);
    // dictSdsKeyCompare reads the candidate's length (sdslen: its header) and compares the bytes only when
    // the lengths are equal; the reference engine reads the key's tag there. Redis's key is an sds of its
    // own; Valkey 8.0's sits in the keyspace entry (createEmbeddedEntry), whose read covers it.
    if (other.keyRead < other.reads)
        touch(m_cache, m_readSteps[other.firstRead + other.keyRead].address, 1);
}

inline void ThresholdPass::prefetchGet(std::size_t i) {
    if (m_sample.sampleSlots[i] == UINT32_MAX)
        return;
    const SampledKey& key = m_sampled[m_sample.sampleSlots[i]];
    m_cache.prefetch(kIndexBase + m_index.buckets.of(mix(m_sample.sample[i])) * m_index.slotBytes);
    for (std::uint32_t r = key.firstRead; r < key.firstRead + key.reads; ++r)
        m_cache.prefetch(m_readSteps[r].address);
}

void ThresholdPass::replayGet(std::uint32_t slot, std::uint64_t id) {
    const SampledKey& key = m_sampled[slot];
    const std::uint64_t hash = mix(id);
    const std::uint64_t slotBytes = m_index.slotBytes;
    touchBucket(m_index.buckets.of(hash), key.childDepth);
    const auto& walks = m_index.walks;
    const bool walked = !walks.start.empty();
    if (walked)
        for (std::uint32_t w = walks.start[slot]; w < walks.start[slot + 1]; ++w)
            if (!walks.visits[w].expires)
                visit(walks.visits[w]);
    if (key.indexLines > 1 || m_index.lookupExpiresAlways)
        touch(m_cache, kExpiresIndexBase + m_index.expiresBuckets.of(mix(hash)) * slotBytes, slotBytes);
    if (walked)
        for (std::uint32_t w = walks.start[slot]; w < walks.start[slot + 1]; ++w)
            if (walks.visits[w].expires)
                visit(walks.visits[w]);
    for (std::uint32_t r = key.firstRead; r < key.firstRead + key.reads; ++r) {
        const ReadStep& read = m_readSteps[r];
        for (std::uint32_t c = 0; c < read.count; ++c)
            touch(m_cache, read.address + c * read.stride, read.bytes);
    }
}

std::uint64_t ThresholdPass::replay() {
    const auto& sample = m_sample.sample;
    const std::size_t warmup = sample.size() / kCacheWarmupDivisor;
    std::uint64_t gets = 0;
    for (std::size_t i = 0; i < sample.size(); ++i) {
        if (i + kPrefetchGets < sample.size())
            prefetchGet(i + kPrefetchGets);
        if (i == warmup)
            m_cache.resetCounters();
        const std::uint32_t slot = m_sample.sampleSlots[i];
        if (slot == UINT32_MAX || !m_sampled[slot].stored)
            continue; // deleted before the end of the trace, or refused by the engine
        replayGet(slot, sample[i]);
        if (i >= warmup)
            ++gets;
    }
    return gets;
}

} // namespace cache_detail

using namespace cache_detail;

namespace {

constexpr std::size_t kMaxWorkers = 4; // each holds a cache hierarchy (tens of MB for a large LLC)

} // namespace

Expected<std::uint64_t> evaluateCache(const SimulationConfig& config, const std::vector<std::uint32_t>& thresholds,
    const KeyspaceReplay& replay, const std::vector<ShapeHistogram::Entry>& keyspace,
    std::vector<ThresholdPoint>& points, ProgressSink* progress, std::stop_token stop) {
    SampleIndex sample = indexSample(config, replay, keyspace);
    const IndexLookups index = indexLookups(config, replay, sample);
    const ShapeVariants variants
        = describeVariants(*config.layout, *config.allocator, keyspace, sample.shapeByRank, thresholds);
    std::map<std::uint64_t, AllocatorClass> classInfo;
    for (const auto& c : config.allocator->classes())
        classInfo[c.size] = c;

    // A threshold at which no shape switches places every key as the threshold below it does, so it gets
    // the same misses: only the first threshold and those where some shape switches are evaluated.
    std::vector<bool> someShapeSwitches(thresholds.size(), false);
    for (const auto at : variants.switchAt)
        if (at < thresholds.size())
            someShapeSwitches[at] = true;
    std::vector<std::size_t> evaluated;
    for (std::size_t t = 0; t < thresholds.size(); ++t)
        if (t == 0 || someShapeSwitches[t])
            evaluated.push_back(t);

    // Thresholds are independent: share them among the cores, each worker with its own cache state.
    std::atomic<std::size_t> next { 0 }, finished { 0 };
    std::atomic<std::uint64_t> counted { 0 };
    // Progress is the share of thresholds evaluated, reported by the calling thread only (a sink need not
    // be thread-safe).
    auto worker = [&](bool reports) {
        ThresholdPass pass(config, sample, index, variants, classInfo);
        for (std::size_t k = next++; k < evaluated.size(); k = next++) {
            if (stop.stop_requested())
                return;
            counted = pass.run(evaluated[k], points[evaluated[k]]);
            const std::size_t n = ++finished;
            if (reports && progress)
                progress->progress(static_cast<double>(n) / static_cast<double>(evaluated.size()), 0);
        }
    };
    const std::size_t workers = std::clamp<std::size_t>(
        std::thread::hardware_concurrency(), 1, std::min<std::size_t>(kMaxWorkers, evaluated.size()));
    {
        std::vector<std::jthread> pool;
        for (std::size_t i = 1; i < workers; ++i)
            pool.emplace_back(worker, false);
        worker(true);
    }
    if (stop.stop_requested())
        return cancelledError();
    for (std::size_t t = 1; t < thresholds.size(); ++t)
        if (!someShapeSwitches[t])
            points[t].missesPerGet = points[t - 1].missesPerGet;
    return counted.load();
}

} // namespace layoutlab
