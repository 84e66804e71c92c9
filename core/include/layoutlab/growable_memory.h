// SPDX-License-Identifier: MIT
#pragma once

// Memory for a table that grows by doubling in place (the importer's key table). Address space for
// the table's largest size is reserved once, and growing makes the next part of it usable: the old
// contents stay where they are, so growing neither copies them nor holds two sizes of the table at
// once (a third less memory at the peak), and only the new part's pages are ever faulted in, each
// once. The pages are mapped as they are first written, as 2 MiB pages where the kernel offers them.

#include <cstddef>

namespace layoutlab {

class GrowableMemory {
public:
    // Reserves address space for `maxBytes` (none is committed yet). Where it cannot be had (a limit
    // on the address space: `ulimit -v`), reserved() is false and every grow() fails.
    explicit GrowableMemory(std::size_t maxBytes);
    ~GrowableMemory();
    GrowableMemory(const GrowableMemory&) = delete;
    GrowableMemory& operator=(const GrowableMemory&) = delete;

    bool reserved() const { return m_base != nullptr; }
    // The reservation's start: the first usable() bytes can be read and written.
    void* data() const { return m_base; }
    std::size_t usable() const { return m_usable; }
    // Makes the first `bytes` usable, those past usable() reading as zero. False (and nothing
    // changed) beyond the reservation or when the system refuses the memory.
    bool grow(std::size_t bytes);
    // Gives the reservation back: reserved() is false from then on.
    void release();

private:
    void* m_base = nullptr;
    std::size_t m_reservedBytes = 0;
    std::size_t m_usable = 0;
};

} // namespace layoutlab
