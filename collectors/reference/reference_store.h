// SPDX-License-Identifier: MIT
#pragma once

// The reference engine's store (layoutlab/collect/reference_engine.h): where each key's allocations are, the
// real index tables, the observer of the replay that builds and frees them. Included by reference_engine.cpp
// only, which defines the engine's public face on it.

#include "layoutlab/collect/reference_engine.h"

#include "jemalloc_arena.h"
#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/sim/slab_index.h"
#include "reference_collections.h"
#include "reference_index.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <unordered_map>

namespace layoutlab {

namespace reference_detail {

constexpr std::size_t kBatchRequests = 4096;
constexpr std::uint8_t kNone = 0xff;
constexpr std::uint32_t kNotTheKey = 0xffffffffu; // the tag of allocations that do not hold the key

// Fields the reference engine keeps inside the allocations, where the engines keep theirs:
// dictEntry (dict.c): key pointer at 0, value pointer at 8, chain `next` at 16;
// robj (server.h): its `ptr` at 8; every other allocation: a 4-byte key tag at 0 and its read length
// at 4 (the engines read lengths from their sds/robj headers the same way). A keyspace entry that holds
// its key (Valkey 8.0, dict.c createEmbeddedEntry) has the tag and read length in place of the pointer:
// the compare reads the entry itself.
constexpr std::size_t kEntryKeyOffset = 0;
constexpr std::size_t kEntryValueOffset = 8;
constexpr std::size_t kTagOffset = 0;
constexpr std::size_t kReadLengthOffset = 4;
constexpr std::size_t kObjectPointerOffset = 8;

template <class T> inline T loadAt(const void* base, std::size_t offset) {
    T value;
    std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof(value));
    return value;
}
template <class T> inline void storeAt(void* base, std::size_t offset, T value) {
    std::memcpy(static_cast<char*>(base) + offset, &value, sizeof(value));
}

// The one hash of a key id, shared with the slab model (its Valkey child buckets fall where these do).
inline std::uint64_t hashKey(std::uint32_t keyId) {
    return SlabIndex::hashOf(keyId);
}
// Valkey's tables hold the object, whose tag is its key; Redis's hold dictEntries pointing at the key.
inline std::uint64_t hashOfObject(void* object) {
    return hashKey(loadAt<std::uint32_t>(object, kTagOffset));
}
inline std::uint64_t hashOfEntry(void* entry) {
    return hashOfObject(loadAt<void*>(entry, kEntryKeyOffset));
}

// Reads `bytes` from the start of an allocation a word at a time, as a server copying it out would.
inline std::uint64_t readBytes(const void* base, std::uint32_t bytes) {
    std::uint64_t sum = 0;
    for (std::uint32_t offset = 0; offset < bytes; offset += 8)
        sum += loadAt<std::uint64_t>(base, offset); // within the usable size: regions are 8-byte multiples
    return sum;
}

// Where a key's allocations are, by position in its KeyLayout.
struct KeyRecord {
    void* allocation[KeyLayout::kMaxAllocations] {};
    std::uint8_t count = 0;
    std::uint8_t head = kNone; // what the keyspace index holds
    std::uint8_t expiresHead = kNone; // what the expires index holds
    std::uint32_t sdsBytes = 0; // a RawString key's sds buffer: with `shape`, what its layout was made of
    std::uint64_t shape = 0; // packed, at the engine's threshold
};

} // namespace reference_detail

using namespace reference_detail;

struct ReferenceEngine::Impl final : KeyspaceObserver {
    ReferenceEngineConfig config;
    std::uint32_t threshold = 0;
    IndexPolicy policy;
    std::unique_ptr<JemallocArena> arena;
    std::unique_ptr<ReferenceIndex> keys;
    std::unique_ptr<ReferenceIndex> expires;
    std::unique_ptr<ReferenceCollections> collections; // the collection keys (their records are empty)
    std::vector<std::uint32_t> census; // a collection change's, as appendCollectionCensus writes it
    std::vector<KeyRecord> records;
    std::unordered_map<std::uint64_t, KeyLayout> layouts; // by packed shape
    std::uint32_t entryReadBytes = 0;
    KeyspaceReplay* replay = nullptr; // during load()
    std::vector<std::uint32_t> sample;
    std::uint64_t liveKeys = 0;
    std::uint64_t keyBytes = 0;
    ArenaStats before;
    bool loaded = false;
    std::optional<Error> failure; // the first error an observer callback met
    KeyLayout ownBuffer; // layoutFor's answer for a RawString key

    bool keyInEntry = false; // the keyspace entries hold their keys (Allocation::holdsKey)

