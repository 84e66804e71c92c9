// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/trace/request.h"

// Counts per key shape. A keyspace of millions of keys usually has a few thousand distinct shapes;
// per-threshold results are computed from these counts, not by replaying the trace again.

#include "layoutlab/layout/key_layout.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace layoutlab {

// (stale-expire bit, key bytes < 2^24, value bytes < 2^32, TTL bit, value kind) packed in 64 bits.
inline constexpr std::uint32_t kMaxShapeKeyBytes = kMaxKeyBytes;
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

// A shape, its sds buffer (KeyShape::sdsBytes), and the threshold from which its stale expire field is gone
// (KeyState::staleBound): the key of keys whose shape depends on the threshold or has a buffer of its own.
// Sorted, the entries of one shape and buffer are consecutive.
struct ShapeBound {
    std::uint64_t shape = 0;
    std::uint32_t sdsBytes = 0;
    std::uint32_t bound = 0;
    auto operator<=>(const ShapeBound&) const = default;
};

template <class Key> struct ShapeKeyTraits;
template <> struct ShapeKeyTraits<std::uint64_t> {
    static constexpr std::uint64_t kEmpty = ~std::uint64_t { 0 };
    static std::uint64_t hash(std::uint64_t shape) { return shape; }
};
template <> struct ShapeKeyTraits<ShapeBound> {
    static constexpr ShapeBound kEmpty { ~std::uint64_t { 0 }, 0, 0 };
    static std::uint64_t hash(const ShapeBound& k) {
        return k.shape ^ ((std::uint64_t { k.bound } << 32 | k.sdsBytes) * 0xff51afd7ed558ccdULL);
    }
};

// Counts per key (a packed shape, or a ShapeBound) in an open-addressed table: one probe sequence per add.
template <class Key> class BasicShapeHistogram {
public:
    struct Entry {
        Key shape = ShapeKeyTraits<Key>::kEmpty;
        std::uint64_t count = 0;
    };

    BasicShapeHistogram() { m_slots.resize(kInitialSlots); }

    void add(const Key& shape, std::uint64_t count = 1) {
        std::size_t i = slotOf(shape);
        while (true) {
            Entry& e = m_slots[i];
            if (e.shape == shape) {
                e.count += count;
                return;
            }
            if (e.shape == ShapeKeyTraits<Key>::kEmpty) {
                e.shape = shape;
                e.count = count;
                // Up to 7/8 full: the probes of a hit stay on the first slot's cache line or the next, and a
                // keyspace of ~100k shapes keeps to 2 MiB.
                if (++m_size * 8 > m_slots.size() * 7)
                    grow();
                return;
            }
            i = (i + 1) & (m_slots.size() - 1);
        }
    }

    // The count of `shape`, made 0 when it had none (a table of values by shape: ids, indexes).
    std::uint64_t& at(const Key& shape) {
        if (const std::uint64_t* found = find(shape))
            return const_cast<std::uint64_t&>(*found);
        add(shape, 0);
        return const_cast<std::uint64_t&>(*find(shape));
    }

    // Fetches the slot `shape` starts its probe at (a hint for a lookup to come). Always inlined, as
    // CacheHierarchy::prefetch is: GCC 12 drops a call whose only effect is a prefetch, prefetch and all.
    [[gnu::always_inline]] void prefetch(const Key& shape) const { __builtin_prefetch(&m_slots[slotOf(shape)]); }

    // The count of `shape`, or nullptr when it has none.
    const std::uint64_t* find(const Key& shape) const {
        for (std::size_t i = slotOf(shape);; i = (i + 1) & (m_slots.size() - 1)) {
            const Entry& e = m_slots[i];
            if (e.shape == shape)
                return &e.count;
            if (e.shape == ShapeKeyTraits<Key>::kEmpty)
                return nullptr;
        }
    }
    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    // Entries sorted by key (deterministic output).
    std::vector<Entry> sorted() const {
        std::vector<Entry> out;
        out.reserve(m_size);
        for (const auto& e : m_slots)
            if (e.shape != ShapeKeyTraits<Key>::kEmpty)
                out.push_back(e);
        std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.shape < b.shape; });
        return out;
    }

private:
    static constexpr std::size_t kInitialSlots = 1024;

    std::size_t slotOf(const Key& shape) const {
        return static_cast<std::size_t>((ShapeKeyTraits<Key>::hash(shape) * 0x9e3779b97f4a7c15ULL) >> 32)
            & (m_slots.size() - 1);
    }
    void grow() {
        std::vector<Entry> old;
        old.swap(m_slots);
        m_slots.assign(old.size() * 2, Entry {});
        m_size = 0;
        for (const auto& e : old)
            if (e.shape != ShapeKeyTraits<Key>::kEmpty)
                add(e.shape, e.count);
    }

    std::vector<Entry> m_slots;
    std::size_t m_size = 0;
};

using ShapeHistogram = BasicShapeHistogram<std::uint64_t>;
// Keys whose shape depends on the threshold, by (shape with the stale expire field, bound).
using ThresholdShapeHistogram = BasicShapeHistogram<ShapeBound>;

} // namespace layoutlab
