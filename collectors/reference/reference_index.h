// SPDX-License-Identifier: MIT
#pragma once

// The reference engine's key index: a real hash table with the modelled engine's bucket structure, its
// arrays and child buckets allocated from the engine's arena.
//   Valkey (src/hashtable.c): 64-byte buckets {metadata byte, 7 one-byte hash tags, 7 entry pointers};
//     a full bucket turns its last slot into a pointer to a child bucket.
//   Redis (src/dict.c): an array of 8-byte slots, each the head of a chain of dictEntry allocations
//     linked through their `next` field (offset 16).
// The bucket count is set from outside (the simulator's IndexTableModel decides when to grow or shrink);
// resize() rebuilds the table at once rather than incrementally.

#include "jemalloc_arena.h"

#include <cstdint>
#include <cstring>

namespace layoutlab {

class ReferenceIndex {
public:
    // `hashOf` recomputes an entry's hash when the table is rebuilt.
    using HashOf = std::uint64_t (*)(void* entry);
    ReferenceIndex(IndexKind kind, JemallocArena& arena, HashOf hashOf)
        : m_kind(kind)
        , m_arena(arena)
        , m_hashOf(hashOf) { }
    ~ReferenceIndex();
    ReferenceIndex(const ReferenceIndex&) = delete;
    ReferenceIndex& operator=(const ReferenceIndex&) = delete;

    void resize(std::uint64_t buckets);
    std::uint64_t buckets() const { return m_buckets; }
    std::uint64_t entries() const { return m_entries; }
    std::uint64_t childBuckets() const { return m_childBuckets; }
    std::uint64_t usableBytes() const;

    void insert(std::uint64_t hash, void* entry);
    // hashtable.c delete: a hole in a chained bucket is filled from the chain's last bucket, which is
    // freed once it holds at most one entry (fillBucketHole, pruneLastBucket).
    void erase(std::uint64_t hash, void* entry);
    // An overwrite puts the new entry where the old one was (Valkey dbSetValue writes through the
    // position hashtableFindRef gave; Redis keeps the chain order).
    void replace(std::uint64_t hash, void* oldEntry, void* newEntry);
    // The first entry in the hash's bucket (chain) for which `matches(entry)` holds, or nullptr.
    template <class Match> void* find(std::uint64_t hash, Match&& matches) const {
        if (m_buckets == 0)
            return nullptr;
        if (m_kind == IndexKind::ValkeyHashtable) {
            const std::uint8_t tag = hashTag(hash);
            for (const Bucket* b = &bucketArray()[hash & (m_buckets - 1)]; b; b = b->child()) {
                for (unsigned i = 0; i < b->slots(); ++i)
                    if ((b->presence & (1u << i)) && b->hashes[i] == tag && matches(b->entries[i]))
                        return b->entries[i];
            }
            return nullptr;
        }
        for (void* e = slotArray()[hash & (m_buckets - 1)]; e; e = chainNext(e))
            if (matches(e))
                return e;
        return nullptr;
    }

    // dictEntry's `next` field (dict.c: struct dictEntry { void *key; union v; dictEntry *next; }).
    static constexpr std::size_t kChainNextOffset = 16;
    static void* chainNext(void* entry) {
        void* next;
        std::memcpy(&next, static_cast<char*>(entry) + kChainNextOffset, sizeof(next));
        return next;
    }
    static void setChainNext(void* entry, void* next) {
        std::memcpy(static_cast<char*>(entry) + kChainNextOffset, &next, sizeof(next));
    }

private:
    // hashtable.c `bucket`: chained:1 + presence:7 bits, hashes[7], entries[7].
    static constexpr unsigned kEntriesPerBucket = 7; // ENTRIES_PER_BUCKET
    static constexpr std::uint8_t kChainedFlag = 0x80;
    struct Bucket {
        std::uint8_t presence = 0; // bit i: entries[i] holds an entry; bit 7: chained
        std::uint8_t hashes[kEntriesPerBucket] {};
        void* entries[kEntriesPerBucket] {};

        bool chained() const { return presence & kChainedFlag; }
        unsigned slots() const { return chained() ? kEntriesPerBucket - 1 : kEntriesPerBucket; }
        Bucket* child() const { return chained() ? static_cast<Bucket*>(entries[kEntriesPerBucket - 1]) : nullptr; }
    };
    static_assert(sizeof(Bucket) == 64, "hashtable.c: a bucket is one 64-byte cache line");
    // hashtable.c highBits(): the top byte of the hash is the tag kept in the bucket.
    static std::uint8_t hashTag(std::uint64_t hash) { return static_cast<std::uint8_t>(hash >> 56); }

    Bucket* bucketArray() const { return static_cast<Bucket*>(m_table); }
    void** slotArray() const { return static_cast<void**>(m_table); }
    std::size_t bucketBytes() const;
    void insertInto(void* table, std::uint64_t buckets, std::uint64_t hash, void* entry);
    // Where `entry` sits: its bucket and slot (Valkey), or the link that points at it (Redis).
    struct Position {
        Bucket* bucket = nullptr;
        unsigned slot = 0;
        void** link = nullptr;
    };
    Position locate(std::uint64_t hash, void* entry) const;
    void fillBucketHole(Bucket* bucket, unsigned slot);
    void releaseTable(void* table, std::uint64_t buckets);
    template <class Visit> void forEach(void* table, std::uint64_t buckets, Visit&& visit) const;

    IndexKind m_kind;
    JemallocArena& m_arena;
    HashOf m_hashOf;
    void* m_table = nullptr;
    std::uint64_t m_buckets = 0;
    std::uint64_t m_entries = 0;
    std::uint64_t m_childBuckets = 0;
};

} // namespace layoutlab