    bool dictIndex() const { return isChainedDict(policy.kind); }
    // The allocation a keyspace entry's compare reads the key's tag from.
    void* keyOfEntry(void* entry) const { return keyInEntry ? entry : loadAt<void*>(entry, kEntryKeyOffset); }

    const KeyLayout& layoutOf(std::uint64_t packedShape) {
        auto it = layouts.find(packedShape);
        if (it == layouts.end())
            it = layouts
                     .emplace(
                         packedShape, config.layout->describe(unpackShape(packedShape), threshold, *config.allocator))
                     .first;
        return it->second;
    }

    void syncIndexSizes() {
        keys->resize(replay->keyspaceTable().heldBuckets());
        if (const IndexTableModel* model = replay->expiresTable())
            expires->resize(model->heldBuckets());
    }

    // One keyspace table and one expires table, database 0's: a trace that keeps keys in other databases is
    // refused rather than measured with them in one table.
    void placed(std::uint32_t keyId, std::uint32_t database) override {
        if (!failure)
            failure = usageError(fmt::format("the reference engine keeps database 0 only, and the trace places key {} "
                                             "in database {} (sim, sweep and drive model every database)",
                keyId, database));
    }

    // Collection keys as the slab model plays them (reference_collections.h).
    bool modelsCollections() const override { return true; }
    void elementStored(std::uint32_t keyId, const KeyState& key, const Request& r, bool startsCommand) override {
        storeCollection(keyId, key, &r, startsCommand);
    }
    // `r`: the element request that changed it (none: a TTL's change or a rename, a command of its own).
    void storeCollection(std::uint32_t keyId, const KeyState& key, const Request* r, bool startsCommand) {
        if (failure)
            return;
        syncIndexSizes();
        census.clear();
        appendCollectionCensus(replay->collections(), jemalloc().table(), keyId, key, r, startsCommand, census);
        if (collections->store(keyId, census.data(), key.hasTtl(), startsCommand))
            ++liveKeys;
    }
    void renamed(std::uint32_t from, std::uint32_t to) override {
        if (!replay->keys()[from].collection())
            return; // a string's allocations are freed and made again (removed(), stored())
        collections->releaseArguments(); // another command has started
        collections->move(from, to);
    }
    const JemallocModel& jemalloc() const { return static_cast<const JemallocModel&>(*config.allocator); }

    void stored(std::uint32_t keyId, const KeyState& state, Op op) override {
        if (failure)
            return;
        if (state.collection()) [[unlikely]] {
            storeCollection(keyId, state, nullptr, true);
            return;
        }
        collections->releaseArguments(); // a collection command's: another command has started
        if (keyId >= records.size())
            records.resize(std::max<std::size_t>(std::size_t { keyId } + 1, records.size() * 2));
        syncIndexSizes();
        const KeyLayout written = layoutFor(keyId, state);
        // What the engine keeps in place of a live key (LayoutModel::keptOnRewrite): those regions stay.
        KeptAllocations kept;
        if (records[keyId].count != 0) {
            KeyShape oldShape = unpackShape(records[keyId].shape);
            oldShape.sdsBytes = records[keyId].sdsBytes;
            KeyShape newShape = unpackShape(state.shapeAt(threshold));
            newShape.sdsBytes = state.kind() == ValueKind::RawString ? replay->sdsBytesOf(keyId) : 0;
            kept = config.layout->keptOnRewrite(config.layout->describe(oldShape, threshold, *config.allocator),
                written, newShape, op, threshold, *config.allocator);
        }
        // The command's own allocations (the client's argv) come first and are freed when it ends.
        std::array<void*, KeyLayout::kMaxTransients> transients {};
        for (std::uint8_t t = 0; t < written.transientCount; ++t)
            transients[t] = arena->allocate(written.transients[t]);
        auto built = build(keyId, state, records[keyId], kept);
        // freeClientArgv: the arguments in order, then the argv array.
        for (std::uint8_t i = 1; i <= written.transientCount; ++i)
            arena->release(transients[i % written.transientCount]);
        if (!built) {
            failure = built.error();
            return;
        }
        // The new allocations take the old ones' places in the indexes, then the old ones are freed
        // (an overwrite in the engines: a new object, the same hash-table position).
        const KeyRecord old = records[keyId];
        const KeyRecord& record = records[keyId] = *built;
        const std::uint64_t hash = hashKey(keyId);
        auto at = [](const KeyRecord& r, std::uint8_t i) { return r.allocation[i]; };
        // A collection key overwritten (SET of any key): the string takes its entries' places, its regions
        // are freed with the old value's.
        const auto collection = old.count == 0 ? collections->entriesOf(keyId) : std::nullopt;
        void* oldEntry = collection ? collection->key : old.count != 0 ? at(old, old.head) : nullptr;
        void* oldExpire = collection   ? collection->expire
            : old.expiresHead != kNone ? at(old, old.expiresHead)
                                       : nullptr;
        if (oldEntry)
            keys->replace(hash, oldEntry, at(record, record.head));
        else
            keys->insert(hash, at(record, record.head));
        const bool hasExpire = record.expiresHead != kNone;
        if (oldExpire && hasExpire)
            expires->replace(hash, oldExpire, at(record, record.expiresHead));
        else if (oldExpire)
            expires->erase(hash, oldExpire);
        else if (hasExpire)
            expires->insert(hash, at(record, record.expiresHead));
        if (!oldEntry)
            ++liveKeys;
        freeAllocations(old, record);
        if (collection) [[unlikely]]
            collections->drop(keyId);
    }

