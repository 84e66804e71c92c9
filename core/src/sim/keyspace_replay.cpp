// SPDX-License-Identifier: MIT
#include "layoutlab/sim/keyspace_replay.h"

#include "layoutlab/sim/collection_replay.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

KeyspaceReplay::KeyspaceReplay(IndexPolicy policy, std::uint64_t keyIdHint, std::uint32_t getSampleSize,
    std::optional<StaleExpireRule> staleExpire, std::optional<StringRewriteRule> strings)
    : m_policy(policy)
    , m_hasExpiresTable(policy.expiresTable)
    , m_getRingSize(getSampleSize)
    , m_staleExpire(std::move(staleExpire))
    , m_strings(std::move(strings)) {
    m_databases.push_back({ IndexTableModel(policy.kind, policy.params), IndexTableModel(policy.kind, policy.params) });
    m_keys.resize(static_cast<std::size_t>(std::min(keyIdHint, kMaxKeyIds)));
    m_getRing.reserve(getSampleSize);
    m_millisecondTtls = policy.kind != IndexKind::MemcachedAssoc;
    // Only Valkey's crons grow a table (IndexTableModel::atCronLimit).
    if (policy.kind != IndexKind::ValkeyDict && policy.kind != IndexKind::ValkeyHashtable)
        m_nextCronCheckMs = UINT64_MAX;
}

std::vector<std::uint32_t> KeyspaceReplay::getSample() const {
    if (m_getRing.size() < m_getRingSize || m_getRingSize == 0)
        return m_getRing;
    std::vector<std::uint32_t> ordered;
    ordered.reserve(m_getRing.size());
    const std::size_t start = static_cast<std::size_t>(m_getRingNext % m_getRingSize);
    ordered.insert(ordered.end(), m_getRing.begin() + static_cast<std::ptrdiff_t>(start), m_getRing.end());
    ordered.insert(ordered.end(), m_getRing.begin(), m_getRing.begin() + static_cast<std::ptrdiff_t>(start));
    return ordered;
}

std::uint32_t KeyspaceReplay::sdsBytesOf(std::uint32_t keyId) const {
    const auto it = m_buffers.find(keyId);
    return it == m_buffers.end() ? 0
                                 : static_cast<std::uint32_t>(std::min<std::uint64_t>(it->second.bytes(), UINT32_MAX));
}

ShapeBound KeyspaceReplay::extendedShape(const KeyState& key) const {
    return { key.shapeAt(0), sdsBytesOf(idOf(key)), key.staleBound() };
}

void KeyspaceReplay::flushGets(KeyState& key) {
    if (key.pendingGets != 0) {
        if (key.plainShape()) [[likely]]
            m_getShapes.add(key.shape(), key.pendingGets);
        else
            m_thresholdGetShapes.add(extendedShape(key), key.pendingGets);
        key.pendingGets = 0;
    }
}

void KeyspaceReplay::rewriteStaleExpire(KeyState& key, const Request& r, std::uint32_t valueBytes, ValueKind kind) {
    // Below its bound the key's object has the field; an overwrite keeps it only below the rule's bound too.
    const KeyShape before = unpackShape(key.shapeAt(0));
    const KeyShape after { r.keyBytes, valueBytes, false, kind, true };
    key.expireAtSeconds = std::min(key.expireAtSeconds, m_staleExpire->keptBelow(before, after, r.op));
    if (key.expireAtSeconds == 0)
        key.clear(KeyState::kStaleExpire);
}

