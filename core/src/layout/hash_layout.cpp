// SPDX-License-Identifier: MIT
// Hash keys (layout/collection_layout.h), from the engines' source. A hash is a listpack or a table, chosen
// by the engine's limits as it chooses (t_hash.c hashTypeTryConversion, hashTypeSet): more than
// hash-max-listpack-entries fields, or a field or value longer than hash-max-listpack-value bytes, and the
// hash is a table.
//   listpack (listpack.c): a 6-byte header (total bytes, element count), each field and value an entry
//     (its encoding: a string of under 64 bytes takes 1 byte, under 4,096 2, else 5; an integer string
//     1 to 9 bytes by its magnitude, lpEncodeGetType), then its backlen (lpEncodeBacklen: 1 byte up to
//     127, 2 up to 16,382, ...), and a 1-byte end. Grown by realloc to its exact size (lpInsert), so it
//     holds the size class of its bytes.
//   dict (Redis 7.0 and 7.2, Valkey 8.0; dict.c): the dict (56 bytes), 8 bytes per bucket, a 24-byte
//     dictEntry per field, and the field and the value each an sds of the smallest header (hashTypeSet:
//     sdsdup of the arguments). The buckets are the power of two at or above the fields (at least 4:
//     _dictNextExp), and a table that grew on an insert keeps its old half until incremental rehashing has
//     moved every non-empty bucket of it, one per later lookup (_dictRehashStep: two per field an HSET adds
//     on Redis 7.0, one on 7.2 and Valkey 8.0): a hash that grew near its last field holds both. The table
//     grows and rehashes as the keyspace's does (sim/index_table_model.h), which hashtable.c's tables (8.1
//     and later) do too.
//   hashtable (Valkey 8.1 and later): hashtable.c's struct with the hash type's metadata, its buckets and
//     child buckets, and an entry per field: 8.1's t_hash.c hashTypeEntry, 9.0's and later entry.c.

#include "collection_rules.h"
#include "layoutlab/layout/sds.h"

#include <fmt/format.h>

namespace layoutlab::collection {

namespace {
// entry.c entryReqSize (Valkey 9.0 and later): the field embedded with its smallest sds header, and the
// value after it with a type-8 header when the two fit EMBED_VALUE_MAX_ALLOC_SIZE (128 bytes); else a
// value pointer before a field of at least a type-8 header, and the value an sds of its own (hashTypeSet:
// sdsdup of the argument).
constexpr std::uint64_t kEmbedValueMaxAllocBytes = 128;
constexpr std::uint64_t kValuePointerBytes = 8;
// t_hash.c hashTypeCreateEntry (8.1): struct hashTypeEntry {sds value; char field_offset; char field_data[]}
// (16 bytes with its padding) and the field's sds of the smallest header; the value its own sds.
constexpr std::uint64_t kHashTypeEntryBytes = 16;
// networking.c processMultibulkBuffer -> createStringObject: an argument of up to 44 bytes is an EMBSTR.
constexpr std::uint64_t kArgvEmbstrLimit = 44;

} // namespace

std::vector<CollectionPart> hashEntryParts(
    const Rules& rules, std::uint32_t fieldBytes, std::uint32_t valueBytes, bool fromArgv) {
    if (rules.dictTables())
        return { { "entries", kDictEntryBytes, 1 }, { "fields", rules.sdsBytes(fieldBytes), 1 },
            { "values", rules.sdsBytes(valueBytes), 1 } };
    if (!rules.hashEntriesEmbedValues) {
        const std::uint64_t field = rules.hashFieldsAsSent && fromArgv
            ? sds::valkeyArgvBytes(fieldBytes, kArgvEmbstrLimit)
            : sds::valkeyNewLenBytes(fieldBytes);
        return { { "entries (field)", kHashTypeEntryBytes + field, 1 },
            { "values", sds::valkeyNewLenBytes(valueBytes), 1 } };
    }
    const auto fieldType = sds::valkeyReqType(fieldBytes);
    const std::uint64_t field = sds::reqSize(fieldBytes, fieldType);
    const std::uint64_t embeddedValue = sds::reqSize(valueBytes, sds::Type::Type8);
    if (field + embeddedValue <= kEmbedValueMaxAllocBytes)
        return { { "entries (field and value)", field + embeddedValue, 1 } };
    const auto pointerFieldType = fieldType == sds::Type::Type5 ? sds::Type::Type8 : fieldType;
    return { { "entries (field)", kValuePointerBytes + sds::reqSize(fieldBytes, pointerFieldType), 1 },
        { "values", sds::valkeyNewLenBytes(valueBytes), 1 } };
}

Status describeHash(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out) {
    // t_hash.c hashTypeTryConversion and hashTypeSet: the limits the listpack keeps to.
    const bool longMember
        = shape.elementBytes > limits.hashMaxListpackValue || shape.valueBytes > limits.hashMaxListpackValue;
    if (shape.entries > limits.hashMaxListpackEntries)
        out.why = fmt::format("{} fields > hash-max-listpack-entries {}", shape.entries, limits.hashMaxListpackEntries);
    else if (longMember)
        out.why = fmt::format("a field or value of {} bytes > hash-max-listpack-value {}",
            std::max(shape.elementBytes, shape.valueBytes), limits.hashMaxListpackValue);
    if (out.why.empty()) {
        out.encoding = "listpack";
        out.why = fmt::format("{} fields <= {}, fields and values <= {} bytes", shape.entries,
            limits.hashMaxListpackEntries, limits.hashMaxListpackValue);
        const std::uint64_t pair = listpack::entryBytes(shape.elementBytes, shape.integerElements)
            + listpack::entryBytes(shape.valueBytes, shape.integerValues);
        out.parts.push_back({ "listpack", listpackBytes(shape.entries, pair), 1 });
        return Ok {};
    }
    out.encoding = "hashtable";
    // The fields the table is sized for when it is made (t_hash.c): all of them, for an HSET of more than
    // the listpack takes (hashTypeTryConversion's expand); the listpack's and the one that overflowed it, for
    // a listpack converted then (hashTypeConvertListpack's expand); none, for a listpack converted for a
    // long field or value before it held any. A table that grew near its last field still holds its old one.
    std::uint64_t sizedFor = 0;
    if (shape.oneCommand && shape.entries > limits.hashMaxListpackEntries && rules.hsetSizesTable)
        sizedFor = shape.entries;
    else if (!longMember)
        sizedFor = limits.hashMaxListpackEntries + 1;
    const IndexTableModel table
        = filledTable(rules.tableKind, sizedFor, shape.entries, rules.hsetLookups, 0, rules.bucketRehashOnAccess);
    addTableParts(out.parts, table, allocator, rules.tableStruct, rules.tableStructBytes + rules.hashMetadataBytes);
    // The fields a conversion made (from the listpack's entries) and those that came as arguments differ only
    // where the entry keeps an argument's header (Rules::hashFieldsAsSent).
    const std::uint64_t converted = rules.hashFieldsAsSent && sizedFor == limits.hashMaxListpackEntries + 1
        ? std::min(shape.entries, sizedFor)
        : 0;
    for (const bool fromArgv : { false, true }) {
        const std::uint64_t fields = fromArgv ? shape.entries - converted : converted;
        if (fields == 0)
            continue;
        for (CollectionPart& part : hashEntryParts(rules, shape.elementBytes, shape.valueBytes, fromArgv)) {
            part.count = static_cast<double>(fields);
            out.parts.push_back(std::move(part));
        }
    }
    return Ok {};
}

} // namespace layoutlab::collection
