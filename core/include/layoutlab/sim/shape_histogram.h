// SPDX-License-Identifier: MIT
#pragma once

// Counts per key shape. A keyspace of millions of keys usually has a few thousand distinct shapes;
// per-threshold results are computed from these counts, not by replaying the trace again.

#include "layoutlab/layout/key_layout.h"

#include <cstdint>
#include <vector>

namespace layoutlab {

// (stale-expire bit, key bytes < 2^24, value bytes < 2^32, TTL bit, value kind) packed in 64 bits.
inline constexpr std::uint32_t kMaxShapeKeyBytes = (1u << 24) - 1;
inline constexpr std::uint64_t kStaleExpireShapeBit = std::uint64_t { 1 } << 59;

inline std::uint64_t packShape(
    std::uint32_t keyBytes, std::uint32_t valueBytes, bool hasTtl, ValueKind kind, bool staleExpire = false) {
    return (staleExpire ? kStaleExpireShapeBit : 0) | (std::uint64_t { keyBytes } << 35)
        | (std::uint64_t { valueBytes } << 3) | (hasTtl ? 4u : 0u) | static_cast<std::uint64_t>(kind);
}
inline std::uint64_t packShape(const KeyShape& s) {
    return packShape(s.keyBytes, s.valueBytes, s.hasTtl, s.kind, s.staleExpire);
}
inline KeyShape unpackShape(std::uint64_t packed) {
    return { static_cast<std::uint32_t>(packed >> 35) & kMaxShapeKeyBytes, static_cast<std::uint32_t>(packed >> 3),
        (packed & 4u) != 0, static_cast<ValueKind>(packed & 3u), (packed & kStaleExpireShapeBit) != 0 };
}

class ShapeHistogram {
public:
    struct Entry {
        std::uint64_t shape = kEmpty;
        std::uint64_t count = 0;
    };

    ShapeHistogram() { m_slots.resize(kInitialSlots); }

    void add(std::uint64_t shape, std::uint64_t count = 1) {
        std::size_t i = slotOf(shape);
        while (true) {
            Entry& e = m_slots[i];
            if (e.shape == shape) {
                e.count += count;
                return;
            }
            if (e.shape == kEmpty) {
                e.shape = shape;
                e.count = count;
                if (++m_size * 4 > m_slots.size() * 3)
                    grow();
                return;
            }
            i = (i + 1) & (m_slots.size() - 1);
        }
    }

    std::size_t size() const { return m_size; }
    // Entries sorted by shape (deterministic output).
    std::vector<Entry> sorted() const;

private:
    static constexpr std::uint64_t kEmpty = ~std::uint64_t { 0 };
    static constexpr std::size_t kInitialSlots = 1024;

    std::size_t slotOf(std::uint64_t shape) const {
        return static_cast<std::size_t>((shape * 0x9e3779b97f4a7c15ULL) >> 32) & (m_slots.size() - 1);
    }
    void grow();

    std::vector<Entry> m_slots;
    std::size_t m_size = 0;
};

} // namespace layoutlab
