// SPDX-License-Identifier: MIT
// The keyspace replay's RENAME and RENAMENX (Op::Rename): a source request, then its destination's, the key's
// object moved whole, its collection and TTL with it; and a collection's COPY (the same pair, the destination's
// marked kCopyDestination).

#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/keyspace_replay.h"

namespace layoutlab {

template <bool Observed> void KeyspaceReplay::rename(KeyState& key, const Request& r) {
    // db.c renameGenericCommand: the source looked up, the destination deleted if it exists, the source
    // deleted, its object added under the new name, then its TTL set there (setExpire).
    tableOf(key).lookup();
    if (r.valueBytes == kRenameSource) {
        m_renameSource = r.keyId;
        return;
    }
    const auto from = std::exchange(m_renameSource, std::nullopt);
    if (!from || *from == r.keyId || !m_keys[*from].live()) {
        ++m_summary.unmatchedRenames; // the importer makes pairs only where the server renamed
        return;
    }
    KeyState& source = m_keys[*from];
    if (r.valueBytes == kCopyDestination)
        return copy<Observed>(key, source, r);
    if (key.live())
        remove<Observed>(key);
    const KeyState moved = source;
    const sds::Buffer buffer = moved.kind() == ValueKind::RawString ? m_buffers[*from] : sds::Buffer {};
    if constexpr (Observed)
        m_observer->renamed(*from, r.keyId);
    if (moved.collection()) {
        m_collections->rename(*from, r.keyId);
        source.clear(KeyState::kCollection); // its elements are the destination's now
    }
    remove<Observed>(source);
    tableOf(key).insert();
    // The object itself moves: its value, kind and elements. Valkey 8.1 and later make it again with the new
    // name (objectSetKeyAndExpire, the value's pointer kept), without an expire field until setExpire adds
    // one: a stale field the old object kept is gone.
    key.keyAndFlags = (moved.keyAndFlags & (KeyState::kKindMask | KeyState::kCollection)) | KeyState::kLive
        | KeyState::kWritten | r.keyBytes;
    key.valueBytes = moved.valueBytes;
    key.expireAtSeconds = 0;
    if (moved.kind() == ValueKind::RawString)
        m_buffers[r.keyId] = buffer;
    if (++m_summary.liveKeys > m_summary.maxLiveKeys)
        m_summary.maxLiveKeys = m_summary.liveKeys;
    notifyStored<Observed>(key, Op::Set);
    if (moved.hasTtl())
        keepTtl<Observed>(key, r.keyId, moved.expireAtSeconds);
}

template <bool Observed> void KeyspaceReplay::copy(KeyState& key, const KeyState& source, const Request& r) {
    // db.c copyCommand: the source's value duplicated (a collection's: CollectionKeyModel::duplicated), the
    // destination deleted if it exists, the copy added under its name, then the source's TTL set there.
    if (!source.collection() || !m_collections) {
        ++m_summary.unmatchedRenames; // the importer writes a string's copy as the write that makes it
        return;
    }
    const std::uint32_t from = idOf(source);
    if (key.live())
        remove<Observed>(key);
    m_collections->copy(from, r.keyId);
    tableOf(key).insert();
    key.keyAndFlags = KeyState::kCollection | KeyState::kLive | KeyState::kWritten | r.keyBytes;
    key.valueBytes = 0;
    key.expireAtSeconds = 0;
    if (++m_summary.liveKeys > m_summary.maxLiveKeys)
        m_summary.maxLiveKeys = m_summary.liveKeys;
    notifyStored<Observed>(key, Op::Set);
    if (source.hasTtl())
        keepTtl<Observed>(key, r.keyId, source.expireAtSeconds);
}

template void KeyspaceReplay::rename<true>(KeyState& key, const Request& r);
template void KeyspaceReplay::rename<false>(KeyState& key, const Request& r);
template void KeyspaceReplay::copy<true>(KeyState& key, const KeyState& source, const Request& r);
template void KeyspaceReplay::copy<false>(KeyState& key, const KeyState& source, const Request& r);

} // namespace layoutlab
