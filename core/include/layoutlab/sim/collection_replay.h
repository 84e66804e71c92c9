// SPDX-License-Identifier: MIT
#pragma once

// The collection keys of a replay: each live one's state (layout/collection_key_model.h), changed by the
// trace's element requests (Op::Element) as the layout's engine changes it. The keyspace replay owns the
// keys themselves (their ids, lengths, TTLs, index entries) and hands this their elements.

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

    // Whether `keyId` holds a collection of `kind` (false: none, or another kind).
    bool holds(std::uint32_t keyId, CollectionKind kind) const;
    // Applies an element request to its key, made empty first when `created`; returns whether the key is
    // left without elements (the engine then deletes it). An error when the layout has no model for the kind.
    Expected<bool> apply(std::uint32_t keyId, const Request& r, bool created);
    void erase(std::uint32_t keyId) { m_keys.erase(keyId); }

    // The live keys' memory by type and encoding, each key's own allocations (by its length and TTL in
    // `keys`, the keyspace replay's) included.
    std::vector<CollectionUsage> usage(const std::vector<KeyState>& keys) const;
    std::size_t liveKeys() const { return m_keys.size(); }

private:
    Expected<const CollectionKeyModel*> modelFor(CollectionKind kind);

    const LayoutModel* m_layout;
    const AllocatorModel* m_allocator;
    CollectionLimits m_limits;
    std::array<std::optional<CollectionKeyModel>, 4> m_models;
    std::unordered_map<std::uint32_t, CollectionKeyState> m_keys;
};

} // namespace layoutlab
