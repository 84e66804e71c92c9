// SPDX-License-Identifier: MIT
#include "layoutlab/sim/memcached_eviction.h"

#include <algorithm>

namespace layoutlab {

namespace {
// memcached.c settings_init: hot_lru_pct 20, warm_lru_pct 40, hot_max_factor 0.2, warm_max_factor 2.0.
constexpr std::uint64_t kHotPercent = 20;
constexpr std::uint64_t kWarmPercent = 40;
constexpr double kHotMaxFactor = 0.2;
constexpr double kWarmMaxFactor = 2.0;
// memcached.h ITEM_UPDATE_INTERVAL; memcached.c: process_started = time(0) - ITEM_UPDATE_INTERVAL - 2, so
// current_time starts there.
constexpr std::uint32_t kItemUpdateInterval = 60;
constexpr std::uint32_t kFirstCurrentTime = kItemUpdateInterval + 2;
constexpr int kAllocTries = 10; // items.c do_item_alloc_pull
constexpr int kJuggles = 500; // items.c lru_maintainer_juggle
} // namespace

MemcachedEviction::MemcachedEviction(const EvictionOptions& options, const LayoutModel& layout,
    const MemcachedSlabModel& slabs, std::uint32_t threshold, KeyspaceReplay& replay)
    : m_options(options)
    , m_slabs(&slabs)
    , m_replay(&replay)
    , m_items(layout, slabs, threshold)
    , m_pages(slabs,
          MemcachedPageModel::Options { .moverWindow = options.pageMoverWindow,
              .memoryLimitBytes = options.maxmemoryBytes,
              .moverAgeRatio = options.pageMoverAgeRatio,
              .owners = this })
    , m_lrus((slabs.slabClasses().size() + 1) * 3)
    , m_now(kFirstCurrentTime)
    , m_evicted(slabs.slabClasses().size() + 1)
    , m_outOfMemory(slabs.slabClasses().size() + 1) {
    // The memory check's figure: a key's record, and a chunk's owner in the pages for each item.
    static_assert(sizeof(KeyItem) + sizeof(std::uint32_t) <= kStateBytesPerKey);
    m_keys.resize(replay.keys().size());
    m_pages.advanceTo(0); // the mover's first run, as the server starts
}

void MemcachedEviction::link(std::uint32_t keyId, std::uint32_t classId, Segment segment) {
    KeyItem& k = m_keys[keyId];
    Lru& lru = lruOf(classId, segment);
    k.prev = kNone;
    k.next = lru.head;
    if (lru.head != kNone)
        m_keys[lru.head].prev = keyId;
    lru.head = keyId;
    if (lru.tail == kNone)
        lru.tail = keyId;
    lru.bytes += m_items.item(k.item).totalBytes;
    k.segment = segment;
    k.linked = true;
}

void MemcachedEviction::unlink(std::uint32_t keyId) {
    KeyItem& k = m_keys[keyId];
    if (!k.linked)
        return;
    const MemcachedItem& item = m_items.item(k.item);
    Lru& lru = lruOf(item.lruClass, k.segment);
    if (k.prev != kNone)
        m_keys[k.prev].next = k.next;
    else
        lru.head = k.next;
    if (k.next != kNone)
        m_keys[k.next].prev = k.prev;
    else
        lru.tail = k.prev;
    lru.bytes -= item.totalBytes;
    k.prev = k.next = kNone;
    k.linked = false;
}

void MemcachedEviction::freeItem(std::uint32_t keyId) {
    if (keyId >= m_keys.size() || m_keys[keyId].item == MemcachedItemTable::kNoItem)
        return;
    unlink(keyId);
    KeyItem& k = m_keys[keyId];
    if (const auto list = m_chunkLists.find(keyId); list != m_chunkLists.end()) {
        for (const MemcachedChunk& chunk : list->second)
            m_pages.releaseChunk(chunk);
        m_chunkLists.erase(list);
    } else {
        m_pages.releaseChunk(k.chunk);
    }
    k = KeyItem {};
}

int MemcachedEviction::pullCold(std::uint32_t classId, bool evict, std::uint32_t storing) {
    const std::uint32_t tail = lruOf(classId, kCold).tail;
    if (tail == kNone)
        return 0;
    if (evict) { // LRU_PULL_EVICT: whatever its flags
        ++m_evicted[classId];
        if (tail == storing)
            freeItem(tail); // the key's old item, being replaced: item_replace's unlink finds it gone
        else
            m_replay->evict(tail); // tells removed(), which frees its chunks
        return 1;
    }
    KeyItem& k = m_keys[tail];
    if (!k.active)
        return 0;
    k.active = false; // an ACTIVE tail goes to WARM
    unlink(tail);
    link(tail, classId, kWarm);
    return 1;
}

int MemcachedEviction::pullHotOrWarm(
    std::uint32_t classId, Segment segment, std::uint64_t totalBytes, std::uint32_t maxAge) {
    Lru& lru = lruOf(classId, segment);
    const std::uint32_t tail = lru.tail;
    if (tail == kNone)
        return 0;
    // lru_pull_tail: HOT's limit falls through to WARM's when it comes to 0.
    std::uint64_t limit = segment == kHot ? totalBytes * kHotPercent / 100 : 0;
    if (limit == 0)
        limit = totalBytes * kWarmPercent / 100;
    KeyItem& k = m_keys[tail];
    if (k.active) { // "rescue ACTIVE items aggressively"
        k.active = false;
        if (segment == kWarm) {
            // do_item_update_nolock: relinked at the head only when not bumped for a minute.
            if (k.time < m_now - kItemUpdateInterval) {
                unlink(tail);
                k.time = m_now;
                link(tail, classId, kWarm);
            }
        } else {
            unlink(tail);
            link(tail, classId, kWarm);
        }
        return 1;
    }
    if (lru.bytes > limit || m_now - k.time > maxAge) {
        unlink(tail);
        link(tail, classId, kCold);
        return 1;
    }
    return 0;
}

void MemcachedEviction::juggle(std::uint32_t classId) {
    const std::uint64_t total = lruOf(classId, kHot).bytes + lruOf(classId, kWarm).bytes + lruOf(classId, kCold).bytes;
    const std::uint32_t coldTail = lruOf(classId, kCold).tail;
    const std::uint32_t coldAge = coldTail == kNone ? 0 : m_now - m_keys[coldTail].time;
    const auto hotAge = static_cast<std::uint32_t>(coldAge * kHotMaxFactor);
    const auto warmAge = static_cast<std::uint32_t>(coldAge * kWarmMaxFactor);
    for (int i = 0; i < kJuggles; ++i) {
        int more = 0;
        if (pullHotOrWarm(classId, kHot, total, hotAge) || pullHotOrWarm(classId, kWarm, total, warmAge))
            ++more;
        more += pullCold(classId, false, kNone);
        if (more == 0)
            break;
    }
}

std::optional<MemcachedChunk> MemcachedEviction::allocateChunk(std::uint32_t classId, std::uint32_t storing) {
    for (int i = 0; i < kAllocTries; ++i) {
        if (const auto chunk = m_pages.tryPlace(classId, storing))
            return chunk;
        if (pullCold(classId, true, storing) <= 0)
            pullHotOrWarm(classId, kHot, 0, 0); // total 0: HOT's tail goes down whatever its share
    }
    return std::nullopt;
}

void MemcachedEviction::stored(std::uint32_t keyId, const KeyState& key, Op) {
    if (keyId >= m_keys.size())
        m_keys.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_keys.size() * 2));
    const std::uint32_t id = m_items.itemOf(keyId, key, *m_replay);
    // One command stores its key once: a SET's TTL tells the observer again, with the same item.
    if (m_storedKey == keyId && m_storedCommand == m_command && m_keys[keyId].item == id)
        return;
    m_storedKey = keyId;
    m_storedCommand = m_command;
    const MemcachedItem& item = m_items.item(id);
    // The chunks one entry at a time, until one is refused.
    m_newChunks.clear();
    bool placed = true;
    for (const auto& [classId, count] : item.chunks)
        for (std::uint32_t n = 0; placed && n < count; ++n) {
            const auto chunk = allocateChunk(classId, keyId);
            if (chunk)
                m_newChunks.push_back(*chunk);
            placed = chunk.has_value();
        }
    freeItem(keyId); // the old item, once the new one has its chunks (item_replace)
    if (item.chunks.empty())
        return; // refused (larger than -I): only the old item unlinked
    if (!placed) {
        for (const MemcachedChunk& chunk : m_newChunks)
            m_pages.releaseChunk(chunk);
        ++m_outOfMemory[item.lruClass]; // items.c do_item_alloc
        m_failedKey = keyId; // SERVER_ERROR out of memory: the key is gone from the next request
        return;
    }
    KeyItem& k = m_keys[keyId];
    k.item = id;
    k.time = m_now;
    k.chunk = m_newChunks.front();
    if (m_newChunks.size() > 1)
        m_chunkLists[keyId] = m_newChunks;
    link(keyId, item.lruClass, kHot);
    juggle(item.lruClass);
}

