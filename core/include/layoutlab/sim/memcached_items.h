// SPDX-License-Identifier: MIT
#pragma once

// What a key's memcached item takes from the slab classes: its chunks by class, the item's size
// (ITEM_ntotal) and the class whose LRU links it. A key's item depends only on its shape (RawString keys:
// with their sds buffer), so items are described once per shape and keys hold a small id.

#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/keyspace_replay.h"

#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace layoutlab {

struct MemcachedItem {
    // (slab class id, chunks of it): one entry for an item in one chunk; a header and its chunks for an
    // item over slab_chunk_max (items.c do_item_alloc, do_item_alloc_chunk). Empty: memcached refuses it
    // (larger than -I).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> chunks;
    std::uint64_t totalBytes = 0; // ITEM_ntotal: what sizes_bytes counts in its LRU (items.c do_item_link_q)
    // items.c do_item_alloc: slabs_clsid(ntotal), the largest class for a chunked item ("we still link this
    // item into the LRU for the larger slab class").
    std::uint32_t lruClass = 0;
};

class MemcachedItemTable {
public:
    static constexpr std::uint32_t kNoItem = 0;

    MemcachedItemTable(const LayoutModel& layout, const MemcachedSlabModel& slabs, std::uint32_t threshold);

    // The id of the item `key` (id `keyId` in `replay`) is stored as.
    std::uint32_t itemOf(std::uint32_t keyId, const KeyState& key, const KeyspaceReplay& replay);
    const MemcachedItem& item(std::uint32_t id) const { return m_items[id]; }

private:
    const LayoutModel* m_layout;
    const MemcachedSlabModel* m_slabs;
    std::uint32_t m_threshold;
    std::vector<MemcachedItem> m_items; // by id; m_items[0] is kNoItem's
    std::unordered_map<std::uint64_t, std::uint32_t> m_byShape;
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint32_t> m_byRawShape;
};

} // namespace layoutlab
