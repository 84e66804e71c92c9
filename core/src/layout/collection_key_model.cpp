// SPDX-License-Identifier: MIT
// A collection key element by element (layout/collection_key_model.h): what the types share, and each
// request handed to its type's model (collection_key_ops.h). A listpack or an intset is
// reallocated to its exact size at each change (listpack.c lpInsert, lpDelete; intset.c intsetResize), so it holds the
// size class of its bytes.

#include "layoutlab/layout/collection_key_model.h"

#include "collection_key_ops.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

namespace collection {
namespace {
constexpr std::uint64_t kElementBits = 28, kValueBits = 30;
} // namespace

std::uint64_t packEntry(ElementValue element, ElementValue value) {
    const std::uint64_t e = std::min<std::uint64_t>(element.bytes, (1ull << kElementBits) - 1);
    const std::uint64_t v = std::min<std::uint64_t>(value.bytes, (1ull << kValueBits) - 1);
    return e | static_cast<std::uint64_t>(element.integer) << kElementBits | v << (kElementBits + 3)
        | static_cast<std::uint64_t>(value.integer) << (kElementBits + 3 + kValueBits);
}

std::pair<ElementValue, ElementValue> unpackEntry(std::uint64_t packed) {
    const ElementValue element { static_cast<std::uint32_t>(packed & ((1ull << kElementBits) - 1)),
        static_cast<IntegerClass>((packed >> kElementBits) & 7) };
    const ElementValue value { static_cast<std::uint32_t>((packed >> (kElementBits + 3)) & ((1ull << kValueBits) - 1)),
        static_cast<IntegerClass>(packed >> (kElementBits + 3 + kValueBits)) };
    return { element, value };
}

bool eraseCompactEntry(CollectionKeyState& key, std::uint64_t packed) {
    const auto it = std::find(key.compactEntries.begin(), key.compactEntries.end(), packed);
    if (it == key.compactEntries.end())
        return false;
    *it = key.compactEntries.back(); // the order is not needed: only the sizes matter
    key.compactEntries.pop_back();
    return true;
}

std::unique_ptr<IndexTableModel> newTable(const KeyContext& c, std::uint64_t sizedFor) {
    auto table = std::make_unique<IndexTableModel>(c.rules.tableKind, c.rules.tableParams);
    table->setBucketRehashOnAccess(c.rules.bucketRehashOnAccess);
    table->setFollowsRehashSpread(true); // its footprint counts an old array by chance (addTableParts)
    table->expand(sizedFor);
    return table;
}

void addEntryParts(
    const KeyContext& c, CollectionKeyState& key, const std::vector<CollectionPart>& parts, double weight) {
    for (const CollectionPart& part : parts) {
        const double w = weight * part.count;
        key.entryAllocations += w;
        key.entryRequestedBytes += w * static_cast<double>(part.requestedBytes);
        const std::uint64_t usable = c.allocator.usableSize(part.requestedBytes);
        key.entryUsableBytes += w * static_cast<double>(usable);
        addSized(key.entrySizes, usable, w);
    }
}

void addSized(std::vector<SizedAllocations>& sizes, std::uint64_t bytes, double count) {
    for (auto it = sizes.begin(); it != sizes.end(); ++it)
        if (it->bytes == bytes) {
            it->count += count;
            // A size's last allocation taken away: gone, so that a state's sizes are the same whatever it
            // held before (what is left is the sum's rounding).
            if (count < 0 && std::abs(it->count) <= 1e-9 * -count)
                sizes.erase(it);
            return;
        }
    sizes.push_back({ bytes, count });
}
} // namespace collection

CollectionKeyModel::CollectionKeyModel(CollectionKeyModel&&) noexcept = default;
CollectionKeyModel& CollectionKeyModel::operator=(CollectionKeyModel&&) noexcept = default;
CollectionKeyModel::~CollectionKeyModel() = default;

