// SPDX-License-Identifier: MIT
#pragma once

// The key hashes an RDB file has shown so far, to find a key that appears twice. The file gives each key
// once (the server refuses a file that does not: "Duplicated key found in RDB file"), so its keys take ids in
// file order, and the importer needs no id table (KeyInterner): only this set, of the hashes alone (8 bytes a
// slot where KeyInterner's are 16), sized to the file's RESIZEDB hint at three quarters full rather than to
// the next power of two. A third of the memory to fault in and to miss in the host's caches.

#include "layoutlab/huge_page_allocator.h"

#include <cstdint>
#include <memory>

namespace layoutlab {

class SeenKeyHashes {
public:
    SeenKeyHashes() { rebuild(kInitialSlots); }

    // Room for `keys` keys at once, when none is held yet: no growth as they arrive (insert() grows past
    // three quarters full).
    void reserve(std::uint64_t keys) {
        const std::uint64_t slots = keys + keys / 3 + 2;
        if (m_size == 0 && slots > m_slotCount)
            rebuild(slots);
    }
    std::size_t slotCount() const { return m_slotCount; }
    // A hint that insert(hash) comes soon: fetches its home slot into the host's caches.
    void prefetch(std::uint64_t hash) const { __builtin_prefetch(&m_slots[homeOf(stored(hash))]); }
    // Adds the hash; false when it was held already.
    bool insert(std::uint64_t hash) {
        if ((m_size + 1) * 4 > m_slotCount * 3) [[unlikely]]
            rebuild(m_slotCount * 2);
        const std::uint64_t h = stored(hash);
        for (std::size_t i = homeOf(h);; i = i + 1 == m_slotCount ? 0 : i + 1) {
            if (m_slots[i] == h)
                return false;
            if (m_slots[i] == 0) {
                m_slots[i] = h;
                ++m_size;
                return true;
            }
        }
    }
    std::uint64_t size() const { return m_size; }

private:
    static constexpr std::size_t kInitialSlots = 1024;
    struct Free {
        void operator()(std::uint64_t* p) const { std::free(p); }
    };
    // 0 marks an empty slot: a hash of 0 is kept as 1 (two keys then merge, a chance of 2^-63 more than any
    // other pair's).
    static std::uint64_t stored(std::uint64_t hash) { return hash == 0 ? 1 : hash; }
    // The hash's high bits scaled to the slot count (Lemire's multiply-shift): any count, no power of two.
    std::size_t homeOf(std::uint64_t h) const {
        __extension__ using Wide = unsigned __int128; // GCC's and Clang's, on 64-bit hosts
        return static_cast<std::size_t>((static_cast<Wide>(h) * m_slotCount) >> 64);
    }
    void rebuild(std::size_t slots) {
        std::unique_ptr<std::uint64_t[], Free> old = std::move(m_slots);
        const std::size_t oldCount = m_slotCount;
        m_slots.reset(static_cast<std::uint64_t*>(allocateHugePageBacked(slots * sizeof(std::uint64_t))));
        std::fill_n(m_slots.get(), slots, std::uint64_t { 0 });
        m_slotCount = slots;
        m_size = 0;
        for (std::size_t i = 0; i < oldCount; ++i)
            if (old[i] != 0)
                insert(old[i]);
    }

    std::unique_ptr<std::uint64_t[], Free> m_slots;
    std::size_t m_slotCount = 0;
    std::uint64_t m_size = 0;
};

} // namespace layoutlab
