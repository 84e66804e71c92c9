// SPDX-License-Identifier: MIT
#include "layoutlab/layout/hash_layout.h"

#include "layoutlab/layout/redis_layout.h"
#include "layoutlab/layout/sds.h"
#include "layoutlab/layout/valkey_dict_layout.h"
#include "layoutlab/layout/valkey_layout.h"
#include "layoutlab/sim/index_table_model.h"

#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

namespace {
constexpr std::uint64_t kDictEntryBytes = 24; // dict.c dictEntry {key, v, next}
constexpr std::uint64_t kDictBytes = 56; // dict.h struct dict (52 bytes of fields, 8-aligned): dictCreate

// listpack.c lpEncodeBacklen: the entry's length in 7-bit groups.
std::uint64_t backlenBytes(std::uint64_t entryBytes) {
    if (entryBytes <= 127)
        return 1;
    if (entryBytes < 16383)
        return 2;
    if (entryBytes < 2097151)
        return 3;
    if (entryBytes < 268435455)
        return 4;
    return 5;
}

// What differs between the engines' hashes.
struct HashRules {
    std::vector<HashPart> keyParts; // the key's own allocations
    // The table: dict.c's (Redis, Valkey 8.0) or hashtable.c's (Valkey 8.1 and later), grown and rehashed by
    // the index model, as the keyspace's is; its struct's name and size.
    IndexKind tableKind = IndexKind::RedisDict;
    std::string tableStruct = "dict";
    std::uint64_t tableStructBytes = kDictBytes;
    // Lookups of the table an HSET makes per field it adds, each a rehash step: Redis 7.0's hashTypeSet
    // looks the field up (dictFind) and then adds it (dictAdd); 7.2 and Valkey add it in one call.
    std::uint32_t lookupsPerAdd = 1;
    std::uint64_t (*sdsBytes)(std::uint64_t length) = sds::valkeyNewLenBytes; // sdsdup's, the engine's sds
    // Valkey 8.1 and later: entries of entry.c (9.0 and later: the value embedded when it fits) or of
    // t_hash.c hashTypeEntry (8.1).
    bool embedValues = true;
};

// entry.c entryReqSize (Valkey 9.0 and later): the field embedded with its smallest sds header, and the
// value after it with a type-8 header when the two fit EMBED_VALUE_MAX_ALLOC_SIZE (128 bytes); else a
// value pointer before a field of at least a type-8 header, and the value an sds of its own (hashTypeSet:
// sdsdup of the argument).
constexpr std::uint64_t kEmbedValueMaxAllocBytes = 128;
constexpr std::uint64_t kValuePointerBytes = 8;
// t_hash.c hashTypeCreateEntry (8.1): struct hashTypeEntry {sds value; char field_offset; char field_data[]}
// (16 bytes with its padding) and the field's sds of the smallest header; the value its own sds.
constexpr std::uint64_t kHashTypeEntryBytes = 16;

void addValkeyEntries(std::vector<HashPart>& parts, const HashShape& shape, bool embedValues) {
    if (!embedValues) {
        parts.push_back(
            { "entries (field)", kHashTypeEntryBytes + sds::valkeyNewLenBytes(shape.fieldBytes), shape.entries });
        parts.push_back({ "values", sds::valkeyNewLenBytes(shape.valueBytes), shape.entries });
        return;
    }
    const auto fieldType = sds::valkeyReqType(shape.fieldBytes);
    const std::uint64_t field = sds::reqSize(shape.fieldBytes, fieldType);
    const std::uint64_t embeddedValue = sds::reqSize(shape.valueBytes, sds::Type::Type8);
    if (field + embeddedValue <= kEmbedValueMaxAllocBytes) {
        parts.push_back({ "entries (field and value)", field + embeddedValue, shape.entries });
        return;
    }
    const auto pointerFieldType = fieldType == sds::Type::Type5 ? sds::Type::Type8 : fieldType;
    parts.push_back(
        { "entries (field)", kValuePointerBytes + sds::reqSize(shape.fieldBytes, pointerFieldType), shape.entries });
    parts.push_back({ "values", sds::valkeyNewLenBytes(shape.valueBytes), shape.entries });
}

// The key's own allocations, as the layout makes them for a string key whose value it never embeds: all
// but the value's (object.c: a hash's robj is createObject's, as a RAW string's; with the key embedded where
// the layout embeds it, objectSetKeyAndExpire).
std::vector<HashPart> keyPartsOf(const LayoutModel& layout, const HashShape& shape, const AllocatorModel& allocator) {
    constexpr std::uint32_t kNeverEmbedded = 1u << 20;
    const auto threshold = layout.threshold();
    const KeyLayout raw = layout.describe({ shape.keyBytes, kNeverEmbedded, shape.hasTtl, ValueKind::String },
        threshold ? threshold->value : 0, allocator);
    std::vector<HashPart> parts;
    for (std::size_t i = 0; i < raw.allocationCount; ++i) {
        const Allocation& a = raw.allocations[i];
        switch (a.purpose) {
        case Purpose::Entry:
            parts.push_back({ "keyspace entry", a.requestedBytes, a.count });
            break;
        case Purpose::Key:
            parts.push_back({ "key", a.requestedBytes, a.count });
            break;
        case Purpose::Object:
            parts.push_back({ a.holdsKey ? "object (key embedded)" : "object", a.requestedBytes, a.count });
            break;
        case Purpose::ExpireEntry:
            parts.push_back({ "expire entry", a.requestedBytes, a.count });
            break;
        default:
            break; // the value
        }
    }
    return parts;
}

std::optional<HashRules> rulesOf(const LayoutModel& layout) {
    HashRules rules;
    if (const auto* valkey = dynamic_cast<const ValkeyLayout*>(&layout)) {
        if (valkey->params().hashTableStructBytes == 0)
            return std::nullopt;
        rules.tableKind = IndexKind::ValkeyHashtable;
        rules.tableStruct = "hashtable";
        rules.tableStructBytes = valkey->params().hashTableStructBytes;
        rules.embedValues = valkey->params().hashEntriesEmbedValues;
    } else if (const auto* redis = dynamic_cast<const RedisLayout*>(&layout)) {
        rules.lookupsPerAdd = redis->params().hsetRehashSteps;
        rules.sdsBytes = sds::redisNewLenBytes;
    } else if (dynamic_cast<const ValkeyDictLayout*>(&layout)) {
        rules.tableKind = IndexKind::ValkeyDict; // t_hash.c hashTypeSet: dictAddRaw, one lookup
    } else {
        return std::nullopt;
    }
    return rules;
}
} // namespace

