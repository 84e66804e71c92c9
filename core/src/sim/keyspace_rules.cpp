// SPDX-License-Identifier: MIT
// The keyspace replay's rules that depend on the layout (sim/keyspace_replay.h): how long a removed TTL's
// expire field survives, and the sds buffer a string command leaves.

#include "layoutlab/sim/keyspace_replay.h"

#include <algorithm>

namespace layoutlab {

StaleExpireRule::StaleExpireRule(
    const LayoutModel& layout, const AllocatorModel& allocator, std::vector<std::uint32_t> thresholds)
    : m_layout(&layout)
    , m_allocator(&allocator)
    , m_thresholds(std::move(thresholds)) {
    std::sort(m_thresholds.begin(), m_thresholds.end());
}

std::uint32_t StaleExpireRule::keptBelow(const KeyShape& before, const KeyShape& after, Op op) {
    // The new value's bound first: it is cheap, and often decides alone (a value that arrives embedded
    // at every threshold of the run makes a new object whatever the old one was).
    std::uint32_t bound = m_layout->staleExpireNewValueBound(after, op);
    if (bound <= m_thresholds.front())
        return 0;
    if (m_thresholds.size() == 1) // one threshold: only whether the old object is embedded there matters
        return m_layout->describe(before, m_thresholds.front(), *m_allocator).embedded() ? 0 : UINT32_MAX;
    const std::uint64_t packed = packShape(before);
    std::uint64_t firstEmbedding = 0;
    if (const auto* known = m_firstEmbedding.find(packed)) {
        firstEmbedding = *known - 1;
    } else {
        firstEmbedding = firstEmbeddingThreshold(*m_layout, before, *m_allocator);
        m_firstEmbedding.add(packed, firstEmbedding + 1);
    }
    bound = static_cast<std::uint32_t>(std::min<std::uint64_t>(bound, firstEmbedding));
    // The first of the run's thresholds at which the field is gone.
    const auto gone = std::lower_bound(m_thresholds.begin(), m_thresholds.end(), bound);
    if (gone == m_thresholds.begin())
        return 0;
    return gone == m_thresholds.end() ? UINT32_MAX : *gone;
}

StringRewriteRule::StringRewriteRule(
    const LayoutModel& layout, const AllocatorModel& allocator, std::uint32_t decisionThreshold)
    : m_layout(&layout)
    , m_allocator(&allocator)
    , m_rules(layout.stringRules())
    , m_decisionThreshold(decisionThreshold) { }

sds::Buffer StringRewriteRule::unshared(const KeyShape& shape) const {
    // db.c dbUnshareStringValue: a value that is not a RAW sds of its own (EMBSTR, INT, shared) is copied
    // into createRawStringObject -> sdsnewlen(len); an INT is printed first (getDecodedObject).
    const sds::Buffer fresh = created(shape.valueBytes);
    // A client's value kept RAW was trimmed by tryObjectEncoding (Redis 7.0 object.c
    // trimStringObjectIfNeeded) and is appended to as it is.
    if (m_rules.trimsRawValues && shape.kind == ValueKind::String
        && m_layout->describe(shape, m_decisionThreshold, *m_allocator).encoding == Encoding::Raw)
        return sds::trimmedIfNeeded(fresh, shape.valueBytes);
    return fresh;
}

sds::Buffer StringRewriteRule::hyperLogLogRoom(const sds::Buffer& buffer, std::uint64_t len) const {
    // hyperloglog.c hllSparseSet, before it looks for the register: room for the worst case, an XZERO split
    // into XZERO-VAL-XZERO (three bytes more).
    constexpr std::uint64_t kWorstChange = 3;
    if (m_rules.hllRoom == StringRules::HllRoom::MakeRoomForThree)
        return grown(buffer, len, kWorstChange);
    // sdsalloc (a type-5 string's is its length) and sdsavail.
    if (buffer.capacity >= kHyperLogLogSparseMaxBytes || sds::avail(buffer, len) >= kWorstChange)
        return buffer;
    // "Greediness: double 'newlen' if it is smaller than 300, or add 300 to it when it exceeds 300".
    std::uint64_t size = len + kWorstChange;
    size += std::min<std::uint64_t>(size, 300);
    size = std::min<std::uint64_t>(size, kHyperLogLogSparseMaxBytes);
    return sds::resized(m_rules.flavor, buffer, len, size, true, *m_allocator);
}

} // namespace layoutlab