template <bool Observed>
void KeyspaceReplay::write(KeyState& key, const Request& r, std::uint32_t valueBytes, ValueKind kind) {
    flushGets(key);
    if (key.staleExpire() && key.live()) [[unlikely]]
        rewriteStaleExpire(key, r, valueBytes, kind);
    if (key.collection() && key.live()) [[unlikely]] { // SET replaces a key of any type
        m_collections->erase(idOf(key));
        key.clear(KeyState::kCollection);
    }
    if (!key.live()) {
        tableOf(key).insert();
        key.set(KeyState::kLive | KeyState::kWritten);
        if (++m_summary.liveKeys > m_summary.maxLiveKeys)
            m_summary.maxLiveKeys = m_summary.liveKeys;
        if (m_collections)
            m_collections->forgetLost(idOf(key)); // a string where a budget had evicted a collection
    } else {
        tableOf(key).lookup();
    }
    if (key.kind() == ValueKind::RawString && kind != ValueKind::RawString) [[unlikely]]
        m_buffers.erase(idOf(key));
    key.setKeyBytes(r.keyBytes);
    key.valueBytes = valueBytes;
    key.setKind(kind);
    notifyStored<Observed>(key, r.op);
}

template <bool Observed> void KeyspaceReplay::remove(KeyState& key, std::uint64_t expiredDueMs) {
    flushGets(key);
    if (key.kind() == ValueKind::RawString) [[unlikely]]
        m_buffers.erase(idOf(key));
    if (key.collection()) [[unlikely]] {
        m_collections->erase(idOf(key));
        key.clear(KeyState::kCollection);
    }
    key.clear(KeyState::kLive); // first, so clearing the TTL tells no observer of a shape change
    clearTtl<Observed>(key);
    key.clear(KeyState::kStaleExpire);
    tableOf(key).erase();
    --m_summary.liveKeys;
    if constexpr (Observed) {
        if (expiredDueMs != 0)
            m_observer->expired(idOf(key), expiredDueMs);
        else
            m_observer->removed(idOf(key));
    }
}

// Instantiated for keyspace_elements.cpp, whose element requests delete a collection with its last element.
template void KeyspaceReplay::write<true>(KeyState&, const Request&, std::uint32_t, ValueKind);
template void KeyspaceReplay::write<false>(KeyState&, const Request&, std::uint32_t, ValueKind);
template void KeyspaceReplay::remove<true>(KeyState& key, std::uint64_t);
template void KeyspaceReplay::remove<false>(KeyState& key, std::uint64_t);

