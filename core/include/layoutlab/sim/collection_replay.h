// SPDX-License-Identifier: MIT
#pragma once

// The collection keys of a replay: each live one's state (layout/collection_key_model.h), changed by the
// trace's element requests (Op::Element) as the layout's engine changes it. The keyspace replay owns the
// keys themselves (their ids, lengths, TTLs, index entries) and hands this their elements.
//
// Several sets of limits can be replayed at once, in one pass over the trace (a limit swept: `sweep
// --param`), each variant under its own limits. Which keys hold elements, and how many, does not depend on
// the limits, so the keyspace replay sees only the first variant's answers. Variants whose state of a key is
// the same hold it once, as a group: a key of a type the swept limit leaves alone stays in one group, and a
// hash of 30 fields under hash-max-listpack-entries 64 to 1,024 too. An element request that could take a
// group's key past its smallest value (its entries, or its lengths, beyond it) is applied under that value
// first; if the key keeps its encoding there it keeps it under every larger value (a larger limit converts
// later), else each of the group's variants applies it to its own copy of the state before, and variants that
// come out alike form a group again. A table never goes back to a compact encoding: its group stays whole.

#include "layoutlab/layout/collection_key_model.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/results.h"

#include <array>
#include <bitset>
#include <optional>
#include <string>
#include <unordered_map>

namespace layoutlab {

class CollectionReplay {
public:
    CollectionReplay(const LayoutModel& layout, const AllocatorModel& allocator, const CollectionLimits& limits = {});
    // Variant 0 under `variants[0]`, and so on (at least one).
    CollectionReplay(
        const LayoutModel& layout, const AllocatorModel& allocator, std::vector<CollectionLimits> variants);

    // Under a memory budget, evictions take keys whose elements the trace goes on naming: a removal or an update
    // of an element the key does not hold is then taken as the server takes it (HDEL, SREM, ZREM, LPOP of
    // nothing change nothing; an HSET or ZADD of it adds it). Elsewhere the trace's elements are the keys'.
    void setElementsMayBeGone(bool mayBeGone) { m_elementsMayBeGone = mayBeGone; }
    // The most the lost elements' counts take, per key id (evicted()), for the memory check before a run.
    static constexpr std::uint64_t kLostBytesPerKey = sizeof(std::uint32_t);
    bool elementsMayBeGone() const { return m_elementsMayBeGone; }
    // Key `keyId` was evicted, the trace taking it to hold `lostElements` (namedByTrace before): elements the trace
    // goes on naming (its view of the key never lost them) that the server no longer holds, which a re-made key then
    // holds beside the ones added since. A removal or an update the trace makes of the key's elements names one of
    // those lost with the chance of their share (it names its elements alike), drawn per request: a lost one's removal
    // changes nothing, its update adds it (HSET, ZADD of a field the key lacks), as on the server. Not for lists, whose
    // pops take whatever the list holds at its end.
    void evicted(std::uint32_t keyId, std::uint64_t lostElements);
    // The trace removed one of `keyId`'s elements while the key is gone (evicted, not made again).
    void lostElementRemoved(std::uint32_t keyId);
    // The trace deleted the key while it is gone: what it lost is forgotten.
    void forgetLost(std::uint32_t keyId) {
        if (m_keysWithLost != 0)
            setLost(keyId, 0);
    }
    // The elements live key `keyId` holds under the first variant's limits (0: none).
    std::uint64_t entries(std::uint32_t keyId) const;
    // The elements the trace takes `keyId` to hold: those it holds, and those it lost (what evicted() needs).
    std::uint64_t namedByTrace(std::uint32_t keyId) const;
    // Whether `keyId` holds a collection of `kind` (false: none, or another kind).
    bool holds(std::uint32_t keyId, CollectionKind kind) const;
    // Applies an element request to its key, made empty first when `created`; returns whether the key is
    // left without elements (the engine then deletes it). An error when the layout has no model for the kind.
    // `startsCommand`: the request is its command's first (KeyspaceReplay::startsElementCommand), which a list's
    // pops need (a range's pops reallocate its node once).
    Expected<bool> apply(std::uint32_t keyId, const Request& r, bool created, bool startsCommand = true);
    void erase(std::uint32_t keyId) {
        m_applied = nullptr;
        forgetLost(keyId);
        m_grouped.erase(keyId);
        for (auto& v : m_variants)
            v.keys.erase(keyId);
    }
    // The key `from` renamed `to` (a key `to` held erased first): its state moves whole, as the engine keeps
    // the value (db.c renameGenericCommand; objectSetKeyAndExpire reuses its pointer).
    void rename(std::uint32_t from, std::uint32_t to) {
        m_applied = nullptr;
        erase(to);
        moveKey(m_grouped, from, to);
        for (auto& v : m_variants)
            moveKey(v.keys, from, to);
        if (m_keysWithLost != 0) {
            const std::uint64_t lost = lostOf(from);
            setLost(from, 0);
            setLost(to, lost);
        }
    }

    // The key `from` copied to `to` (a key `to` held erased first): the copy each variant's model makes
    // (db.c copyCommand, CollectionKeyModel::duplicated).
    void copy(std::uint32_t from, std::uint32_t to);