namespace listpack {
std::uint64_t stringEntryBytes(std::uint64_t length) {
    // lpEncodeString: 6-bit length under 64 bytes, 12-bit under 4,096, else a 32-bit length.
    const std::uint64_t encoded = length + (length < 64 ? 1 : length < 4096 ? 2 : 5);
    return encoded + backlenBytes(encoded);
}
std::uint64_t integerEntryBytes(std::int64_t v) {
    // lpEncodeIntegerGetType: 7-bit unsigned, 13-, 16-, 24-, 32- or 64-bit signed.
    std::uint64_t encoded = 9;
    if (v >= 0 && v <= 127)
        encoded = 1;
    else if (v >= -4096 && v <= 4095)
        encoded = 2;
    else if (v >= -32768 && v <= 32767)
        encoded = 3;
    else if (v >= -8388608 && v <= 8388607)
        encoded = 4;
    else if (v >= -2147483648LL && v <= 2147483647LL)
        encoded = 5;
    return encoded + backlenBytes(encoded);
}
} // namespace listpack

std::uint64_t HashKeyLayout::usableBytes(const AllocatorModel& allocator) const {
    std::uint64_t total = 0;
    for (const HashPart& part : parts)
        total += allocator.usableSize(part.requestedBytes) * part.count;
    return total;
}

