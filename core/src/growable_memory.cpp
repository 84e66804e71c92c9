// SPDX-License-Identifier: MIT
#include "layoutlab/growable_memory.h"

#include <algorithm>
#include <cstdint>
#include <sys/mman.h>

namespace layoutlab {

namespace {
constexpr std::size_t kHugePage = std::size_t { 2 } << 20;
constexpr std::size_t kPage = 4096;
std::size_t roundUp(std::size_t bytes, std::size_t to) {
    return (bytes + to - 1) / to * to;
}
} // namespace

GrowableMemory::GrowableMemory(std::size_t maxBytes) {
    if (maxBytes == 0)
        return;
    // Inaccessible and not counted against the commit limit until made usable; one huge page more,
    // to start the usable part on a huge page's boundary.
    const std::size_t bytes = roundUp(maxBytes, kHugePage) + kHugePage;
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    const auto start = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t aligned = roundUp(start, kHugePage);
    // The unaligned head and the spare tail go back at once.
    if (aligned > start)
        munmap(p, aligned - start);
    if (const std::size_t tail = kHugePage - (aligned - start))
        munmap(reinterpret_cast<void*>(aligned + bytes - kHugePage), tail);
    m_base = reinterpret_cast<void*>(aligned);
    m_reservedBytes = bytes - kHugePage;
    // A hint for the pages to come: without transparent huge pages it changes nothing.
    (void)madvise(m_base, m_reservedBytes, MADV_HUGEPAGE);
}

GrowableMemory::~GrowableMemory() {
    release();
}

bool GrowableMemory::grow(std::size_t bytes) {
    if (!m_base || bytes > m_reservedBytes)
        return false;
    if (bytes <= m_usable)
        return true;
    // Whole huge pages once the table is that large, so that each is mapped huge.
    const std::size_t usable = std::min(m_reservedBytes, roundUp(bytes, bytes >= kHugePage ? kHugePage : kPage));
    if (mprotect(static_cast<char*>(m_base) + m_usable, usable - m_usable, PROT_READ | PROT_WRITE) != 0)
        return false;
    m_usable = usable;
    return true;
}

void GrowableMemory::release() {
    if (m_base)
        munmap(m_base, m_reservedBytes);
    m_base = nullptr;
    m_reservedBytes = m_usable = 0;
}

} // namespace layoutlab
