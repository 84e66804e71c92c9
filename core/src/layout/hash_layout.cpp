// SPDX-License-Identifier: MIT
#include "layoutlab/layout/hash_layout.h"

#include "layoutlab/layout/redis_layout.h"
#include "layoutlab/layout/sds.h"
#include "layoutlab/layout/valkey_dict_layout.h"
#include "layoutlab/layout/valkey_layout.h"
#include "layoutlab/sim/index_table_model.h"

#include <bit>
#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

namespace {
constexpr std::uint64_t kObjectBytes = 16; // server.h robj: createObject (object.c createHashObject)
constexpr std::uint64_t kDictEntryBytes = 24; // dict.c dictEntry {key, v, next}
constexpr std::uint64_t kDictBytes = 56; // dict.h struct dict (52 bytes of fields, 8-aligned): dictCreate
constexpr std::uint64_t kBucketBytes = 8; // a dictEntry pointer per bucket
constexpr std::uint64_t kDictMinBuckets = 4; // dict.h DICT_HT_INITIAL_SIZE
// dict.c _dictExpandIfNeeded: a table grows when an insert finds it full (used >= size), to the power of
// two above used + 1; dict_can_resize is on but during a fork.

// Valkey 8.0's keyspace entry embeds the key (dict.c createEmbeddedEntry: 17 bytes then the key's sds).
constexpr std::uint64_t kEmbeddedEntryBytes = 17;
constexpr std::uint64_t kArgvEmbstrLimit = 44; // object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT

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

std::uint64_t nextPowerOfTwo(std::uint64_t n) {
    return n <= 1 ? 1 : std::bit_ceil(n);
}

// The old table a grown dict still holds: an insert that found `size` full made a table twice as big;
// each lookup after it moves one non-empty bucket of the old (dict.c _dictRehashStep -> dictRehash(d, 1)),
// and the old one is freed once none is left. Its non-empty buckets are expected to be
// size * (1 - (1 - 1/size)^size) of `size` keys hashed at random (siphash with the process's seed).
bool oldTableRemains(std::uint64_t size, std::uint64_t stepsAfterGrowth) {
    const double s = static_cast<double>(size);
    const double nonEmpty = s * (1.0 - std::pow(1.0 - 1.0 / s, s));
    return static_cast<double>(stepsAfterGrowth) < nonEmpty;
}

struct DictHashRules {
    std::uint64_t (*sdsBytes)(std::uint64_t length); // sdsnewlen of the engine's smallest header
    std::uint32_t rehashStepsPerInsert = 1; // an HSET's lookups of the table per field it adds
    std::vector<HashPart> keyParts; // the key's own allocations
    // Valkey 8.1 and later: a hashtable.c table, its struct this big (0: a dict), of entry.c entries (9.0
    // and later) or hashTypeEntry ones (8.1).
    std::uint64_t hashtableStructBytes = 0;
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

std::optional<DictHashRules> dictRules(
    const LayoutModel& layout, const HashShape& shape, const AllocatorModel& allocator) {
    DictHashRules rules;
    if (const auto* valkey = dynamic_cast<const ValkeyLayout*>(&layout)) {
        if (valkey->params().hashTableStructBytes == 0)
            return std::nullopt;
        // The hash object is a robj with the key embedded and its value by pointer, as a RAW string's
        // (object.c objectSetKeyAndExpire): the layout's own object for a value it never embeds.
        const KeyLayout raw = layout.describe(
            { shape.keyBytes, 1u << 20, shape.hasTtl, ValueKind::String }, valkey->params().threshold, allocator);
        for (std::size_t i = 0; i < raw.allocationCount; ++i)
            if (raw.allocations[i].purpose == Purpose::Object)
                rules.keyParts.push_back({ "object (key embedded)", raw.allocations[i].requestedBytes, 1 });
        rules.hashtableStructBytes = valkey->params().hashTableStructBytes;
        rules.embedValues = valkey->params().hashEntriesEmbedValues;
        rules.sdsBytes = sds::valkeyNewLenBytes;
        return rules;
    }
    if (const auto* redis = dynamic_cast<const RedisLayout*>(&layout)) {
        rules.rehashStepsPerInsert = redis->params().hsetRehashSteps;
        // db.c dbAdd: a dictEntry and a copy of the key (sdsdup); setExpire: an entry sharing the key.
        rules.sdsBytes = sds::redisNewLenBytes;
        rules.keyParts = { { "keyspace entry", kDictEntryBytes, 1 },
            { "key", sds::redisNewLenBytes(shape.keyBytes), 1 }, { "object", kObjectBytes, 1 } };
    } else if (const auto* valkey = dynamic_cast<const ValkeyDictLayout*>(&layout)) {
        // db.c dbAddInternal: an entry embedding the key as it came (ValkeyDictParams::keyAsSent).
        rules.sdsBytes = sds::valkeyNewLenBytes; // t_hash.c hashTypeSet: dictAddRaw, one step
        const std::uint64_t key = valkey->params().keyAsSent ? sds::valkeyArgvBytes(shape.keyBytes, kArgvEmbstrLimit)
                                                             : sds::valkeyNewLenBytes(shape.keyBytes);
        rules.keyParts = { { "keyspace entry", kEmbeddedEntryBytes + key, 1 }, { "object", kObjectBytes, 1 } };
    } else {
        return std::nullopt;
    }
    if (shape.hasTtl)
        rules.keyParts.push_back({ "expire entry", kDictEntryBytes, 1 });
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
    auto rules = dictRules(layout, shape, allocator);
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
    out.parts = rules->keyParts;
    // t_hash.c hashTypeTryConversion and hashTypeSet: the limits the listpack keeps to.
    if (shape.entries > limits.maxListpackEntries)
        out.why = fmt::format("{} fields > hash-max-listpack-entries {}", shape.entries, limits.maxListpackEntries);
    else if (shape.fieldBytes > limits.maxListpackValue || shape.valueBytes > limits.maxListpackValue)
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
    const bool longMember = shape.fieldBytes > limits.maxListpackValue || shape.valueBytes > limits.maxListpackValue;
    if (rules->hashtableStructBytes != 0) {
        // t_hash.c: hashTypeConvertListpack makes the table and sizes it for the listpack's fields
        // (hashtableExpand); an HSET of more fields than the listpack takes sizes it for them all
        // (hashTypeTryConversion); then each field is inserted (hashtable.c: a rehash step, then growth).
        IndexTableModel table(IndexKind::ValkeyHashtable);
        std::uint64_t inserted = 0;
        if (shape.oneCommand && shape.entries > limits.maxListpackEntries) {
            table.expand(0);
            table.expand(shape.entries);
        } else if (!longMember) {
            table.expand(limits.maxListpackEntries + 1);
        } else {
            table.expand(0);
        }
        for (; inserted < shape.entries; ++inserted)
            table.insert();
        out.parts.push_back({ "hashtable", rules->hashtableStructBytes, 1 });
        const IndexFootprint footprint = table.footprint(allocator);
        const std::size_t arrays = footprint.parts.size() - (footprint.childBuckets != 0 ? 1 : 0);
        for (std::size_t i = 0; i < footprint.parts.size(); ++i) // the table, the one it rehashes into, children
            out.parts.push_back({ i >= arrays ? "child buckets"
                    : i == 0                  ? "buckets"
                                              : "buckets being rehashed into",
                footprint.parts[i].requestedBytes, footprint.parts[i].count });
        addValkeyEntries(out.parts, shape, rules->embedValues);
        return out;
    }
    const std::uint64_t buckets = std::max(kDictMinBuckets, nextPowerOfTwo(shape.entries));
    out.parts.push_back({ "dict", kDictBytes, 1 });
    out.parts.push_back({ "buckets", buckets * kBucketBytes, 1 });
    // The size the table was made at: for every field at once (an HSET of more fields than the listpack
    // takes: hashTypeTryConversion's dictExpand; the empty 4-bucket table it replaces is rehashed away by
    // the first insert), for the fields of a listpack converted when one more arrived
    // (hashTypeConvertListpack's dictExpand), or empty (a listpack converted for a long field or value
    // before it held any). A table that grew from there on an insert may still be rehashing its old half.
    std::uint64_t madeAt = kDictMinBuckets;
    if (shape.oneCommand && shape.entries > limits.maxListpackEntries)
        madeAt = buckets;
    else if (!longMember)
        madeAt = std::max(kDictMinBuckets, nextPowerOfTwo(limits.maxListpackEntries + 1));
    if (buckets > madeAt
        && oldTableRemains(buckets / 2, (shape.entries - buckets / 2 - 1) * rules->rehashStepsPerInsert))
        out.parts.push_back({ "buckets being rehashed", buckets / 2 * kBucketBytes, 1 });
    out.parts.push_back({ "entries", kDictEntryBytes, shape.entries });
    out.parts.push_back({ "fields", rules->sdsBytes(shape.fieldBytes), shape.entries });
    out.parts.push_back({ "values", rules->sdsBytes(shape.valueBytes), shape.entries });
    return out;
}

} // namespace layoutlab
