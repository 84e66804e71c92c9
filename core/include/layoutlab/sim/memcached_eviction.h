// SPDX-License-Identifier: MIT
#pragma once

// memcached 1.6 under a memory limit (-m) beside the replay: pages go to slab classes as items arrive
// until the limit (MemcachedPageModel::tryAllocate), and then an item that finds no free chunk in its
// class evicts the tail of that class's COLD LRU (items.c do_item_alloc_pull, lru_pull_tail with
// LRU_PULL_EVICT). Each class keeps the segmented LRU of 1.6's defaults (lru_segmented, hot_lru_pct 20,
// warm_lru_pct 40, hot_max_factor 0.2, warm_max_factor 2.0):
//
//     new items -> HOT --(tail: over 20% of the class's bytes, or older than 0.2 x COLD's tail age)--> COLD
//                   |  (tail, ACTIVE) -> WARM         WARM --(tail: over 40%, or older than 2 x)--> COLD
//     COLD hit twice (ACTIVE) -> WARM's head          COLD's tail: evicted when a chunk is wanted
//
// Rules, each from items.c:
//  - a fetch (do_item_get): the first hit marks an item FETCHED, the second ACTIVE; an ACTIVE item in COLD
//    is bumped to WARM's head (lru_bump_async, then do_item_update); in HOT or WARM only its time moves,
//    and only when older than ITEM_UPDATE_INTERVAL (60 s);
//  - the LRU maintainer thread (lru_maintainer_juggle) juggles a class up to 500 times: HOT's tail, or
//    WARM's when HOT's moved nothing, then COLD's tail (an ACTIVE one goes to WARM). It runs back to back
//    while it finds work, so the model juggles a class after every store into it and every bump;
//  - an ACTIVE item at WARM's tail loses the flag and stays (do_item_update_nolock relinks only items
//    older than 60 s), so within a minute WARM drains to COLD in the order items came;
//  - a store allocates the new item before the old one is unlinked (do_item_alloc, then item_replace);
//    up to 10 tries of: a chunk, else evict COLD's tail, else push HOT's tail down (do_item_alloc_pull).
//    A store that finds nothing to evict fails, and the key's old item is unlinked (proto_text.c
//    process_update_command: "avoid stale data persisting in cache"): the replay drops the key.
//  - the clock is memcached's current_time, in whole seconds from ITEM_UPDATE_INTERVAL + 2 (memcached.c
//    process_started), from the trace's timestamps or the wall clock a drive recorded.
//  - the page mover (alloc/memcached_page_model.h) reads each class's COLD evictions, failed stores and COLD
//    tail age; an item it moves out of a page is linked again at the head of its LRU with the time of the
//    move (do_item_replace -> do_item_link), and one it finds no chunk for is gone (not an eviction to
//    memcached's `evictions`: slab_reassign_evictions_nomem).
// Not modelled: items locked by a reader at the tail (lru_pull_tail skips them), the LRU crawler (the replay
// expires keys itself).

#include "layoutlab/alloc/memcached_page_model.h"
#include "layoutlab/sim/eviction.h"
#include "layoutlab/sim/memcached_items.h"

#include <array>
#include <unordered_map>

namespace layoutlab {

class MemcachedEviction final : public KeyspaceBudget, private MemcachedChunkOwners {
public:
    // `options`: maxmemoryBytes is -m in bytes.
    MemcachedEviction(const EvictionOptions& options, const LayoutModel& layout, const MemcachedSlabModel& slabs,
        std::uint32_t threshold, KeyspaceReplay& replay);

    void stored(std::uint32_t keyId, const KeyState& key, Op op) override;
    void removed(std::uint32_t keyId) override;
    void read(std::uint32_t keyId) override;
    bool makeRoom(KeyspaceReplay& replay, std::uint64_t timeMs) override;
    // memcached's hash table is outside -m (assoc.c allocates it with calloc, not from slabs).
    bool allowsAllocation(std::uint64_t) override { return true; }

