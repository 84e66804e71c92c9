// SPDX-License-Identifier: MIT
// The keyspace replay's element requests (Op::Element): a collection key's life in the keyspace (its index
// entry, its TTL, its deletion with its last element), its elements handed to the CollectionReplay.

#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/keyspace_replay.h"

namespace layoutlab {

template <bool Observed> Status KeyspaceReplay::applyElement(KeyState& key, const Request& r) {
    // simulate()'s replay hands collections over, with the slab model of jemalloc's arenas observing it or
    // none; the other observers model strings alone.
    if (!m_collections || (Observed && !m_observer->modelsCollections()))
        return usageError("collection keys (hashes, sets, sorted sets, lists) are not yet modelled under a memory "
                          "budget, by memcached's slab pages or by the reference engine (profile): run `sim` or "
                          "`sweep` without a budget, or `drive` for a real server's figures");
    const ElementOp op = r.elementOp();
    const std::uint32_t id = idOf(key);
    if (key.live() && !(key.collection() && m_collections->holds(id, op.collection))) {
        m_table.lookup(); // WRONGTYPE
        ++m_summary.wrongTypeRequests;
        return Ok {};
    }
    const bool created = !key.live();
    if (created) {
        // Only a write makes the key (HDEL or HGET of a missing key changes nothing).
        if (op.action != ElementAction::Add && op.action != ElementAction::Command
            && op.action != ElementAction::Load) {
            m_table.lookup();
            return Ok {};
        }
        m_table.insert();
        key.set(KeyState::kLive | KeyState::kWritten | KeyState::kCollection);
        key.clear(KeyState::kStaleExpire);
        key.setKeyBytes(r.keyBytes);
        key.valueBytes = 0;
        key.setKind(ValueKind::String);
        if (++m_summary.liveKeys > m_summary.maxLiveKeys)
            m_summary.maxLiveKeys = m_summary.liveKeys;
    } else {
        m_table.lookup();
    }
    auto emptied = m_collections->apply(id, r, created);
    if (!emptied)
        return emptied.error();
    if (*emptied) // the engines delete a collection with its last element
        remove<Observed>(key);
    else if constexpr (Observed)
        m_observer->elementStored(id, key, r);
    return Ok {};
}

template Status KeyspaceReplay::applyElement<true>(KeyState& key, const Request& r);
template Status KeyspaceReplay::applyElement<false>(KeyState& key, const Request& r);

} // namespace layoutlab