Expected<CollectionKeyModel> CollectionKeyModel::create(
    const LayoutModel& layout, const AllocatorModel& allocator, const CollectionLimits& limits, CollectionKind kind) {
    CollectionShape shape;
    auto rules = collection::rulesOf(layout, shape, allocator);
    if (!rules)
        return usageError(fmt::format("layout '{}' has no collection model: collections are modelled for "
                                      "redis-7.0, redis-7.2 and valkey (8.0 and later)",
                              layout.spec()),
            "layout");
    CollectionKeyModel model;
    model.m_kind = kind;
    model.m_layout = &layout;
    model.m_allocator = &allocator;
    model.m_limits = limits;
    model.m_rules = std::make_unique<collection::Rules>(std::move(*rules));
    return model;
}

namespace {
// A compact key's allocations before a change, to count the reallocations the change makes in place
// (CollectionKeyState::reallocatedBytes). listpack.c reallocates a listpack on every shrink (lpInsert's realloc
// after a deletion or a shorter replacement, lpShrinkToFit after a range's deletion) and on a growth only past
// its usable size (lp_malloc_size), which takes it to another class; intset.c intsetResize reallocates on
// every add and removal. A realloc within the class stays in place (jemalloc arena.c arena_ralloc_no_move); into
// another it moves, which the key's allocations by class show already. Followed: a listpack or intset key's
// one allocation, and a list's head and tail nodes (a pop's, a push's); not a list's middle nodes (LREM, LSET,
// LINSERT there), nor a changed score's delete and insert when they cross a class and come back.
class InPlaceResizes {
public:
    explicit InPlaceResizes(const CollectionKeyState& key)
        : m_table(key.table)
        , m_intsetWidth(key.intsetWidth)
        , m_bytes(compactBytes(key))
        , m_nodes(key.nodes.size())
        , m_head(key.nodes.empty() ? 0 : key.nodes.front().bytes)
        , m_tail(key.nodes.empty() ? 0 : key.nodes.back().bytes) { }

    // `reallocsAlways`: the change reallocates whatever the sizes (an intset's; a sorted-set listpack's changed
    // score, deleted and inserted again: zzlDelete, zzlInsert).
    void count(CollectionKeyState& key, const AllocatorModel& allocator, bool reallocsAlways = false) const {
        const auto inPlace = [&](std::uint64_t before, std::uint64_t after, bool always) {
            const std::uint64_t usable = allocator.usableSize(before);
            if (before != 0 && after != 0 && (always || after < before) && usable == allocator.usableSize(after))
                key.reallocatedBytes += usable;
        };
        if (key.kind == CollectionKind::List) {
            if (key.nodes.size() != m_nodes || m_nodes == 0)
                return; // a node made or freed: an allocation, not a realloc
            inPlace(m_head, key.nodes.front().bytes, false);
            if (m_nodes > 1)
                inPlace(m_tail, key.nodes.back().bytes, false);
            return;
        }
        if (m_table || key.table || m_intsetWidth != key.intsetWidth)
            return; // a conversion, or an intset widened (a new class: moved)
        const std::uint64_t after = compactBytes(key);
        if (after != m_bytes || reallocsAlways)
            inPlace(m_bytes, after, reallocsAlways || m_intsetWidth != 0);
    }

private:
    static std::uint64_t compactBytes(const CollectionKeyState& key) {
        if (key.table || !key.made)
            return 0;
        return key.intsetWidth != 0 ? collection::kIntsetHeaderBytes + key.entries * key.intsetWidth
                                    : key.listpackBytes;
    }
    bool m_table;
    std::uint8_t m_intsetWidth;
    std::uint64_t m_bytes;
    std::size_t m_nodes;
    std::uint64_t m_head;
    std::uint64_t m_tail;
};
} // namespace

CollectionKeyState CollectionKeyModel::created() const {
    CollectionKeyState key;
    key.kind = m_kind;
    key.made = m_kind == CollectionKind::Hash;
    key.listpackBytes = listpack::kHeaderBytes + listpack::kEndBytes; // lpNew
    return key;
}