template <bool Observed> void KeyspaceReplay::applyOne(KeyState& key, const Request& r) {
    if constexpr (Observed)
        if (m_writesRefused && deniedOnOom(r.op)) [[unlikely]] {
            tableOf(key).lookup();
            ++m_summary.refusedWrites;
            if (r.op == Op::Set && !key.live()) {
                // The client sent the value: its size fills the key's next miss, as the drive's client does.
                key.valueBytes = r.valueBytes;
                key.setKeyBytes(r.keyBytes);
                key.setKind(r.kind);
                key.set(KeyState::kSizeKnown);
            }
            return;
        }
    switch (r.op) {
    case Op::Get:
        if (wrongType(key))
            break;
        tableOf(key).lookup();
        if (key.live()) {
            ++m_summary.getHits;
            if (++key.pendingGets == UINT32_MAX)
                flushGets(key);
            if (m_getRingSize != 0) {
                if (m_getRing.size() < m_getRingSize)
                    m_getRing.push_back(r.keyId);
                else
                    m_getRing[static_cast<std::size_t>(m_getRingNext % m_getRingSize)] = r.keyId;
                ++m_getRingNext;
            }
            if constexpr (Observed)
                if (m_budget)
                    m_budget->read(r.keyId);
        } else {
            ++m_summary.getMisses;
            if (m_fillBatch != 0) [[unlikely]]
                queueFill(key, r);
        }
        break;
    case Op::Add:
    case Op::Replace:
    case Op::Set:
        if ((r.op == Op::Add && key.live()) || (r.op == Op::Replace && !key.live())) {
            tableOf(key).lookup();
            break;
        }
        write<Observed>(key, r, r.valueBytes, r.kind);
        if (r.ttlSeconds == kKeepTtl)
            break; // SET ... KEEPTTL
        if (r.ttlSeconds)
            setTtl<Observed>(key, r.keyId, r.timeMs, r.ttlSeconds);
        else
            clearTtl<Observed>(key); // SET without KEEPTTL / memcached exptime 0
        break;
    case Op::Append:
    case Op::Prepend:
        append<Observed>(key, r);
        break;
    case Op::SetRange:
        setRange<Observed>(key, r);
        break;
    case Op::Incr:
    case Op::Decr:
        increment<Observed>(key, r);
        break;
    case Op::Delete:
        tableOf(key).lookup();
        m_summary.unwrittenKeyDeletes += key.written() ? 0 : 1;
        if (key.live())
            remove<Observed>(key);
        else if (m_collections) [[unlikely]]
            m_collections->forgetLost(idOf(key)); // gone by an eviction: what the trace took it to hold
        break;
    case Op::Expire:
        tableOf(key).lookup();
        if (key.live() && r.ttlSeconds)
            setTtl<Observed>(key, r.keyId, r.timeMs, r.ttlSeconds);
        break;
    case Op::Persist:
        tableOf(key).lookup();
        if (key.live())
            clearTtl<Observed>(key);
        break;
    case Op::Resize:
        // Of the key's database (placeKey runs a kKeyDatabase before it gets here).
        if (r.valueBytes == kEmptiedTables) { // a flush, after its deletes (db.c emptyData)
            tableOf(key).empty();
            if (m_hasExpiresTable)
                expiresOf(key).empty();
            break;
        }
        // rdb.c RESIZEDB: the loading server expands its tables for the file's keys before reading them
        // (dbExpand), which a Valkey hashtable past its growth point holds at twice the buckets inserts grow.
        tableOf(key).expand(r.valueBytes);
        if (m_hasExpiresTable)
            expiresOf(key).expand(r.ttlSeconds);
        break;
    case Op::Rename:
        rename<Observed>(key, r);
        break;
    case Op::Other:
    case Op::Element: // applyElement
        break;
    }
}

void KeyspaceReplay::queueFill(const KeyState& key, const Request& r) {
    Request fill = r;
    fill.op = Op::Set;
    if (fill.valueBytes == 0) { // the trace gives no size with its GETs: the key's last value
        if (!key.sizeKnown()) {
            ++m_summary.unfillableMisses;
            return;
        }
        fill.valueBytes = key.valueBytes;
        fill.kind = key.kind() == ValueKind::RawString ? ValueKind::String : key.kind();
    }
    m_pendingFills.push_back(fill);
}

template <bool Observed> void KeyspaceReplay::applyFills() {
    // Each fill is a command of its own: the budget is asked before it, as before any request.
    for (const Request& fill : m_pendingFills) {
        if constexpr (Observed)
            if (m_budget)
                m_writesRefused = !m_budget->makeRoom(*this, fill.timeMs);
        ++m_summary.fills;
        // A key missed twice in one batch is filled twice: the second SET overwrites the first.
        applyOne<Observed>(m_keys[fill.keyId], fill);
    }
    m_pendingFills.clear();
}

void KeyspaceReplay::evict(std::uint32_t keyId, bool counted) {
    KeyState& key = m_keys[keyId];
    if (!key.live())
        return;
    const std::uint64_t lost = key.collection() ? m_collections->namedByTrace(keyId) : 0;
    remove<true>(key);
    if (lost > 0)
        m_collections->evicted(keyId, lost);
    if (counted)
        ++m_summary.evictedKeys;
}

void KeyspaceReplay::dropRefusedWrite(std::uint32_t keyId) {
    KeyState& key = m_keys[keyId];
    if (key.live())
        remove<true>(key);
    ++m_summary.refusedWrites;
}

// server.c: databasesCron runs at hz 10 (CONFIG_DEFAULT_HZ), every 100 ms.
constexpr std::uint64_t kCronPeriodMs = 100;

