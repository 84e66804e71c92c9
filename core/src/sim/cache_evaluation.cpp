// SPDX-License-Identifier: MIT
#include "cache_evaluation.h"

#include "chain_walks.h"

#include "layoutlab/trace/random.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <thread>
#include <unordered_map>

namespace layoutlab {

namespace {

constexpr std::uint64_t kClassRegionSpacing = std::uint64_t { 1 } << 36; // each class's slabs in their own 64 GiB
constexpr std::uint64_t kIndexBase = std::uint64_t { 1 } << 46; // the keyspace index table, above every class
constexpr std::uint64_t kExpiresIndexBase = std::uint64_t { 1 } << 47; // the expires index table
// Every simulated address stays below 2^48 (CacheHierarchy::kMaxAddressBits).
constexpr std::size_t kPrefetchGets = 16; // how far ahead the replay prefetches the cache model's sets
constexpr std::size_t kMaxWorkers = 4; // each holds a cache hierarchy (tens of MB for a large LLC)

// Where an allocation class puts its regions.
struct ClassSlot {
    std::uint64_t usable = 0;
    std::uint64_t regionsPerSlab = 0; // 0: page-aligned extents (or heap chunks), one after another
    std::uint64_t slabBytes = 0;
    std::uint64_t baseOffset = 0;
    std::uint64_t stride = 0; // for extents and heap chunks
    std::uint64_t base = 0;

