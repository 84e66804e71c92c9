// SPDX-License-Identifier: MIT
#include "cache_keyspace.h"

#include <algorithm>
#include <unordered_map>

namespace layoutlab::cache_detail {

namespace {
// The keys the cache model places: live string keys. A collection key's allocations are not described by a
// shape (CollectionReplay follows them), so its regions, index entry and lookups are left out of the
// model's address space; a GET sample of element reads is left out with them.
bool placed(const KeyState& key) {
    return key.live() && !key.collection();
}
} // namespace

SampleIndex indexSample(
    const SimulationConfig& config, const KeyspaceReplay& replay, const std::vector<ShapeHistogram::Entry>& keyspace) {
    const auto& keys = replay.keys();
    SampleIndex x;
    // The GETs to replay: the trace's last GET hits, or every live key once when the trace has none.
    x.sample = replay.getSample();
    if (x.sample.empty())
        for (std::uint32_t id = 0; id < keys.size() && x.sample.size() < config.cacheSampleGets; ++id)
            if (placed(keys[id]))
                x.sample.push_back(id);
    x.shapeByRank.resize(keyspace.size());
    for (std::uint32_t s = 0; s < x.shapeByRank.size(); ++s)
        x.shapeByRank[s] = s;
    std::stable_sort(x.shapeByRank.begin(), x.shapeByRank.end(),
        [&keyspace](std::uint32_t a, std::uint32_t b) { return keyspace[a].count > keyspace[b].count; });
    std::vector<std::uint32_t> rankOfShape(keyspace.size());
    for (std::uint32_t r = 0; r < x.shapeByRank.size(); ++r)
        rankOfShape[x.shapeByRank[r]] = r;
    x.shapeOf.assign(keys.size(), UINT32_MAX);
    for (std::size_t id = 0; id < keys.size(); ++id) {
        if (!placed(keys[id]))
            continue;
        // A key whose stale expire field depends on the threshold is placed with the field at every
        // threshold: the cache model's one simplification of such (rare) keys.
        const auto packed = keys[id].thresholdFree() ? keys[id].shape() : keys[id].shapeAt(0);
        const auto it = std::lower_bound(keyspace.begin(), keyspace.end(), packed,
            [](const ShapeHistogram::Entry& e, std::uint64_t s) { return e.shape < s; });
        x.shapeOf[id] = rankOfShape[static_cast<std::size_t>(it - keyspace.begin())];
    }
    x.sampledSlot.assign(keys.size(), UINT32_MAX);
    for (const auto id : x.sample)
        if (id < keys.size() && placed(keys[id]) && x.sampledSlot[id] == UINT32_MAX) {
            x.sampledSlot[id] = static_cast<std::uint32_t>(x.sampledIds.size());
            x.sampledIds.push_back(id);
        }
    // Each GET's sampled key, resolved once for every threshold.
    x.sampleSlots.assign(x.sample.size(), UINT32_MAX);
    for (std::size_t i = 0; i < x.sample.size(); ++i)
        if (x.sample[i] < keys.size())
            x.sampleSlots[i] = x.sampledSlot[x.sample[i]];
    return x;
}

std::uint8_t childBucketOf(std::uint32_t place, std::uint32_t total, std::uint32_t entries) {
    if (total <= entries)
        return 0;
    const std::uint32_t chained = entries - 1; // entries of a bucket with a child
    const std::uint32_t children = (total - entries + chained - 1) / chained;
    const std::uint32_t depth = place < chained ? 0 : std::min(children, 1 + (place - chained) / chained);
    return static_cast<std::uint8_t>(std::min<std::uint64_t>(depth, kMaxChildDepth - 1));
}

std::vector<std::uint8_t> childDepths(
    const std::vector<std::uint32_t>& shapeOf, const BucketIndex& buckets, std::uint32_t entries) {
    std::vector<std::uint8_t> total(buckets.buckets, 0), fill(buckets.buckets, 0), depth(shapeOf.size(), 0);
    for (std::size_t id = 0; id < shapeOf.size(); ++id)
        if (shapeOf[id] != UINT32_MAX) {
            auto& t = total[buckets.of(mix(id))];
            t = static_cast<std::uint8_t>(std::min(t + 1, 255));
        }
    for (std::size_t id = 0; id < shapeOf.size(); ++id)
        if (shapeOf[id] != UINT32_MAX) {
            const std::uint64_t bucket = buckets.of(mix(id));
            depth[id] = childBucketOf(fill[bucket], total[bucket], entries);
            fill[bucket] = static_cast<std::uint8_t>(std::min(fill[bucket] + 1, 255));
        }
    return depth;
}

IndexLookups indexLookups(const SimulationConfig& config, const KeyspaceReplay& replay, SampleIndex& sample) {
    const auto& alloc = *config.allocator;
    const auto policy = config.layout->indexPolicy();
    IndexLookups x { policy.params.bucketBytes,
        policy.kind == IndexKind::ValkeyHashtable ? policy.params.entriesPerBucket : 0,
        BucketIndex(replay.keyspaceTable().footprint(alloc).buckets), BucketIndex(1), false, {}, {} };
    if (const auto* expires = replay.expiresTable())
        x.expiresBuckets = BucketIndex(expires->footprint(alloc).buckets);
    if (x.bucketEntries > 1)
        x.childDepth = childDepths(sample.shapeOf, x.buckets, x.bucketEntries);
    if (isChainedDict(policy.kind)) {
        x.lookupExpiresAlways = replay.expiresTable() && replay.expiresTable()->entries() > 0;
        x.walks = chainWalks(replay.keys(), sample.shapeOf, sample.sampledSlot, sample.sampledIds, x.buckets,
            x.expiresBuckets, x.lookupExpiresAlways);
    }
    return x;
}

namespace {

// ShapeVariants::keysUseClass: a shape's low variant holds its classes from the first threshold to its switch,
// its high one from there on, counted as runs (+1 where a run starts, -1 after it ends) summed by threshold.
void markClassesKeysUse(ShapeVariants& x, std::size_t thresholds) {
    std::vector<std::int64_t> delta((thresholds + 1) * x.classes, 0);
    auto hold = [&](const Variant& v, std::size_t from, std::size_t to) {
        for (std::size_t a = 0; v.stored && from < to && a < v.allocations; ++a) {
            const std::uint32_t classId = x.allocations[v.first + a].classId;
            ++delta[from * x.classes + classId];
            --delta[to * x.classes + classId];
        }
    };
    for (std::size_t sh = 0; sh < x.switchAt.size(); ++sh) {
        const std::size_t switchAt = std::min<std::size_t>(x.switchAt[sh], thresholds);
        hold(x.low[sh], 0, switchAt);
        hold(x.high[sh], switchAt, thresholds);
    }
    x.keysUseClass.assign(thresholds * x.classes, false);
    std::vector<std::int64_t> held(x.classes, 0);
    for (std::size_t t = 0; t < thresholds; ++t)
        for (std::size_t c = 0; c < x.classes; ++c) {
            held[c] += delta[t * x.classes + c];
            x.keysUseClass[t * x.classes + c] = held[c] > 0;
        }
}

} // namespace

ShapeVariants describeVariants(const LayoutModel& layout, const AllocatorModel& alloc,
    const std::vector<ShapeHistogram::Entry>& keyspace, const std::vector<std::uint32_t>& shapeByRank,
    const std::vector<std::uint32_t>& thresholds) {
    ShapeVariants x;
    x.low.resize(keyspace.size());
    x.high.resize(keyspace.size());
    x.switchAt.resize(keyspace.size());
    std::unordered_map<std::uint64_t, std::uint32_t> classIdOfUsable;
    auto addVariant = [&](const KeyLayout& kl) {
        // transients: classes, counted once merged below.
        Variant v { static_cast<std::uint32_t>(x.allocations.size()), static_cast<std::uint32_t>(x.transients.size()),
            kl.allocationCount, 0, kl.indexLinesPerGet, kl.stored };
        auto classOf = [&](std::uint64_t usable) {
            return classIdOfUsable.try_emplace(usable, static_cast<std::uint32_t>(classIdOfUsable.size()))
                .first->second;
        };
        const std::size_t keyAllocation = kl.keyAllocation();
        for (std::size_t a = 0, reads = 0; a < kl.allocationCount; ++a) {
            const Allocation& allocation = kl.allocations[a];
            const std::uint64_t usable = alloc.usableSize(allocation.requestedBytes);
            x.allocations.push_back({ usable, allocation.count, static_cast<std::uint32_t>(allocation.readBytes),
                classOf(usable), allocation.memcmpEnd, static_cast<std::uint8_t>(kl.made(a)) });
            if (allocation.readBytes == 0)
                continue;
            if (a == keyAllocation)
                v.keyRead = static_cast<std::uint8_t>(reads);
            ++reads;
        }
        for (std::size_t t = 0; t < kl.transientCount; ++t) {
            const std::uint64_t usable = alloc.usableSize(kl.transients[t]);
            const auto from = x.transients.begin() + v.firstTransient;
            const auto same
                = std::find_if(from, x.transients.end(), [&](const auto& vt) { return vt.usable == usable; });
            if (same != x.transients.end())
                ++same->count;
            else
                x.transients.push_back({ usable, classOf(usable), 1 });
        }
        v.transients = static_cast<std::uint8_t>(x.transients.size() - v.firstTransient);
        return v;
    };
    for (std::size_t sh = 0; sh < keyspace.size(); ++sh) {
        const KeyShape shape = unpackShape(keyspace[shapeByRank[sh]].shape);
        const KeyLayout low = layout.describe(shape, thresholds.front(), alloc);
        const KeyLayout high = layout.describe(shape, thresholds.back(), alloc);
        x.low[sh] = addVariant(low);
        if (low == high) {
            x.high[sh] = x.low[sh];
            x.switchAt[sh] = static_cast<std::uint32_t>(thresholds.size());
            continue;
        }
        x.high[sh] = addVariant(high);
        // The first threshold index whose layout is `high` (the last one is).
        std::size_t lo = 0, hi = thresholds.size() - 1;
        while (lo < hi) {
            const std::size_t mid = (lo + hi) / 2;
            if (layout.describe(shape, thresholds[mid], alloc) == high)
                hi = mid;
            else
                lo = mid + 1;
        }
        x.switchAt[sh] = static_cast<std::uint32_t>(lo);
    }
    x.classes = classIdOfUsable.size();
    markClassesKeysUse(x, thresholds.size());
    return x;
}

} // namespace layoutlab::cache_detail
