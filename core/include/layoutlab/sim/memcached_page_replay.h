// SPDX-License-Identifier: MIT
#pragma once

// memcached's slab pages through a replay (MemcachedPageModel, one per threshold): every item the replay
// stores takes its chunks, header and chunks of a large item included, in the slab classes the layout
// puts them in; an overwrite takes the new item's chunks before the old ones are freed (items.c
// do_item_alloc, then item_replace); a delete or an expiry frees them. A write memcached refuses (an item
// larger than -I) leaves no item: process_update_command unlinks what the key held, so a failed SET does
// not leave stale data. The page mover runs on the trace's clock.

#include "layoutlab/alloc/memcached_page_model.h"
#include "layoutlab/sim/arena_replay.h"

namespace layoutlab {

class MemcachedPageReplay final : public ArenaReplay {
public:
    MemcachedPageReplay(const LayoutModel& layout, const MemcachedSlabModel& slabs,
        const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, const SlabModelOptions& options);
    ~MemcachedPageReplay() override;

    void stored(std::uint32_t keyId, const KeyState& key, Op op) override;
    void removed(std::uint32_t keyId) override;
    void clockAt(std::uint64_t nowSeconds) override;
    void settled() override { }
    std::optional<ArenaUsage> usageAt(std::uint32_t threshold) const override;
    std::vector<HeldSlabs> heldSlabsAt(std::uint32_t threshold) const override;
    std::string tableSource() const override { return "memcached"; }

    // Bytes of state per key id and threshold: the id of the item layout the key holds.
    static constexpr std::uint64_t kStateBytesPerKey = sizeof(std::uint32_t);

private:
    struct ThresholdPages;
    const ThresholdPages* pagesOf(std::uint32_t threshold) const;

    const MemcachedSlabModel* m_slabs;
    const KeyspaceReplay* m_replay;
    std::vector<std::unique_ptr<ThresholdPages>> m_thresholds;
};

} // namespace layoutlab
