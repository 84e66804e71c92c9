// SPDX-License-Identifier: MIT
#include "layoutlab/sim/eviction.h"

#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/spec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <utility>

namespace layoutlab {

namespace {

struct PolicyName {
    EvictionPolicy policy;
    std::string_view name;
};
// config.c maxmemory_policy_enum, in its order.
constexpr PolicyName kPolicies[] = {
    { EvictionPolicy::VolatileLru, "volatile-lru" },
    { EvictionPolicy::VolatileLfu, "volatile-lfu" },
    { EvictionPolicy::VolatileRandom, "volatile-random" },
    { EvictionPolicy::VolatileTtl, "volatile-ttl" },
    { EvictionPolicy::AllKeysLru, "allkeys-lru" },
    { EvictionPolicy::AllKeysLfu, "allkeys-lfu" },
    { EvictionPolicy::AllKeysRandom, "allkeys-random" },
    { EvictionPolicy::NoEviction, "noeviction" },
    { EvictionPolicy::ExactLru, "exact-lru" },
};

// lrulfu.c LRULFU_BITS: the object's 24-bit lru field; LRU seconds wrap at it (LRU_CLOCK_MAX in Redis 7.0).
constexpr std::uint32_t kLruMask = (1u << 24) - 1;
// lrulfu.c LFU_INIT_VAL: a new key's counter, so that it survives a few samplings before its first reads.
constexpr std::uint32_t kLfuInitValue = 5;
// lrulfu.c LRU_CLOCK_RESOLUTION: the LRU clock counts seconds.
constexpr std::uint64_t kLruResolutionMs = 1000;
// The index tables' child-bucket estimate is refreshed after this many entries come or go (each refresh
// costs a footprint; the estimate moves by a fraction of a bucket per entry).
constexpr std::uint64_t kTableRefreshEntries = 32;

bool isLfu(EvictionPolicy p) {
    return p == EvictionPolicy::AllKeysLfu || p == EvictionPolicy::VolatileLfu;
}
bool isVolatile(EvictionPolicy p) {
    return p == EvictionPolicy::VolatileLru || p == EvictionPolicy::VolatileLfu || p == EvictionPolicy::VolatileRandom
        || p == EvictionPolicy::VolatileTtl;
}
bool isRandom(EvictionPolicy p) {
    return p == EvictionPolicy::AllKeysRandom || p == EvictionPolicy::VolatileRandom;
}
// The policies that choose through the eviction pool (evict.c performEvictions: LRU, LFU, volatile-ttl).
bool usesPool(EvictionPolicy p) {
    return !isRandom(p) && p != EvictionPolicy::NoEviction && p != EvictionPolicy::ExactLru;
}
// The policies whose choice follows the table's layout: the pool's samples, the random draw.
bool samplesTable(EvictionPolicy p) {
    return usesPool(p) || isRandom(p);
}

} // namespace

bool serverHasPolicy(EvictionPolicy policy) {
    return policy != EvictionPolicy::ExactLru;
}

std::optional<EvictionPolicy> parseEvictionPolicy(std::string_view name) {
    for (const auto& p : kPolicies)
        if (p.name == name)
            return p.policy;
    return std::nullopt;
}

std::string_view evictionPolicyName(EvictionPolicy policy) {
    for (const auto& p : kPolicies)
        if (p.policy == policy)
            return p.name;
    return "unknown";
}

std::string evictionPolicyList() {
    std::string out;
    for (const auto& p : kPolicies)
        out += (out.empty() ? "" : ", ") + std::string(p.name);
    return out;
}

Expected<EvictionOptions> makeEvictionOptions(std::string_view maxmemory, std::string_view policy,
    std::uint32_t samples, std::uint32_t lfuLogFactor, std::uint32_t lfuDecayTime) {
    EvictionOptions budget;
    auto bytes = parseMemorySize(maxmemory, field::kMaxmemory);
    if (!bytes)
        return bytes.error();
    if (*bytes == 0) // config.c: maxmemory 0 means no limit
        return usageError("maxmemory 0 is no budget at all (the server's 'no limit'): give a size", field::kMaxmemory);
    budget.maxmemoryBytes = *bytes;
    const auto parsed = parseEvictionPolicy(policy);
    if (!parsed)
        return usageError(fmt::format("unknown eviction policy '{}' (known: {})", policy, evictionPolicyList()),
            field::kEvictionPolicy);
    budget.policy = *parsed;
    if (samples < kMinEvictionSamples || samples > kMaxEvictionSamples)
        return usageError(fmt::format("maxmemory-samples is {} to {} (config.c), got {}", kMinEvictionSamples,
                              kMaxEvictionSamples, samples),
            field::kEvictionSamples);
    budget.samples = samples;
    budget.lfuLogFactor = lfuLogFactor;
    budget.lfuDecayMinutes = lfuDecayTime;
    return budget;
}

Expected<std::vector<std::uint64_t>> parseBudgets(std::string_view text) {
    std::vector<std::uint64_t> out;
    if (text.find(':') != std::string_view::npos) {
        const auto parts = splitString(text, ':');
        if (parts.size() != 3)
            return usageError(fmt::format("'{}' is not FIRST:LAST:COUNT", text), field::kMaxmemory);
        auto first = parseMemorySize(parts[0], field::kMaxmemory);
        auto last = parseMemorySize(parts[1], field::kMaxmemory);
        auto count = parseUnsigned(parts[2], field::kMaxmemory);
        if (!first || !last || !count)
            return !first ? first.error() : !last ? last.error() : count.error();
        if (*first == 0 || *last < *first || *count < 2 || *count > kMaxBudgets)
            return usageError(
                fmt::format("'{}' needs 0 < FIRST <= LAST and 2 to {} budgets", text, kMaxBudgets), field::kMaxmemory);
        const double ratio
            = std::pow(static_cast<double>(*last) / static_cast<double>(*first), 1.0 / double(*count - 1));
        for (std::uint64_t i = 0; i < *count; ++i)
            out.push_back(i + 1 == *count
                    ? *last
                    : static_cast<std::uint64_t>(std::llround(double(*first) * std::pow(ratio, double(i)))));
    } else {
        for (auto part : splitString(text, ',')) {
            auto size = parseMemorySize(part, field::kMaxmemory);
            if (!size)
                return size.error();
            out.push_back(*size);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.empty() || out.size() > kMaxBudgets)
        return usageError(fmt::format("give 1 to {} budgets", kMaxBudgets), field::kMaxmemory);
    if (out.front() == 0) // config.c: maxmemory 0 means no limit
        return usageError("maxmemory 0 is no budget at all (the server's 'no limit'): give a size", field::kMaxmemory);
    return out;
}

ServerEviction::ServerEviction(EvictionOptions options, const LayoutModel& layout, const AllocatorModel& allocator,
    std::uint32_t threshold, const KeyspaceReplay& replay)
    : m_options(std::move(options))
    , m_layout(&layout)
    , m_allocator(&allocator)
    , m_threshold(threshold)
    , m_replay(&replay)
    , m_lfu(isLfu(m_options.policy))
    , m_volatilePolicy(isVolatile(m_options.policy))
    , m_random(m_options.seed) {
    m_keys.resize(replay.keys().size());
    if (samplesTable(m_options.policy))
        m_sampled.emplace(layout.indexPolicy().kind, m_options.seed);
}

std::uint64_t ServerEviction::stateBytesPerKey(EvictionPolicy policy) {
    const std::uint64_t entry = sizeof(KeyEntry);
    if (policy == EvictionPolicy::ExactLru)
        return entry + sizeof(RecencyLinks);
    return samplesTable(policy) ? entry + SampledKeyTable::kBytesPerKey : entry;
}

SampledKeyTable& ServerEviction::sampledTable() {
    // The keyspace's table, or the expires table the volatile policies sample (evict.c: db->expires).
    const IndexTableModel* table
        = m_volatilePolicy && m_replay->expiresTable() ? m_replay->expiresTable() : &m_replay->keyspaceTable();
    // A table the model has not sized yet (its first key arriving) starts at dict.c's DICT_HT_INITIAL_SIZE.
    constexpr std::uint64_t kInitialBuckets = 4;
    m_sampled->resize(std::max(table->heldBuckets(), kInitialBuckets));
    return *m_sampled;
}

void ServerEviction::unlink(std::uint32_t keyId) {
    RecencyLinks& links = m_recency[keyId];
    if (links.newer != kAbsent)
        m_recency[links.newer].older = links.older;
    else
        m_newest = links.older;
    if (links.older != kAbsent)
        m_recency[links.older].newer = links.newer;
    else
        m_oldest = links.newer;
    links = {};
}

void ServerEviction::pushNewest(std::uint32_t keyId) {
    if (keyId >= m_recency.size())
        m_recency.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_recency.size() * 2));
    m_recency[keyId] = { kAbsent, m_newest };
    if (m_newest != kAbsent)
        m_recency[m_newest].newer = keyId;
    m_newest = keyId;
    if (m_oldest == kAbsent)
        m_oldest = keyId;
}

