// SPDX-License-Identifier: MIT
#pragma once

// A jemalloc arena of its own (arenas.create), allocated from without the thread cache, so that its
// statistics count exactly what was allocated from it; destroyed with everything in it.

#include "layoutlab/collect/reference_engine.h"

namespace layoutlab {

class JemallocArena {
public:
    static Expected<std::unique_ptr<JemallocArena>> create();
    ~JemallocArena();
    JemallocArena(const JemallocArena&) = delete;
    JemallocArena& operator=(const JemallocArena&) = delete;

    void* allocate(std::size_t bytes, bool zeroed = false);
    void release(void* pointer);
    std::size_t usableSize(void* pointer) const;
    static std::size_t usableSizeFor(std::size_t bytes);
    static std::string version(); // e.g. "5.3.0"
    Expected<ArenaStats> stats() const;
    unsigned index() const { return m_arena; }

private:
    explicit JemallocArena(unsigned arena)
        : m_arena(arena) { }
    unsigned m_arena = 0;
};

} // namespace layoutlab
