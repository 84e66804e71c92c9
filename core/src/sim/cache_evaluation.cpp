// SPDX-License-Identifier: MIT
#include "cache_evaluation.h"

#include "cache_keyspace.h"
#include "chain_walks.h"

#include "layoutlab/trace/random.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <map>
#include <thread>
#include <unordered_map>

namespace layoutlab {

using namespace cache_detail;

namespace {

constexpr std::uint64_t kClassRegionSpacing = std::uint64_t { 1 } << 36; // each class's slabs in their own 64 GiB
constexpr std::uint64_t kIndexBase = std::uint64_t { 1 } << 46; // the keyspace index table, above every class
constexpr std::uint64_t kExpiresIndexBase = std::uint64_t { 1 } << 47; // the expires index table
// Valkey's child buckets, a line per (bucket, depth), between the keyspace table and the expires table.
constexpr std::uint64_t kChildBucketBase = (std::uint64_t { 1 } << 46) + (std::uint64_t { 1 } << 45);
// Every simulated address stays below 2^48 (CacheHierarchy::kMaxAddressBits).
constexpr std::size_t kPrefetchGets = 16; // how far ahead the replay prefetches the cache model's sets
constexpr std::size_t kMaxWorkers = 4; // each holds a cache hierarchy (tens of MB for a large LLC)
// A last level of more lines than this simulates a sample of its sets (CacheHierarchy::sampleLastLevel),
// about this many lines' worth: warming a 300 MiB LLC line by line for every threshold would cost more
// than the rest of a sweep, and the sampled sets' misses estimate the level's within a percent or so.
constexpr std::uint64_t kLastLevelLinesSimulated = std::uint64_t { 1 } << 17;

std::uint32_t lastLevelSampling(const CacheGeometry& geometry) {
    const std::uint64_t lines = geometry.levels.back().sizeBytes / kCacheLineBytes;
    return lines <= kLastLevelLinesSimulated
        ? 1
        : static_cast<std::uint32_t>(std::bit_floor(lines / kLastLevelLinesSimulated));
}

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
// A shape's steps are its allocations, then its write's transients merged by class (count: how many), in
// one run so that placing a key reads one run of the array; the first step says how many of each.
struct PlacementStep {
    std::uint16_t slot = 0; // a class's: jemalloc has a few hundred, memcached's slabs at most 64
    std::uint16_t count = 1; // a chunked item's chunks: at most -I over the chunk size
    std::uint8_t made = 0; // the shape's step the engine makes in this one's place (KeyLayout::made)
    std::uint8_t steps = 0; // on a shape's first step: its allocations' steps
    std::uint8_t transients = 0; // on a shape's first step: the transient steps after them
};

// What a GET reads of a step's allocation: Allocation::readBytes and memcmpEnd.
struct StepRead {
    std::uint32_t bytes = 0;
    std::uint32_t memcmpEnd = 0;
};

// What a GET of one sampled key reads, resolved once its allocations are placed: the index lookups, then
// its reads (a run of readSteps), so the replay touches only this and the cache model.
struct SampledKey {
    std::uint32_t firstRead = 0;
    std::uint8_t reads = 0;
    std::uint8_t indexLines = 0;
    std::uint8_t childDepth = 0; // Valkey: the child buckets a lookup walks before the key's entry
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

void touch(CacheHierarchy& cache, std::uint64_t address, std::uint64_t bytes, bool lastLevelOnly = false) {
    for (std::uint64_t line = address / kCacheLineBytes; line <= (address + bytes - 1) / kCacheLineBytes; ++line)
        if (lastLevelOnly)
            cache.accessLastLevel(line * kCacheLineBytes);
        else
            cache.access(line * kCacheLineBytes);
}

// One worker's evaluation of a threshold: plans per shape and a slot per allocation class, every live key
// placed in key-id order, then the sampled GETs replayed through its own cache hierarchy. Its buffers are
// reused from threshold to threshold (every field read is written for each threshold first).
class ThresholdPass {
public:
    ThresholdPass(const SimulationConfig& config, const SampleIndex& sample, const IndexLookups& index,
        const ShapeVariants& variants, const std::map<std::uint64_t, AllocatorClass>& classInfo)
        : m_alloc(*config.allocator)
        , m_sample(sample)
        , m_index(index)
        , m_variants(variants)
        , m_classInfo(classInfo)
        , m_startRegions(config.startRegions)
        , m_cache(*config.cache)
        , m_plans(sample.shapeByRank.size())
        , m_placementStart(sample.shapeByRank.size() + 1, 0)
        , m_transientStart(sample.shapeByRank.size() + 1, 0)
        , m_slotOfClass(variants.classes)
        , m_lastLevelBytes(config.cache->levels.back().sizeBytes)
        , m_innerLevelBytes(
              config.cache->levels[config.cache->levels.size() >= 2 ? config.cache->levels.size() - 2 : 0].sizeBytes) {
        m_cache.sampleLastLevel(lastLevelSampling(*config.cache));
    }