Expected<HashKeyLayout> describeHash(
    const LayoutModel& layout, const HashShape& shape, const AllocatorModel& allocator, const HashLimits& limits) {
    auto rules = rulesOf(layout);
    if (!rules)
        return usageError(fmt::format("layout '{}' has no hash model yet: hashes are modelled for redis-7.0 (Redis "
                                      "7.0 and 7.2) and valkey (8.0 and later)",
                              layout.spec()),
            "layout");
    if (shape.entries == 0)
        return usageError("a hash has at least one field (HDEL of its last deletes the key)", "entries");
    if (shape.integerValues && (shape.valueBytes == 0 || shape.valueBytes > 19))
        return usageError("integer values have 1 to 19 digits", "value bytes");
    HashKeyLayout out;
    out.parts = keyPartsOf(layout, shape, allocator);
    // t_hash.c hashTypeTryConversion and hashTypeSet: the limits the listpack keeps to.
    const bool longMember = shape.fieldBytes > limits.maxListpackValue || shape.valueBytes > limits.maxListpackValue;
    if (shape.entries > limits.maxListpackEntries)
        out.why = fmt::format("{} fields > hash-max-listpack-entries {}", shape.entries, limits.maxListpackEntries);
    else if (longMember)
        out.why = fmt::format("a field or value of {} bytes > hash-max-listpack-value {}",
            std::max(shape.fieldBytes, shape.valueBytes), limits.maxListpackValue);
    if (out.why.empty()) {
        out.encoding = "listpack";
        out.why = fmt::format("{} fields <= {}, fields and values <= {} bytes", shape.entries,
            limits.maxListpackEntries, limits.maxListpackValue);
        std::uint64_t value = listpack::stringEntryBytes(shape.valueBytes);
        if (shape.integerValues)
            value = listpack::integerEntryBytes(
                static_cast<std::int64_t>(std::pow(10.0, static_cast<double>(shape.valueBytes))) - 1);
        const std::uint64_t bytes = listpack::kHeaderBytes + listpack::kEndBytes
            + shape.entries * (listpack::stringEntryBytes(shape.fieldBytes) + value);
        out.parts.push_back({ "listpack", bytes, 1 });
        return out;
    }
    out.encoding = "hashtable";
    // The fields the table is sized for when it is made (t_hash.c): all of them, for an HSET of more than
    // the listpack takes (hashTypeTryConversion's expand); the listpack's and the one that overflowed it, for
    // a listpack converted then (hashTypeConvertListpack's expand); none, for a listpack converted for a
    // long field or value before it held any. Then each field is added: a rehash step per lookup, then
    // growth, as the index model does it. A table that grew near its last field still holds its old one.
    std::uint64_t sizedFor = 0;
    if (shape.oneCommand && shape.entries > limits.maxListpackEntries)
        sizedFor = shape.entries;
    else if (!longMember)
        sizedFor = limits.maxListpackEntries + 1;
    IndexTableModel table(rules->tableKind);
    table.expand(sizedFor);
    for (std::uint64_t field = 0; field < shape.entries; ++field) {
        for (std::uint32_t l = 1; l < rules->lookupsPerAdd; ++l)
            table.lookup();
        table.insert();
    }
    out.parts.push_back({ rules->tableStruct, rules->tableStructBytes, 1 });
    const IndexFootprint footprint = table.footprint(allocator);
    // Its parts: the table, the one it rehashes into, child buckets (hashtable.c). The one in use after the
    // rehash comes first.
    const std::size_t arrays = footprint.parts.size() - (footprint.childBuckets != 0 ? 1 : 0);
    for (std::size_t i = arrays; i-- > 0;)
        out.parts.push_back({ i + 1 == arrays ? "buckets" : "buckets being rehashed", footprint.parts[i].requestedBytes,
            footprint.parts[i].count });
    if (footprint.childBuckets != 0)
        out.parts.push_back({ "child buckets", footprint.parts.back().requestedBytes, footprint.parts.back().count });
    if (rules->tableKind == IndexKind::ValkeyHashtable) {
        addValkeyEntries(out.parts, shape, rules->embedValues);
        return out;
    }
    out.parts.push_back({ "entries", kDictEntryBytes, shape.entries });
    out.parts.push_back({ "fields", rules->sdsBytes(shape.fieldBytes), shape.entries });
    out.parts.push_back({ "values", rules->sdsBytes(shape.valueBytes), shape.entries });
    return out;
}

} // namespace layoutlab