MemcachedChunkOwners::ClassStats MemcachedEviction::itemStats(std::uint32_t classId, std::uint64_t nowSeconds) const {
    ClassStats stats { .evicted = m_evicted[classId], .outOfMemory = m_outOfMemory[classId] };
    const std::uint32_t tail = m_lrus[classId * 3 + kCold].tail;
    if (tail != kNone)
        stats.age = kFirstCurrentTime + nowSeconds - m_keys[tail].time;
    return stats;
}

void MemcachedEviction::rescued(std::uint32_t owner, MemcachedChunk from, MemcachedChunk to, std::uint64_t nowSeconds) {
    KeyItem& k = m_keys[owner];
    if (const auto list = m_chunkLists.find(owner); list != m_chunkLists.end())
        std::replace(list->second.begin(), list->second.end(), from, to);
    if (k.chunk != from)
        return; // a chunk of a chunked item: the item stays where it is in its LRU
    k.chunk = to;
    if (!k.linked)
        return;
    // do_item_replace: the copy is linked as new, at the head of the LRU the item was in.
    const Segment segment = k.segment;
    unlink(owner);
    k.time = static_cast<std::uint32_t>(kFirstCurrentTime + nowSeconds);
    link(owner, m_items.item(k.item).lruClass, segment);
}