std::uint32_t ServerEviction::bytesOf(std::uint32_t keyId, const KeyState& key) {
    if (m_options.rawSizes) // libCacheSim's obj_size: the key and the value
        return key.keyBytes() + key.valueBytes;
    if (key.collection()) [[unlikely]]
        return static_cast<std::uint32_t>(std::min<std::uint64_t>(
            m_replay->collections()->usableBytes(keyId, key.keyBytes(), key.hasTtl()), UINT32_MAX - 1));
    auto measure = [&](const KeyShape& shape) -> std::uint32_t {
        const ShapeCost cost = costOf(*m_layout, *m_allocator, shape, m_threshold);
        return cost.layout.stored
            ? static_cast<std::uint32_t>(std::min<std::uint64_t>(cost.usableBytes, UINT32_MAX - 1))
            : 0;
    };
    if (key.plainShape()) [[likely]] {
        const std::uint64_t packed = key.shape();
        if (const auto* known = m_bytesByShape->find(packed))
            return static_cast<std::uint32_t>(*known - 1);
        const std::uint32_t bytes = measure(unpackShape(packed));
        m_bytesByShape->add(packed, std::uint64_t { bytes } + 1);
        return bytes;
    }
    KeyShape shape = unpackShape(key.shapeAt(m_threshold));
    shape.sdsBytes = m_replay->sdsBytesOf(keyId);
    return measure(shape);
}