    // The live keys' memory by type and encoding under variant `variant`'s limits, each key's own allocations
    // (by its length and TTL in `keys`, the keyspace replay's) included.
    std::vector<CollectionUsage> usage(const std::vector<KeyState>& keys, std::size_t variant = 0) const;
    // The allocations of live collection key `keyId` under the first variant's limits, its own (by its length
    // and TTL) first, each size once (CollectionKeyModel::allocations); none when it holds no collection.
    // `reallocatedBytes`, when given, gets the key's CollectionKeyState::reallocatedBytes.
    std::vector<SizedAllocations> allocations(
        std::uint32_t keyId, std::uint32_t keyBytes, bool hasTtl, std::uint64_t* reallocatedBytes = nullptr) const;
    // The same allocations' usable bytes (0: no collection).
    std::uint64_t usableBytes(std::uint32_t keyId, std::uint32_t keyBytes, bool hasTtl) const;
    std::size_t liveKeys() const { return m_grouped.size() + m_variants.front().keys.size(); }
    std::size_t variants() const { return m_variants.size(); }

private:
    struct Variant {
        CollectionLimits limits;
        std::array<std::optional<CollectionKeyModel>, 4> models;
        std::unordered_map<std::uint32_t, CollectionKeyState> keys;
    };
    // The one limit the variants differ by, when sharing applies (not a list's node size, whose values do not
    // order: -2 is 8 KiB, 100 is entries).
    struct Swept {
        CollectionKind kind = CollectionKind::Hash;
        bool entries = true; // an entries limit, else an element length's
        std::int64_t smallest = 0;
        std::size_t smallestVariant = 0;
    };
    template <class Map> static void moveKey(Map& map, std::uint32_t from, std::uint32_t to) {
        if (auto node = map.extract(from)) {
            node.key() = to;
            map.insert(std::move(node));
        }
    }
    Expected<const CollectionKeyModel*> modelFor(Variant& variant, CollectionKind kind);
    // Variants holding one key's state alike, and the one of them with the smallest swept value, under whose
    // limits the state is changed.
    struct Group {
        CollectionKeyState state;
        std::bitset<256> variants;
        std::int64_t smallest = 0;
        std::size_t smallestVariant = 0;
    };
    // Whether `r` could take a group's key past its smallest value (conservative).
    bool mightConvert(const Group& group, const Request& r, const ElementOp& op) const;
    Expected<bool> applyGrouped(
        std::uint32_t keyId, const Request& r, const ElementOp& op, bool created, bool startsCommand);
    // The group's variants each apply `r` to the state before; alike ones are grouped again, into `out`.
    Status part(const Group& group, const CollectionKeyState& before, CollectionKeyState&& applied, const Request& r,
        const ElementOp& op, std::vector<Group>& out);
    std::int64_t sweptValue(std::size_t variant) const;
    // Whether the key is left without elements.
    bool applyTo(const CollectionKeyModel& model, CollectionKeyState& key, const Request& r, const ElementOp& op,
        bool startsCommand = true) const;

    const LayoutModel* m_layout;
    const AllocatorModel* m_allocator;
    std::vector<Variant> m_variants;
    std::optional<Swept> m_swept;
    std::string m_sweptName;
    std::unordered_map<std::uint32_t, std::vector<Group>> m_grouped; // with a limit swept: every key's groups
    bool m_elementsMayBeGone = false;
    // Under a budget, the keys evicted whose elements the trace may still name (evicted()): how many it lost.
    // By key id (4 bytes a key once a collection is evicted; 0: none lost), and how many keys have some.
    std::vector<std::uint32_t> m_lost;
    std::uint64_t m_keysWithLost = 0;
    std::uint64_t m_lostDraws = 0;
    std::uint64_t lostOf(std::uint32_t keyId) const { return keyId < m_lost.size() ? m_lost[keyId] : 0; }
    void setLost(std::uint32_t keyId, std::uint64_t lost);
    // Live key `keyId`'s state under the first variant's limits, and the variant whose model it follows (a
    // group's smallest value); none when it holds no collection.
    struct FirstState {
        const CollectionKeyState* state = nullptr;
        const Variant* variant = nullptr;
    };
    FirstState firstState(std::uint32_t keyId) const;
    // Whether request `r` on `keyId` names one of its lost elements (and it is so counted).
    bool namesLostElement(std::uint32_t keyId, const ElementOp& op, std::uint64_t entries);
    // The state apply() changed last under the first variant's limits (none with a limit swept), which the
    // observers' allocations() of the same key read next.
    std::uint32_t m_appliedKey = 0;
    const CollectionKeyState* m_applied = nullptr;
    // A key's own parts (CollectionKeyModel::keyParts): they depend on its length and TTL alone, not on its
    // type or the limits, so they are described once per pair (keyLength << 1 | TTL).
    const std::vector<CollectionPart>& keyParts(
        const CollectionKeyModel& model, std::uint32_t keyBytes, bool hasTtl) const;
    mutable std::unordered_map<std::uint64_t, std::vector<CollectionPart>> m_keyParts;
};

} // namespace layoutlab