    // Allocates and fills a key's allocations as the layout describes them for its current shape.
    // The layout of a key in `state` (a RawString key's sds buffer is its own, not in the packed shape).
    const KeyLayout& layoutFor(std::uint32_t keyId, const KeyState& state) {
        if (state.kind() != ValueKind::RawString)
            return layoutOf(state.shapeAt(threshold));
        KeyShape shape = unpackShape(state.shapeAt(threshold));
        shape.sdsBytes = replay->sdsBytesOf(keyId);
        ownBuffer = config.layout->describe(shape, threshold, *config.allocator);
        return ownBuffer;
    }

    // `old`'s allocations that `kept` names stay (only their contents are written again).
    Expected<KeyRecord> build(
        std::uint32_t keyId, const KeyState& state, const KeyRecord& old = {}, const KeptAllocations& kept = {}) {
        const KeyLayout& layout = layoutFor(keyId, state);
        if (!layout.stored)
            return usageError(fmt::format("key id {} cannot be stored by layout '{}'", keyId, config.layout->spec()));
        KeyRecord record;
        record.shape = state.shapeAt(threshold);
        record.sdsBytes = state.kind() == ValueKind::RawString ? replay->sdsBytesOf(keyId) : 0;
        std::uint8_t keyCarrier = kNone, object = kNone, value = kNone, entry = kNone, expireEntry = kNone;
        // In the order the engine makes them; record.allocation[] keeps the layout's order.
        for (std::uint8_t made = 0; made < layout.allocationCount; ++made) {
            const auto i = static_cast<std::uint8_t>(layout.made(made));
            const Allocation& a = layout.allocations[i];
            const bool supported = a.count == 1 && a.purpose != Purpose::Item && a.purpose != Purpose::ItemHeader
                && a.purpose != Purpose::ItemChunk;
            if (!supported) {
                freeAllocations(record, old);
                return usageError(fmt::format("the reference engine does not build {} allocations (memcached)",
                                      purposeName(a.purpose)),
                    "layout");
            }
            void* p = kept.from[i] != KeptAllocations::kMade ? old.allocation[kept.from[i]] : nullptr;
            if (!p) {
                p = arena->allocate(a.requestedBytes);
                keyBytes += arena->usableSize(p);
                std::memset(p, static_cast<int>('a' + keyId % 26), a.requestedBytes); // the key's and value's bytes
            } // a kept one holds them already, and an entry its place in the index's chain
            record.allocation[i] = p;
            ++record.count;
            std::uint8_t* role = a.purpose == Purpose::Entry ? &entry
                : a.purpose == Purpose::ExpireEntry          ? &expireEntry
                : a.purpose == Purpose::Key                  ? &keyCarrier
                : a.purpose == Purpose::Object               ? &object
                                                             : &value;
            *role = i;
            if (a.purpose == Purpose::Entry)
                entryReadBytes = static_cast<std::uint32_t>(a.readBytes);
        }
        if (const std::size_t k = layout.keyAllocation(); k < layout.allocationCount)
            keyCarrier = static_cast<std::uint8_t>(k);
        if (keyCarrier == kNone)
            keyCarrier = object; // Valkey 8.1 and later embed the key in the object
        if ((keyCarrier == entry) != keyInEntry) {
            freeAllocations(record, old);
            return usageError("the layout puts some keys in their dictEntry and others not", "layout");
        }
        auto at = [&](std::uint8_t i) { return i == kNone ? nullptr : record.allocation[i]; };
        for (std::uint8_t i = 0; i < record.count; ++i) {
            if ((i == entry || i == expireEntry) && i != keyCarrier)
                continue; // an entry's first fields are pointers, unless it holds the key
            storeAt<std::uint32_t>(record.allocation[i], kTagOffset, i == keyCarrier ? keyId : kNotTheKey);
            // glibc's memcmp loads past a short key (key_layout.h bytesLoadedAt).
            const Allocation& a = layout.allocations[i];
            storeAt<std::uint32_t>(record.allocation[i], kReadLengthOffset,
                static_cast<std::uint32_t>(
                    bytesLoadedAt(reinterpret_cast<std::uintptr_t>(record.allocation[i]), a.readBytes, a.memcmpEnd)));
        }
        if (object != kNone)
            storeAt<void*>(at(object), kObjectPointerOffset, at(value));
        for (std::uint8_t e : { entry, expireEntry })
            if (e != kNone) {
                if (e != keyCarrier) // an entry holding the key has its tag there (above)
                    storeAt<void*>(at(e), kEntryKeyOffset, at(keyCarrier));
                storeAt<void*>(at(e), kEntryValueOffset, e == entry ? at(object) : nullptr);
            }
        record.head = entry != kNone ? entry : object;
        if (record.head == kNone || keyCarrier == kNone) {
            freeAllocations(record, old);
            return usageError("the layout gave a key neither a dictEntry nor an object to hold its key", "layout");
        }
        if (state.hasTtl() && policy.expiresTable)
            record.expiresHead = expireEntry != kNone ? expireEntry : record.head;
        return record;
    }