void ServerEviction::place(std::vector<std::uint32_t>& ids, std::uint32_t& pos, std::uint32_t keyId) {
    pos = static_cast<std::uint32_t>(ids.size());
    ids.push_back(keyId);
}

void ServerEviction::displace(std::vector<std::uint32_t>& ids, std::uint32_t& pos, std::uint32_t KeyEntry::*field) {
    // Swap-remove: the last id takes the freed place.
    const std::uint32_t last = ids.back();
    ids[pos] = last;
    m_keys[last].*field = pos;
    ids.pop_back();
    pos = kAbsent;
}

void ServerEviction::stored(std::uint32_t keyId, const KeyState& key, Op) {
    if (keyId >= m_keys.size())
        m_keys.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_keys.size() * 2));
    KeyEntry& e = m_keys[keyId];
    const std::uint32_t bytes = bytesOf(keyId, key);
    m_keyBytes = m_keyBytes - e.bytes + bytes;
    e.bytes = bytes;
    const bool exact = m_options.policy == EvictionPolicy::ExactLru;
    if (e.livePos == kAbsent) {
        place(m_live, e.livePos, keyId);
        if (m_sampled && !m_volatilePolicy)
            sampledTable().insert(keyId);
        if (exact)
            pushNewest(keyId);
        // object.c createObject -> lrulfu_init: LRU now, or LFU_INIT_VAL at this minute; a renamed key's
        // object keeps its own.
        if (keyId == std::exchange(m_renamedTo, kAbsent))
            e.lru = m_renamedLru;
        else
            e.lru = m_lfu ? static_cast<std::uint32_t>(((m_clockMs / 60000) & 0xFFFF) << 8) | kLfuInitValue : lruNow();
        m_touchedKey = keyId;
        m_touchedCommand = m_command;
    } else if (m_touchedKey != keyId || m_touchedCommand != m_command) {
        // A write looks the key up first (db.c lookupKeyWrite touches it) and the new value keeps the old
        // field (dbSetValue: val->lru = old->lru). One touch per command, however many changes it makes.
        e.lru = touched(e.lru);
        m_touchedKey = keyId;
        m_touchedCommand = m_command;
        if (exact) {
            unlink(keyId);
            pushNewest(keyId);
        }
    }
    if (key.hasTtl()) {
        if (e.volatilePos == kAbsent) {
            place(m_volatile, e.volatilePos, keyId);
            if (m_sampled && m_volatilePolicy)
                sampledTable().insert(keyId);
        }
    } else if (e.volatilePos != kAbsent) {
        displace(m_volatile, e.volatilePos, &KeyEntry::volatilePos);
        if (m_sampled && m_volatilePolicy)
            m_sampled->erase(keyId);
    }
}