    // The misses per GET at threshold index `t`, and the GETs counted.
    std::uint64_t run(std::size_t t, ThresholdPoint& point) {
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

private:
    ClassSlot newSlot(std::uint64_t usable) const {
        ClassSlot slot;
        slot.usable = usable;
        slot.baseOffset = m_alloc.alignment(usable).baseOffset;
        const auto info = m_classInfo.find(usable);
        if (info != m_classInfo.end() && info->second.regionsPerSlab > 0 && info->second.slabBytes > 0) {
            slot.regionsPerSlab = info->second.regionsPerSlab;
            slot.slabBytes = info->second.slabBytes;
        } else {
            slot.stride = std::max<std::uint64_t>(m_alloc.footprintBytes(usable), usable);
        }
        return slot;
    }

    // Each rank's placement steps, in rank order: what the pass over every key reads, packed (a few bytes
    // per shape) so that it stays in the host's cache; one slot per allocation class.
    void buildPlans(std::size_t t) {
        m_slots.clear();
        m_firstShapeOfSlot.clear(); // the lowest keyspace index using each slot
        std::fill(m_slotOfClass.begin(), m_slotOfClass.end(), UINT32_MAX);
        m_placementSteps.clear();
        m_stepReads.clear();
        m_transientSlots.clear();
        for (std::size_t r = 0; r < m_plans.size(); ++r) {
            const std::uint32_t s = m_sample.shapeByRank[r];
            const Variant& variant = m_variants.at(s, t);
            m_plans[r] = { variant.stored, variant.indexLines };
            m_placementStart[r] = static_cast<std::uint32_t>(m_placementSteps.size());
            m_transientStart[r] = static_cast<std::uint32_t>(m_transientSlots.size());
            auto slotOf = [&](std::uint32_t classId, std::uint64_t usable) {
                std::uint32_t& slotId = m_slotOfClass[classId];
                if (slotId == UINT32_MAX) {
                    slotId = static_cast<std::uint32_t>(m_slots.size());
                    m_slots.push_back(newSlot(usable));
                    m_firstShapeOfSlot.push_back(s);
                }
                m_firstShapeOfSlot[slotId] = std::min(m_firstShapeOfSlot[slotId], s);
                return slotId;
            };
            for (std::size_t a = 0; a < variant.allocations; ++a) {
                const VariantAllocation& va = m_variants.allocations[variant.first + a];
                const std::uint32_t slotId = slotOf(va.classId, va.usable);
                // An unstored shape takes its classes' slots (their order matters) but places nothing.
                if (variant.stored) {
                    m_placementSteps.push_back({ static_cast<std::uint16_t>(slotId),
                        static_cast<std::uint16_t>(std::min<std::uint32_t>(va.count, UINT16_MAX)), va.made });
                    m_stepReads.push_back({ va.readBytes, va.memcmpEnd });
                }
            }
            for (std::size_t i = 0; variant.stored && i < variant.transients; ++i) {
                const VariantTransient& vt = m_variants.transients[variant.firstTransient + i];
                m_transientSlots.push_back(slotOf(vt.classId, vt.usable));
            }
        }
        m_placementStart[m_plans.size()] = static_cast<std::uint32_t>(m_placementSteps.size());
        m_transientStart[m_plans.size()] = static_cast<std::uint32_t>(m_transientSlots.size());
        packTransients();
        // Each class's slabs sit in their own address range, in the order keyspace order meets the classes
        // (ranks are walked in order only so that the steps are written and read in sequence).
        std::vector<std::uint32_t> order(m_slots.size());
        for (std::uint32_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return m_firstShapeOfSlot[a] < m_firstShapeOfSlot[b]; });
        for (std::size_t position = 0; position < order.size(); ++position)
            m_slots[order[position]].base = (position + 1) * kClassRegionSpacing;
    }

