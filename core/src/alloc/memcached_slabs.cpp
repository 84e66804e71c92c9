// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/memcached_slabs.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
// memcached.h: sizeof(item) on LP64 (three pointers, two rel_time_t, nbytes, refcount, it_flags,
// slabs_clsid, nkey, padded to 8 by the flexible data[] union).
constexpr std::uint32_t kItemHeaderBytes = 48;
constexpr std::uint32_t kChunkAlignBytes = 8; // memcached.h CHUNK_ALIGN_BYTES
constexpr std::uint32_t kMaxSlabClasses = 64; // memcached.h MAX_NUMBER_OF_SLAB_CLASSES (63 + 1)
// Slab pages are malloc'ed 1 MiB at a time; glibc serves them by mmap, and the chunk header puts
// the first byte 16 bytes past the page boundary (malloc.c sysmalloc_mmap, chunk2mem).
constexpr std::uint64_t kPageBaseOffset = 16;
} // namespace

MemcachedSlabModel::MemcachedSlabModel(const MemcachedSlabParams& params)
    : m_params(params) {
    // slabs.c slabs_init(): the class list, with the factor applied to an unsigned int (truncating).
    unsigned int size = kItemHeaderBytes + params.minChunkBytes;
    std::uint32_t id = 0;
    while (++id < kMaxSlabClasses - 1) {
        if (static_cast<double>(size) >= static_cast<double>(params.chunkMaxBytes) / params.growthFactor)
            break;
        if (size % kChunkAlignBytes)
            size += kChunkAlignBytes - (size % kChunkAlignBytes);
        m_classes.push_back({ id, size, params.pageBytes / size });
        size = static_cast<unsigned int>(size * params.growthFactor);
    }
    // The last class ("power_largest") is slab_chunk_max itself.
    m_classes.push_back({ id, params.chunkMaxBytes, params.pageBytes / params.chunkMaxBytes });
}

std::string MemcachedSlabModel::spec() const {
    return fmt::format("memcached:min={},factor={},page={},chunk-max={},item-max={}", m_params.minChunkBytes,
        m_params.growthFactor, m_params.pageBytes, m_params.chunkMaxBytes, m_params.itemSizeMaxBytes);
}

std::string MemcachedSlabModel::description() const {
    return fmt::format("memcached slab classes: {} classes from {} to {} bytes, factor {}, {}-byte pages",
        m_classes.size(), m_classes.front().chunkBytes, m_classes.back().chunkBytes, m_params.growthFactor,
        m_params.pageBytes);
}

std::uint32_t MemcachedSlabModel::classId(std::uint64_t bytes) const {
    // slabs.c slabs_clsid(): 0 for "too large", else the first class whose chunk holds the bytes;
    // anything above the largest regular class maps to power_largest.
    if (bytes == 0 || bytes > m_params.itemSizeMaxBytes)
        return 0;
    for (const auto& c : m_classes)
        if (bytes <= c.chunkBytes)
            return c.id;
    return m_classes.back().id;
}

std::uint64_t MemcachedSlabModel::usableSize(std::uint64_t requested) const {
    if (requested > m_params.chunkMaxBytes)
        return 0;
    for (const auto& c : m_classes)
        if (requested <= c.chunkBytes)
            return c.chunkBytes;
    return 0;
}

RegionAlignment MemcachedSlabModel::alignment(std::uint64_t usable) const {
    for (const auto& c : m_classes)
        if (c.chunkBytes == usable)
            return { kPageBaseOffset, c.chunkBytes, c.perSlab };
    return { kPageBaseOffset, 0, 1 };
}

std::vector<AllocatorClass> MemcachedSlabModel::classes() const {
    std::vector<AllocatorClass> out;
    for (const auto& c : m_classes)
        out.push_back({ c.chunkBytes, c.perSlab, m_params.pageBytes });
    return out;
}

} // namespace layoutlab
