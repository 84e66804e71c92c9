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
    if (m_kind == CollectionKind::Set)
        collection::setCommand(c, key, elements, first);
    else if (m_kind == CollectionKind::List)
        collection::listCommand(c, key, elements, longest);
    else if (m_kind == CollectionKind::SortedSet)
        collection::zsetCommand(c, key, elements, longest, firstBytes);
    else
        collection::hashCommand(c, key, elements, longest);
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
    if (m_kind == CollectionKind::List)
        collection::listPush(c, key, element, atHead);
    else if (m_kind == CollectionKind::Set)
        collection::setAdd(c, key, element);
    else if (m_kind == CollectionKind::SortedSet)
        collection::zsetAdd(c, key, element, value);
    else
        collection::hashAdd(c, key, element, value);
}

void CollectionKeyModel::update(
    CollectionKeyState& key, ElementValue element, ElementValue before, ElementValue after) const {
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    if (m_kind == CollectionKind::SortedSet)
        collection::zsetUpdate(c, key, element, before, after);
    else if (m_kind == CollectionKind::Hash) // a set's member has no value to replace
        collection::hashUpdate(c, key, element, before, after);
}

void CollectionKeyModel::replaceAt(
    CollectionKeyState& key, std::uint64_t index, ElementValue before, ElementValue after) const {
    if (m_kind == CollectionKind::List)
        collection::listReplace({ *m_rules, m_limits, *m_allocator }, key, index, before, after);
}

void CollectionKeyModel::insertAt(
    CollectionKeyState& key, std::uint64_t pivot, bool before, ElementValue element) const {
    if (m_kind == CollectionKind::List && pivot < key.entries)
        collection::listInsert({ *m_rules, m_limits, *m_allocator }, key, pivot, before, element);
}

void CollectionKeyModel::knownSize(CollectionKeyState& key, std::uint64_t index, ElementValue element) const {
    if (m_kind == CollectionKind::List && index < key.entries)
        collection::listKnownSize(key, index, element);
}

void CollectionKeyModel::removeAt(CollectionKeyState& key, std::uint64_t index, ElementValue element) const {
    if (m_kind == CollectionKind::List && index < key.entries)
        collection::listRemoveAt({ *m_rules, m_limits, *m_allocator }, key, index, element);
}

void CollectionKeyModel::remove(CollectionKeyState& key, ElementValue element, ElementValue value, MemberOrder order,
    bool atHead, bool byRange) const {
    if (key.entries == 0)
        return;
    const collection::KeyContext c { *m_rules, m_limits, *m_allocator };
    // A list's atHead is the end it pops from; another's, that more removals of its command follow.
    if (m_kind == CollectionKind::List)
        collection::listPop(c, key, element, atHead);
    else if (m_kind == CollectionKind::Set)
        collection::setRemove(c, key, element, order, atHead);
    else if (m_kind == CollectionKind::SortedSet)
        collection::zsetRemove(c, key, element, value, atHead, byRange);
    else
        collection::hashRemove(c, key, element, value, atHead);
}

void CollectionKeyModel::read(CollectionKeyState& key, bool randomDraw) const {
    if (!key.table || !key.index)
        return; // a compact encoding has no table to rehash
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
