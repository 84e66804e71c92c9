// SPDX-License-Identifier: MIT
#include "layoutlab/sim/index_table_model.h"
#include "layoutlab/enum_names.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace layoutlab {

namespace {
// Valkey src/hashtable.c.
constexpr std::uint32_t kValkeyBucketBytes = 64; // static_assert(sizeof(bucket) == HASHTABLE_BUCKET_SIZE)
constexpr std::uint32_t kValkeyEntriesPerBucket = 7; // ENTRIES_PER_BUCKET on 64-bit
constexpr std::uint32_t kValkeyBucketFactor = 5; // BUCKET_FACTOR
constexpr std::uint32_t kValkeyBucketDivisor = 32; // BUCKET_DIVISOR
constexpr std::uint32_t kValkeyMaxFillPercentSoft = 100; // MAX_FILL_PERCENT_SOFT
constexpr std::uint32_t kValkeyMinFillPermilleSoft = 130; // MIN_FILL_PERCENT_SOFT 13
// hashtable.c resize(): a growth the resizeAllowed callback refuses happens anyway at this fill.
constexpr std::uint32_t kValkeyMaxFillPercentHard = 500; // MAX_FILL_PERCENT_HARD
// Redis 7.0 src/dict.c / dict.h.
constexpr std::uint32_t kRedisSlotBytes = 8; // dictEntry *table[]
constexpr std::uint64_t kRedisInitialSize = 4; // DICT_HT_INITIAL_SIZE
constexpr std::uint32_t kRedisMaxFillPercent = 100; // _dictExpandIfNeeded: grow when used >= size
constexpr std::uint32_t kRedisMinFillPermille = 100; // server.h HASHTABLE_MIN_FILL 10 (tryResizeHashTables)
// server.h HASHTABLE_MAX_LOAD_FACTOR: dictExpandAllowed lets a table past this load grow whatever the memory.
constexpr double kRedisMaxLoadFactor = 1.618;
// Valkey 8.0 src/dict.c / dict.h: the dict of Redis 7.0 (slots, DICT_HT_INITIAL_SIZE, growth at 1:1),
// shrinking at 1/8 fill on delete.
constexpr std::uint32_t kValkeyDictMinFillPermille = 125; // dict.h HASHTABLE_MIN_FILL 8: used * 8 <= size
// memcached src/assoc.c.
constexpr std::uint32_t kMemcachedBucketBytes = 8; // item *primary_hashtable[]
constexpr std::uint64_t kMemcachedInitialHashpower = 16; // HASHPOWER_DEFAULT
constexpr std::uint32_t kMemcachedMaxFillPercent = 150; // assoc_insert: expand past hashsize * 3 / 2 items
constexpr std::uint32_t kPointerBytes = 8; // one entry pointer in a bucket or slot (64-bit)
} // namespace

std::string_view indexKindName(IndexKind kind) {
    static constexpr std::array<std::string_view, 4> kNames { "valkey-hashtable", "redis-dict", "memcached-assoc",
        "valkey-dict" };
    static_assert(static_cast<std::size_t>(IndexKind::ValkeyDict) == kNames.size() - 1, "a name for every value");
    return enumName(kind, kNames);
}

IndexParams engineIndexParams(IndexKind kind) {
    IndexParams p;
    switch (kind) {
    case IndexKind::ValkeyHashtable:
        p.bucketBytes = kValkeyBucketBytes;
        p.entriesPerBucket = kValkeyEntriesPerBucket;
        p.sizingFactor = kValkeyBucketFactor;
        p.sizingDivisor = kValkeyBucketDivisor;
        p.maxFillPercent = kValkeyMaxFillPercentSoft;
        p.minFillPermille = kValkeyMinFillPermilleSoft;
        break;
    case IndexKind::RedisDict:
    case IndexKind::ValkeyDict:
        p.bucketBytes = kRedisSlotBytes;
        p.maxFillPercent = kRedisMaxFillPercent;
        p.minFillPermille = kind == IndexKind::RedisDict ? kRedisMinFillPermille : kValkeyDictMinFillPermille;
        p.initialBuckets = kRedisInitialSize;
        break;
    case IndexKind::MemcachedAssoc:
        p.bucketBytes = kMemcachedBucketBytes;
        p.maxFillPercent = kMemcachedMaxFillPercent;
        p.initialBuckets = std::uint64_t { 1 } << kMemcachedInitialHashpower;
        break;
    }
    p.slotPointerBytes = kPointerBytes;
    return p;
}

