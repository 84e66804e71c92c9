// SPDX-License-Identifier: MIT
#include "layoutlab/sim/arena_replay.h"

#include "layoutlab/sim/memcached_page_replay.h"
#include "layoutlab/sim/slab_replay.h"

#include <fmt/format.h>

namespace layoutlab {

Status slabModelCovers(const AllocatorModel& allocator) {
    if (dynamic_cast<const JemallocModel*>(&allocator) || dynamic_cast<const MemcachedSlabModel*>(&allocator))
        return Ok {};
    return usageError(fmt::format("it models jemalloc's arena and memcached's slab pages; allocator '{}' has neither",
                          allocator.spec()),
        field::kSlabs);
}

Expected<std::unique_ptr<ArenaReplay>> makeArenaReplay(const LayoutModel& layout, const AllocatorModel& allocator,
    const std::vector<std::uint32_t>& thresholds, KeyspaceReplay& replay, const SlabModelOptions& options) {
    std::unique_ptr<ArenaReplay> made;
    if (const auto* jemalloc = dynamic_cast<const JemallocModel*>(&allocator))
        made = std::make_unique<SlabReplay>(layout, *jemalloc, thresholds, replay, options);
    else if (const auto* slabs = dynamic_cast<const MemcachedSlabModel*>(&allocator))
        made = std::make_unique<MemcachedPageReplay>(layout, *slabs, thresholds, replay, options);
    else
        return slabModelCovers(allocator).error();
    replay.setObserver(made.get());
    return made;
}

std::uint64_t arenaStateBytesPerKey(const AllocatorModel& allocator) {
    return dynamic_cast<const MemcachedSlabModel*>(&allocator) ? MemcachedPageReplay::kStateBytesPerKey
                                                               : SlabReplay::kStateBytesPerKey;
}

} // namespace layoutlab
