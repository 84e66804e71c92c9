// SPDX-License-Identifier: MIT
#pragma once

// The element-by-element models of each collection type (layout/collection_key_model.h), in the files of
// their types: hash_key_model.cpp, set_key_model.cpp,
// zset_key_model.cpp. CollectionKeyModel hands each request to its type's.

#include "collection_rules.h"
#include "layoutlab/layout/collection_key_model.h"

namespace layoutlab::collection {

// What a type's model works with: the engine line's rules, its limits, the allocator.
struct KeyContext {
    const Rules& rules;
    const CollectionLimits& limits;
    const AllocatorModel& allocator;
};

// A compact entry's lengths and integer classes in one word: element bytes (28 bits), its class (3), value
// bytes (30), its class (3). A listpack or intset never holds longer ones (its limits are far below).
std::uint64_t packEntry(ElementValue element, ElementValue value = {});
std::pair<ElementValue, ElementValue> unpackEntry(std::uint64_t packed);
// The compact entry of these lengths and classes taken out (any one: only the sizes matter); false when
// there is none.
bool eraseCompactEntry(CollectionKeyState& key, std::uint64_t packed);
// A table of the line's kind, expanded for `sizedFor` entries (0: not expanded).
std::unique_ptr<IndexTableModel> newTable(const KeyContext& c, std::uint64_t sizedFor);
// Adds (weight > 0) or takes away (< 0) the allocations of `parts` to a table's entry sums.
void addEntryParts(
    const KeyContext& c, CollectionKeyState& key, const std::vector<CollectionPart>& parts, double weight);

// `count` allocations of `bytes` added to `sizes` (taken away when negative), each size once.
void addSized(std::vector<SizedAllocations>& sizes, std::uint64_t bytes, double count);

// The lines lookups of the key's elements read, summed over its elements (element_lookup.cpp); a table's
// footprint whole and without its entries.
double lookupLines(const KeyContext& c, const CollectionKeyState& key, CollectionKind kind,
    const CollectionFootprint& whole, const CollectionFootprint& table);

void hashCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest);
void hashAdd(const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue value);
void hashUpdate(
    const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue before, ElementValue after);
// `moreFollow`: more removals of the same command follow (Rules::removalsPauseShrink).
void hashRemove(
    const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue value, bool moreFollow = false);
// A key loaded from a snapshot (CollectionKeyModel::load; key.loadForm and loadRemaining set), and each of its
// elements (loadRemaining: those after it).
void hashLoad(const KeyContext& c, CollectionKeyState& key, std::uint64_t fields);
void hashLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue value);

void setCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t members, IntegerClass first);
void setAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member);
// SINTERSTORE's result made (t_set.c sinterGenericCommand; `smallestSource` a Command's priorBytes, request.h),
// and after its last add each of its members when they are integers only, the first with `first` set: an
// intset of them within set-max-intset-entries (maybeConvertToIntset).
void setIntersectionCommand(
    const KeyContext& c, CollectionKeyState& key, IntegerClass first, std::uint32_t smallestSource);
void setIntegersKnown(const KeyContext& c, CollectionKeyState& key, bool first, ElementValue member);
void setRemove(
    const KeyContext& c, CollectionKeyState& key, ElementValue member, MemberOrder order, bool moreFollow = false);
void setLoad(const KeyContext& c, CollectionKeyState& key, std::uint64_t members);
void setLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member);
// A set table's entries beside its members (dict.c dictEntry or dictEntryNoValue), where the line has them.
void addSetTableEntries(const KeyContext& c, const CollectionKeyState& key, CollectionFootprint& out);
// How many of those entries (dictEntryNoValue) the table holds: 0 where the line has none apart from its
// members' (an expectation).
double setTableEntries(const KeyContext& c, const CollectionKeyState& key);

void zsetCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t members, std::uint32_t longest,
    std::uint32_t firstBytes);
// ZUNIONSTORE's result (request.h): `members` members, the longest `longest` bytes, the largest source
// `largestSource` members.
void zsetUnionCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t members, std::uint32_t longest,
    std::uint64_t largestSource);
void zsetAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue score);
void zsetUpdate(
    const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue before, ElementValue after);
// `byRange`: removed by ZREMRANGEBY*, whose table shrinks after its last removal on every engine.
void zsetRemove(const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue score,
    bool moreFollow = false, bool byRange = false);
void zsetLoad(const KeyContext& c, CollectionKeyState& key, std::uint64_t members);
void zsetLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue score);

void listCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t elements, std::uint64_t totalBytes);
void listPush(const KeyContext& c, CollectionKeyState& key, ElementValue element, bool atHead);
void listPop(const KeyContext& c, CollectionKeyState& key, ElementValue element, bool atHead);
// The element `index` places from the head removed from its node (LREM).
void listRemoveAt(const KeyContext& c, CollectionKeyState& key, std::uint64_t index, ElementValue element);
void listKnownSize(CollectionKeyState& key, std::uint64_t index, ElementValue element);
void listInsert(const KeyContext& c, CollectionKeyState& key, std::uint64_t pivot, bool before, ElementValue element);
void listReplace(
    const KeyContext& c, CollectionKeyState& key, std::uint64_t index, ElementValue before, ElementValue after);
void listLoad(const KeyContext& c, CollectionKeyState& key); // a quicklist node's Load
void listLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue element);
CollectionFootprint listFootprint(const KeyContext& c, const CollectionKeyState& key);

} // namespace layoutlab::collection