IndexTableModel::IndexTableModel(IndexKind kind)
    : IndexTableModel(kind, engineIndexParams(kind)) { }

IndexTableModel::IndexTableModel(IndexKind kind, const IndexParams& params)
    : m_kind(kind)
    , m_params(params) {
    if (m_kind == IndexKind::MemcachedAssoc)
        m_buckets = m_params.initialBuckets; // assoc_init() allocates it at start
}

std::uint64_t IndexTableModel::bucketsFor(std::uint64_t minCapacity) const {
    if (m_kind == IndexKind::ValkeyHashtable) {
        // hashtable.c nextBucketExp(): ceil(min_capacity * 5 / 32) buckets, rounded up to a power of two.
        const std::uint64_t minBuckets = (minCapacity * m_params.sizingFactor - 1) / m_params.sizingDivisor + 1;
        return minBuckets <= 1 ? 1 : std::bit_ceil(minBuckets);
    }
    // dict.c _dictNextExp(): the smallest power of two >= size, at least DICT_HT_INITIAL_SIZE.
    return std::max(m_params.initialBuckets, std::bit_ceil(minCapacity));
}

bool IndexTableModel::gateAllows(std::uint64_t buckets, std::uint64_t minCapacity) const {
    if (!m_gate || m_buckets == 0) // the first table is not asked about (dictExpand, an absent old table)
        return true;
    const std::uint64_t bytes = buckets * m_params.bucketBytes;
    switch (m_kind) {
    case IndexKind::ValkeyHashtable:
        // hashtable.c resize(): only growth is asked about, and only below the hard fill limit.
        if (buckets < m_buckets)
            return true;
        return static_cast<double>(minCapacity) * 100
            >= static_cast<double>(m_buckets * m_params.entriesPerBucket) * kValkeyMaxFillPercentHard
            || m_gate->allowsAllocation(bytes);
    case IndexKind::RedisDict:
        // dict.c dictTypeExpandAllowed: growth only (Redis 7.0 shrinks from serverCron, unasked).
        if (buckets < m_buckets)
            return true;
        [[fallthrough]];
    case IndexKind::ValkeyDict:
        // Valkey 8.0 dict.c dictTypeResizeAllowed: growth and shrinking alike; allowed past the load factor.
        return static_cast<double>(m_used) / static_cast<double>(m_buckets) > kRedisMaxLoadFactor
            || m_gate->allowsAllocation(bytes);
    case IndexKind::MemcachedAssoc:
        return true;
    }
    return true;
}

void IndexTableModel::resize(std::uint64_t minCapacity) {
    const std::uint64_t buckets = bucketsFor(std::max<std::uint64_t>(minCapacity, 1));
    if (buckets == m_buckets || !gateAllows(buckets, minCapacity))
        return;
    m_residualBuckets = 0; // the engine resizes only once a rehash has ended
    m_indexVariance = 0;
    m_stepDensity = 0;
    if (m_used == 0) {
        m_buckets = buckets; // an empty table is replaced at once (rehashingCompleted / _dictExpand)
        return;
    }
    m_targetBuckets = buckets;
    m_rehashIndex = 0;
    m_oldEntries = static_cast<double>(m_used);
}