    // A transient in a class no key's allocation uses at this threshold moves nothing: only the others are
    // placed (most are the argv array's and the command name's, whose classes hold no keys), merged by class
    // after each shape's allocations (PlacementStep).
    void packTransients() {
        std::vector<char> keysUse(m_slots.size(), 0);
        for (const auto& ps : m_placementSteps)
            keysUse[ps.slot] = 1;
        m_packedSteps.clear();
        m_packedReads.clear();
        for (std::size_t r = 0; r < m_plans.size(); ++r) {
            const std::uint32_t first = m_placementStart[r], end = m_placementStart[r + 1];
            const auto head = m_packedSteps.size();
            m_placementStart[r] = static_cast<std::uint32_t>(head);
            for (std::uint32_t i = first; i < end; ++i) {
                m_packedSteps.push_back(m_placementSteps[i]);
                m_packedReads.push_back(m_stepReads[i]);
            }
            const auto transientsFrom = m_packedSteps.size();
            for (std::uint32_t i = m_transientStart[r]; i < m_transientStart[r + 1]; ++i) {
                const std::uint32_t slot = m_transientSlots[i];
                if (!keysUse[slot])
                    continue;
                const auto same = std::find_if(m_packedSteps.begin() + static_cast<std::ptrdiff_t>(transientsFrom),
                    m_packedSteps.end(), [slot](const PlacementStep& t) { return t.slot == slot; });
                if (same != m_packedSteps.end()) {
                    ++same->count;
                    continue;
                }
                m_packedSteps.push_back({ static_cast<std::uint16_t>(slot), 1 });
                m_packedReads.push_back({});
            }
            if (end > first) {
                m_packedSteps[head].steps = static_cast<std::uint8_t>(end - first);
                m_packedSteps[head].transients = static_cast<std::uint8_t>(m_packedSteps.size() - transientsFrom);
            }
        }
        m_placementStart[m_plans.size()] = static_cast<std::uint32_t>(m_packedSteps.size());
        std::swap(m_placementSteps, m_packedSteps);
        std::swap(m_stepReads, m_packedReads);
    }

    // The key id from which the last `count` live keys run (what loading the keyspace leaves cached).
    std::size_t firstWarmKey(std::uint64_t count) const {
        std::size_t id = m_sample.shapeOf.size();
        for (std::uint64_t live = 0; id > 0 && live < count;)
            live += m_sample.shapeOf[--id] != UINT32_MAX;
        return id;
    }

    // Places every live key in key-id order: each allocation takes its class's next region. Only the
    // sampled keys' reads are kept. Keys from `warmFrom` on are read along their GET path as they are
    // placed (index bucket, the expires bucket where a GET looks it up, each allocation's read bytes), as
    // loading them left them in the caches: through every level from `innerFrom` on, before it in the
    // last level alone.
    void placeKeys(std::size_t warmFrom, std::size_t innerFrom) {
        m_nextRegion.assign(m_slots.size(), 0);
        m_freeCount.assign(m_slots.size(), 0);
        m_freeRegions.resize(m_slots.size() * KeyLayout::kMaxTransients);
        for (std::size_t i = 0; i < m_slots.size(); ++i)
            if (const auto held = m_startRegions.find(m_slots[i].usable); held != m_startRegions.end())
                m_nextRegion[i] = held->second;
        m_sampled.assign(m_sample.sampledIds.size(), SampledKey {});
        m_readSteps.clear();
        std::array<std::uint64_t, KeyLayout::kMaxAllocations> regions {};
        for (std::size_t id = 0; id < m_sample.shapeOf.size(); ++id) {
            const auto rank = m_sample.shapeOf[id];
            if (rank == UINT32_MAX)
                continue;
            const std::uint32_t first = m_placementStart[rank];
            const RankPlan& plan = m_plans[rank];
            const std::uint32_t end = plan.stored ? first + m_placementSteps[first].steps : first;
            placeWrite(first, end, regions);
            const std::uint8_t childDepth = m_index.childDepth.empty() ? 0 : m_index.childDepth[id];
            const bool warm = id >= warmFrom && plan.stored;
            m_warmLastLevelOnly = id < innerFrom;
            if (warm)
                touchIndex(id, plan.indexLines, childDepth);
            if (m_sample.sampledSlot[id] == UINT32_MAX) {
                for (std::uint32_t step = first; warm && step < end; ++step)
                    if (m_stepReads[step].bytes > 0)
                        touchRegions(m_slots[m_placementSteps[step].slot], regions[step - first],
                            m_placementSteps[step].count, m_stepReads[step]);
                continue;
            }
            SampledKey& key = m_sampled[m_sample.sampledSlot[id]];
            key.stored = plan.stored;
            key.indexLines = plan.indexLines;
            key.childDepth = childDepth;
            key.firstRead = static_cast<std::uint32_t>(m_readSteps.size());
            for (std::uint32_t step = first; step < end; ++step) {
                const auto& ps = m_placementSteps[step];
                const StepRead& read = m_stepReads[step];
                const ClassSlot& slot = m_slots[ps.slot];
                if (read.bytes > 0) {
                    const std::uint64_t address = slot.address(regions[step - first]);
                    m_readSteps.push_back({ address, slot.regionsPerSlab ? slot.usable : slot.stride, ps.count,
                        static_cast<std::uint32_t>(bytesLoadedAt(address, read.bytes, read.memcmpEnd)) });
                    ++key.reads;
                    if (warm)
                        touchRegions(slot, regions[step - first], ps.count, read);
                }
            }
        }
    }

