// SPDX-License-Identifier: MIT
// A collection key element by element (layout/collection_key_model.h). Hashes follow t_hash.c of each
// engine line:
//   hsetCommand, hsetnxCommand -> hashTypeTryConversion (command()): more pairs than
//     hash-max-listpack-entries in one command converts the listpack and expands the table for them all
//     (Redis 7.2 and Valkey; not Redis 7.0); an argument longer than hash-max-listpack-value converts it,
//     sized for what it holds.
//   hashTypeSet (add(), update()): a field or value longer than hash-max-listpack-value converts it first
//     (the HINCRBY path); a listpack replaces the value in place (lpReplace) or appends the pair (lpAppend),
//     then converts once it holds more than hash-max-listpack-entries (hashTypeConvertListpack: the table
//     expanded for them all, each pair inserted once). A table finds the field (Redis 7.0: dictFind, then
//     dictAdd for a new one, two rehash steps; 7.2 and Valkey: one call) and replaces the value or adds the
//     entry.
//   hashTypeDelete (remove()): lpDeleteRangeWithEntry, or the table's delete, after which Redis 7.x resizes
//     a table below 10% fill (htNeedsResize -> dictResize) and Valkey's tables shrink as they do on any
//     delete (the index model's erase). The last field's removal deletes the key (the replay's part).
//   hashTypeGetValue (read()): a table's find, one rehash step.
// A listpack is reallocated to its exact size at each change (lpInsert, lpDelete), so it holds the size class
// of its bytes.

#include "layoutlab/layout/collection_key_model.h"

#include "collection_rules.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// A compact entry's lengths and integer classes in one word: element bytes (28 bits), its class (3), value
// bytes (30), its class (3). A listpack never holds longer ones (its limits are far below).
constexpr std::uint64_t kElementBits = 28, kValueBits = 30;
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

// A field and value as lpAppend stores them: an integer by its class, else the string.
std::uint64_t pairBytes(ElementValue element, ElementValue value) {
    return listpack::entryBytes(element.bytes, element.integer) + listpack::entryBytes(value.bytes, value.integer);
}
} // namespace

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
    if (kind != CollectionKind::Hash)
        return usageError(fmt::format("{} keys are not yet replayed element by element (hashes are; `layoutlab "
                                      "layouts --type {}` explains one key)",
                              collectionKindName(kind), collectionKindName(kind)),
            "trace");
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
    key.listpackBytes = listpack::kHeaderBytes + listpack::kEndBytes; // lpNew
    return key;
}

void CollectionKeyModel::addTableEntry(
    CollectionKeyState& key, ElementValue element, ElementValue value, double weight, bool fromArgv) const {
    for (const CollectionPart& part : collection::hashEntryParts(*m_rules, element.bytes, value.bytes, fromArgv)) {
        key.entryAllocations += weight;
        key.entryRequestedBytes += weight * static_cast<double>(part.requestedBytes);
        key.entryUsableBytes += weight * static_cast<double>(m_allocator->usableSize(part.requestedBytes));
    }
}

void CollectionKeyModel::convertToTable(CollectionKeyState& key, std::uint64_t sizedFor) const {
    // hashTypeConvertListpack: a table expanded for the listpack's pairs, each inserted once.
    key.index = std::make_unique<IndexTableModel>(m_rules->tableKind, m_rules->tableParams);
    key.index->setBucketRehashOnAccess(m_rules->bucketRehashOnAccess);
    key.index->expand(key.entries);
    for (const std::uint64_t packed : key.compactEntries) {
        const auto [element, value] = unpackEntry(packed);
        key.index->insert();
        addTableEntry(key, element, value, 1, false); // hashTypeCurrentObjectNewSds: a field of its own
    }
    key.table = true;
    key.compactEntries = {};
    key.listpackBytes = 0;
    // hashTypeTryConversion's expand for a command's pairs, after the conversion.
    if (sizedFor > key.entries)
        key.index->expand(sizedFor);
}

void CollectionKeyModel::command(CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest) const {
    if (key.table)
        return;
    if (elements > m_limits.hashMaxListpackEntries && m_rules->hsetSizesTable)
        convertToTable(key, elements);
    else if (longest > m_limits.hashMaxListpackValue)
        convertToTable(key, 0);
}