void IndexTableModel::access(bool existingKey) {
    if (m_targetBuckets == 0) {
        if (m_residualBuckets != 0)
            advanceResidual(1);
        return;
    }
    if (!m_bucketRehashOnAccess) {
        rehashStep();
        return;
    }
    // Valkey 8.0 dict.c (dictFind, dictGenericDelete, dictFindPositionForInsert): when the key's bucket in the
    // old table is past the rehash index and not empty, that bucket is rehashed (dictBucketRehash) instead of
    // the next one (dictRehashStep). An existing key is there as often as the old table holds it, with its
    // bucket's other entries; a new key's bucket is there when not yet passed and not empty.
    const double remaining = std::max(1.0, static_cast<double>(m_buckets) - m_rehashIndex);
    const double density = m_oldEntries / remaining;
    const double p = -std::expm1(-density);
    double inOld = 0, bucketEntries = 0;
    if (existingKey) {
        inOld = m_used ? std::min(1.0, m_oldEntries / static_cast<double>(m_used)) : 0;
        bucketEntries = 1 + density;
    } else {
        inOld = remaining / static_cast<double>(m_buckets) * p;
        bucketEntries = p > 1e-12 ? density / p : 0;
    }
    m_oldEntries = std::max(0.0, m_oldEntries - inOld * bucketEntries);
    rehashStep(1 - inOld); // finishes the rehash when the old table is left empty
}

void IndexTableModel::dictExpandIfNeeded() {
    // dict.c _dictExpandIfNeeded() / dictExpandIfNeeded(): first table of 4, then grow to used + 1 when
    // used >= size; nothing while rehashing.
    if (m_targetBuckets != 0)
        return;
    if (m_buckets == 0)
        resize(m_params.initialBuckets);
    else if (m_used * 100 >= m_buckets * m_params.maxFillPercent)
        resize(m_used + 1);
}

void IndexTableModel::findForInsert() {
    if (m_kind != IndexKind::RedisDict && m_kind != IndexKind::ValkeyDict) {
        // hashtable.c hashtableFindPositionForInsert: findBucket's read step (rehashStepOnReadIfNeeded) finds
        // the key, and returns before hashtableExpandIfNeeded.
        lookup();
        return;
    }
    // Redis 7.0 dict.c dictAddRaw -> _dictKeyIndex, Redis 7.2 and Valkey 8.0 dictFindPositionForInsert: a
    // rehash step (Valkey 8.0: the key's own bucket first), then the table grown if it is full, and only then
    // the key found.
    access(true);
    dictExpandIfNeeded();
}

void IndexTableModel::insert() {
    switch (m_kind) {
    case IndexKind::ValkeyHashtable:
        rehashStep();
        // hashtable.c hashtableExpandIfNeeded(): grow when used + 1 exceeds 100% of the slots.
        if (m_targetBuckets == 0
            && (m_buckets == 0 || (m_used + 1) * 100 > m_buckets * m_params.entriesPerBucket * m_params.maxFillPercent))
            resize(m_used + 1);
        break;
    case IndexKind::RedisDict:
    case IndexKind::ValkeyDict:
        access(false);
        dictExpandIfNeeded();
        break;
    case IndexKind::MemcachedAssoc:
        // assoc.c assoc_insert(): expand when curr_items > hashsize * 3 / 2 (done by the maintainer thread).
        if ((m_used + 1) * 100 > m_buckets * m_params.maxFillPercent)
            m_buckets *= 2;
        break;
    }
    ++m_used;
}

bool IndexTableModel::shrinkIfNeeded() {
    if (m_targetBuckets != 0)
        return false;
    const std::uint64_t before = m_buckets;
    if (m_kind == IndexKind::ValkeyHashtable) {
        // hashtable.c hashtableShrinkIfNeeded(): shrink when at most 13% of the slots are used.
        if (m_params.minFillPermille > 0
            && m_used * 1000 <= m_buckets * m_params.entriesPerBucket * m_params.minFillPermille)
            resize(m_used);
    } else if (m_kind == IndexKind::RedisDict) {
        // server.c tryResizeHashTables() -> htNeedsResize(): below 10% fill, dictResize() to fit.
        if (m_buckets > m_params.initialBuckets && m_used * 1000 < m_buckets * m_params.minFillPermille)
            resize(m_used);
    } else if (m_kind == IndexKind::ValkeyDict) {
        // Valkey 8.0 dict.c dictShrinkIfNeeded(): at 1/8 fill or below (used * HASHTABLE_MIN_FILL <= size),
        // dictShrink() to fit; never below DICT_HT_INITIAL_SIZE.
        if (m_buckets > m_params.initialBuckets && m_used * 1000 <= m_buckets * m_params.minFillPermille)
            resize(m_used);
    }
    return m_targetBuckets != 0 || m_buckets != before;
}

