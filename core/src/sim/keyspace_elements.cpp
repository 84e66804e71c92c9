// SPDX-License-Identifier: MIT
// The keyspace replay's element requests (Op::Element): a collection key's life in the keyspace (its index
// entry, its TTL, its deletion with its last element), its elements handed to the CollectionReplay.

#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/keyspace_replay.h"

namespace layoutlab {

template <bool Observed> Status KeyspaceReplay::applyElement(KeyState& key, const Request& r, bool startsCommand) {
    // simulate()'s replay hands collections over, with the slab model of jemalloc's arenas or a server's
    // budget observing it, or none; memcached's models have no collections.
    if (!m_collections || (Observed && !m_observer->modelsCollections()))
        return usageError("collection keys (hashes, sets, sorted sets, lists) are not modelled here: memcached has "
                          "none, and a budget of raw sizes (--raw-sizes) counts a key and its value only: run `sim` "
                          "or `sweep` with a Valkey or Redis layout, or `drive` for a real server's figures");
    const ElementOp op = r.elementOp();
    const std::uint32_t id = idOf(key);
    if (op.action == ElementAction::Size) { // what the replay knows of an element: no lookup, nothing changes
        if (key.live() && key.collection() && m_collections->holds(id, op.collection))
            if (auto known = m_collections->apply(id, r, false); !known)
                return known.error();
        return Ok {};
    }
    if (Observed && m_writesRefused && deniedOnOom(op)) [[unlikely]] {
        tableOf(key).lookup(); // OOM: the command is refused before it runs
        ++m_summary.refusedWrites;
        return Ok {};
    }
    if (key.live() && !(key.collection() && m_collections->holds(id, op.collection))) {
        tableOf(key).lookup(); // WRONGTYPE
        ++m_summary.wrongTypeRequests;
        return Ok {};
    }
    const bool created = !key.live();
    if (created) {
        // Only a write makes the key (HDEL or HGET of a missing key changes nothing); an update too where the
        // trace may name a key evicted since (an HSET or ZADD of its field makes it again; LSET does not).
        const bool updateMakes = op.action == ElementAction::Update && op.collection != CollectionKind::List
            && m_collections->elementsMayBeGone();
        if (op.action != ElementAction::Add && op.action != ElementAction::Command && op.action != ElementAction::Load
            && !updateMakes) {
            tableOf(key).lookup();
            if (op.action == ElementAction::Remove && m_collections->elementsMayBeGone())
                m_collections->lostElementRemoved(id); // one the key lost with its eviction, if it was evicted
            return Ok {};
        }
        tableOf(key).insert();
        key.set(KeyState::kLive | KeyState::kWritten | KeyState::kCollection);
        key.clear(KeyState::kStaleExpire);
        key.setKeyBytes(r.keyBytes);
        key.valueBytes = 0;
        key.setKind(ValueKind::String);
        if (++m_summary.liveKeys > m_summary.maxLiveKeys)
            m_summary.maxLiveKeys = m_summary.liveKeys;
    } else {
        tableOf(key).lookup();
    }
    auto emptied = m_collections->apply(id, r, created, startsCommand);
    if (!emptied)
        return emptied.error();
    if (*emptied) // the engines delete a collection with its last element
        remove<Observed>(key);
    else if constexpr (Observed)
        m_observer->elementStored(id, key, r, startsCommand);
    return Ok {};
}

template Status KeyspaceReplay::applyElement<true>(KeyState& key, const Request& r, bool startsCommand);
template Status KeyspaceReplay::applyElement<false>(KeyState& key, const Request& r, bool startsCommand);

} // namespace layoutlab
