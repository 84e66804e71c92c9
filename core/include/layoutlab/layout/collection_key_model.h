// SPDX-License-Identifier: MIT
#pragma once

// One collection key as it changes, command by command: what describeCollection (collection_layout.h) gives
// for a key of uniform entries made at once, kept up to date through each element a trace adds, replaces,
// removes or reads. The engine's decisions are taken where it takes them (t_hash.c hashTypeTryConversion
// before a command's elements, hashTypeSet for each), on the elements' real lengths, and a table grows,
// rehashes and shrinks through the index model as the engine's does. Built with a layout and its limits; a
// replay keeps a CollectionKeyState per live collection key.
//
// Modelled: hashes. Sets, sorted sets and lists have one-key models (describeCollection) but no element-by-
// element one yet: create() refuses them by name.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/sim/index_table_model.h"
#include "layoutlab/trace/request.h"

#include <memory>
#include <vector>

namespace layoutlab {

namespace collection {
struct Rules;
}

// An element or value as a command gives it: its length, and its integer class where a listpack would store
// it as an integer.
struct ElementValue {
    std::uint32_t bytes = 0;
    IntegerClass integer = IntegerClass::None;
};

struct CollectionKeyState {
    CollectionKind kind = CollectionKind::Hash;
    bool table = false; // in the full encoding (a hash's table); else the compact one (a listpack)
    std::uint64_t entries = 0;
    std::uint64_t payloadBytes = 0; // the elements' and values' lengths
    // Compact: the listpack's bytes, and each entry's lengths and integer classes (packed), which a
    // conversion to a table needs.
    std::uint64_t listpackBytes = 0;
    std::vector<std::uint64_t> compactEntries;
    // Full: the table, and its entries' allocations.
    std::unique_ptr<IndexTableModel> index;
    // Doubles: where the engine's entry depends on how its field arrived (Rules::hashFieldsAsSent), a
    // removed one is each kind in proportion.
    double entryAllocations = 0;
    double entryRequestedBytes = 0;
    double entryUsableBytes = 0;
    double argvEntries = 0; // entries whose field came from a command's argument, not a conversion (expected)
};

// The collection's memory, the key's own allocations aside.
struct CollectionFootprint {
    double allocations = 0;
    double requestedBytes = 0;
    double usableBytes = 0;
};

class CollectionKeyModel {
public:
    // An error naming the layout when it has no collection model, or the kind when it has no element-by-
    // element model.
    static Expected<CollectionKeyModel> create(const LayoutModel& layout, const AllocatorModel& allocator,
        const CollectionLimits& limits, CollectionKind kind);
    CollectionKeyModel(CollectionKeyModel&&) noexcept;
    CollectionKeyModel& operator=(CollectionKeyModel&&) noexcept;
    ~CollectionKeyModel();

    CollectionKind kind() const { return m_kind; }
    // A new, empty key (the engine makes it compact: t_hash.c createHashObject).
    CollectionKeyState created() const;
    // A command's start: `elements` elements (a hash's field-value pairs), its longest argument `longest`
    // bytes long (t_hash.c hashTypeTryConversion).
    void command(CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest) const;
    void add(CollectionKeyState& key, ElementValue element, ElementValue value) const;
    void update(CollectionKeyState& key, ElementValue element, ElementValue before, ElementValue after) const;
    void remove(CollectionKeyState& key, ElementValue element, ElementValue value) const;
    void read(CollectionKeyState& key) const;

    // OBJECT ENCODING's word for the key.
    std::string_view encoding(const CollectionKeyState& key) const;
    CollectionFootprint footprint(const CollectionKeyState& key) const;
    // The key's own allocations (its keyspace entry, key, object header, expire entry), as the layout makes
    // them for a key of `keyBytes` with or without a TTL.
    std::vector<CollectionPart> keyParts(std::uint32_t keyBytes, bool hasTtl) const;

private:
    CollectionKeyModel() = default;
    void convertToTable(CollectionKeyState& key, std::uint64_t sizedFor) const;
    // Adds (weight > 0) or takes away (< 0) an entry's allocations, its field as a command's argument when
    // `fromArgv` (Rules::hashFieldsAsSent).
    void addTableEntry(
        CollectionKeyState& key, ElementValue element, ElementValue value, double weight, bool fromArgv) const;

    CollectionKind m_kind = CollectionKind::Hash;
    const LayoutModel* m_layout = nullptr;
    const AllocatorModel* m_allocator = nullptr;
    CollectionLimits m_limits;
    std::unique_ptr<collection::Rules> m_rules;
};

} // namespace layoutlab