void IndexTableModel::erase(bool mayShrink) {
    if (m_used == 0)
        return;
    if (m_targetBuckets != 0 && !m_bucketRehashOnAccess) {
        rehashStep();
        // The deleted entry is in the old table as often as the old table holds it.
        m_oldEntries = std::max(0.0, m_oldEntries - m_oldEntries / static_cast<double>(m_used));
    } else {
        access(true); // the key's bucket moved to the new table first, where it is deleted
    }
    --m_used;
    if (m_targetBuckets != 0)
        finishRehashIfDone();
    // Valkey shrinks on delete (hashtableDelete -> hashtableShrinkIfNeeded; 8.0 dictGenericDelete ->
    // dictShrinkIfAutoResizeAllowed); Redis 7.0 only from serverCron (tryResizeHashTables), which settle()
    // stands for.
    if (mayShrink && (m_kind == IndexKind::ValkeyHashtable || m_kind == IndexKind::ValkeyDict))
        shrinkIfNeeded();
}

void IndexTableModel::empty() {
    if (m_used != 0)
        return;
    // A fresh table of the same geometry, with the settings the replay gave this one.
    IndexTableModel fresh(m_kind, m_params);
    fresh.m_bucketRehashOnAccess = m_bucketRehashOnAccess;
    fresh.m_followsRehashSpread = m_followsRehashSpread;
    fresh.m_gate = m_gate;
    *this = fresh;
}

bool IndexTableModel::atCronLimit() const {
    // Valkey 8.0 server.c databasesCron -> kvstore.c kvstoreTryResizeDicts: where dictShrinkIfNeeded
    // does nothing, dictExpandIfNeeded grows a table that is full (used >= size) without waiting for
    // an insert. Valkey 8.1 and later, kvstoreTryResizeHashtables -> hashtableRightsizeIfNeeded ->
    // hashtableExpandIfNeeded: room for used + 1, which the inserts asked only for used, so a table at
    // exactly its slots (7,168 keys in 1,024 buckets) grows (Valkey 9.1.0's DEBUG HTSTATS: 7,168 slots after
    // the SETs, 14,336 a cron tick later). Redis's tryResizeHashTables only shrinks.
    if (m_targetBuckets != 0 || m_buckets == 0)
        return false;
    if (m_kind == IndexKind::ValkeyDict)
        return m_used * 100 >= m_buckets * m_params.maxFillPercent;
    if (m_kind == IndexKind::ValkeyHashtable)
        return (m_used + 1) * 100 > m_buckets * m_params.entriesPerBucket * m_params.maxFillPercent;
    return false;
}

bool IndexTableModel::cronGrow() {
    if (!atCronLimit())
        return false;
    // Under a budget the server may refuse it (dictTypeResizeAllowed): then the cron has nothing to do.
    const std::uint64_t before = m_buckets;
    resize(m_used + 1);
    return m_buckets != before || m_targetBuckets != 0;
}

void IndexTableModel::settle() {
    m_residualBuckets = 0; // the cron's rehashing ends every rehash
    do {
        if (m_targetBuckets != 0) {
            m_buckets = m_targetBuckets;
            m_targetBuckets = 0;
            m_rehashIndex = 0;
            m_oldEntries = 0;
        }
    } while (shrinkIfNeeded() || cronGrow());
}

