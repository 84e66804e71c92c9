// SPDX-License-Identifier: MIT
#pragma once

// A memory budget beside the replay: Valkey's and Redis's `maxmemory`, as evict.c enforces it. The
// replay asks the budget before every request whether the server would be over its limit; the budget
// then evicts keys through the replay the way performEvictions does (sampled LRU or LFU through the
// eviction pool, random keys, nearest TTL), or refuses the write commands (noeviction, or nothing left
// to evict). It keeps 16 bytes per key id: the bytes the key holds at the run's threshold, its LRU/LFU
// field, and its places in the arrays keys are drawn from; the pool's policies also keep the keys in the
// table the server samples them from (sampled_key_table.h).

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/sampled_key_table.h"
#include "layoutlab/sim/shape_histogram.h"
#include "layoutlab/trace/random.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

// server.h MAXMEMORY_* (evict.c performEvictions reads them).
// ExactLru is no server's: the least recently used key exactly, the reference a cache simulator such as
// libCacheSim computes, to show what the servers' sampling costs.
enum class EvictionPolicy {
    NoEviction,
    AllKeysLru,
    VolatileLru,
    AllKeysLfu,
    VolatileLfu,
    AllKeysRandom,
    VolatileRandom,
    VolatileTtl,
    ExactLru
};

std::optional<EvictionPolicy> parseEvictionPolicy(std::string_view name);
std::string_view evictionPolicyName(EvictionPolicy policy);
// "noeviction, allkeys-lru, ...": for error messages and help.
std::string evictionPolicyList();
// Whether Valkey and Redis have the policy (exact-lru is layoutlab's reference only).
bool serverHasPolicy(EvictionPolicy policy);

// The server's settings for maxmemory and what the keyspace does not account for.
struct EvictionOptions {
    std::uint64_t maxmemoryBytes = 0;
    EvictionPolicy policy = EvictionPolicy::NoEviction; // config.c: maxmemory-policy's default
    std::uint32_t samples = 5; // config.c maxmemory-samples (default 5, range 1..64)
    std::uint32_t lfuLogFactor = 10; // config.c lfu-log-factor (default 10)
    std::uint32_t lfuDecayMinutes = 1; // config.c lfu-decay-time (default 1)
    // used_memory of the server before the trace: what it holds besides the keyspace (its own structures,
    // the clients' buffers). The budget counts it against maxmemory as zmalloc_used_memory() does.
    std::uint64_t baseBytes = 0;
    std::uint64_t seed = 1; // the sampling's and LFU counter's random numbers
    // Count each key as its key and value bytes only, without the layout, the allocator or the index
    // tables, as a cache simulator given raw object sizes does (libCacheSim's obj_size).
    bool rawSizes = false;
    // memcached's page mover (-o slab_automove_window=N, slab_automove_ratio=R; memcached.c settings_init: 30
    // and 0.8); a window of 0 is no mover (-o slab_automove=0).
    std::uint32_t pageMoverWindow = 30;
    double pageMoverAgeRatio = 0.8;
    // memcached: the whole seconds the server had run before the trace's first request (its page mover ran once
    // in each; a drive reads them from `stats` uptime). 0: the server starts with the trace.
    std::uint64_t serverSecondsBefore = 0;
    // The server's clock, from which its LRU seconds and LFU minutes come, is the trace's timestamps (a drive's
    // prediction reads the trace restamped with the seconds it was sent in: trace/restamped_trace.h).
};

// The smallest and largest maxmemory-samples (config.c createIntConfig "maxmemory-samples", 1, 64).
inline constexpr std::uint32_t kMinEvictionSamples = 1;
inline constexpr std::uint32_t kMaxEvictionSamples = 64;

// A budget from its settings as a front end takes them: maxmemory as the server reads it (parseMemorySize),
// the policy's name, maxmemory-samples, lfu-log-factor and lfu-decay-time. Errors name the field.
Expected<EvictionOptions> makeEvictionOptions(std::string_view maxmemory, std::string_view policy,
    std::uint32_t samples, std::uint32_t lfuLogFactor, std::uint32_t lfuDecayTime);

// The most budgets one run takes (each is a replay per threshold).
inline constexpr std::size_t kMaxBudgets = 256;
// Budgets as typed: one size, a list ("64mb,128mb,256mb"), or FIRST:LAST:COUNT, COUNT sizes from FIRST to
// LAST spaced evenly on a log scale (a miss-ratio curve's x axis), each read as parseMemorySize reads it.
// Sorted, without repeats.
Expected<std::vector<std::uint64_t>> parseBudgets(std::string_view text);

class ServerEviction final : public KeyspaceBudget {
public:
    ServerEviction(EvictionOptions options, const LayoutModel& layout, const AllocatorModel& allocator,
        std::uint32_t threshold, const KeyspaceReplay& replay);