void ServerEviction::removed(std::uint32_t keyId) {
    KeyEntry& e = m_keys[keyId];
    m_keyBytes -= e.bytes;
    e.bytes = 0;
    if (m_sampled && (e.livePos != kAbsent || e.volatilePos != kAbsent))
        m_sampled->erase(keyId);
    if (e.livePos != kAbsent) {
        displace(m_live, e.livePos, &KeyEntry::livePos);
        if (m_options.policy == EvictionPolicy::ExactLru)
            unlink(keyId);
    }
    if (e.volatilePos != kAbsent)
        displace(m_volatile, e.volatilePos, &KeyEntry::volatilePos);
}

void ServerEviction::renamed(std::uint32_t from, std::uint32_t to) {
    if (from >= m_keys.size() || m_keys[from].livePos == kAbsent)
        return;
    read(from); // lookupKeyWrite of the source
    m_renamedTo = to;
    m_renamedLru = m_keys[from].lru;
}

void ServerEviction::read(std::uint32_t keyId) {
    if (m_touchedKey == keyId && m_touchedCommand == m_command)
        return;
    KeyEntry& e = m_keys[keyId];
    e.lru = touched(e.lru); // db.c lookupKey: val->lru = lrulfu_touch(val->lru)
    m_touchedKey = keyId;
    m_touchedCommand = m_command;
    if (m_options.policy == EvictionPolicy::ExactLru) {
        unlink(keyId);
        pushNewest(keyId);
    }
}

std::uint32_t ServerEviction::lruNow() const {
    // lrulfu.c lrulfu_updateClockAndPolicy (Redis 7.0 evict.c getLRUClock): seconds, 24 bits.
    return static_cast<std::uint32_t>((m_clockMs / kLruResolutionMs) & kLruMask);
}

std::uint32_t ServerEviction::lfuDecayed(std::uint32_t lru) const {
    // lrulfu.c LFUDecay (Redis 7.0 evict.c LFUDecrAndReturn): one less per lfu-decay-time minutes passed.
    const auto now = static_cast<std::uint16_t>(m_clockMs / 60000);
    const auto previous = static_cast<std::uint16_t>(lru >> 8);
    std::uint32_t freq = lru & 0xFF;
    const auto elapsed = static_cast<std::uint16_t>(now - previous);
    const std::uint32_t periods = m_options.lfuDecayMinutes ? elapsed / m_options.lfuDecayMinutes : 0;
    freq = periods > freq ? 0 : freq - periods;
    return (std::uint32_t { now } << 8) | freq;
}