double IndexTableModel::expectedChildBuckets(double entries, double buckets, std::uint32_t entriesPerBucket) {
    // Entries land in top-level buckets at random: a bucket's count is Binomial(entries, 1 / buckets) (the
    // Poisson(entries / buckets) of a large table; a small one, a collection's, holds far fewer overflows
    // than Poisson says: one bucket's 5 entries never overflow). A bucket with m > 7 entries needs
    // ceil((m - 7) / 6) child buckets (bucketConvertToChained: the last slot of a full bucket becomes the
    // child pointer, so a chain of c children holds 7 + 6c entries).
    if (buckets <= 0 || entries <= 0 || entriesPerBucket < 2)
        return 0;
    const double perBucket = entriesPerBucket;
    const auto children = [&](double m) { return m > perBucket ? std::ceil((m - perBucket) / (perBucket - 1)) : 0.0; };
    if (buckets <= 1)
        return children(std::round(entries));
    const double lambda = entries / buckets;
    const int last = static_cast<int>(lambda * 4 + 60 + perBucket);
    const double hit = 1 / buckets;
    // P(0) = (1 - 1/B)^n, then P(m) = P(m - 1) (n - m + 1) / m * (1/B) / (1 - 1/B).
    double p = std::exp(entries * std::log1p(-hit));
    double expected = 0;
    for (int m = 1; m <= last && m <= entries + 1; ++m) {
        p *= (entries - m + 1) / m * hit / (1 - hit);
        if (p <= 0)
            break;
        expected += p * children(m);
    }
    return expected * buckets;
}

IndexFootprint IndexTableModel::footprint(const AllocatorModel& allocator) const {
    IndexFootprint f;
    auto addPart = [&](std::uint64_t requested, std::uint64_t count, bool fromAllocator) {
        if (count == 0 || requested == 0)
            return;
        const std::uint64_t usable = fromAllocator ? allocator.usableSize(requested) : requested;
        f.parts.push_back({ requested, usable, count, fromAllocator });
        f.requestedBytes += requested * count;
        f.usableBytes += usable * count;
        f.allocations += count;
    };
    f.rehashing = m_targetBuckets != 0;
    f.buckets = m_buckets + m_targetBuckets;
    if (m_targetBuckets != 0 && m_indexVariance > 0) {
        const double unreached = std::max(1e-9, static_cast<double>(m_buckets) - m_rehashIndex);
        f.oldArrayHeld
            = stillShort(m_rehashIndex - static_cast<double>(m_buckets), m_indexVariance, m_oldEntries / unreached);
    }
    if (m_residualBuckets != 0) {
        f.residualArrayBytes = std::uint64_t { m_params.bucketBytes } * m_residualBuckets;
        f.residualArrayHeld = stillShort(m_residualLead, m_residualVariance, m_residualDensity);
    }
    switch (m_kind) {
    case IndexKind::ValkeyHashtable: {
        const std::uint64_t bucketBytes = m_params.bucketBytes;
        const std::uint32_t perBucket = m_params.entriesPerBucket;
        addPart(bucketBytes * m_buckets, 1, true);
        addPart(bucketBytes * m_targetBuckets, 1, true);
        double children = 0;
        if (m_targetBuckets != 0) {
            const double remaining = std::max(0.0, static_cast<double>(m_buckets) - m_rehashIndex);
            const double old = std::min(m_oldEntries, static_cast<double>(m_used));
            children = expectedChildBuckets(old, remaining, perBucket)
                + expectedChildBuckets(
                    static_cast<double>(m_used) - old, static_cast<double>(m_targetBuckets), perBucket);
        } else {
            children = expectedChildBuckets(static_cast<double>(m_used), static_cast<double>(m_buckets), perBucket);
        }
        f.expectedChildBuckets = children;
        f.childBucketBytes = bucketBytes;
        f.childBuckets = static_cast<std::uint64_t>(std::llround(children));
        addPart(bucketBytes, f.childBuckets, true); // zcalloc(sizeof(bucket))
        break;
    }
    case IndexKind::RedisDict:
    case IndexKind::ValkeyDict:
        addPart(std::uint64_t { m_params.bucketBytes } * m_buckets, 1, true);
        addPart(std::uint64_t { m_params.bucketBytes } * m_targetBuckets, 1, true);
        break;
    case IndexKind::MemcachedAssoc:
        addPart(std::uint64_t { m_params.bucketBytes } * m_buckets, 1, false);
        break;
    }
    return f;
}

} // namespace layoutlab