void CollectionKeyModel::command(CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest,
    IntegerClass first, std::uint32_t firstBytes) const {
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    if (m_kind == CollectionKind::Set && firstBytes != 0 && !key.made) // SINTERSTORE's result (request.h)
        collection::setIntersectionCommand(c, key, first, firstBytes);
    else if (m_kind == CollectionKind::Set)
        collection::setCommand(c, key, elements, first);
    else if (m_kind == CollectionKind::List)
        collection::listCommand(c, key, elements, longest);
    else if (m_kind == CollectionKind::SortedSet)
        collection::zsetCommand(c, key, elements, longest, firstBytes);
    else
        collection::hashCommand(c, key, elements, longest);
}

void CollectionKeyModel::unionCommand(
    CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest, std::uint64_t largestSource) const {
    if (m_kind == CollectionKind::SortedSet)
        collection::zsetUnionCommand({ *m_rules, m_limits, *m_allocator }, key, elements, longest, largestSource);
}

void CollectionKeyModel::load(CollectionKeyState& key, std::uint64_t elements, SnapshotForm form) const {
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    key.made = true;
    key.loadRemaining = elements;
    key.loadForm = form;
    if (m_kind == CollectionKind::List)
        collection::listLoad(c, key);
    else if (m_kind == CollectionKind::Set)
        collection::setLoad(c, key, elements);
    else if (m_kind == CollectionKind::SortedSet)
        collection::zsetLoad(c, key, elements);
    else
        collection::hashLoad(c, key, elements);
}

void CollectionKeyModel::add(CollectionKeyState& key, ElementValue element, ElementValue value, bool atHead) const {
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    if (key.loadRemaining > 0) { // an element of a key being loaded
        --key.loadRemaining;
        key.loadLongest = std::max(key.loadLongest, element.bytes);
        if (m_kind == CollectionKind::List)
            collection::listLoadAdd(c, key, element);
        else if (m_kind == CollectionKind::Set)
            collection::setLoadAdd(c, key, element);
        else if (m_kind == CollectionKind::SortedSet)
            collection::zsetLoadAdd(c, key, element, value);
        else
            collection::hashLoadAdd(c, key, element, value);
        return;
    }
    const InPlaceResizes resizes(key);
    if (m_kind == CollectionKind::List)
        collection::listPush(c, key, element, atHead);
    else if (m_kind == CollectionKind::Set)
        collection::setAdd(c, key, element);
    else if (m_kind == CollectionKind::SortedSet)
        collection::zsetAdd(c, key, element, value);
    else
        collection::hashAdd(c, key, element, value);
    resizes.count(key, *m_allocator);
}

void CollectionKeyModel::update(
    CollectionKeyState& key, ElementValue element, ElementValue before, ElementValue after) const {
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    const InPlaceResizes resizes(key);
    if (m_kind == CollectionKind::SortedSet)
        collection::zsetUpdate(c, key, element, before, after);
    else if (m_kind == CollectionKind::Hash) // a set's member has no value to replace
        collection::hashUpdate(c, key, element, before, after);
    resizes.count(key, *m_allocator, m_kind == CollectionKind::SortedSet);
}

void CollectionKeyModel::replaceAt(
    CollectionKeyState& key, std::uint64_t index, ElementValue before, ElementValue after) const {
    const InPlaceResizes resizes(key);
    if (m_kind == CollectionKind::List)
        collection::listReplace({ *m_rules, m_limits, *m_allocator }, key, index, before, after);
    resizes.count(key, *m_allocator);
}

void CollectionKeyModel::insertAt(
    CollectionKeyState& key, std::uint64_t pivot, bool before, ElementValue element) const {
    if (m_kind == CollectionKind::List && pivot < key.entries)
        collection::listInsert({ *m_rules, m_limits, *m_allocator }, key, pivot, before, element);
}

void CollectionKeyModel::knownSize(CollectionKeyState& key, std::uint64_t index, ElementValue element) const {
    if (m_kind == CollectionKind::List && index < key.entries)
        collection::listKnownSize(key, index, element);
    else if (m_kind == CollectionKind::Set) // SINTERSTORE's result of integers, its first with their count
        collection::setIntegersKnown({ *m_rules, m_limits, *m_allocator }, key, index != 0, element);
}