std::uint32_t ServerEviction::touched(std::uint32_t lru) {
    if (!m_lfu)
        return lruNow(); // lrulfu.c lrulfu_touch -> lru_import(0)
    // lrulfu.c lfu_touch: decay, then LFULogIncr: the counter grows with probability
    // 1 / ((counter - LFU_INIT_VAL) * lfu-log-factor + 1), never past 255.
    const std::uint32_t decayed = lfuDecayed(lru);
    std::uint32_t freq = decayed & 0xFF;
    if (freq < 255) {
        const double base = freq > kLfuInitValue ? static_cast<double>(freq - kLfuInitValue) : 0.0;
        const double p = 1.0 / (base * m_options.lfuLogFactor + 1.0);
        if (m_random.uniform() < p)
            ++freq;
    }
    return (decayed & ~0xFFu) | freq;
}

std::uint64_t ServerEviction::idleOf(std::uint32_t keyId) {
    // evict.c evictionPoolPopulate: a score where higher means a better candidate.
    if (m_options.policy == EvictionPolicy::VolatileTtl) // the sooner the expire the better
        return UINT64_MAX - std::uint64_t { m_replay->keys()[keyId].expireAtSeconds } * 1000;
    const std::uint32_t lru = m_keys[keyId].lru;
    if (m_lfu) // lrulfu.c lrulfu_getIdleness: UINT8_MAX - the decayed counter
        return 255 - (lfuDecayed(lru) & 0xFF);
    return (lruNow() - lru) & kLruMask; // lru_getIdleSecs
}

void ServerEviction::populatePool() {
    // evict.c evictionPoolPopulate: maxmemory-samples keys as the table returns them
    // (kvstoreHashtableSampleEntries; Redis 7.0 dictGetSomeKeys), in its order.
    std::array<std::uint32_t, kMaxEvictionSamples> samples {};
    const std::size_t count = sampledTable().sample(m_random, std::span(samples.data(), m_options.samples));
    auto& pool = m_pool;
    for (std::size_t j = 0; j < count; ++j) {
        const std::uint64_t idle = idleOf(samples[j]);
        // Insert in ascending order of idle: find the first empty entry, or the first whose idle is not
        // below ours (the same key may enter twice: the server does not look).
        std::size_t k = 0;
        while (k < kPoolSize && pool[k].keyId != kAbsent && pool[k].idle < idle)
            ++k;
        if (k == 0 && pool[kPoolSize - 1].keyId != kAbsent)
            continue; // worse than every candidate of a full pool
        if (k < kPoolSize && pool[k].keyId == kAbsent) {
            // an empty entry: nothing to move
        } else if (pool[kPoolSize - 1].keyId == kAbsent) {
            // room on the right: shift k.. one to the right
            std::memmove(&pool[k + 1], &pool[k], sizeof(PoolEntry) * (kPoolSize - k - 1));
        } else {
            // full: drop the best-kept (leftmost) entry, shifting 1..k-1 to the left, and insert at k-1
            --k;
            std::memmove(&pool[0], &pool[1], sizeof(PoolEntry) * k);
        }
        pool[k] = { samples[j], idle };
    }
}

bool ServerEviction::exists(std::uint32_t keyId) const {
    const KeyState& key = m_replay->keys()[keyId];
    return key.live() && (!m_volatilePolicy || key.hasTtl());
}

std::optional<std::uint32_t> ServerEviction::bestKey() {
    const std::vector<std::uint32_t>& from = m_volatilePolicy ? m_volatile : m_live;
    if (from.empty())
        return std::nullopt; // evict.c performEvictions: no keys to evict (total_keys == 0, or no random key)
    if (isRandom(m_options.policy)) { // dictGetRandomKey, kvstoreHashtableRandomEntry: by the table's layout
        const std::uint32_t drawn = sampledTable().randomKey(m_random);
        if (drawn != SampledKeyTable::kNone)
            return drawn;
        return from[m_random.below(from.size())];
    }
    if (m_options.policy == EvictionPolicy::ExactLru)
        return m_oldest;
    // evict.c performEvictions: populate the pool, then take the best entry from the right whose key
    // still exists; entries of deleted keys ("ghosts") are dropped on the way.
    while (true) {
        populatePool();
        for (std::size_t k = kPoolSize; k-- > 0;) {
            if (m_pool[k].keyId == kAbsent)
                continue;
            const std::uint32_t id = m_pool[k].keyId;
            m_pool[k] = {};
            if (exists(id))
                return id;
        }
    }
}

