// SPDX-License-Identifier: MIT
#pragma once

// Valkey's hashtable (hashtable.c, 8.1 and later) as chains of buckets: a top-level bucket per hash slot,
// each of ENTRIES_PER_BUCKET (7) positions, a full bucket's last position turned into the pointer to a child
// bucket. Only which key id sits where is kept, so the models that need the table's shape share one set of
// rules: the slab model (SlabIndex: which child buckets are allocated and freed) and the eviction's sampling
// (SampledKeyTable: the order a scan returns keys in).
//  - insert (findBucketForInsert): the first free position along the chain; a full last bucket moves its
//    last entry into a new child bucket, whose pointer takes the position (bucketConvertToChained);
//  - delete: a hole in a chained bucket is filled from the chain's last bucket, which is freed once it
//    holds at most one entry, that entry moving into the position its pointer had (fillBucketHole,
//    pruneLastBucket).
// `Extra` is what a model keeps with each bucket (the slab model: a child bucket's allocation).

#include <bit>
#include <cstdint>
#include <deque>
#include <vector>

namespace layoutlab {

template <typename Extra> class BucketChains {
public:
    static constexpr unsigned kPositions = 7; // hashtable.c ENTRIES_PER_BUCKET on 64-bit builds
    static constexpr std::uint32_t kNone = UINT32_MAX;
    struct Bucket {
        std::uint8_t presence = 0; // bit p: position p holds a key
        bool chained = false;
        std::uint32_t child = kNone; // index of the child bucket
        std::uint32_t entries[kPositions] {};
        Extra extra {};
        unsigned positions() const { return chained ? kPositions - 1 : kPositions; }
    };

    // `buckets` empty top-level buckets, and no children.
    void assign(std::uint64_t buckets) {
        m_top.assign(buckets, Bucket {});
        m_children.clear();
        m_unused.clear();
    }
    std::uint64_t buckets() const { return m_top.size(); }
    const Bucket& top(std::uint64_t index) const { return m_top[index]; }
    Bucket& top(std::uint64_t index) { return m_top[index]; }
    const Bucket* next(const Bucket& b) const { return b.chained ? &m_children[b.child] : nullptr; }

    // Puts `id` in the chain of top bucket `index`; `made(child)` is told of a new child bucket.
    template <typename Made> void insert(std::uint64_t index, std::uint32_t id, Made&& made) {
        Bucket* b = &m_top[index];
        for (;;) {
            for (unsigned p = 0; p < b->positions(); ++p)
                if (!(b->presence & (1u << p))) {
                    b->presence = static_cast<std::uint8_t>(b->presence | (1u << p));
                    b->entries[p] = id;
                    return;
                }
            if (!b->chained) {
                const std::uint32_t child = newChild();
                Bucket& c = m_children[child];
                const unsigned last = kPositions - 1;
                c.presence = 1;
                c.entries[0] = b->entries[last];
                b->presence = static_cast<std::uint8_t>(b->presence & ~(1u << last));
                b->chained = true;
                b->child = child;
                made(c);
            }
            b = &m_children[b->child];
        }
    }

    // Takes `id` out of the chain of top bucket `index`; false when it is not there. `freed(child)` is told
    // of a child bucket before it goes.
    template <typename Freed> bool erase(std::uint64_t index, std::uint32_t id, Freed&& freed) {
        for (Bucket* b = &m_top[index];; b = &m_children[b->child]) {
            for (unsigned p = 0; p < b->positions(); ++p)
                if ((b->presence & (1u << p)) && b->entries[p] == id) {
                    b->presence = static_cast<std::uint8_t>(b->presence & ~(1u << p));
                    if (b->chained)
                        fillHole(*b, p, freed);
                    return true;
                }
            if (!b->chained)
                return false;
        }
    }

    // The entries of top bucket `index`'s chain in the order a scan meets them, bucket by bucket.
    template <typename Visit> void forEachEntry(std::uint64_t index, Visit&& visit) const {
        for (const Bucket* b = &m_top[index]; b; b = next(*b))
            for (unsigned p = 0; p < b->positions(); ++p)
                if (b->presence & (1u << p))
                    visit(b->entries[p]);
    }

    // Each child bucket of top bucket `index`'s chain, from the first: `freed(child)` before it goes.
    template <typename Freed> void freeChildren(std::uint64_t index, Freed&& freed) {
        const Bucket& top = m_top[index];
        for (std::uint32_t child = top.chained ? top.child : kNone; child != kNone;) {
            const std::uint32_t after = m_children[child].chained ? m_children[child].child : kNone;
            freeChild(child, freed);
            child = after;
        }
    }

private:
    template <typename Freed> void fillHole(Bucket& bucket, unsigned position, Freed& freed) {
        Bucket* beforeLast = &bucket;
        Bucket* last = &m_children[bucket.child];
        while (last->chained) {
            beforeLast = last;
            last = &m_children[last->child];
        }
        auto move = [](Bucket& to, unsigned toPosition, Bucket& from) {
            const auto fromPosition = static_cast<unsigned>(std::countr_zero(from.presence));
            to.entries[toPosition] = from.entries[fromPosition];
            to.presence = static_cast<std::uint8_t>(to.presence | (1u << toPosition));
            from.presence = static_cast<std::uint8_t>(from.presence & ~(1u << fromPosition));
        };
        if (last->presence != 0)
            move(bucket, position, *last);
        if (std::popcount(last->presence) <= 1) {
            const std::uint32_t gone = beforeLast->child;
            beforeLast->chained = false;
            beforeLast->child = kNone;
            if (last->presence != 0)
                move(*beforeLast, kPositions - 1, *last);
            freeChild(gone, freed);
        }
    }
    std::uint32_t newChild() {
        if (!m_unused.empty()) {
            const std::uint32_t child = m_unused.back();
            m_unused.pop_back();
            return child;
        }
        m_children.emplace_back();
        return static_cast<std::uint32_t>(m_children.size() - 1);
    }
    template <typename Freed> void freeChild(std::uint32_t child, Freed& freed) {
        freed(m_children[child]);
        m_children[child] = Bucket {};
        m_unused.push_back(child);
    }

    std::vector<Bucket> m_top;
    std::deque<Bucket> m_children; // a deque: a bucket stays where it is while children are added
    std::vector<std::uint32_t> m_unused;
};

} // namespace layoutlab