void CollectionKeyModel::add(CollectionKeyState& key, ElementValue element, ElementValue value) const {
    if (!key.table && (element.bytes > m_limits.hashMaxListpackValue || value.bytes > m_limits.hashMaxListpackValue))
        convertToTable(key, 0);
    key.payloadBytes += std::uint64_t { element.bytes } + value.bytes;
    ++key.entries;
    if (!key.table) {
        key.listpackBytes += pairBytes(element, value);
        key.compactEntries.push_back(packEntry(element, value));
        if (key.entries > m_limits.hashMaxListpackEntries)
            convertToTable(key, 0);
        return;
    }
    for (std::uint32_t l = 1; l < m_rules->hsetLookups; ++l)
        key.index->lookup();
    key.index->insert();
    addTableEntry(key, element, value, 1, true);
    ++key.argvEntries;
}

void CollectionKeyModel::update(
    CollectionKeyState& key, ElementValue element, ElementValue before, ElementValue after) const {
    if (!key.table && (element.bytes > m_limits.hashMaxListpackValue || after.bytes > m_limits.hashMaxListpackValue))
        convertToTable(key, 0);
    key.payloadBytes += after.bytes;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, before.bytes);
    if (!key.table) {
        // lpReplace: the value's entry rewritten at its new size. Any entry of the same lengths and classes
        // stands for the field: only the sizes matter.
        key.listpackBytes = key.listpackBytes + listpack::entryBytes(after.bytes, after.integer)
            - listpack::entryBytes(before.bytes, before.integer);
        const auto it = std::find(key.compactEntries.begin(), key.compactEntries.end(), packEntry(element, before));
        if (it != key.compactEntries.end())
            *it = packEntry(element, after);
        return;
    }
    key.index->lookup();
    // The field stays as it is: only the value's part changes (or the entry around it, entry.c entryUpdate).
    addTableEntry(key, element, before, -1, false);
    addTableEntry(key, element, after, 1, false);
}

void CollectionKeyModel::remove(CollectionKeyState& key, ElementValue element, ElementValue value) const {
    if (key.entries == 0)
        return;
    --key.entries;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, std::uint64_t { element.bytes } + value.bytes);
    if (!key.table) {
        key.listpackBytes
            -= std::min(key.listpackBytes - listpack::kHeaderBytes - listpack::kEndBytes, pairBytes(element, value));
        const auto it = std::find(key.compactEntries.begin(), key.compactEntries.end(), packEntry(element, value));
        if (it != key.compactEntries.end())
            key.compactEntries.erase(it);
        return;
    }
    key.index->erase();
    // Redis 7.x t_hash.c hashTypeDelete: htNeedsResize -> dictResize, below 10% fill. Valkey's tables shrink
    // in their own delete (the index model's erase).
    if (m_rules->tableKind == IndexKind::RedisDict)
        key.index->shrinkIfNeeded();
    if (!m_rules->hashFieldsAsSent) { // the field's header is the same however it came
        addTableEntry(key, element, value, -1, false);
        return;
    }
    // Which entry went is not known, only its lengths: one whose field came as an argument as often as those
    // are among the entries it was one of.
    const double fromArgv = key.argvEntries / static_cast<double>(key.entries + 1);
    addTableEntry(key, element, value, -fromArgv, true);
    addTableEntry(key, element, value, -(1 - fromArgv), false);
    key.argvEntries -= fromArgv;
}

void CollectionKeyModel::read(CollectionKeyState& key) const {
    if (key.table)
        key.index->lookup();
}

std::string_view CollectionKeyModel::encoding(const CollectionKeyState& key) const {
    return key.table ? "hashtable" : "listpack";
}

CollectionFootprint CollectionKeyModel::footprint(const CollectionKeyState& key) const {
    CollectionFootprint out;
    if (!key.table) {
        out.allocations = 1;
        out.requestedBytes = static_cast<double>(key.listpackBytes);
        out.usableBytes = static_cast<double>(m_allocator->usableSize(key.listpackBytes));
        return out;
    }
    std::vector<CollectionPart> parts;
    collection::addTableParts(
        parts, *key.index, *m_allocator, m_rules->tableStruct, m_rules->tableStructBytes + m_rules->hashMetadataBytes);
    for (const CollectionPart& part : parts) {
        out.allocations += part.count;
        out.requestedBytes += static_cast<double>(part.requestedBytes) * part.count;
        out.usableBytes += static_cast<double>(m_allocator->usableSize(part.requestedBytes)) * part.count;
    }
    out.allocations += key.entryAllocations;
    out.requestedBytes += key.entryRequestedBytes;
    out.usableBytes += key.entryUsableBytes;
    return out;
}

std::vector<CollectionPart> CollectionKeyModel::keyParts(std::uint32_t keyBytes, bool hasTtl) const {
    return collection::keyPartsOf(*m_layout, keyBytes, hasTtl, *m_allocator);
}

} // namespace layoutlab