void KeyspaceReplay::cronCheck(std::uint64_t nowMs, std::uint64_t lastRequestMs) {
    // No request since `lastRequestMs`: a table at its limit now has been there that long.
    const bool quietPeriod = nowMs >= lastRequestMs + kCronPeriodMs;
    m_cronSeen.resize(m_databases.size(), { UINT64_MAX, UINT64_MAX });
    for (std::size_t db = 0; db < m_databases.size(); ++db)
        for (std::size_t which = 0; which < 2; ++which) {
            IndexTableModel& table = which == 0 ? m_databases[db].keys : m_databases[db].expires;
            std::uint64_t& seen = m_cronSeen[db][which];
            const bool atLimit = table.atCronLimit();
            if (atLimit && (seen == table.entries() || quietPeriod)) {
                table.cronGrow();
                seen = UINT64_MAX;
            } else {
                seen = atLimit ? table.entries() : UINT64_MAX;
            }
        }
    m_nextCronCheckMs = (nowMs / kCronPeriodMs + 1) * kCronPeriodMs;
}

Status KeyspaceReplay::placeKey(const KeyState& key, std::uint32_t database) {
    if (database > kMaxDatabase)
        return dataError(fmt::format("a key placed in database {}: at most {} databases are modelled", database,
            std::uint64_t { kMaxDatabase } + 1));
    const std::uint32_t keyId = idOf(key);
    // memcached has no databases: one table holds every key (assoc.c primary_hashtable).
    if (databaseOf(keyId) == database || m_policy.kind == IndexKind::MemcachedAssoc)
        return Ok {};
    if (key.live())
        return dataError(fmt::format(
            "key {} placed in database {} while it is live in database {}", keyId, database, databaseOf(keyId)));
    if (keyId >= m_keyDatabases.size())
        m_keyDatabases.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_keys.size()));
    m_keyDatabases[keyId] = static_cast<std::uint16_t>(database);
    if (m_observer)
        m_observer->placed(keyId, database);
    while (m_databases.size() <= database) {
        m_databases.push_back(
            { IndexTableModel(m_policy.kind, m_policy.params), IndexTableModel(m_policy.kind, m_policy.params) });
        m_databases.back().keys.setGrowthGate(m_budget);
        m_databases.back().expires.setGrowthGate(m_budget);
    }
    return Ok {};
}

Status KeyspaceReplay::apply(std::span<const Request> batch, std::uint64_t firstRequestNumber) {
    return m_observer ? applyBatch<true>(batch, firstRequestNumber) : applyBatch<false>(batch, firstRequestNumber);
}

