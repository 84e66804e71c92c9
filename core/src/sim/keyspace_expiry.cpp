// SPDX-License-Identifier: MIT
// The replay's TTLs: set and cleared by commands, kept in a heap by the millisecond the key is expired at,
// and the keys dropped as the clock passes them (keyspace_replay.h).
#include "layoutlab/sim/keyspace_replay.h"

#include <algorithm>

namespace layoutlab {

template <bool Observed>
void KeyspaceReplay::setTtl(KeyState& key, std::uint32_t keyId, std::uint64_t nowMs, std::uint32_t ttlSeconds) {
    if (!key.hasTtl()) {
        flushGets(key);
        key.set(KeyState::kHasTtl);
        key.clear(KeyState::kStaleExpire); // the field holds the TTL again
        if (m_hasExpiresTable)
            expiresOf(key).insert();
    }
    const std::uint64_t at = std::min<std::uint64_t>(nowMs / 1000 + ttlSeconds, UINT32_MAX);
    key.expireAtSeconds = static_cast<std::uint32_t>(at);
    // Redis and Valkey: `now + seconds * 1000`, expired from the millisecond after (db.c setExpire,
    // keyIsExpired); memcached: from the start of its second (do_item_get).
    const std::uint64_t dueMs
        = m_millisecondTtls ? std::min(nowMs + std::uint64_t { ttlSeconds } * 1000, at * 1000 + 999) + 1 : at * 1000;
    m_expiryHeap.emplace(dueMs, keyId);
    m_nextExpiryMs = std::min(m_nextExpiryMs, dueMs);
    notifyStored<Observed>(key, Op::Expire);
}

template <bool Observed>
void KeyspaceReplay::keepTtl(KeyState& key, std::uint32_t keyId, std::uint32_t expireAtSeconds) {
    key.set(KeyState::kHasTtl);
    if (m_hasExpiresTable)
        expiresOf(key).insert();
    key.expireAtSeconds = expireAtSeconds;
    const std::uint64_t dueMs = std::uint64_t { expireAtSeconds } * 1000 + (m_millisecondTtls ? 1000 : 0);
    m_expiryHeap.emplace(dueMs, keyId);
    m_nextExpiryMs = std::min(m_nextExpiryMs, dueMs);
    notifyStored<Observed>(key, Op::Expire);
}

template <bool Observed> void KeyspaceReplay::clearTtl(KeyState& key) {
    if (!key.hasTtl())
        return;
    flushGets(key);
    key.clear(KeyState::kHasTtl);
    if (m_staleExpire && key.live()) {
        key.set(KeyState::kStaleExpire); // db.c removeExpire: the object keeps the field, set to -1
        key.expireAtSeconds = UINT32_MAX; // at every threshold
    }
    if (m_hasExpiresTable)
        expiresOf(key).erase();
    if (key.live())
        notifyStored<Observed>(key, Op::Persist);
}

template <bool Observed> void KeyspaceReplay::expireDue(std::uint64_t nowMs) {
    // Active expiry (expire.c activeExpireCycle) removes keys nobody touches again; here they go the
    // moment their time has passed (an observer may follow the server's cycles: expire_cycle.h). Heap
    // entries of keys whose TTL changed since are skipped.
    while (!m_expiryHeap.empty() && m_expiryHeap.top().first <= nowMs) {
        const auto [dueMs, keyId] = m_expiryHeap.top();
        m_expiryHeap.pop();
        KeyState& key = m_keys[keyId];
        if (key.live() && key.hasTtl() && key.expireAtSeconds == secondOfDue(dueMs)) {
            remove<Observed>(key, dueMs);
            ++m_summary.expiredKeys;
            m_observerWakeMs = 0; // the observer is told the clock before the next request
        }
    }
    m_nextExpiryMs = m_expiryHeap.empty() ? UINT64_MAX : m_expiryHeap.top().first;
}

void KeyspaceReplay::advanceClock(std::uint64_t nowMs) {
    if (m_observer) {
        expireDue<true>(nowMs);
        tellClock<true>(nowMs);
    } else {
        expireDue<false>(nowMs);
    }
}

void KeyspaceReplay::compactExpiryHeap() {
    // Overwritten TTLs leave stale heap entries; keep each live key's own so memory follows live keys. A TTL
    // set again within its second leaves two that both match it: the later one stays.
    std::vector<Expiry> live;
    live.reserve(m_summary.liveKeys);
    for (; !m_expiryHeap.empty(); m_expiryHeap.pop()) {
        const auto [dueMs, keyId] = m_expiryHeap.top();
        const KeyState& key = m_keys[keyId];
        if (key.live() && key.hasTtl() && key.expireAtSeconds == secondOfDue(dueMs))
            live.emplace_back(dueMs, keyId);
    }
    std::sort(live.begin(), live.end(), [](const Expiry& a, const Expiry& b) {
        return a.second != b.second ? a.second < b.second : a.first > b.first;
    });
    live.erase(
        std::unique(live.begin(), live.end(), [](const Expiry& a, const Expiry& b) { return a.second == b.second; }),
        live.end());
    m_expiryHeap = decltype(m_expiryHeap)(std::greater<>(), std::move(live));
    m_nextExpiryMs = m_expiryHeap.empty() ? UINT64_MAX : m_expiryHeap.top().first;
}

template void KeyspaceReplay::setTtl<true>(KeyState&, std::uint32_t, std::uint64_t, std::uint32_t);
template void KeyspaceReplay::setTtl<false>(KeyState&, std::uint32_t, std::uint64_t, std::uint32_t);
template void KeyspaceReplay::keepTtl<true>(KeyState&, std::uint32_t, std::uint32_t);
template void KeyspaceReplay::keepTtl<false>(KeyState&, std::uint32_t, std::uint32_t);
template void KeyspaceReplay::clearTtl<true>(KeyState&);
template void KeyspaceReplay::clearTtl<false>(KeyState&);
template void KeyspaceReplay::expireDue<true>(std::uint64_t);
template void KeyspaceReplay::expireDue<false>(std::uint64_t);

} // namespace layoutlab
