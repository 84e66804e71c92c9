// SPDX-License-Identifier: MIT
#pragma once

// The sizes of an engine's key index over time: the simulator tells it about every insert, delete and
// lookup, and it grows, shrinks and (incrementally) rehashes the way the engine's table does. Only
// sizes are kept, never entries, so it costs a few integers whatever the keyspace size.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/layout/layout_model.h"

#include <cstdint>
#include <vector>

namespace layoutlab {

// One allocation class used by an index table (arrays, child buckets).
struct IndexAllocation {
    std::uint64_t requestedBytes = 0;
    std::uint64_t usableBytes = 0;
    std::uint64_t count = 0;
    bool fromAllocator = true; // false: allocated outside the modelled allocator (memcached's calloc'ed table)
};

struct IndexFootprint {
    std::uint64_t requestedBytes = 0;
    std::uint64_t usableBytes = 0;
    std::uint64_t allocations = 0;
    std::uint64_t buckets = 0; // top-level buckets of every live table array
    std::uint64_t childBuckets = 0; // Valkey: expected child buckets (Poisson estimate), rounded
    double expectedChildBuckets = 0; // ... before rounding: a collection's small table needs the fraction
    std::uint64_t childBucketBytes = 0; // each one's size
    bool rehashing = false;
    std::vector<IndexAllocation> parts;
    // While rehashing: the chance that the engine still holds the old array (parts[0]). The model's rehash
    // index is a mean; the engine's steps skip runs of empty buckets, so where it stands is random (the
    // hash seed's) and near the end the old array may be gone already, or, after the model's rehash has
    // ended, still there: `residual*` below.
    double oldArrayHeld = 1;
    // The old array of a rehash the model has ended, and the chance the engine still holds it (0: none).
    std::uint64_t residualArrayBytes = 0;
    double residualArrayHeld = 0;
};

// Asked before a table takes a new array: a server under maxmemory refuses one that would take it over
// the limit, unless the table is already too full (Valkey hashtable.c resize -> type->resizeAllowed,
// server.c hashtableResizeAllowed; Redis 7.0 dict.c dictTypeExpandAllowed -> server.c dictExpandAllowed).
class IndexGrowthGate {
public:
    virtual ~IndexGrowthGate() = default;
    // Whether `moreBytes` more stay within the budget (evict.c overMaxmemoryAfterAlloc, negated).
    virtual bool allowsAllocation(std::uint64_t moreBytes) = 0;
};

class IndexTableModel {
public:
    explicit IndexTableModel(IndexKind kind); // the engine's own geometry
    IndexTableModel(IndexKind kind, const IndexParams& params);

    // Consulted before every resize from now on (nullptr: none, as without maxmemory).
    void setGrowthGate(IndexGrowthGate* gate) { m_gate = gate; }
    void insert(); // a new entry (the engine looks the key up first, which may advance rehashing)
    // hashtable.c hashtableExpand: room for `entries` at once, unless rehashing or holding more already.
    void expand(std::uint64_t entries) {
        if (m_targetBuckets == 0 && entries >= m_used)
            resize(entries);
    }
    // A removed entry; `mayShrink` false while the engine has paused the table's auto shrink (Valkey 9.1's
    // removal commands until their last field or member: ValkeyParams::removalsPauseShrink).
    void erase(bool mayShrink = true);
    // A read access of a key the table holds: findBucket -> rehashStepOnReadIfNeeded / dictFind ->
    // _dictRehashStep (Valkey 8.0, with bucket rehashing on access: dictBucketRehash).
    void lookup() {
        if (m_targetBuckets != 0)
            access(true);
        else if (m_residualBuckets != 0)
            advanceResidual(1);
    }
    // An insert that finds the key there already (SADD of a member the set holds, Redis 7.2's HSET of a field
    // the hash holds, a union's member the result holds): the lookup's rehash step, and on the dict lines the
    // growth an insert would have made (dict.c dictAddRaw grows a full table before it searches it).
    void findForInsert();
    // Valkey 8.0 dict.c: an access rehashes the key's own old bucket when it has not been moved yet
    // (dictBucketRehash), else the next one. Modelled for the collections' tables; the keyspace's, which the
    // cron settles, keep the plain steps.
    void setBucketRehashOnAccess(bool on) { m_bucketRehashOnAccess = on; }
    // Whether the table follows how far the engine's rehash index may stand from the model's mean, so that
    // its footprint counts an old array by the chance it is still held (IndexFootprint::oldArrayHeld). A
    // collection's table does; the keyspace's, which the cron settles, need not pay for it on every step.
    void setFollowsRehashSpread(bool on) { m_followsRehashSpread = on; }
    // What the engine's cron does once the load goes quiet (Valkey/Redis databasesCron: finish incremental
    // rehashing, resize tables whose fill crossed a limit): the state in which used_memory is read.
    void settle();
    // Valkey's cron grows a table its inserts left at its limit (settle() says which): true when it did. The
    // replay asks only of a table it saw at the limit a cron period ago and since (KeyspaceReplay::cronCheck).
    bool cronGrow();
    bool atCronLimit() const;
    // db.c emptyData (dictEmpty; Valkey's kvstoreEmpty): the table's arrays freed whole, as a flush frees
    // them, its entries removed before (erase). A table holding entries is left as it is.
    void empty();
    // Resizes the table to fit its entries when its fill is below the engine's limit (and it is not
    // rehashing): what the engines do after a delete from a collection's table (Redis 7.x htNeedsResize ->
    // dictResize), and Valkey's on every delete. True when it resized.
    bool shrinkIfNeeded();

