// SPDX-License-Identifier: MIT
#include "layoutlab/sim/sampled_key_table.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace layoutlab {

namespace {
std::uint64_t reverseBits(std::uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
    return __builtin_bswap64(v);
}
} // namespace

SampledKeyTable::SampledKeyTable(IndexKind kind, std::uint64_t seed)
    : m_dict(kind != IndexKind::ValkeyHashtable)
    , m_seed(seed) { }

std::uint64_t SampledKeyTable::bucketOf(std::uint32_t keyId) const {
    std::uint64_t state = m_seed ^ (std::uint64_t { keyId } * 0x9E3779B97F4A7C15ull);
    return Random::splitmix64(state) & (m_buckets - 1);
}

void SampledKeyTable::resize(std::uint64_t buckets) {
    if (buckets == m_buckets)
        return;
    assert(buckets == 0 || std::has_single_bit(buckets));
    // The entries in the order rehashing moves them: bucket by bucket, each chain from its start.
    std::vector<std::uint32_t> moved;
    moved.reserve(m_entries);
    if (m_dict) {
        for (std::uint32_t head : m_heads)
            for (std::uint32_t k = head; k != kNone; k = m_next[k])
                moved.push_back(k);
    } else {
        for (const Bucket& top : m_top)
            for (const Bucket* b = &top; b; b = b->chained ? &child(b->child) : nullptr)
                for (unsigned p = 0; p < b->positions(); ++p)
                    if (b->presence & (1u << p))
                        moved.push_back(b->entries[p]);
    }
    m_buckets = buckets;
    m_entries = 0;
    m_heads.assign(m_dict ? buckets : 0, kNone);
    m_top.assign(m_dict ? 0 : buckets, Bucket {});
    m_children.clear();
    m_unusedChildren.clear();
    if (buckets == 0)
        return;
    for (std::uint32_t k : moved)
        insert(k);
}

void SampledKeyTable::insert(std::uint32_t keyId) {
    if (m_buckets == 0)
        return; // the caller sizes the table first; a key the table has no room for is not sampled
    ++m_entries;
    if (!m_dict) {
        insertInto(keyId);
        return;
    }
    // dict.c dictAddRaw: at the head of its bucket's chain.
    if (keyId >= m_next.size())
        m_next.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_next.size() * 2), kNone);
    std::uint32_t& head = m_heads[bucketOf(keyId)];
    m_next[keyId] = head;
    head = keyId;
}

void SampledKeyTable::insertInto(std::uint32_t keyId) {
    // hashtable.c findBucketForInsert: the first bucket of the chain with a free position, its first free
    // position; a full last bucket becomes chained, its last entry moving into the new child
    // (bucketConvertToChained).
    Bucket* b = &m_top[bucketOf(keyId)];
    for (;;) {
        for (unsigned p = 0; p < b->positions(); ++p)
            if (!(b->presence & (1u << p))) {
                b->presence = static_cast<std::uint8_t>(b->presence | (1u << p));
                b->entries[p] = keyId;
                return;
            }
        if (!b->chained) {
            const std::uint32_t index = newChild();
            Bucket& c = child(index);
            const unsigned last = kPositions - 1;
            c.presence = 1;
            c.entries[0] = b->entries[last];
            b->presence = static_cast<std::uint8_t>(b->presence & ~(1u << last));
            b->chained = true;
            b->child = index;
        }
        b = &child(b->child);
    }
}

void SampledKeyTable::erase(std::uint32_t keyId) {
    if (m_buckets == 0)
        return;
    if (!m_dict) {
        eraseFromHashtable(keyId);
        return;
    }
    std::uint32_t* link = &m_heads[bucketOf(keyId)];
    while (*link != kNone && *link != keyId)
        link = &m_next[*link];
    if (*link == kNone)
        return;
    *link = m_next[keyId];
    --m_entries;
}

void SampledKeyTable::eraseFromHashtable(std::uint32_t keyId) {
    for (Bucket* b = &m_top[bucketOf(keyId)]; b; b = b->chained ? &child(b->child) : nullptr)
        for (unsigned p = 0; p < b->positions(); ++p)
            if ((b->presence & (1u << p)) && b->entries[p] == keyId) {
                b->presence = static_cast<std::uint8_t>(b->presence & ~(1u << p));
                --m_entries;
                if (b->chained)
                    fillHole(*b, p);
                return;
            }
}