    std::uint64_t address(std::uint64_t region) const {
        if (regionsPerSlab) {
            // Region counts stay far below 2^32: a 32-bit division.
            const auto r = static_cast<std::uint32_t>(region);
            const auto perSlab = static_cast<std::uint32_t>(regionsPerSlab);
            return base + std::uint64_t { r / perSlab } * slabBytes + baseOffset
                + std::uint64_t { r % perSlab } * usable;
        }
        return base + baseOffset + region * stride;
    }
};

// What a GET of a shape needs beyond its placement steps (one per stored allocation, beside the steps'
// read bytes).
struct RankPlan {
    bool stored = true;
    std::uint8_t indexLines = 0;
};

// One allocation of a shape, as the placement pass sees it.
struct PlacementStep {
    std::uint32_t slot = 0;
    std::uint32_t count = 1;
};

// What a GET of one sampled key reads, resolved once its allocations are placed: the index lookups, then
// its reads (a run of readSteps), so the replay touches only this and the cache model.
struct SampledKey {
    std::uint32_t firstRead = 0;
    std::uint8_t reads = 0;
    std::uint8_t indexLines = 0;
    bool stored = false;
};

// One read of a sampled key: `bytes` from each of `count` regions, `stride` apart (a chunked item's
// chunks were placed as consecutive regions of their class).
struct ReadStep {
    std::uint64_t address = 0;
    std::uint64_t stride = 0;
    std::uint32_t count = 1;
    std::uint32_t bytes = 0;
};

void touch(CacheHierarchy& cache, std::uint64_t address, std::uint64_t bytes) {
    for (std::uint64_t line = address / kCacheLineBytes; line <= (address + bytes - 1) / kCacheLineBytes; ++line)
        cache.access(line * kCacheLineBytes);
}

} // namespace

Expected<std::uint64_t> evaluateCache(const SimulationConfig& config, const std::vector<std::uint32_t>& thresholds,
    const KeyspaceReplay& replay, const std::vector<ShapeHistogram::Entry>& keyspace,
    std::vector<ThresholdPoint>& points, std::stop_token stop) {
    const auto& layout = *config.layout;
    const auto& alloc = *config.allocator;
    const auto& keys = replay.keys();

    // The GETs to replay: the trace's last GET hits, or every live key once when the trace has none.
    std::vector<std::uint32_t> sample = replay.getSample();
    if (sample.empty())
        for (std::uint32_t id = 0; id < keys.size() && sample.size() < config.cacheSampleGets; ++id)
            if (keys[id].live())
                sample.push_back(id);
    // Shapes ranked by how many keys have them: the placement pass looks a plan up for every key, and
    // with the common shapes' plans first those lookups stay in the host's cache. Ranking only renames
    // shapes; slots are still created in keyspace order, so addresses do not change.
    std::vector<std::uint32_t> shapeByRank(keyspace.size());
    for (std::uint32_t s = 0; s < shapeByRank.size(); ++s)
        shapeByRank[s] = s;
    std::stable_sort(shapeByRank.begin(), shapeByRank.end(),
        [&keyspace](std::uint32_t a, std::uint32_t b) { return keyspace[a].count > keyspace[b].count; });
    std::vector<std::uint32_t> rankOfShape(keyspace.size());
    for (std::uint32_t r = 0; r < shapeByRank.size(); ++r)
        rankOfShape[shapeByRank[r]] = r;
    // Each live key's shape rank, and which keys the sample reads.
    std::vector<std::uint32_t> shapeOf(keys.size(), UINT32_MAX);
    for (std::size_t id = 0; id < keys.size(); ++id) {
        if (!keys[id].live())
            continue;
        // A key whose stale expire field depends on the threshold is placed with the field at every
        // threshold: the cache model's one simplification of such (rare) keys.
        const auto packed = keys[id].thresholdFree() ? keys[id].shape() : keys[id].shapeAt(0);
        const auto it = std::lower_bound(keyspace.begin(), keyspace.end(), packed,
            [](const ShapeHistogram::Entry& e, std::uint64_t s) { return e.shape < s; });
        shapeOf[id] = rankOfShape[static_cast<std::size_t>(it - keyspace.begin())];
    }
    std::vector<std::uint32_t> sampledSlot(keys.size(), UINT32_MAX);
    std::vector<std::uint32_t> sampledIds;
    for (const auto id : sample)
        if (id < keys.size() && keys[id].live() && sampledSlot[id] == UINT32_MAX) {
            sampledSlot[id] = static_cast<std::uint32_t>(sampledIds.size());
            sampledIds.push_back(id);
        }
    // Each GET's sampled key, resolved once for every threshold (UINT32_MAX: deleted before the end).
    std::vector<std::uint32_t> sampleSlots(sample.size(), UINT32_MAX);
    for (std::size_t i = 0; i < sample.size(); ++i)
        if (sample[i] < keys.size())
            sampleSlots[i] = sampledSlot[sample[i]];

    // The index tables' sizes at the end of the trace.
    const auto policy = layout.indexPolicy();
    const std::uint64_t slotBytes = policy.params.bucketBytes; // a Valkey bucket is one 64-byte line
    const auto keyspaceTable = replay.keyspaceTable().footprint(alloc);
    const BucketIndex buckets(keyspaceTable.buckets);
    BucketIndex expiresBuckets(1);
    if (const auto* expires = replay.expiresTable())
        expiresBuckets = BucketIndex(expires->footprint(alloc).buckets);
    // Redis: chain walks, and the expires lookup of every GET while any key has a TTL.
    const bool chained = isChainedDict(policy.kind);
    const bool lookupExpiresAlways = chained && replay.expiresTable() && replay.expiresTable()->entries() > 0;
    const ChainWalks walks = chained
        ? chainWalks(keys, shapeOf, sampledSlot, sampledIds, buckets, expiresBuckets, lookupExpiresAlways)
        : ChainWalks {};

    std::map<std::uint64_t, AllocatorClass> classInfo;
    for (const auto& c : alloc.classes())
        classInfo[c.size] = c;

    // Each shape's layout at the sweep's lowest and highest threshold, and the first threshold that uses
    // the second (the LayoutModel contract: a layout changes at most once as the threshold grows). The
    // workers then build every threshold's plans without describing a shape again.
    struct VariantAllocation {
        std::uint64_t usable = 0;
        std::uint32_t count = 1;
        std::uint32_t readBytes = 0;
        std::uint32_t classId = 0; // dense over every usable size any variant uses
    };
    std::unordered_map<std::uint64_t, std::uint32_t> classIdOfUsable;
    struct Variant {
        std::uint32_t first = 0; // into variantAllocations
        std::uint8_t allocations = 0;
        std::uint8_t indexLines = 0;
        bool stored = true;
    };
    std::vector<VariantAllocation> variantAllocations;
    std::vector<Variant> lowVariant(keyspace.size()), highVariant(keyspace.size());
    std::vector<std::uint32_t> switchAt(keyspace.size());
    auto addVariant = [&](const KeyLayout& kl) {
        Variant v { static_cast<std::uint32_t>(variantAllocations.size()), kl.allocationCount, kl.indexLinesPerGet,
            kl.stored };
        for (std::size_t a = 0; a < kl.allocationCount; ++a) {
            const std::uint64_t usable = alloc.usableSize(kl.allocations[a].requestedBytes);
            const auto classId
                = classIdOfUsable.try_emplace(usable, static_cast<std::uint32_t>(classIdOfUsable.size())).first->second;
            variantAllocations.push_back(
                { usable, kl.allocations[a].count, static_cast<std::uint32_t>(kl.allocations[a].readBytes), classId });
        }
        return v;
    };
    for (std::size_t sh = 0; sh < keyspace.size(); ++sh) {
        const KeyShape shape = unpackShape(keyspace[sh].shape);
        const KeyLayout low = layout.describe(shape, thresholds.front(), alloc);
        const KeyLayout high = layout.describe(shape, thresholds.back(), alloc);
        lowVariant[sh] = addVariant(low);
        if (low == high) {
            highVariant[sh] = lowVariant[sh];
            switchAt[sh] = static_cast<std::uint32_t>(thresholds.size());
            continue;
        }
        highVariant[sh] = addVariant(high);
        // The first threshold index whose layout is `high` (the last one is).
        std::size_t lo = 0, hi = thresholds.size() - 1;
        while (lo < hi) {
            const std::size_t mid = (lo + hi) / 2;
            if (layout.describe(shape, thresholds[mid], alloc) == high)
                hi = mid;
            else
                lo = mid + 1;
        }
        switchAt[sh] = static_cast<std::uint32_t>(lo);
    }

    // A threshold at which no shape switches places every key as the threshold below it does, so it gets
    // the same misses: only the first threshold and those where some shape switches are evaluated.
    std::vector<bool> someShapeSwitches(thresholds.size(), false);
    for (const auto at : switchAt)
        if (at < thresholds.size())
            someShapeSwitches[at] = true;
    std::vector<std::size_t> evaluated;
    for (std::size_t t = 0; t < thresholds.size(); ++t)
        if (t == 0 || someShapeSwitches[t])
            evaluated.push_back(t);

    // Placement in key-id order matters up to the last sampled key (chain walks' keys included): the keys
    // after it move no sampled key's address.
    std::size_t placedKeys = 0;
    for (const auto id : sampledIds)
        placedKeys = std::max<std::size_t>(placedKeys, std::size_t { id } + 1);

    // Thresholds are independent: share them among the cores, each worker with its own cache state.
    std::atomic<std::size_t> next { 0 };
    std::atomic<std::uint64_t> counted { 0 };
    auto worker = [&]() {
        CacheHierarchy cache(*config.cache);
        // Reused from threshold to threshold: every field read is written for each threshold first.
        std::vector<RankPlan> plans(keyspace.size()); // by shape rank
        std::vector<std::uint32_t> stepReadBytes; // beside placementSteps: bytes a GET reads of each
        std::vector<std::uint32_t> placementStart(keyspace.size() + 1, 0);
        std::vector<PlacementStep> placementSteps;
        std::vector<SampledKey> sampled;
        std::vector<ReadStep> readSteps;
        // Class id -> this threshold's slot, looked up for every allocation of every shape.
        std::vector<std::uint32_t> slotOfClass(classIdOfUsable.size());
        for (std::size_t k = next++; k < evaluated.size(); k = next++) {
            const std::size_t t = evaluated[k];
            if (stop.stop_requested())
                return;
            // Plans per distinct shape; one slot per allocation class.
            std::vector<ClassSlot> slots;
            std::vector<std::uint32_t> firstShapeOfSlot; // the lowest keyspace index using each slot
            std::fill(slotOfClass.begin(), slotOfClass.end(), UINT32_MAX);
            // Each rank's placement steps, in rank order: what the pass over every key reads, packed (a few
            // bytes per shape) so that it stays in the host's cache.
            placementSteps.clear();
            stepReadBytes.clear();
            for (std::size_t r = 0; r < keyspace.size(); ++r) {
                const std::uint32_t s = shapeByRank[r];
                const Variant& variant = t >= switchAt[s] ? highVariant[s] : lowVariant[s];
                plans[r] = { variant.stored, variant.indexLines };
                placementStart[r] = static_cast<std::uint32_t>(placementSteps.size());
                for (std::size_t a = 0; a < variant.allocations; ++a) {
                    const VariantAllocation& va = variantAllocations[variant.first + a];
                    const std::uint64_t usable = va.usable;
                    std::uint32_t& slotId = slotOfClass[va.classId];
                    if (slotId == UINT32_MAX) {
                        slotId = static_cast<std::uint32_t>(slots.size());
                        ClassSlot slot;
                        slot.usable = usable;
                        const auto alignment = alloc.alignment(usable);
                        const auto info = classInfo.find(usable);
                        if (info != classInfo.end() && info->second.regionsPerSlab > 0 && info->second.slabBytes > 0) {
                            slot.regionsPerSlab = info->second.regionsPerSlab;
                            slot.slabBytes = info->second.slabBytes;
                            slot.baseOffset = alignment.baseOffset;
                        } else {
                            slot.stride = std::max<std::uint64_t>(alloc.footprintBytes(usable), usable);
                            slot.baseOffset = alignment.baseOffset;
                        }
                        slots.push_back(slot);
                        firstShapeOfSlot.push_back(s);
                    }
                    firstShapeOfSlot[slotId] = std::min(firstShapeOfSlot[slotId], s);
                    // An unstored shape takes its classes' slots (their order matters) but places nothing.
                    if (variant.stored) {
                        placementSteps.push_back({ slotId, va.count });
                        stepReadBytes.push_back(static_cast<std::uint32_t>(va.readBytes));
                    }
                }
            }
            // Each class's slabs sit in their own address range, in the order keyspace order meets the
            // classes (ranks are walked in order only so that the steps are written and read in sequence).
            {
                std::vector<std::uint32_t> order(slots.size());
                for (std::uint32_t i = 0; i < order.size(); ++i)
                    order[i] = i;
                std::sort(order.begin(), order.end(),
                    [&](std::uint32_t a, std::uint32_t b) { return firstShapeOfSlot[a] < firstShapeOfSlot[b]; });
                for (std::size_t position = 0; position < order.size(); ++position)
                    slots[order[position]].base = (position + 1) * kClassRegionSpacing;
            }
            placementStart[plans.size()] = static_cast<std::uint32_t>(placementSteps.size());
            // Place every live key in key-id order: each allocation takes its class's next region.
            std::vector<std::uint64_t> nextRegion(slots.size(), 0);
            sampled.assign(sampledIds.size(), SampledKey {});
            readSteps.clear();
            for (std::size_t id = 0; id < placedKeys; ++id) {
                const auto rank = shapeOf[id];
                if (rank == UINT32_MAX)
                    continue;
                const std::uint32_t first = placementStart[rank];
                const std::uint32_t end = placementStart[rank + 1];
                if (sampledSlot[id] == UINT32_MAX) {
                    for (std::uint32_t step = first; step < end; ++step)
                        nextRegion[placementSteps[step].slot] += placementSteps[step].count;
                    continue;
                }
                const RankPlan& plan = plans[rank];
                SampledKey& key = sampled[sampledSlot[id]];
                key.stored = plan.stored;
                key.indexLines = plan.indexLines;
                key.firstRead = static_cast<std::uint32_t>(readSteps.size());
                for (std::uint32_t step = first; step < end; ++step) {
                    const auto& ps = placementSteps[step];
                    const std::uint32_t readBytes = stepReadBytes[step];
                    const ClassSlot& slot = slots[ps.slot];
                    if (readBytes > 0) {
                        readSteps.push_back({ slot.address(nextRegion[ps.slot]),
                            slot.regionsPerSlab ? slot.usable : slot.stride, ps.count, readBytes });
                        ++key.reads;
                    }
                    nextRegion[ps.slot] += ps.count;
                }
            }
            // Replay the sampled GETs through a cold cache; the first tenth only warms it.
            cache.clear();
            const std::size_t warmup = sample.size() / kCacheWarmupDivisor;
            std::uint64_t gets = 0;
            // The outer levels' tag arrays are far larger than the host's caches: fetch the sets a GET a
            // few places ahead will look up while this one is replayed.
            auto prefetchGet = [&](std::size_t i) {
                if (sampleSlots[i] == UINT32_MAX)
                    return;
                const SampledKey& key = sampled[sampleSlots[i]];
                cache.prefetch(kIndexBase + buckets.of(mix(sample[i])) * slotBytes);
                for (std::uint32_t r = key.firstRead; r < key.firstRead + key.reads; ++r)
                    cache.prefetch(readSteps[r].address);
            };
            for (std::size_t i = 0; i < sample.size(); ++i) {
                if (i + kPrefetchGets < sample.size())
                    prefetchGet(i + kPrefetchGets);
                if (i == warmup)
                    cache.resetCounters();
                if (sampleSlots[i] == UINT32_MAX)
                    continue; // deleted before the end of the trace
                const std::uint64_t id = sample[i];
                const SampledKey& key = sampled[sampleSlots[i]];
                if (!key.stored)
                    continue;
                const std::uint64_t hash = mix(id);
                touch(cache, kIndexBase + buckets.of(hash) * slotBytes, slotBytes);
                // Chain walks: a visited key's dictEntry and key sds are its first two reads; its expires
                // dictEntry, when it has one, its last.
                auto visit = [&](const ChainVisit& v) {
                    const SampledKey& other = sampled[v.sampledSlot];
                    if (other.reads < 2)
                        return;
                    const ReadStep& entry = readSteps[v.expires ? other.firstRead + other.reads - 1 : other.firstRead];
                    const ReadStep& keySds = readSteps[other.firstRead + 1];
                    touch(cache, entry.address, entry.bytes);
                    touch(cache, keySds.address, keySds.bytes);
                };
                const bool walked = !walks.start.empty();
                if (walked)
                    for (std::uint32_t w = walks.start[sampleSlots[i]]; w < walks.start[sampleSlots[i] + 1]; ++w)
                        if (!walks.visits[w].expires)
                            visit(walks.visits[w]);
                if (key.indexLines > 1 || lookupExpiresAlways)
                    touch(cache, kExpiresIndexBase + expiresBuckets.of(mix(hash)) * slotBytes, slotBytes);
                if (walked)
                    for (std::uint32_t w = walks.start[sampleSlots[i]]; w < walks.start[sampleSlots[i] + 1]; ++w)
                        if (walks.visits[w].expires)
                            visit(walks.visits[w]);
                for (std::uint32_t r = key.firstRead; r < key.firstRead + key.reads; ++r) {
                    const ReadStep& read = readSteps[r];
                    for (std::uint32_t c = 0; c < read.count; ++c)
                        touch(cache, read.address + c * read.stride, read.bytes);
                }
                if (i >= warmup)
                    ++gets;
            }
            auto& point = points[t];
            point.missesPerGet.clear();
            for (const auto m : cache.misses())
                point.missesPerGet.push_back(gets ? static_cast<double>(m) / static_cast<double>(gets) : 0.0);
            counted = gets;
        }
    };
    const std::size_t workers = std::clamp<std::size_t>(
        std::thread::hardware_concurrency(), 1, std::min<std::size_t>(kMaxWorkers, evaluated.size()));
    {
        std::vector<std::jthread> pool;
        for (std::size_t i = 1; i < workers; ++i)
            pool.emplace_back(worker);
        worker();
    }
    if (stop.stop_requested())
        return cancelledError();
    for (std::size_t t = 1; t < thresholds.size(); ++t)
        if (!someShapeSwitches[t])
            points[t].missesPerGet = points[t - 1].missesPerGet;
    return counted.load();
}

} // namespace layoutlab
