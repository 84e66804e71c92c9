// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/allocator_registry.h"

#include "layoutlab/alloc/glibc_model.h"
#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/spec.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
Expected<int> exactLog2(std::uint64_t value, std::string_view field) {
    for (int lg = 0; lg < 40; ++lg)
        if ((std::uint64_t { 1 } << lg) == value)
            return lg;
    return usageError(fmt::format("{} must be a power of two, got {}", field, value), std::string(field));
}

Expected<AllocatorPtr> parseJemalloc(Spec& spec) {
    if (!spec.has("quantum") && !spec.has("page")) {
        auto linked = JemallocModel::linked();
        if (!linked)
            return linked.error();
        return AllocatorPtr(*linked);
    }
    auto quantum = spec.integer("quantum", 16, 8, 16);
    if (!quantum)
        return quantum.error();
    auto page = spec.integer("page", 4096, 4096, 65536);
    if (!page)
        return page.error();
    if (auto ok = spec.rejectUnused("quantum, page"); !ok)
        return ok.error();
    SizeClassParams params;
    auto lgQuantum = exactLog2(*quantum, "jemalloc:quantum");
    if (!lgQuantum)
        return lgQuantum.error();
    auto lgPage = exactLog2(*page, "jemalloc:page");
    if (!lgPage)
        return lgPage.error();
    params.lgQuantum = *lgQuantum;
    params.lgPage = *lgPage;
    return AllocatorPtr(std::make_shared<JemallocModel>(params));
}

Expected<AllocatorPtr> parseMemcached(Spec& spec) {
    MemcachedSlabParams params;
    auto min = spec.integer("min", params.minChunkBytes, 1, 1024 * 1024);
    if (!min)
        return min.error();
    auto factor = spec.real("factor", params.growthFactor, 1.01, 100.0);
    if (!factor)
        return factor.error();
    auto page = spec.integer("page", params.pageBytes, 1024, 1024 * 1024 * 1024);
    if (!page)
        return page.error();
    auto chunkMax = spec.integer("chunk-max", *page / 2, 1024, *page);
    if (!chunkMax)
        return chunkMax.error();
    auto itemMax = spec.integer("item-max", std::max<std::uint64_t>(*page, 1024 * 1024), 1024, 1u << 30);
    if (!itemMax)
        return itemMax.error();
    if (auto ok = spec.rejectUnused("min, factor, page, chunk-max, item-max"); !ok)
        return ok.error();
    params.minChunkBytes = static_cast<std::uint32_t>(*min);
    params.growthFactor = *factor;
    params.pageBytes = static_cast<std::uint32_t>(*page);
    params.chunkMaxBytes = static_cast<std::uint32_t>(*chunkMax);
    params.itemSizeMaxBytes = static_cast<std::uint32_t>(*itemMax);
    return AllocatorPtr(std::make_shared<MemcachedSlabModel>(params));
}
} // namespace

Expected<AllocatorPtr> parseAllocator(std::string_view text) {
    auto spec = Spec::parse(text, "allocator");
    if (!spec)
        return spec.error();
    if (spec->name() == "jemalloc")
        return parseJemalloc(*spec);
    if (spec->name() == "memcached")
        return parseMemcached(*spec);
    if (spec->name() == "glibc") {
        if (auto ok = spec->rejectUnused(""); !ok)
            return ok.error();
        return AllocatorPtr(std::make_shared<GlibcModel>());
    }
    return usageError(
        fmt::format("unknown allocator '{}' (known: jemalloc, memcached, glibc)", spec->name()), "allocator");
}

std::vector<AllocatorInfo> listAllocators() {
    return {
        { "jemalloc", "", "the jemalloc this program links: size classes from nallocx, slabs from mallctl",
            JemallocModel::linkedAvailable() },
        { "jemalloc", "quantum=8|16,page=4096|16384|65536",
            "jemalloc emulated from sc.c; Valkey/Redis bundle quantum 8, Debian's libjemalloc uses 16", true },
        { "memcached", "min=48,factor=1.25,page=1048576,chunk-max=524288,item-max=1048576",
            "memcached's slab classes (slabs_init): -n, -f, slab page, slab_chunk_max, -I", true },
        { "glibc", "", "glibc malloc baseline: 8-byte header, 16-byte alignment, 32-byte minimum", true },
    };
}

} // namespace layoutlab
