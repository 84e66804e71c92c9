// SPDX-License-Identifier: MIT
#include "layoutlab/huge_page_allocator.h"

#include <new>
#include <sys/mman.h>

namespace layoutlab {

void* allocateHugePageBacked(std::size_t bytes) {
    constexpr std::size_t kHugePage = std::size_t { 2 } << 20;
    if (bytes < kHugePage) {
        if (void* p = std::malloc(bytes ? bytes : 1))
            return p;
        throw std::bad_alloc();
    }
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p)
        throw std::bad_alloc();
    // Before the first touch, so the pages are faulted in huge. A hint: without THP it changes nothing.
    (void)madvise(p, rounded, MADV_HUGEPAGE);
    return p;
}

} // namespace layoutlab
