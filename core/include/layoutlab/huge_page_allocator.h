// SPDX-License-Identifier: MIT
#pragma once

// Memory for large tables read at random (simulated tag arrays, the importer's key table): backed by
// 2 MiB pages where the kernel offers them. With 4 KiB pages nearly every lookup in a table of tens of
// megabytes also misses the host's TLB.

#include <cstddef>
#include <cstdlib>

namespace layoutlab {

// At least `bytes`, aligned to 2 MiB and advised as huge pages when `bytes` reaches 2 MiB; freed with
// std::free. Throws std::bad_alloc.
void* allocateHugePageBacked(std::size_t bytes);

template <class T> struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() = default;
    template <class U> HugePageAllocator(const HugePageAllocator<U>&) { }
    T* allocate(std::size_t n) { return static_cast<T*>(allocateHugePageBacked(n * sizeof(T))); }
    void deallocate(T* p, std::size_t) { std::free(p); }
    template <class U> bool operator==(const HugePageAllocator<U>&) const { return true; }
};

} // namespace layoutlab