    // Frees `record`'s allocations, but those `keeping` holds too.
    void freeAllocations(const KeyRecord& record, const KeyRecord& keeping = {}) {
        for (void* allocation : record.allocation) // made out of order: a failed build leaves gaps
            if (allocation
                && std::find(std::begin(keeping.allocation), std::end(keeping.allocation), allocation)
                    == std::end(keeping.allocation)) {
                keyBytes -= arena->usableSize(allocation);
                arena->release(allocation);
            }
    }

    void removed(std::uint32_t keyId) override {
        if (failure)
            return;
        collections->releaseArguments(); // a collection command's: another command has started
        if (keyId < records.size() && records[keyId].count != 0) {
            release(keyId);
            syncIndexSizes();
        } else if (collections->remove(keyId)) {
            --liveKeys;
            syncIndexSizes();
        }
    }

    void release(std::uint32_t keyId) {
        KeyRecord& record = records[keyId];
        const std::uint64_t hash = hashKey(keyId);
        keys->erase(hash, record.allocation[record.head]);
        if (record.expiresHead != kNone)
            expires->erase(hash, record.allocation[record.expiresHead]);
        freeAllocations(record);
        --liveKeys;
        record = KeyRecord {};
    }

    // One GET along the engine's path; returns false on a miss.
    bool get(std::uint32_t keyId, std::uint64_t& checksum) const {
        const std::uint64_t hash = hashKey(keyId);
        if (!dictIndex()) {
            // Valkey: bucket -> object (key, expire and an embedded value inside) -> value behind ptr.
            void* object = keys->find(hash, [keyId](void* o) { return loadAt<std::uint32_t>(o, kTagOffset) == keyId; });
            if (!object)
                return false;
            checksum += readBytes(object, loadAt<std::uint32_t>(object, kReadLengthOffset));
            if (void* value = loadAt<void*>(object, kObjectPointerOffset))
                checksum += readBytes(value, loadAt<std::uint32_t>(value, kReadLengthOffset));
            return true;
        }
        // Redis: slot -> dictEntry chain, comparing keys -> robj -> value; expireIfNeeded looks the key
        // up in db->expires whenever that dict is not empty.
        void* key = nullptr;
        void* entry = keys->find(hash, [this, keyId, &key](void* e) {
            key = keyOfEntry(e);
            return loadAt<std::uint32_t>(key, kTagOffset) == keyId;
        });
        if (!entry)
            return false;
        checksum += readBytes(entry, entryReadBytes);
        checksum += readBytes(key, loadAt<std::uint32_t>(key, kReadLengthOffset));
        if (expires->entries() != 0)
            // dictSdsKeyCompare reads each candidate's key: compare the tags, as in the keyspace chain.
            if (void* e = expires->find(hash, [keyId](void* x) {
                    return loadAt<std::uint32_t>(loadAt<void*>(x, kEntryKeyOffset), kTagOffset) == keyId;
                }))
                checksum += readBytes(e, entryReadBytes);
        if (void* object = loadAt<void*>(entry, kEntryValueOffset)) {
            checksum += readBytes(object, loadAt<std::uint32_t>(object, kReadLengthOffset));
            if (void* value = loadAt<void*>(object, kObjectPointerOffset))
                checksum += readBytes(value, loadAt<std::uint32_t>(value, kReadLengthOffset));
        }
        return true;
    }

    ~Impl() override {
        for (std::uint32_t id = 0; id < records.size(); ++id)
            if (records[id].count != 0)
                release(id);
        collections.reset();
        keys.reset();
        expires.reset();
    }
};

} // namespace layoutlab