    void stored(std::uint32_t keyId, const KeyState& key, Op op) override;
    void removed(std::uint32_t keyId) override;
    // db.c renameGenericCommand looks the source up (touching its field) and adds its object under the new
    // name: the destination keeps the field (Valkey 8.1 and later make the object again with the new key,
    // object.c objectSetKeyAndExpire copying its lru), where a new object starts afresh (lrulfu_init).
    void renamed(std::uint32_t from, std::uint32_t to) override;
    void read(std::uint32_t keyId) override;
    // Collection keys count as the collection model's allocations (CollectionReplay::usableBytes), each
    // command touching its key once; not under raw sizes, which count a key and its value only.
    bool modelsCollections() const override { return !m_options.rawSizes; }
    bool makeRoom(KeyspaceReplay& replay, std::uint64_t timeMs) override;
    bool allowsAllocation(std::uint64_t moreBytes) override;

    // The most bytes a budget of `policy` keeps per key id (the memory check before a run).
    static std::uint64_t stateBytesPerKey(EvictionPolicy policy);
    // used_memory as the server would report it now: its base, the keys' allocations, the index tables.
    std::uint64_t usedBytes() override;
    // What each shape costs at this threshold, kept in `cache` instead of the budget's own: the budgets of
    // one threshold that run on one thread share it (a curve's many budgets then describe each shape once
    // and keep one table warm). `cache` must outlive the budget; not for budgets on different threads.
    void shareShapeBytes(ShapeHistogram& cache) { m_bytesByShape = &cache; }

private:
    struct KeyEntry {
        std::uint32_t bytes = 0; // usable bytes of the key's allocations at the threshold
        std::uint32_t lru = 0; // object.c robj.lru: LRU seconds, or LFU minutes << 8 | counter
        std::uint32_t livePos = kAbsent; // in m_live
        std::uint32_t volatilePos = kAbsent; // in m_volatile
    };
    // exact-lru's recency list, by key id (kAbsent ends it): the most recent at m_newest.
    struct RecencyLinks {
        std::uint32_t newer = kAbsent;
        std::uint32_t older = kAbsent;
    };
    static constexpr std::uint32_t kAbsent = UINT32_MAX;
    // evict.c struct evictionPoolEntry: a candidate and the score it had when sampled.
    struct PoolEntry {
        std::uint32_t keyId = kAbsent;
        std::uint64_t idle = 0;
    };
    static constexpr std::size_t kPoolSize = 16; // evict.c EVPOOL_SIZE

    std::uint32_t bytesOf(std::uint32_t keyId, const KeyState& key);
    std::uint32_t lruNow() const;
    std::uint32_t touched(std::uint32_t lru);
    std::uint32_t lfuDecayed(std::uint32_t lru) const;
    std::uint64_t idleOf(std::uint32_t keyId);
    void populatePool();
    // The table the pool samples sized as the replay's index model holds it now.
    SampledKeyTable& sampledTable();
    std::optional<std::uint32_t> bestKey();
    bool exists(std::uint32_t keyId) const;
    std::uint64_t tableBytes();
    static void place(std::vector<std::uint32_t>& ids, std::uint32_t& pos, std::uint32_t keyId);
    void displace(std::vector<std::uint32_t>& ids, std::uint32_t& pos, std::uint32_t KeyEntry::*field);

    EvictionOptions m_options;
    const LayoutModel* m_layout;
    const AllocatorModel* m_allocator;
    std::uint32_t m_threshold;
    const KeyspaceReplay* m_replay;
    bool m_lfu;
    bool m_volatilePolicy;
    std::vector<KeyEntry> m_keys;
    void unlink(std::uint32_t keyId);
    void pushNewest(std::uint32_t keyId);

    std::vector<RecencyLinks> m_recency; // exact-lru only
    std::uint32_t m_newest = kAbsent;
    std::uint32_t m_oldest = kAbsent;
    std::vector<std::uint32_t> m_live; // sampled by allkeys-* policies
    std::vector<std::uint32_t> m_volatile; // keys with a TTL: sampled by volatile-* policies
    std::array<PoolEntry, kPoolSize> m_pool {};
    // The pool's policies (LRU, LFU, volatile-ttl): the keys they sample (every key, or those with a TTL) in
    // the table the server samples them from.
    std::optional<SampledKeyTable> m_sampled;
    ShapeHistogram m_ownBytesByShape; // usable bytes + 1 by packed shape, for keys whose shape says it all
    ShapeHistogram* m_bytesByShape = &m_ownBytesByShape;
    std::uint64_t m_keyBytes = 0;
    // The index tables' bytes, kept until their geometry changes (the hashtable's child buckets, an
    // estimate, are refreshed every kTableRefreshEntries changes).
    std::uint64_t m_tableBytes = 0;
    // Each database's tables' shapes as tableBytes() last priced them.
    std::vector<std::array<std::uint64_t, 6>> m_tableShape;
    bool m_tableKnown = false;
    std::uint64_t m_clockMs = 0;
    // Commands seen (one makeRoom each), and the key the current one has touched: a command touches its
    // key once, however many changes it makes (a SET with a TTL is two).
    std::uint64_t m_command = 0;
    std::uint32_t m_touchedKey = kAbsent;
    std::uint64_t m_touchedCommand = 0;
    // The destination of the rename under way and the field its object carries (stored() takes it).
    std::uint32_t m_renamedTo = kAbsent;
    std::uint32_t m_renamedLru = 0;
    Random m_random;
};

} // namespace layoutlab