void CollectionKeyModel::removeAt(CollectionKeyState& key, std::uint64_t index, ElementValue element) const {
    const InPlaceResizes resizes(key);
    if (m_kind == CollectionKind::List && index < key.entries)
        collection::listRemoveAt({ *m_rules, m_limits, *m_allocator }, key, index, element);
    resizes.count(key, *m_allocator);
}

void CollectionKeyModel::remove(CollectionKeyState& key, ElementValue element, ElementValue value, MemberOrder order,
    bool atHead, bool byRange, bool continuesCommand) const {
    if (key.entries == 0)
        return;
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    // A list's atHead is the end it pops from; another's, that more removals of its command follow.
    const InPlaceResizes resizes(key);
    if (m_kind == CollectionKind::List)
        collection::listPop(c, key, element, atHead);
    else if (m_kind == CollectionKind::Set)
        collection::setRemove(c, key, element, order, atHead);
    else if (m_kind == CollectionKind::SortedSet)
        collection::zsetRemove(c, key, element, value, atHead, byRange);
    else
        collection::hashRemove(c, key, element, value, atHead);
    // A range's deletion reallocates once (lpDeleteRange, zzlDeleteRangeBy*: lpShrinkToFit), taken at its
    // last member (a sorted set's) or its first pop (a list's, the place the node is known at).
    const bool rangeGoesOn = m_kind == CollectionKind::List ? continuesCommand : byRange && atHead;
    if (!rangeGoesOn)
        resizes.count(key, *m_allocator);
}

void CollectionKeyModel::read(CollectionKeyState& key, bool randomDraw, bool foundForInsert) const {
    if (!key.table || !key.index)
        return; // a compact encoding has no table to rehash
    if (foundForInsert) {
        // A member found by the add that looked for its place (a SADD's of one the set holds, a union's the
        // result holds). Redis 7.x builds a union in a dict of its own (zunionInterDiffGenericCommand's
        // accumulator), which finds it: the result's table is not touched.
        if (m_kind == CollectionKind::SortedSet && !m_rules->zsetUnionSizedForLargestSource)
            return;
        key.index->findForInsert();
        return;
    }
    // A table's find takes a rehash step (dictFind, hashtableFind). A random draw: dict.c dictGetFairRandomKey
    // asks dictGetSomeKeys for GETFAIR_NUM_ENTRIES (15) entries, at most the table's size, which takes a rehash
    // step for each while the table is rehashing; hashtable.c hashtableFairRandomEntry samples its buckets
    // after one (sampleRandomBuckets -> rehashStepOnReadIfNeeded).
    constexpr std::uint64_t kFairRandomEntries = 15;
    const std::uint64_t steps = randomDraw && m_rules->dictTables() ? std::min(kFairRandomEntries, key.entries) : 1;
    for (std::uint64_t i = 0; i < steps; ++i)
        key.index->lookup();
}

std::string_view CollectionKeyModel::encoding(const CollectionKeyState& key) const {
    if (m_kind == CollectionKind::List)
        return key.table ? "quicklist" : "listpack";
    if (key.table)
        return m_kind == CollectionKind::SortedSet ? "skiplist" : "hashtable";
    return key.intsetWidth != 0 ? "intset" : "listpack";
}

namespace {
CollectionFootprint sumParts(const std::vector<CollectionPart>& parts, const AllocatorModel& allocator) {
    CollectionFootprint out;
    for (const CollectionPart& part : parts) {
        out.allocations += part.count;
        out.requestedBytes += static_cast<double>(part.requestedBytes) * part.count;
        out.usableBytes += static_cast<double>(allocator.usableSize(part.requestedBytes)) * part.count;
    }
    return out;
}
} // namespace

std::size_t CollectionKeyModel::tableParts(const CollectionKeyState& key, std::vector<CollectionPart>& parts) const {
    if (m_kind == CollectionKind::SortedSet)
        parts = collection::zsetSkiplistParts(*m_rules);
    const std::uint64_t structBytes
        = m_rules->tableStructBytes + (m_kind == CollectionKind::Hash ? m_rules->hashMetadataBytes : 0);
    return collection::addTableParts(parts, *key.index, *m_allocator, m_rules->tableStruct, structBytes);
}

