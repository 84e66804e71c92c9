// SPDX-License-Identifier: MIT
// A hash key element by element (collection_key_ops.h), following t_hash.c of each engine line:
//   hsetCommand, hsetnxCommand -> hashTypeTryConversion (hashCommand): more pairs than
//     hash-max-listpack-entries in one command converts the listpack and expands the table for them all
//     (Redis 7.2 and Valkey; not Redis 7.0); an argument longer than hash-max-listpack-value converts it,
//     sized for what it holds.
//   hashTypeSet (hashAdd, hashUpdate): a field or value longer than hash-max-listpack-value converts it first
//     (the HINCRBY path); a listpack replaces the value in place (lpReplace) or appends the pair (lpAppend),
//     then converts once it holds more than hash-max-listpack-entries (hashTypeConvertListpack: the table
//     expanded for them all, each pair inserted once). A table finds the field (Redis 7.0: dictFind, then
//     dictAdd for a new one, two rehash steps; 7.2 and Valkey: one call, dictAddRaw, which grows a full dict
//     before it finds a field already there) and replaces the value or adds the entry.
//   hashTypeDelete (hashRemove): lpDeleteRangeWithEntry, or the table's delete, after which Redis 7.x
//     resizes a table below 10% fill (htNeedsResize -> dictResize) and Valkey's tables shrink as they do on
//     any delete (the index model's erase). The last field's removal deletes the key (the replay's part).
//   hashTypeGetValue (CollectionKeyModel::read): a table's find, one rehash step.

#include "collection_key_ops.h"

#include <algorithm>

namespace layoutlab::collection {

namespace {
// A field and value as lpAppend stores them: an integer by its class, else the string.
std::uint64_t pairBytes(ElementValue field, ElementValue value) {
    return listpack::entryBytes(field.bytes, field.integer) + listpack::entryBytes(value.bytes, value.integer);
}

// Adds (weight > 0) or takes away (< 0) an entry's allocations, its field as a command's argument when
// `fromArgv` (Rules::hashFieldsAsSent).
void addHashEntry(const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue value, double weight,
    bool fromArgv) {
    addEntryParts(c, key, hashEntryParts(c.rules, field.bytes, value.bytes, fromArgv), weight);
}

// A field or value longer than hash-max-listpack-value (t_hash.c hashTypeTryConversion, hashTypeSet).
bool longerThanListpackValue(const KeyContext& c, ElementValue field, ElementValue value) {
    return field.bytes > c.limits.hashMaxListpackValue || value.bytes > c.limits.hashMaxListpackValue;
}

// The pair counted, and appended to the listpack (lpAppend: the field, then the value) when the hash is one:
// false when it is a table.
bool countPair(CollectionKeyState& key, ElementValue field, ElementValue value) {
    key.payloadBytes += std::uint64_t { field.bytes } + value.bytes;
    ++key.entries;
    if (key.table)
        return false;
    key.listpackBytes += pairBytes(field, value);
    key.compactEntries.push_back(packEntry(field, value));
    return true;
}

void convertToTable(const KeyContext& c, CollectionKeyState& key, std::uint64_t sizedFor) {
    // hashTypeConvertListpack: a table expanded for the listpack's pairs, each inserted once.
    key.index = newTable(c, key.entries);
    for (const std::uint64_t packed : key.compactEntries) {
        const auto [field, value] = unpackEntry(packed);
        key.index->insert();
        addHashEntry(c, key, field, value, 1, false); // hashTypeCurrentObjectNewSds: a field of its own
    }
    key.table = true;
    key.compactEntries = {};
    key.listpackBytes = 0;
    // hashTypeTryConversion's expand for a command's pairs, after the conversion.
    if (sizedFor > key.entries)
        key.index->expand(sizedFor);
}
} // namespace

void hashCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest) {
    if (key.table)
        return;
    if (elements > c.limits.hashMaxListpackEntries && c.rules.hsetSizesTable)
        convertToTable(c, key, elements);
    else if (longest > c.limits.hashMaxListpackValue)
        convertToTable(c, key, 0);
}

void hashAdd(const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue value) {
    if (!key.table && longerThanListpackValue(c, field, value))
        convertToTable(c, key, 0);
    if (countPair(key, field, value)) {
        if (key.entries > c.limits.hashMaxListpackEntries)
            convertToTable(c, key, 0);
        return;
    }
    for (std::uint32_t l = 1; l < c.rules.hsetLookups; ++l)
        key.index->lookup();
    key.index->insert();
    addHashEntry(c, key, field, value, 1, true);
    ++key.argvEntries;
}