    // total_malloced: the pages taken from the limit.
    std::uint64_t usedBytes() override { return m_pages.mallocedPages() * m_slabs->params().pageBytes; }
    const MemcachedPageModel& pages() const { return m_pages; }
    std::vector<HeldSlabs> heldSlabs() const override;

    // Bytes of state per key id: its record, and about a chunk's owner in the pages.
    static constexpr std::uint64_t kStateBytesPerKey = 32;

private:
    enum Segment : std::uint8_t { kHot = 0, kWarm = 1, kCold = 2 };
    static constexpr std::uint32_t kNone = UINT32_MAX;
    struct KeyItem {
        std::uint32_t prev = kNone; // towards the head
        std::uint32_t next = kNone; // towards the tail
        std::uint32_t item = MemcachedItemTable::kNoItem;
        std::uint32_t time = 0; // item->time: current_time when linked or bumped
        MemcachedChunk chunk; // its chunk; an item of several: its first (all in m_chunkLists)
        Segment segment = kHot;
        bool fetched = false; // ITEM_FETCHED
        bool active = false; // ITEM_ACTIVE
        bool linked = false;
    };
    struct Lru {
        std::uint32_t head = kNone;
        std::uint32_t tail = kNone;
        std::uint64_t bytes = 0; // sizes_bytes
    };

    Lru& lruOf(std::uint32_t classId, Segment segment) { return m_lrus[classId * 3 + segment]; }
    void link(std::uint32_t keyId, std::uint32_t classId, Segment segment);
    void unlink(std::uint32_t keyId);
    void freeItem(std::uint32_t keyId);
    // A chunk of `classId` for the item being stored; none when even eviction found none.
    std::optional<MemcachedChunk> allocateChunk(std::uint32_t classId, std::uint32_t storing);
    // lru_pull_tail of HOT or WARM (limit from `totalBytes`, age `maxAge`): 1 when it moved an item.
    int pullHotOrWarm(std::uint32_t classId, Segment segment, std::uint64_t totalBytes, std::uint32_t maxAge);
    // lru_pull_tail of COLD: evicts the tail (`evict`), or moves an ACTIVE tail to WARM.
    int pullCold(std::uint32_t classId, bool evict, std::uint32_t storing);
    void juggle(std::uint32_t classId);
    void setClock(std::uint64_t requestNumber, std::uint64_t timeMs);
    // MemcachedChunkOwners: what the page mover reads and does.
    ClassStats itemStats(std::uint32_t classId, std::uint64_t nowSeconds) const override;
    void rescued(std::uint32_t owner, MemcachedChunk from, MemcachedChunk to, std::uint64_t nowSeconds) override;
    void lostToPageMove(std::uint32_t owner) override;

    EvictionOptions m_options;
    const MemcachedSlabModel* m_slabs;
    KeyspaceReplay* m_replay;
    MemcachedItemTable m_items;
    MemcachedPageModel m_pages;
    std::vector<KeyItem> m_keys;
    std::vector<Lru> m_lrus; // by class id * 3 + segment
    std::uint32_t m_now = 0; // current_time
    std::uint64_t m_command = 0;
    std::uint32_t m_storedKey = kNone; // the key the current command stored, and its item
    std::uint64_t m_storedCommand = 0;
    std::uint32_t m_failedKey = kNone; // a store that failed: its key is dropped before the next request
    std::uint64_t m_firstSecond = UINT64_MAX; // the clock's first second: current_time starts from it
    std::vector<MemcachedChunk> m_newChunks; // stored()'s: the new item's chunks, before the old item goes
    std::unordered_map<std::uint32_t, std::vector<MemcachedChunk>> m_chunkLists; // items of several chunks
    std::vector<std::uint64_t> m_evicted; // per class id: itemstats[id | COLD_LRU].evicted
    std::vector<std::uint64_t> m_outOfMemory; // per class id: itemstats[id | HOT_LRU].outofmemory
};

} // namespace layoutlab
