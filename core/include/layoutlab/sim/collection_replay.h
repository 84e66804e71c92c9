// SPDX-License-Identifier: MIT
#pragma once

// The collection keys of a replay: each live one's state (layout/collection_key_model.h), changed by the
// trace's element requests (Op::Element) as the layout's engine changes it. The keyspace replay owns the
// keys themselves (their ids, lengths, TTLs, index entries) and hands this their elements.
//
// Several sets of limits can be replayed at once, in one pass over the trace (a limit swept: `sweep
// --param`): each variant keeps every key's state under its own limits. Which keys hold elements, and how
// many, does not depend on the limits, so the keyspace replay sees only the first variant's answers.

#include "layoutlab/layout/collection_key_model.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/results.h"

#include <array>
#include <optional>
#include <unordered_map>

namespace layoutlab {

class CollectionReplay {
public:
    CollectionReplay(const LayoutModel& layout, const AllocatorModel& allocator, const CollectionLimits& limits = {});
    // Variant 0 under `variants[0]`, and so on (at least one).
    CollectionReplay(
        const LayoutModel& layout, const AllocatorModel& allocator, std::vector<CollectionLimits> variants);

    // Whether `keyId` holds a collection of `kind` (false: none, or another kind).
    bool holds(std::uint32_t keyId, CollectionKind kind) const;
    // Applies an element request to its key, made empty first when `created`; returns whether the key is
    // left without elements (the engine then deletes it). An error when the layout has no model for the kind.
    Expected<bool> apply(std::uint32_t keyId, const Request& r, bool created);
    void erase(std::uint32_t keyId) {
        for (auto& v : m_variants)
            v.keys.erase(keyId);
    }

    // The live keys' memory by type and encoding under variant `variant`'s limits, each key's own allocations
    // (by its length and TTL in `keys`, the keyspace replay's) included.
    std::vector<CollectionUsage> usage(const std::vector<KeyState>& keys, std::size_t variant = 0) const;
    std::size_t liveKeys() const { return m_variants.front().keys.size(); }
    std::size_t variants() const { return m_variants.size(); }

private:
    struct Variant {
        CollectionLimits limits;
        std::array<std::optional<CollectionKeyModel>, 4> models;
        std::unordered_map<std::uint32_t, CollectionKeyState> keys;
    };
    Expected<const CollectionKeyModel*> modelFor(Variant& variant, CollectionKind kind);
    // Whether the key is left without elements.
    static bool applyTo(
        const CollectionKeyModel& model, CollectionKeyState& key, const Request& r, const ElementOp& op);

    const LayoutModel* m_layout;
    const AllocatorModel* m_allocator;
    std::vector<Variant> m_variants;
};

} // namespace layoutlab
