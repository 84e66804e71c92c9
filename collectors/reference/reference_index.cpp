// SPDX-License-Identifier: MIT
#include "reference_index.h"

#include <bit>
#include <vector>

namespace layoutlab {

ReferenceIndex::~ReferenceIndex() {
    releaseTable(m_table, m_buckets);
}

std::size_t ReferenceIndex::bucketBytes() const {
    return m_kind == IndexKind::ValkeyHashtable ? sizeof(Bucket) : sizeof(void*);
}

std::uint64_t ReferenceIndex::usableBytes() const {
    const std::uint64_t table = m_table ? m_arena.usableSize(m_table) : 0;
    return table + m_childBuckets * JemallocArena::usableSizeFor(sizeof(Bucket));
}

template <class Visit> void ReferenceIndex::forEach(void* table, std::uint64_t buckets, Visit&& visit) const {
    if (!table)
        return;
    for (std::uint64_t i = 0; i < buckets; ++i) {
        if (m_kind == IndexKind::ValkeyHashtable) {
            for (const Bucket* b = &static_cast<Bucket*>(table)[i]; b; b = b->child())
                for (unsigned s = 0; s < b->slots(); ++s)
                    if (b->presence & (1u << s))
                        visit(b->entries[s]);
        } else {
            for (void* e = static_cast<void**>(table)[i]; e;) {
                void* next = chainNext(e);
                visit(e);
                e = next;
            }
        }
    }
}

void ReferenceIndex::releaseTable(void* table, std::uint64_t buckets) {
    if (!table)
        return;
    if (m_kind == IndexKind::ValkeyHashtable) {
        for (std::uint64_t i = 0; i < buckets; ++i) {
            Bucket* child = static_cast<Bucket*>(table)[i].child();
            while (child) {
                Bucket* next = child->child();
                m_arena.release(child);
                --m_childBuckets;
                child = next;
            }
        }
    }
    m_arena.release(table);
}

void ReferenceIndex::resize(std::uint64_t buckets) {
    if (buckets == m_buckets)
        return;
    // zcalloc in both engines: a zeroed array.
    void* table = buckets ? m_arena.allocate(buckets * bucketBytes(), true) : nullptr;
    std::vector<void*> moved;
    moved.reserve(m_entries);
    forEach(m_table, m_buckets, [&](void* e) { moved.push_back(e); });
    releaseTable(m_table, m_buckets);
    m_table = table;
    m_buckets = buckets;
    if (buckets == 0) {
        // The replay emptied its table before the change that leaves this one's last entry (a PERSIST of the
        // last key with a TTL, the delete of a collection): the entry goes with the table, as in SlabIndex.
        m_entries = 0;
        return;
    }
    for (void* e : moved)
        insertInto(m_table, m_buckets, m_hashOf(e), e);
}

void ReferenceIndex::insertInto(void* table, std::uint64_t buckets, std::uint64_t hash, void* entry) {
    const std::uint64_t index = hash & (buckets - 1);
    if (m_kind != IndexKind::ValkeyHashtable) {
        // dictAddRaw: the new entry goes to the head of its chain.
        void** slot = &static_cast<void**>(table)[index];
        setChainNext(entry, *slot);
        *slot = entry;
        return;
    }
    // hashtable.c insert: the first free slot in the bucket chain; when the last bucket is full, its last
    // entry moves into a new child bucket and the slot becomes the child pointer (bucketConvertToChained).
    Bucket* b = &static_cast<Bucket*>(table)[index];
    for (;;) {
        const unsigned slots = b->slots();
        for (unsigned s = 0; s < slots; ++s) {
            if (!(b->presence & (1u << s))) {
                b->presence |= static_cast<std::uint8_t>(1u << s);
                b->hashes[s] = hashTag(hash);
                b->entries[s] = entry;
                return;
            }
        }
        if (b->chained()) {
            b = b->child();
            continue;
        }
        auto* child = static_cast<Bucket*>(m_arena.allocate(sizeof(Bucket), true));
        ++m_childBuckets;
        const unsigned last = kEntriesPerBucket - 1;
        child->presence = 1;
        child->hashes[0] = b->hashes[last];
        child->entries[0] = b->entries[last];
        b->presence = static_cast<std::uint8_t>((b->presence & ~(1u << last)) | kChainedFlag);
        b->entries[last] = child;
        b = child;
    }
}

void ReferenceIndex::insert(std::uint64_t hash, void* entry) {
    if (m_buckets == 0)
        return; // none to put it in, as in SlabIndex: the replay holds its tables at their sizes
    insertInto(m_table, m_buckets, hash, entry);
    ++m_entries;
}

ReferenceIndex::Position ReferenceIndex::locate(std::uint64_t hash, void* entry) const {
    Position at;
    if (m_buckets == 0)
        return at;
    const std::uint64_t index = hash & (m_buckets - 1);
    if (m_kind != IndexKind::ValkeyHashtable) {
        for (void** link = &slotArray()[index]; *link;
             link = reinterpret_cast<void**>(static_cast<char*>(*link) + kChainNextOffset))
            if (*link == entry) {
                at.link = link;
                return at;
            }
        return at;
    }
    for (Bucket* b = &bucketArray()[index]; b; b = b->child())
        for (unsigned s = 0; s < b->slots(); ++s)
            if ((b->presence & (1u << s)) && b->entries[s] == entry) {
                at.bucket = b;
                at.slot = s;
                return at;
            }
    return at;
}

void ReferenceIndex::fillBucketHole(Bucket* bucket, unsigned slot) {
    Bucket* beforeLast = bucket;
    Bucket* last = bucket->child();
    while (last->chained()) {
        beforeLast = last;
        last = last->child();
    }
    auto move = [](Bucket* to, unsigned toSlot, Bucket* from, unsigned fromSlot) {
        to->entries[toSlot] = from->entries[fromSlot];
        to->hashes[toSlot] = from->hashes[fromSlot];
        to->presence |= static_cast<std::uint8_t>(1u << toSlot);
        from->presence &= static_cast<std::uint8_t>(~(1u << fromSlot));
    };
    const unsigned filled = last->presence & 0x7f;
    if (filled != 0)
        move(bucket, slot, last, static_cast<unsigned>(std::countr_zero(filled)));
    const unsigned left = last->presence & 0x7f;
    if (std::popcount(left) <= 1) {
        // pruneLastBucket: the before-last bucket becomes unchained; a last remaining entry takes the
        // place of the child link.
        beforeLast->presence &= static_cast<std::uint8_t>(~kChainedFlag);
        beforeLast->entries[kEntriesPerBucket - 1] = nullptr;
        if (left != 0)
            move(beforeLast, kEntriesPerBucket - 1, last, static_cast<unsigned>(std::countr_zero(left)));
        m_arena.release(last);
        --m_childBuckets;
    }
}

void ReferenceIndex::erase(std::uint64_t hash, void* entry) {
    const Position at = locate(hash, entry);
    if (at.link) {
        *at.link = chainNext(entry);
        --m_entries;
    } else if (at.bucket) {
        at.bucket->presence &= static_cast<std::uint8_t>(~(1u << at.slot));
        --m_entries;
        if (at.bucket->chained())
            fillBucketHole(at.bucket, at.slot);
    }
}

void ReferenceIndex::replace(std::uint64_t hash, void* oldEntry, void* newEntry) {
    const Position at = locate(hash, oldEntry);
    if (at.link) {
        setChainNext(newEntry, chainNext(oldEntry));
        *at.link = newEntry;
    } else if (at.bucket) {
        at.bucket->entries[at.slot] = newEntry;
    } else {
        insert(hash, newEntry);
    }
}

} // namespace layoutlab