void SampledKeyTable::fillHole(Bucket& bucket, unsigned position) {
    // hashtable.c fillBucketHole: an entry of the chain's last bucket fills the hole; a last bucket left
    // with one entry or none is freed, its entry moving into the position its pointer had (pruneLastBucket).
    Bucket* beforeLast = &bucket;
    Bucket* last = &child(bucket.child);
    while (last->chained) {
        beforeLast = last;
        last = &child(last->child);
    }
    auto move = [](Bucket& to, unsigned toPosition, Bucket& from) {
        const unsigned fromPosition = static_cast<unsigned>(std::countr_zero(from.presence));
        to.entries[toPosition] = from.entries[fromPosition];
        to.presence = static_cast<std::uint8_t>(to.presence | (1u << toPosition));
        from.presence = static_cast<std::uint8_t>(from.presence & ~(1u << fromPosition));
    };
    if (last->presence != 0)
        move(bucket, position, *last);
    if (std::popcount(last->presence) <= 1) {
        const std::uint32_t freed = beforeLast->child;
        beforeLast->chained = false;
        beforeLast->child = kNone;
        if (last->presence != 0)
            move(*beforeLast, kPositions - 1, *last);
        freeChild(freed);
    }
}

std::uint32_t SampledKeyTable::newChild() {
    if (!m_unusedChildren.empty()) {
        const std::uint32_t index = m_unusedChildren.back();
        m_unusedChildren.pop_back();
        return index;
    }
    m_children.emplace_back();
    return static_cast<std::uint32_t>(m_children.size() - 1);
}

void SampledKeyTable::freeChild(std::uint32_t index) {
    m_children[index] = Bucket {};
    m_unusedChildren.push_back(index);
}

std::size_t SampledKeyTable::sample(Random& random, std::span<std::uint32_t> out) {
    if (m_entries == 0 || out.empty())
        return 0;
    if (out.size() > m_entries)
        out = out.first(m_entries);
    return m_dict ? sampleDict(random, out) : sampleHashtable(random, out);
}

std::size_t SampledKeyTable::sampleDict(Random& random, std::span<std::uint32_t> out) const {
    // dict.c dictGetSomeKeys (one table: the model rehashes at once): up to count * 10 steps from a random
    // bucket; each non-empty bucket's whole chain from its head, the entries past `count` replacing random
    // ones (reservoir sampling: Redis 7.2, Valkey 8.0, backported to Redis 7.0.12); after more than
    // max(count, 4) empty buckets in a row, a new random bucket.
    const std::size_t count = out.size();
    std::size_t stored = 0;
    std::uint64_t maxSteps = count * 10;
    const std::uint64_t mask = m_buckets - 1;
    std::uint64_t i = random.next() & mask;
    std::uint64_t emptyRun = 0;
    while (stored < count && maxSteps-- > 0) {
        const std::uint32_t head = m_heads[i];
        if (head == kNone) {
            if (++emptyRun >= 5 && emptyRun > count) {
                i = random.next() & mask; // and, as in dict.c, stepped on once below
                emptyRun = 0;
            }
        } else {
            emptyRun = 0;
            for (std::uint32_t k = head; k != kNone; k = m_next[k]) {
                if (stored < count)
                    out[stored] = k;
                else if (const std::uint64_t at = random.below(stored + 1); at < count)
                    out[at] = k;
                ++stored;
            }
        }
        i = (i + 1) & mask;
    }
    return std::min(stored, count);
}

std::size_t SampledKeyTable::sampleHashtable(Random& random, std::span<std::uint32_t> out) const {
    const std::size_t count = out.size();
    std::size_t seen = 0;
    const std::uint64_t mask = m_buckets - 1;
    std::uint64_t cursor = random.next();
    while (seen < count) {
        for (const Bucket* b = &m_top[cursor & mask]; b; b = b->chained ? &child(b->child) : nullptr)
            for (unsigned p = 0; p < b->positions(); ++p)
                if (b->presence & (1u << p)) {
                    // sampleEntriesScanFn: the first `count` in order, then reservoir sampling.
                    ++seen;
                    if (seen <= count) {
                        out[seen - 1] = b->entries[p];
                    } else if (const std::uint64_t at = random.below(seen); at < count) {
                        out[at] = b->entries[p];
                    }
                }
        // hashtable.c nextCursor: increment the cursor's reversed bits within the mask.
        cursor |= ~mask;
        cursor = reverseBits(cursor);
        ++cursor;
        cursor = reverseBits(cursor);
    }
    return count;
}

} // namespace layoutlab