void hashUpdate(
    const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue before, ElementValue after) {
    if (!key.table && longerThanListpackValue(c, field, after))
        convertToTable(c, key, 0);
    key.payloadBytes += after.bytes;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, before.bytes);
    if (!key.table) {
        // lpReplace: the value's entry rewritten at its new size. Any entry of the same lengths and classes
        // stands for the field: only the sizes matter.
        key.listpackBytes = key.listpackBytes + listpack::entryBytes(after.bytes, after.integer)
            - listpack::entryBytes(before.bytes, before.integer);
        const auto it = std::find(key.compactEntries.begin(), key.compactEntries.end(), packEntry(field, before));
        if (it != key.compactEntries.end())
            *it = packEntry(field, after);
        return;
    }
    // Redis 7.0's hashTypeSet finds the field (dictFind); 7.2 and Valkey look for its place to add it
    // (dictAddRaw with `existing`, hashtableFindPositionForInsert), which grows a full dict first.
    if (c.rules.hsetLookups == 1)
        key.index->findForInsert();
    else
        key.index->lookup();
    // The field stays as it is: only the value's part changes (or the entry around it, entry.c entryUpdate).
    addHashEntry(c, key, field, before, -1, false);
    addHashEntry(c, key, field, after, 1, false);
}

void hashRemove(const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue value, bool moreFollow) {
    --key.entries;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, std::uint64_t { field.bytes } + value.bytes);
    if (!key.table) {
        key.listpackBytes
            -= std::min(key.listpackBytes - listpack::kHeaderBytes - listpack::kEndBytes, pairBytes(field, value));
        eraseCompactEntry(key, packEntry(field, value));
        return;
    }
    key.index->erase(!(c.rules.removalsPauseShrink && moreFollow));
    // Redis 7.x t_hash.c hashTypeDelete: htNeedsResize -> dictResize, below 10% fill. Valkey's tables shrink
    // in their own delete (the index model's erase).
    if (c.rules.tableKind == IndexKind::RedisDict)
        key.index->shrinkIfNeeded();
    if (!c.rules.hashFieldsAsSent) { // the field's header is the same however it came
        addHashEntry(c, key, field, value, -1, false);
        return;
    }
    // Which entry went is not known, only its lengths: one whose field came as an argument as often as those
    // are among the entries it was one of.
    const double fromArgv = key.argvEntries / static_cast<double>(key.entries + 1);
    addHashEntry(c, key, field, value, -fromArgv, true);
    addHashEntry(c, key, field, value, -(1 - fromArgv), false);
    key.argvEntries -= fromArgv;
}

} // namespace layoutlab::collection

// rdb.c rdbLoadObject of a hash:
//   RDB_TYPE_HASH_LISTPACK (compact in the file): the listpack as saved, whatever its lengths, converted only
//     when it holds more than hash-max-listpack-entries (hashTypeConvert: a table expanded for them all).
//   RDB_TYPE_HASH: more fields than hash-max-listpack-entries make a table at once, expanded for them all;
//     else the pairs are appended to a listpack until a field or value longer than hash-max-listpack-value
//     converts it (hashTypeConvert, sized for the pairs it holds), the pair is added, and the table is
//     expanded for the pairs still to come (dictTryExpand when they are more than DICT_HT_INITIAL_SIZE;
//     Valkey 8.1 and later: hashtableTryExpand).
// A loaded field is an sds of its own (rdbGenericLoadStringObject), never a command's argument.
namespace layoutlab::collection {

void hashLoad(const KeyContext& c, CollectionKeyState& key, std::uint64_t fields) {
    if (fields > c.limits.hashMaxListpackEntries) {
        key.index = newTable(c, fields);
        key.table = true;
    }
}

void hashLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue field, ElementValue value) {
    const bool converts = !key.table && !key.loadForm.compact && longerThanListpackValue(c, field, value);
    if (converts)
        convertToTable(c, key, 0);
    if (countPair(key, field, value))
        return;
    key.index->insert();
    addHashEntry(c, key, field, value, 1, false);
    if (converts && (!c.rules.dictTables() || key.loadRemaining > kDictInitialBuckets))
        key.index->expand(key.loadRemaining);
}

} // namespace layoutlab::collection