    // One write of a key whose steps run from `first` to `end`: its command's transients hold their regions (freed ones
    // first, as the allocator hands them out again, then the class's next), the key's allocations take theirs in the
    // order the engine makes them, written to `regions` by step, and the transients' regions are free again after. A
    // class's freed regions stay on a stack (m_freeRegions): a write that needs no more of them than are free takes and
    // frees the same ones, so only a write that needs more changes it, and only the key's allocations see the free
    // regions below the transients' own.
    void placeWrite(
        std::uint32_t first, std::uint32_t end, std::array<std::uint64_t, KeyLayout::kMaxAllocations>& regions) {
        const std::uint32_t uses = end > first ? m_placementSteps[first].transients : 0;
        std::array<std::uint8_t, KeyLayout::kMaxTransients> hiddenBelow {};
        for (std::uint32_t u = 0; u < uses; ++u) {
            const PlacementStep& use = m_placementSteps[end + u];
            std::uint8_t& free = m_freeCount[use.slot];
            for (; free < use.count; ++free)
                m_freeRegions[use.slot * KeyLayout::kMaxTransients + free] = m_nextRegion[use.slot]++;
            free = static_cast<std::uint8_t>(free - use.count); // the top ones are the transients'
            hiddenBelow[u] = free;
        }
        for (std::uint32_t n = 0; n < end - first; ++n) {
            const std::uint32_t step = first + m_placementSteps[first + n].made;
            regions[step - first] = takeRegions(m_placementSteps[step].slot, m_placementSteps[step].count);
        }
        for (std::uint32_t u = 0; u < uses; ++u) {
            const PlacementStep& use = m_placementSteps[end + u];
            std::uint8_t& free = m_freeCount[use.slot];
            std::uint64_t* stack = &m_freeRegions[use.slot * KeyLayout::kMaxTransients];
            // Where the key's allocations took free regions from below the transients', theirs move down.
            const std::uint8_t below = hiddenBelow[u];
            for (std::uint8_t i = 0; free < below && i < use.count; ++i)
                stack[free + i] = stack[below + i];
            free = static_cast<std::uint8_t>(free + use.count);
        }
    }

    // The first of `count` regions of slot `slot`: a freed one when one will do, else the class's next.
    std::uint64_t takeRegions(std::uint32_t slot, std::uint32_t count) {
        if (count == 1 && m_freeCount[slot] != 0)
            return m_freeRegions[slot * KeyLayout::kMaxTransients + --m_freeCount[slot]];
        const std::uint64_t region = m_nextRegion[slot];
        m_nextRegion[slot] += count;
        return region;
    }

    // The index lines a GET of key `id` looks up first: its bucket and the child buckets before its entry,
    // and the expires bucket when the engine looks there.
    void touchIndex(std::uint64_t id, std::uint8_t indexLines, std::uint8_t childDepth) {
        const std::uint64_t hash = mix(id);
        const std::uint64_t slotBytes = m_index.slotBytes;
        touchBucket(m_index.buckets.of(hash), childDepth, m_warmLastLevelOnly);
        if (indexLines > 1 || m_index.lookupExpiresAlways)
            touch(m_cache, kExpiresIndexBase + m_index.expiresBuckets.of(mix(hash)) * slotBytes, slotBytes,
                m_warmLastLevelOnly);
    }

    // A keyspace bucket, then its first `childDepth` child buckets (hashtable.c: bucketConvertToChained).
    void touchBucket(std::uint64_t bucket, std::uint8_t childDepth, bool lastLevelOnly = false) {
        touch(m_cache, kIndexBase + bucket * m_index.slotBytes, m_index.slotBytes, lastLevelOnly);
        for (std::uint64_t d = 1; d <= childDepth; ++d)
            touch(m_cache, kChildBucketBase + (bucket * kMaxChildDepth + d - 1) * kCacheLineBytes, kCacheLineBytes,
                lastLevelOnly);
    }

