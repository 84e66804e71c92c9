// SPDX-License-Identifier: MIT
#include "threshold_pass.h"

#include "layoutlab/trace/random.h"

#include <algorithm>

namespace layoutlab::cache_detail {

ClassSlot ThresholdPass::newSlot(std::uint64_t usable) const {
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

void ThresholdPass::buildPlans(std::size_t t) {
    m_slots.clear();
    m_firstShapeOfSlot.clear(); // the lowest keyspace index using each slot
    std::fill(m_slotOfClass.begin(), m_slotOfClass.end(), UINT32_MAX);
    m_placementSteps.clear();
    m_stepReads.clear();
    for (std::size_t r = 0; r < m_plans.size(); ++r) {
        const std::uint32_t s = m_sample.shapeByRank[r];
        const Variant& variant = m_variants.at(r, t);
        m_plans[r] = { variant.stored, variant.indexLines, variant.keyRead };
        const auto head = m_placementSteps.size();
        m_placementStart[r] = static_cast<std::uint32_t>(head);
        for (std::size_t a = 0; a < variant.allocations; ++a) {
            const VariantAllocation& va = m_variants.allocations[variant.first + a];
            const std::uint32_t slotId = slotOf(va.classId, va.usable, s);
            // An unstored shape takes its classes' slots (their order matters) but places nothing.
            if (variant.stored) {
                m_placementSteps.push_back({ static_cast<std::uint16_t>(slotId),
                    static_cast<std::uint16_t>(std::min<std::uint32_t>(va.count, UINT16_MAX)), va.made });
                m_stepReads.push_back({ va.readBytes, va.memcmpEnd });
            }
        }
        if (!variant.stored)
            continue;
        const auto transientsFrom = m_placementSteps.size();
        for (std::size_t i = 0; i < variant.transients; ++i) {
            const VariantTransient& vt = m_variants.transients[variant.firstTransient + i];
            const std::uint32_t slotId = slotOf(vt.classId, vt.usable, s);
            if (m_variants.keysUse(t, vt.classId)) {
                m_placementSteps.push_back({ static_cast<std::uint16_t>(slotId),
                    static_cast<std::uint16_t>(std::min<std::uint32_t>(vt.count, UINT16_MAX)) });
                m_stepReads.push_back({});
            }
        }
        if (transientsFrom > head) {
            m_placementSteps[head].steps = static_cast<std::uint8_t>(transientsFrom - head);
            m_placementSteps[head].transients = static_cast<std::uint8_t>(m_placementSteps.size() - transientsFrom);
        }
    }
    m_placementStart[m_plans.size()] = static_cast<std::uint32_t>(m_placementSteps.size());
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

std::uint32_t ThresholdPass::slotOf(std::uint32_t classId, std::uint64_t usable, std::uint32_t s) {
    std::uint32_t& slotId = m_slotOfClass[classId];
    if (slotId == UINT32_MAX) {
        slotId = static_cast<std::uint32_t>(m_slots.size());
        m_slots.push_back(newSlot(usable));
        m_firstShapeOfSlot.push_back(s);
    }
    m_firstShapeOfSlot[slotId] = std::min(m_firstShapeOfSlot[slotId], s);
    return slotId;
}

std::size_t ThresholdPass::firstWarmKey(std::uint64_t count) const {
    std::size_t id = m_sample.shapeOf.size();
    for (std::uint64_t live = 0; id > 0 && live < count;)
        live += m_sample.shapeOf[--id] != UINT32_MAX;
    return id;
}

void ThresholdPass::placeKeys(std::size_t warmFrom, std::size_t innerFrom) {
    m_nextRegion.assign(m_slots.size(), 0);
    m_freeCount.assign(m_slots.size(), 0);
    m_freeRegions.resize(m_slots.size() * KeyLayout::kMaxTransients);
    for (std::size_t i = 0; i < m_slots.size(); ++i)
        if (const auto held = m_startRegions.find(m_slots[i].usable); held != m_startRegions.end())
            m_nextRegion[i] = held->second;
    m_sampled.assign(m_sample.sampledIds.size(), SampledKey {});
    m_readSteps.clear();
    std::array<std::uint64_t, KeyLayout::kMaxAllocations> regions {};
    const std::size_t keys = m_sample.shapeOf.size();
    for (std::size_t id = 0; id < keys; ++id) {
        prefetchPlacement(id, keys, warmFrom);
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
        key.keyRead = plan.keyRead;
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

inline void ThresholdPass::prefetchPlacement(std::size_t id, std::size_t keys, std::size_t warmFrom) const {
    if (const std::size_t ahead = id + 2 * kPrefetchKeys; ahead < keys && ahead >= warmFrom)
        m_cache.prefetch(kIndexBase + m_index.buckets.of(mix(ahead)) * m_index.slotBytes);
    if (id + 2 * kPrefetchKeys < keys)
        if (const auto rank = m_sample.shapeOf[id + 2 * kPrefetchKeys]; rank != UINT32_MAX) {
            __builtin_prefetch(&m_placementStart[rank]);
            __builtin_prefetch(&m_plans[rank]);
        }
    if (id + kPrefetchKeys < keys)
        if (const auto rank = m_sample.shapeOf[id + kPrefetchKeys]; rank != UINT32_MAX) {
            const std::uint32_t first = m_placementStart[rank];
            __builtin_prefetch(&m_placementSteps[first]);
            __builtin_prefetch(&m_stepReads[first]);
        }
}

void ThresholdPass::placeWrite(
    std::uint32_t first, std::uint32_t end, std::array<std::uint64_t, KeyLayout::kMaxAllocations>& regions) {
    const std::uint32_t uses = end > first ? m_placementSteps[first].transients : 0;
    std::array<std::uint32_t, KeyLayout::kMaxTransients> hiddenBelow {};
    for (std::uint32_t u = 0; u < uses; ++u) {
        const PlacementStep& use = m_placementSteps[end + u];
        std::uint32_t& free = m_freeCount[use.slot];
        for (; free < use.count; ++free)
            m_freeRegions[use.slot * KeyLayout::kMaxTransients + free] = m_nextRegion[use.slot]++;
        free -= use.count; // the top ones are the transients'
        hiddenBelow[u] = free;
    }
    for (std::uint32_t n = 0; n < end - first; ++n) {
        const std::uint32_t step = first + m_placementSteps[first + n].made;
        regions[step - first] = takeRegions(m_placementSteps[step].slot, m_placementSteps[step].count);
    }
    for (std::uint32_t u = 0; u < uses; ++u) {
        const PlacementStep& use = m_placementSteps[end + u];
        std::uint32_t& free = m_freeCount[use.slot];
        std::uint64_t* stack = &m_freeRegions[use.slot * KeyLayout::kMaxTransients];
        // Where the key's allocations took free regions from below the transients', theirs move down.
        const std::uint32_t below = hiddenBelow[u];
        for (std::uint8_t i = 0; free < below && i < use.count; ++i)
            stack[free + i] = stack[below + i];
        free += use.count;
    }
}

std::uint64_t ThresholdPass::takeRegions(std::uint32_t slot, std::uint32_t count) {
    if (count == 1 && m_freeCount[slot] != 0)
        return m_freeRegions[slot * KeyLayout::kMaxTransients + --m_freeCount[slot]];
    const std::uint64_t region = m_nextRegion[slot];
    m_nextRegion[slot] += count;
    return region;
}

void ThresholdPass::touchIndex(std::uint64_t id, std::uint8_t indexLines, std::uint8_t childDepth) {
    const std::uint64_t hash = mix(id);
    const std::uint64_t slotBytes = m_index.slotBytes;
    touchBucket(m_index.buckets.of(hash), childDepth, m_warmLastLevelOnly);
    if (indexLines > 1 || m_index.lookupExpiresAlways)
        touch(m_cache, kExpiresIndexBase + m_index.expiresBuckets.of(mix(hash)) * slotBytes, slotBytes,
            m_warmLastLevelOnly);
}

void ThresholdPass::touchRegions(
    const ClassSlot& slot, std::uint64_t first, std::uint32_t count, const StepRead& read) {
    for (std::uint32_t c = 0; c < count; ++c) {
        const std::uint64_t address = slot.address(first + c);
        touch(m_cache, address, bytesLoadedAt(address, read.bytes, read.memcmpEnd), m_warmLastLevelOnly);
    }
}

} // namespace layoutlab::cache_detail
