// SPDX-License-Identifier: MIT
#include "layoutlab/sim/sampled_key_table.h"

#include <algorithm>
#include <array>
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
        for (std::uint64_t top = 0; top < m_chains.buckets(); ++top)
            m_chains.forEachEntry(top, [&](std::uint32_t k) { moved.push_back(k); });
    }
    m_buckets = buckets;
    m_entries = 0;
    m_heads.assign(m_dict ? buckets : 0, kNone);
    m_chains.assign(m_dict ? 0 : buckets);
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
        m_chains.insert(bucketOf(keyId), keyId, [](const auto&) {});
        return;
    }
    // dict.c dictAddRaw: at the head of its bucket's chain.
    if (keyId >= m_next.size())
        m_next.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_next.size() * 2), kNone);
    std::uint32_t& head = m_heads[bucketOf(keyId)];
    m_next[keyId] = head;
    head = keyId;
}

void SampledKeyTable::erase(std::uint32_t keyId) {
    if (m_buckets == 0)
        return;
    if (!m_dict) {
        if (m_chains.erase(bucketOf(keyId), keyId, [](const auto&) {}))
            --m_entries;
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

std::size_t SampledKeyTable::sample(Random& random, std::span<std::uint32_t> out) {
    if (m_entries == 0 || out.empty())
        return 0;
    if (out.size() > m_entries)
        out = out.first(m_entries);
    return m_dict ? sampleDict(random, out) : sampleHashtable(random, out);
}

std::uint32_t SampledKeyTable::randomKey(Random& random) {
    if (m_entries == 0)
        return kNone;
    if (!m_dict) {
        constexpr std::size_t kWeakRandomSampleSize = 7; // hashtable.c WEAK_RANDOM_SAMPLE_SIZE
        std::array<std::uint32_t, kWeakRandomSampleSize> samples {};
        const std::size_t count = sample(random, samples);
        return samples[random.below(count)];
    }
    const std::uint64_t mask = m_buckets - 1;
    std::uint32_t head = kNone;
    while (head == kNone)
        head = m_heads[random.next() & mask];
    std::uint64_t length = 0;
    for (std::uint32_t k = head; k != kNone; k = m_next[k])
        ++length;
    std::uint32_t k = head;
    for (std::uint64_t skip = random.below(length); skip > 0; --skip)
        k = m_next[k];
    return k;
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
        m_chains.forEachEntry(cursor & mask, [&](std::uint32_t k) {
            // sampleEntriesScanFn: the first `count` in order, then reservoir sampling.
            ++seen;
            if (seen <= count)
                out[seen - 1] = k;
            else if (const std::uint64_t at = random.below(seen); at < count)
                out[at] = k;
        });
        // hashtable.c nextCursor: increment the cursor's reversed bits within the mask.
        cursor |= ~mask;
        cursor = reverseBits(cursor);
        ++cursor;
        cursor = reverseBits(cursor);
    }
    return count;
}

} // namespace layoutlab
