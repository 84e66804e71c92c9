// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/glibc_model.h"

namespace layoutlab {

namespace {
// malloc/malloc.c: SIZE_SZ = 8 on 64-bit, MALLOC_ALIGNMENT = 16, MINSIZE = 32 (request2size()).
constexpr std::uint64_t kSizeSz = 8;
constexpr std::uint64_t kMallocAlignment = 16;
constexpr std::uint64_t kMinChunk = 32;
// malloc/malloc.c: DEFAULT_MMAP_THRESHOLD_MIN = 128 KiB; such chunks are page-rounded mmaps
// with a 16-byte chunk header before the user pointer (sysmalloc_mmap).
constexpr std::uint64_t kMmapThreshold = 128 * 1024;
constexpr std::uint64_t kPageBytes = 4096;

std::uint64_t chunkSize(std::uint64_t requested) {
    if (requested + kSizeSz >= kMmapThreshold)
        return (requested + 2 * kSizeSz + kPageBytes - 1) / kPageBytes * kPageBytes;
    const std::uint64_t size = (requested + kSizeSz + kMallocAlignment - 1) & ~(kMallocAlignment - 1);
    return size < kMinChunk ? kMinChunk : size;
}
} // namespace

std::string GlibcModel::description() const {
    return "glibc malloc baseline: 8-byte chunk header, 16-byte alignment, 32-byte minimum chunk, "
           "page-rounded mmap from 128 KiB";
}

std::uint64_t GlibcModel::usableSize(std::uint64_t requested) const {
    // malloc_usable_size(): chunk size minus the header (minus 2 headers for mmapped chunks).
    const std::uint64_t chunk = chunkSize(requested);
    return requested + kSizeSz >= kMmapThreshold ? chunk - 2 * kSizeSz : chunk - kSizeSz;
}

std::uint64_t GlibcModel::footprintBytes(std::uint64_t requested) const {
    return chunkSize(requested);
}

RegionAlignment GlibcModel::alignment(std::uint64_t usable) const {
    if (usable + 2 * kSizeSz >= kMmapThreshold)
        return { 2 * kSizeSz, 0, 1 };
    // Heap chunks are only 16-byte aligned: any of the four 16-byte offsets within a line.
    return { 0, kMallocAlignment, 4 };
}

std::vector<AllocatorClass> GlibcModel::classes() const {
    std::vector<AllocatorClass> out;
    for (std::uint64_t chunk = kMinChunk; chunk <= 1024; chunk += kMallocAlignment)
        out.push_back({ chunk - kSizeSz, 0, 0 });
    return out;
}

} // namespace layoutlab