namespace {

// What a table's footprint depends on: its buckets now and after a rehash, and its entries in steps of
// kTableRefreshEntries (the hashtable's child buckets, an estimate, follow its entries).
std::array<std::uint64_t, 6> tableShapeOf(const DatabaseTables& db, bool expiresKept) {
    const IndexTableModel& keys = db.keys;
    const IndexTableModel& expires = db.expires;
    return { keys.buckets(), keys.targetBuckets(), keys.entries() / kTableRefreshEntries,
        expiresKept ? expires.buckets() : 0, expiresKept ? expires.targetBuckets() : 0,
        expiresKept ? expires.entries() / kTableRefreshEntries : 0 };
}

} // namespace

std::uint64_t ServerEviction::tableBytes() {
    if (m_options.rawSizes) // object sizes only: no index
        return 0;
    // Every database's tables (evict.c counts them all in used_memory), summed: a trace of one database has
    // one. Asked once per command under a budget, so the shapes are compared in place, not rebuilt.
    const auto& databases = m_replay->databaseTables();
    const bool expiresKept = m_replay->hasExpiresTables();
    bool changed = !m_tableKnown || m_tableShape.size() != databases.size();
    for (std::size_t i = 0; !changed && i < databases.size(); ++i)
        changed = tableShapeOf(databases[i], expiresKept) != m_tableShape[i];
    if (!changed)
        return m_tableBytes;
    m_tableShape.resize(databases.size());
    m_tableBytes = 0;
    for (std::size_t i = 0; i < databases.size(); ++i) {
        const DatabaseTables& db = databases[i];
        m_tableShape[i] = tableShapeOf(db, expiresKept);
        m_tableBytes += db.keys.entries() ? db.keys.footprint(*m_allocator).usableBytes : 0;
        if (expiresKept && db.expires.entries())
            m_tableBytes += db.expires.footprint(*m_allocator).usableBytes;
    }
    m_tableKnown = true;
    return m_tableBytes;
}

bool ServerEviction::allowsAllocation(std::uint64_t moreBytes) {
    if (m_options.rawSizes) // the tables are not counted
        return true;
    return usedBytes() + moreBytes <= m_options.maxmemoryBytes; // evict.c overMaxmemoryAfterAlloc, negated
}

std::uint64_t ServerEviction::usedBytes() {
    return m_options.baseBytes + m_keyBytes + tableBytes();
}

bool ServerEviction::makeRoom(KeyspaceReplay& replay, std::uint64_t timeMs) {
    ++m_command;
    m_clockMs = timeMs;
    // evict.c getMaxmemoryState: over the limit when used_memory (less AOF and replica buffers, none here)
    // exceeds maxmemory; then free used - maxmemory.
    const std::uint64_t used = usedBytes();
    if (used <= m_options.maxmemoryBytes)
        return true;
    if (m_options.policy == EvictionPolicy::NoEviction)
        return false;
    const std::uint64_t toFree = used - m_options.maxmemoryBytes;
    std::int64_t freed = 0; // what each delete gave back, as zmalloc_used_memory() before and after it says
    while (freed < static_cast<std::int64_t>(toFree)) {
        const auto id = bestKey();
        if (!id)
            return false; // cant_free: EVICT_FAIL
        const std::uint64_t before = usedBytes();
        replay.evict(*id);
        freed += static_cast<std::int64_t>(before) - static_cast<std::int64_t>(usedBytes());
    }
    return true;
}

} // namespace layoutlab