template <bool Observed>
Status KeyspaceReplay::applyBatch(std::span<const Request> batch, std::uint64_t firstRequestNumber) {
    std::uint64_t number = firstRequestNumber;
    // The key array is far larger than the caches: fetch the state of a request a few ahead while this
    // one is applied.
    constexpr std::size_t kPrefetchDistance = 32;
    // Nearer, a write's state is at hand: what it points to (its shape's slot in the GET histogram) is
    // fetched in turn.
    constexpr std::size_t kNearDistance = 8;
    // Make room for the batch's largest key id once, so the loop indexes a plain array.
    std::uint32_t maxKeyId = 0;
    for (const Request& r : batch)
        maxKeyId = std::max(maxKeyId, r.keyId);
    if (!batch.empty() && maxKeyId >= m_keys.size())
        m_keys.resize(std::max<std::size_t>(std::size_t { maxKeyId } + 1, m_keys.size() * 2));
    KeyState* const keys = m_keys.data();
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const Request& r = batch[i];
        if (i + kPrefetchDistance < batch.size()) {
            __builtin_prefetch(&keys[batch[i + kPrefetchDistance].keyId], 1);
            if constexpr (Observed)
                if (batch[i + kPrefetchDistance].op != Op::Get)
                    m_observer->prefetch(batch[i + kPrefetchDistance]);
        }
        if (i + kNearDistance < batch.size())
            if (const Request& near = batch[i + kNearDistance]; near.op != Op::Get) {
                const KeyState& k = keys[near.keyId];
                if (k.pendingGets != 0 && k.plainShape())
                    m_getShapes.prefetch(k.shape());
            }
        ++number;
        if (r.keyBytes > kMaxShapeKeyBytes)
            return dataError(fmt::format(
                "request {}: key of {} bytes exceeds the {}-byte limit", number, r.keyBytes, kMaxShapeKeyBytes));
        if constexpr (Observed)
            if (r.timeMs / 1000 != m_observedSecond) [[unlikely]] {
                m_observedSecond = r.timeMs / 1000;
                m_observer->clockAt(m_observedSecond);
            }
        if (r.timeMs >= m_nextExpiryMs) [[unlikely]]
            expireDue<Observed>(r.timeMs);
        if (r.timeMs >= m_nextCronCheckMs) [[unlikely]]
            cronCheck(r.timeMs, i > 0 ? batch[i - 1].timeMs : m_lastRequestMs);
        tellClock<Observed>(r.timeMs);
        bool startsCommand = true;
        if (r.op == Op::Element) [[unlikely]]
            startsCommand = startsElementCommand(r);
        else
            m_elementCommandKey.reset();
        // The budget is asked before each command (an element command's first request).
        if constexpr (Observed)
            if (m_budget && startsCommand) [[unlikely]]
                m_writesRefused = !m_budget->makeRoom(*this, r.timeMs);
        ++m_summary.requestsByOp[static_cast<std::size_t>(r.op)];
        if (r.op == Op::Element) [[unlikely]] {
            if (auto ok = applyElement<Observed>(keys[r.keyId], r, startsCommand); !ok) {
                Error e = ok.error();
                e.message = fmt::format("request {}: {}", number, e.message);
                return e;
            }
        } else if (r.op == Op::Resize && r.valueBytes == kKeyDatabase) [[unlikely]] {
            if (auto ok = placeKey(keys[r.keyId], r.ttlSeconds); !ok) {
                Error e = ok.error();
                e.message = fmt::format("request {}: {}", number, e.message);
                return e;
            }
        } else {
            applyOne<Observed>(keys[r.keyId], r);
        }
        if (m_fillBatch != 0 && number % m_fillBatch == 0 && !m_pendingFills.empty()) [[unlikely]]
            applyFills<Observed>();
    }
    m_summary.requests = number;
    if (!batch.empty())
        m_lastRequestMs = batch.back().timeMs;
    if (m_expiryHeap.size() > 2 * m_summary.liveKeys + 65536)
        compactExpiryHeap();
    return Ok {};
}

void KeyspaceReplay::finish() {
    if (!m_pendingFills.empty()) {
        if (m_observer)
            applyFills<true>();
        else
            applyFills<false>();
    }
    for (auto& db : m_databases) {
        db.keys.settle();
        db.expires.settle();
    }
    std::uint64_t distinct = 0;
    std::uint64_t ttl = 0;
    std::uint64_t collections = 0;
    // One pass over the keys: flush pending GETs, count, and build the keyspace's shape histogram.
    for (auto& k : m_keys) {
        flushGets(k);
        distinct += k.written() ? 1 : 0;
        if (k.live()) {
            ttl += k.hasTtl() ? 1 : 0;
            if (k.collection()) [[unlikely]]
                ++collections; // the collection replay's
            else if (k.plainShape()) [[likely]]
                m_keyspaceShapes.add(k.shape());
            else
                m_thresholdKeyspaceShapes.add(extendedShape(k));
        }
    }
    m_summary.distinctKeys = distinct;
    m_summary.ttlKeys = ttl;
    m_summary.collectionKeys = collections;
}

} // namespace layoutlab
