// SPDX-License-Identifier: MIT
#pragma once

// The reference engine's collection keys (hashes, sets, sorted sets, lists). Each change of one is a census
// (layoutlab/sim/collection_census.h) played into the engine's real arena exactly as the slab model plays it
// into its model of one: the command's argument objects, the regions the key gains, the key into the indexes,
// then the regions it lost. The census gives the key's allocations by class (its own parts among them:
// robj, key, dictEntry, CollectionKeyModel::keyParts), so the arena holds every byte; the key's entries in the
// indexes are stand-ins kept outside the arena, which carry the key's tag where the index reads it.

#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/sim/collection_census.h"
#include "reference_index.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace layoutlab {

class ReferenceCollections {
public:
    struct Setup {
        const LayoutModel* layout = nullptr;
        const JemallocModel* allocator = nullptr;
        std::uint32_t threshold = 0;
        bool expiresTable = false; // the engine keeps TTLs in an index of their own
        // Where each index reads a key's tag from its entry: at the entry itself (Valkey's objects, Valkey 8.0's
        // dictEntries holding their keys), else behind the pointer at its start (Redis's dictEntry -> key).
        bool keysHoldTag = true;
        bool expiresHoldTag = true;
    };
    ReferenceCollections(JemallocArena& arena, ReferenceIndex& keys, ReferenceIndex& expires, const Setup& setup);
    ~ReferenceCollections();
    ReferenceCollections(const ReferenceCollections&) = delete;
    ReferenceCollections& operator=(const ReferenceCollections&) = delete;

    bool holds(std::uint32_t keyId) const { return m_keys.contains(keyId); }
    // A change of `keyId` (a census from appendCollectionCensus); `newCommand`: the previous command's
    // arguments are freed first. Returns whether the key is new.
    bool store(std::uint32_t keyId, const std::uint32_t* census, bool hasTtl, bool newCommand);
    // freeClientArgv of the open collection command: the arguments in order, then the argv array.
    void releaseArguments();
    // RENAME: the key's regions given to `to`, its index entries moved there (its TTL's with the next change).
    void move(std::uint32_t from, std::uint32_t to);
    // The key's regions freed and its index entries removed (false: it holds no collection).
    bool remove(std::uint32_t keyId);
    // A collection overwritten by a string: the entries standing for it in the indexes (the string's take
    // their places; `expire` null when it has no TTL), then drop() frees its regions.
    struct Entries {
        void* key = nullptr;
        void* expire = nullptr;
    };
    std::optional<Entries> entriesOf(std::uint32_t keyId) const;
    void drop(std::uint32_t keyId);
    std::uint64_t usableBytes() const { return m_usableBytes; }

private:
    struct Region {
        void* pointer = nullptr;
        std::uint32_t classIndex = 0;
    };
    // A key's entries in the indexes: a dictEntry's first 24 bytes (the `next` at 16 the chain uses), and the
    // tag those not holding it point at.
    struct StandIn {
        alignas(8) unsigned char keyEntry[32] {};
        alignas(8) unsigned char expireEntry[32] {};
        std::uint64_t tag = 0;
    };
    struct Key {
        HeldRegions<Region> regions;
        std::unique_ptr<StandIn> standIn = std::make_unique<StandIn>();
    };
    Region allocate(std::uint32_t classIndex);
    void release(const Region& region);
    void tag(StandIn& standIn, std::uint32_t keyId) const;
    void freeRegions(Key& key);

    JemallocArena& m_arena;
    ReferenceIndex& m_index;
    ReferenceIndex& m_expires;
    Setup m_setup;
    CollectionArguments m_argumentClasses;
    std::unordered_map<std::uint32_t, Key> m_keys;
    std::vector<Region> m_arguments; // the open command's, in the order they were made
    std::vector<Region> m_next; // a change's room for the key's regions after it
    std::vector<Region> m_freeing; // and for those it frees
    std::uint64_t m_usableBytes = 0;
};

} // namespace layoutlab