void MemcachedEviction::lostToPageMove(std::uint32_t owner) {
    // Unlinked by the mover, not evicted by the LRU: memcached's `evictions` does not count it.
    m_replay->evict(owner, false);
}

std::vector<HeldSlabs> MemcachedEviction::heldSlabs() const {
    std::vector<HeldSlabs> out;
    for (const MemcachedSlabClass& c : m_slabs->slabClasses())
        if (const std::uint64_t pages = m_pages.pagesOf(c.id))
            out.push_back({ c.chunkBytes, pages, m_evicted[c.id] });
    return out;
}

void MemcachedEviction::removed(std::uint32_t keyId) {
    freeItem(keyId);
}

void MemcachedEviction::read(std::uint32_t keyId) {
    KeyItem& k = m_keys[keyId];
    if (!k.linked || k.active)
        return;
    if (!k.fetched) {
        k.fetched = true;
        return;
    }
    k.active = true;
    const std::uint32_t classId = m_items.item(k.item).lruClass;
    if (k.segment != kCold) {
        k.time = m_now; // items.c do_item_bump: an item turning ACTIVE outside COLD "only need[s] to bump time"
        return;
    }
    // lru_bump_async, then do_item_update on the maintainer thread: to WARM's head, no longer ACTIVE.
    unlink(keyId);
    k.time = m_now;
    k.active = false;
    link(keyId, classId, kWarm);
    juggle(classId);
}

bool MemcachedEviction::makeRoom(KeyspaceReplay& replay, std::uint64_t timeMs) {
    ++m_command;
    const std::uint64_t clockSecond = timeMs / 1000;
    m_firstSecond = std::min(m_firstSecond, clockSecond);
    const std::uint64_t seconds = m_options.serverSecondsBefore + clockSecond - m_firstSecond;
    if (kFirstCurrentTime + seconds != m_now) {
        m_now = static_cast<std::uint32_t>(kFirstCurrentTime + seconds);
        // items.c lru_maintainer_thread juggles every class at least once a second (its sleep grows to
        // MAX_LRU_MAINTAINER_SLEEP, a second, while a class has nothing to move): a class no item is stored
        // into still moves its HOT and WARM tails down as they age.
        for (std::uint32_t classId = 1; classId < m_evicted.size(); ++classId)
            juggle(classId);
        m_pages.advanceTo(seconds);
    }
    if (m_failedKey != kNone) {
        replay.dropRefusedWrite(m_failedKey);
        m_failedKey = kNone;
    }
    return true; // memcached refuses no command before it runs
}

} // namespace layoutlab