    // `bytes` of each of `count` consecutive regions of `slot` from region `first`.
    void touchRegions(const ClassSlot& slot, std::uint64_t first, std::uint32_t count, const StepRead& read) {
        for (std::uint32_t c = 0; c < count; ++c) {
            const std::uint64_t address = slot.address(first + c);
            touch(m_cache, address, bytesLoadedAt(address, read.bytes, read.memcmpEnd), m_warmLastLevelOnly);
        }
    }

    // Chain walks: a visited key's dictEntry and key sds are its first two reads; its expires dictEntry,
    // when it has one, its last. Of the key, the compare reads the length header.
    void visit(const ChainVisit& v) {
        const SampledKey& other = m_sampled[v.sampledSlot];
        if (other.reads < 2)
            return;
        const ReadStep& entry = m_readSteps[v.expires ? other.firstRead + other.reads - 1 : other.firstRead];
        const ReadStep& keySds = m_readSteps[other.firstRead + 1];
        touch(m_cache, entry.address, entry.bytes);
        // dictSdsKeyCompare reads the candidate's length (sdslen: its header) and compares the bytes only when
        // the lengths are equal; the reference engine reads the key's tag there.
        touch(m_cache, keySds.address, 1);
    }

    // The outer levels' tag arrays are far larger than the host's caches: fetch the sets a GET a few places
    // ahead will look up while this one is replayed.
    void prefetchGet(std::size_t i) {
        if (m_sample.sampleSlots[i] == UINT32_MAX)
            return;
        const SampledKey& key = m_sampled[m_sample.sampleSlots[i]];
        m_cache.prefetch(kIndexBase + m_index.buckets.of(mix(m_sample.sample[i])) * m_index.slotBytes);
        for (std::uint32_t r = key.firstRead; r < key.firstRead + key.reads; ++r)
            m_cache.prefetch(m_readSteps[r].address);
    }

    // One GET: the index bucket, chain walks and the expires lookup where the engine makes them, then the
    // bytes it reads of each allocation.
    void replayGet(std::uint32_t slot, std::uint64_t id) {
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

    // Replays the sampled GETs through the caches placement warmed; the first tenth only warms them
    // further. Returns the GETs counted.
    std::uint64_t replay() {
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

    const AllocatorModel& m_alloc;
    const SampleIndex& m_sample;
    const IndexLookups& m_index;
    const ShapeVariants& m_variants;
    const std::map<std::uint64_t, AllocatorClass>& m_classInfo;
    const std::map<std::uint64_t, std::uint64_t>& m_startRegions; // SimulationConfig::startRegions
    CacheHierarchy m_cache;
    std::vector<RankPlan> m_plans; // by shape rank
    std::vector<std::uint32_t> m_placementStart; // by shape rank, into m_placementSteps
    std::vector<PlacementStep> m_placementSteps;
    std::vector<StepRead> m_stepReads; // beside m_placementSteps: what a GET reads of each
    std::vector<std::uint32_t> m_transientStart; // by shape rank: into m_transientSlots, then m_transientUses
    std::vector<std::uint32_t> m_transientSlots; // each rank's write's transients, by slot
    std::vector<PlacementStep> m_packedSteps; // packTransients' buffers
    std::vector<StepRead> m_packedReads;
    std::vector<std::uint64_t> m_nextRegion; // by slot: the first region never handed out
    // By slot, kMaxTransients each: transients' freed regions, the last freed on top (m_freeCount of them).
    std::vector<std::uint64_t> m_freeRegions;
    std::vector<std::uint8_t> m_freeCount;
    std::vector<std::uint32_t> m_slotOfClass; // class id -> this threshold's slot
    std::vector<ClassSlot> m_slots;
    std::vector<std::uint32_t> m_firstShapeOfSlot;
    std::vector<SampledKey> m_sampled;
    std::vector<ReadStep> m_readSteps;
    std::uint64_t m_lastLevelBytes;
    std::uint64_t m_innerLevelBytes; // the next-to-last level's
    bool m_warmLastLevelOnly = false; // the key being warmed reaches the last level alone
};

} // namespace

Expected<std::uint64_t> evaluateCache(const SimulationConfig& config, const std::vector<std::uint32_t>& thresholds,
    const KeyspaceReplay& replay, const std::vector<ShapeHistogram::Entry>& keyspace,
    std::vector<ThresholdPoint>& points, ProgressSink* progress, std::stop_token stop) {
    SampleIndex sample = indexSample(config, replay, keyspace);
    const IndexLookups index = indexLookups(config, replay, sample);
    const ShapeVariants variants = describeVariants(*config.layout, *config.allocator, keyspace, thresholds);
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