    // The same table in every respect the model follows (a limit sweep holds keys alike once).
    bool sameAs(const IndexTableModel& o) const {
        return m_kind == o.m_kind && m_used == o.m_used && m_buckets == o.m_buckets
            && m_targetBuckets == o.m_targetBuckets && m_rehashIndex == o.m_rehashIndex
            && m_oldEntries == o.m_oldEntries && m_bucketRehashOnAccess == o.m_bucketRehashOnAccess
            && m_indexVariance == o.m_indexVariance && m_residualBuckets == o.m_residualBuckets
            && m_residualLead == o.m_residualLead && m_residualVariance == o.m_residualVariance
            && m_stepDensity == o.m_stepDensity && m_residualDensity == o.m_residualDensity
            && m_followsRehashSpread == o.m_followsRehashSpread;
    }
    std::uint64_t entries() const { return m_used; }
    // Top-level buckets of the table in use, and of the table being rehashed into (0 when not rehashing).
    std::uint64_t buckets() const { return m_buckets; }
    std::uint64_t targetBuckets() const { return m_targetBuckets; }
    // Buckets of the table in use that rehashing has moved (an expectation; 0 when not rehashing).
    double rehashedBuckets() const { return m_targetBuckets ? m_rehashIndex : 0; }
    // The one array a table rebuilt at once would hold: the size being rehashed to, else the size in use;
    // none when the table is empty (simulate() leaves an empty table out). The reference engine and the
    // slab model size their tables by it.
    std::uint64_t heldBuckets() const {
        if (m_used == 0)
            return 0;
        return m_targetBuckets ? m_targetBuckets : m_buckets;
    }
    IndexFootprint footprint(const AllocatorModel& allocator) const;

    // Valkey hashtable.c: expected child buckets for `entries` spread over `buckets` top-level buckets of
    // `entriesPerBucket` slots (7 in hashtable.c).
    static double expectedChildBuckets(double entries, double buckets, std::uint32_t entriesPerBucket = 7);

private:
    // One incremental rehash step, `weight` of one in expectation.
    void rehashStep(double weight = 1);
    void finishRehashIfDone();
    // Whether a step skips empty buckets (dict.c dictRehash's empty_visits; hashtable.c rehashStepShrink).
    bool stepSkipsEmpty() const;
    // The chance that the engine's rehash index is still short of its table's last non-empty bucket, `lead`
    // buckets past it in the mean, with `variance`, at `density` entries per bucket there.
    static double stillShort(double lead, double variance, double density);
    // A step the engine may still give a rehash the model has ended (residual): `weight` of one.
    void advanceResidual(double weight);
    // An access to a key (present, or about to be added) while rehashing.
    void access(bool existingKey);
    void resize(std::uint64_t minCapacity);
    void dictExpandIfNeeded();
    // Whether the gate lets the table move to `buckets` top-level buckets for `minCapacity` entries.
    bool gateAllows(std::uint64_t buckets, std::uint64_t minCapacity) const;
    std::uint64_t bucketsFor(std::uint64_t minCapacity) const;

    IndexKind m_kind;
    IndexParams m_params;
    std::uint64_t m_used = 0;
    std::uint64_t m_buckets = 0; // table 0
    std::uint64_t m_targetBuckets = 0; // table 1 while rehashing, else 0
    double m_rehashIndex = 0; // buckets of table 0 already moved
    double m_oldEntries = 0; // while rehashing: entries still in table 0 (an expectation)
    // The variance of the engine's rehash index about m_rehashIndex (steps that skip empty buckets advance
    // by a random count), and the density of old entries per bucket the last step met.
    double m_indexVariance = 0;
    double m_stepDensity = 0;
    // A rehash the model has ended that the engine may not have: its old array's buckets (0: none), how far
    // the mean index has passed the array's last non-empty bucket, its variance and the density there.
    std::uint64_t m_residualBuckets = 0;
    double m_residualLead = 0;
    double m_residualVariance = 0;
    double m_residualDensity = 0;
    bool m_bucketRehashOnAccess = false;
    bool m_followsRehashSpread = false;
    IndexGrowthGate* m_gate = nullptr;
};

} // namespace layoutlab