CollectionFootprint CollectionKeyModel::tableFootprint(const CollectionKeyState& key) const {
    std::vector<CollectionPart> parts;
    const std::size_t arraysFrom = tableParts(key, parts);
    CollectionFootprint out = sumParts(parts, *m_allocator);
    for (std::size_t i = arraysFrom; i < parts.size(); ++i)
        out.bucketArrayBytes += static_cast<double>(m_allocator->usableSize(parts[i].requestedBytes)) * parts[i].count;
    return out;
}

CollectionFootprint CollectionKeyModel::footprint(const CollectionKeyState& key) const {
    if (m_kind == CollectionKind::List)
        return collection::listFootprint({ *m_rules, m_limits, *m_allocator }, key);
    CollectionFootprint out;
    if (!key.table) {
        const std::uint64_t bytes
            = key.intsetWidth != 0 ? collection::kIntsetHeaderBytes + key.entries * key.intsetWidth : key.listpackBytes;
        out.allocations = 1;
        out.requestedBytes = static_cast<double>(bytes);
        out.usableBytes = static_cast<double>(m_allocator->usableSize(bytes));
        return out;
    }
    out = tableFootprint(key);
    out.allocations += key.entryAllocations;
    out.requestedBytes += key.entryRequestedBytes;
    out.usableBytes += key.entryUsableBytes;
    // The sum's rounding may leave a trace below zero where every drawn entry has been removed.
    out.usableBytesVariance = std::max(0.0, key.entryUsableVariance);
    if (m_kind == CollectionKind::Set)
        collection::addSetTableEntries({ *m_rules, m_limits, *m_allocator }, key, out);
    return out;
}

bool CollectionKeyModel::holds(const CollectionKeyState& key, ElementValue element, ElementValue value) const {
    if (key.entries == 0)
        return false;
    if (key.table || m_kind == CollectionKind::List)
        return true;
    return std::find(key.compactEntries.begin(), key.compactEntries.end(), collection::packEntry(element, value))
        != key.compactEntries.end();
}

std::vector<SizedAllocations> CollectionKeyModel::allocations(const CollectionKeyState& key) const {
    std::vector<SizedAllocations> out;
    auto add = [&](std::uint64_t bytes, double count) {
        if (count > 0)
            collection::addSized(out, bytes, count);
    };
    if (m_kind == CollectionKind::List) {
        for (const ListNode& node : key.nodes)
            add(node.bytes, 1);
        if (key.table) {
            add(collection::kQuicklistBytes, 1);
            add(collection::kQuicklistNodeBytes, static_cast<double>(key.nodes.size()));
        }
        return out;
    }
    if (!key.table) {
        add(key.intsetWidth != 0 ? collection::kIntsetHeaderBytes + key.entries * key.intsetWidth : key.listpackBytes,
            1);
        return out;
    }
    std::vector<CollectionPart> parts;
    tableParts(key, parts);
    for (const CollectionPart& part : parts)
        add(part.requestedBytes, part.count);
    for (const SizedAllocations& entry : key.entrySizes)
        add(entry.bytes, entry.count);
    if (m_kind == CollectionKind::Set)
        add(collection::kDictEntryNoValueBytes, collection::setTableEntries({ *m_rules, m_limits, *m_allocator }, key));
    return out;
}

std::uint32_t CollectionKeyModel::longestCompactElement(const CollectionKeyState& key) const {
    std::uint32_t longest = 0;
    if (!key.table)
        for (const std::uint64_t packed : key.compactEntries) {
            const auto [element, value] = collection::unpackEntry(packed);
            longest = std::max({ longest, element.bytes, value.bytes });
        }
    return longest;
}

double CollectionKeyModel::lookupLines(const CollectionKeyState& key) const {
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    if (m_kind == CollectionKind::List || !key.table)
        return collection::lookupLines(c, key, m_kind, {}, {});
    return collection::lookupLines(c, key, m_kind, footprint(key), tableFootprint(key));
}

std::vector<CollectionPart> CollectionKeyModel::keyParts(std::uint32_t keyBytes, bool hasTtl) const {
    return collection::keyPartsOf(*m_layout, keyBytes, hasTtl, *m_allocator);
}

} // namespace layoutlab
