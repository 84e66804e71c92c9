// SPDX-License-Identifier: MIT
#include "layoutlab/sim/expire_cycle.h"

#include "layoutlab/sim/slab_index.h"

#include <algorithm>

namespace layoutlab {

namespace {
// The scan's reverse-binary order (dict.c / hashtable.c's cursor: the high bits of the bucket index
// incremented first) is the order of the bit-reversed hashes.
std::uint64_t reverseBits(std::uint64_t x) {
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
    return __builtin_bswap64(x);
}
} // namespace

std::uint64_t ActiveExpireCycle::placeOf(std::uint32_t keyId) {
    return reverseBits(SlabIndex::hashOf(keyId));
}

void ActiveExpireCycle::expired(std::uint32_t keyId) {
    if (keyId >= m_held.size())
        m_held.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_held.size() * 2));
    if (m_held[keyId])
        return;
    m_held[keyId] = true;
    m_byPlace.emplace(placeOf(keyId), keyId);
}

void ActiveExpireCycle::take(std::uint32_t keyId) {
    if (!holds(keyId))
        return;
    m_held[keyId] = false;
    m_byPlace.erase(placeOf(keyId));
}

std::uint64_t ActiveExpireCycle::nextCycleMs() const {
    return m_byPlace.empty() ? UINT64_MAX : (m_lastCycleMs / kPeriodMs + 1) * kPeriodMs;
}

void ActiveExpireCycle::forget(
    std::map<std::uint64_t, std::uint32_t>::iterator at, std::vector<std::uint32_t>& removed) {
    removed.push_back(at->second);
    m_held[at->second] = false;
    m_byPlace.erase(at);
}

void ActiveExpireCycle::runUntil(std::uint64_t nowMs, std::uint64_t tableKeys, std::vector<std::uint32_t>& removed) {
    const std::uint64_t last = nowMs / kPeriodMs * kPeriodMs;
    for (std::uint64_t at = (m_lastCycleMs / kPeriodMs + 1) * kPeriodMs; at <= last; at += kPeriodMs) {
        if (m_byPlace.empty()) {
            idleCycles((last - at) / kPeriodMs + 1, tableKeys);
            break;
        }
        cycle(tableKeys, removed);
    }
    m_lastCycleMs = std::max(m_lastCycleMs, last);
}

std::uint64_t ActiveExpireCycle::loopShare(std::uint64_t tableKeys) const {
    // The share of the table's order that holds a loop's sample: keysPerLoop of its keys (all of a small
    // table).
    const std::uint64_t keys = tableKeys + m_byPlace.size();
    if (keys <= kKeysPerLoop)
        return kWholeTable;
    return UINT64_MAX / keys * kKeysPerLoop;
}

void ActiveExpireCycle::idleCycles(std::uint64_t cycles, std::uint64_t tableKeys) {
    // Each samples one loop's keys, finds none expired and stops; the cursor goes back to the table's start
    // when a loop reaches its end.
    if (tableKeys == 0)
        return; // nothing to sample: the cursor stays
    const std::uint64_t share = loopShare(tableKeys);
    if (share == kWholeTable) {
        m_cursor = 0;
        return;
    }
    const std::uint64_t toEnd = (UINT64_MAX - m_cursor) / share + 1; // loops up to and including the wrap
    if (cycles < toEnd) {
        m_cursor += share * cycles;
        return;
    }
    const std::uint64_t perPass = UINT64_MAX / share + 1;
    m_cursor = share * ((cycles - toEnd) % perPass);
}

void ActiveExpireCycle::cycle(std::uint64_t tableKeys, std::vector<std::uint32_t>& removed) {
    // expire.c activeExpireCycle's loop over one database: sample, remove the expired, go on while the
    // sample was more than acceptably stale, stop at the table's end.
    while (tableKeys + m_byPlace.size() != 0) {
        const std::uint64_t sampled = std::min<std::uint64_t>(tableKeys + m_byPlace.size(), kKeysPerLoop);
        const std::uint64_t share = loopShare(tableKeys);
        const bool toTheEnd = share == kWholeTable || share > UINT64_MAX - m_cursor;
        const std::uint64_t end = toTheEnd ? 0 : m_cursor + share;
        std::uint64_t expired = 0;
        for (auto it = m_byPlace.lower_bound(m_cursor); it != m_byPlace.end() && (toTheEnd || it->first < end);) {
            forget(it++, removed);
            ++expired;
        }
        m_cursor = end;
        if (toTheEnd) // the cursor is back at the table's start: db_done
            return;
        if (expired * 100 / std::max(sampled, expired) <= kAcceptableStalePercent)
            return;
    }
}

void ActiveExpireCycle::drain(std::vector<std::uint32_t>& removed) {
    // The cycles after the trace: from the cursor to the table's end, then from its start.
    for (auto it = m_byPlace.lower_bound(m_cursor); it != m_byPlace.end();)
        forget(it++, removed);
    while (!m_byPlace.empty())
        forget(m_byPlace.begin(), removed);
    m_cursor = 0;
}

} // namespace layoutlab
