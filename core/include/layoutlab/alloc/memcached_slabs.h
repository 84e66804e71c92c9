// SPDX-License-Identifier: MIT
#pragma once

// memcached's own slab allocator (slabs.c slabs_init()): it does not use malloc per item. Every item
// goes whole into a chunk of the smallest class that holds it; classes grow by a factor from
// sizeof(item) + chunk_size, rounded up to 8 bytes, until slab_chunk_max / factor; the last class is
// slab_chunk_max itself. Pages are slab_page_size bytes, malloc'ed one at a time.

#include "layoutlab/alloc/allocator_model.h"

namespace layoutlab {

struct MemcachedSlabParams {
    std::uint32_t minChunkBytes = 48; // -n: settings.chunk_size (memcached.c)
    double growthFactor = 1.25; // -f: settings.factor (memcached.c)
    std::uint32_t pageBytes = 1024 * 1024; // settings.slab_page_size (memcached.c)
    std::uint32_t chunkMaxBytes = 512 * 1024; // settings.slab_chunk_size_max = slab_page_size / 2
    std::uint32_t itemSizeMaxBytes = 1024 * 1024; // -I: settings.item_size_max
};

struct MemcachedSlabClass {
    std::uint32_t id = 0; // 1-based, as memcached numbers them
    std::uint32_t chunkBytes = 0;
    std::uint32_t perSlab = 0;
};

class MemcachedSlabModel final : public AllocatorModel {
public:
    explicit MemcachedSlabModel(const MemcachedSlabParams& params);

    std::string spec() const override;
    std::string description() const override;
    // The chunk a request of `requested` bytes lands in; 0 if above the largest class (callers split
    // larger items into chunks the way items.c does).
    std::uint64_t usableSize(std::uint64_t requested) const override;
    RegionAlignment alignment(std::uint64_t usable) const override;
    std::vector<AllocatorClass> classes() const override;

    const MemcachedSlabParams& params() const { return m_params; }
    const std::vector<MemcachedSlabClass>& slabClasses() const { return m_classes; }
    // slabs_clsid(): the 1-based class id for `bytes`, 0 if it is larger than item_size_max.
    std::uint32_t classId(std::uint64_t bytes) const;

private:
    MemcachedSlabParams m_params;
    std::vector<MemcachedSlabClass> m_classes;
};

} // namespace layoutlab
