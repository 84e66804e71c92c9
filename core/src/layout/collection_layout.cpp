// SPDX-License-Identifier: MIT
#include "layoutlab/layout/collection_layout.h"

#include "collection_rules.h"
#include "layoutlab/layout/redis_layout.h"
#include "layoutlab/layout/sds.h"
#include "layoutlab/layout/valkey_dict_layout.h"
#include "layoutlab/layout/valkey_layout.h"

#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

namespace {
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

} // namespace

namespace collection {
// All but the value's allocations (object.c: a collection's robj is createObject's, as a RAW string's; with
// the key embedded where the layout embeds it, objectSetKeyAndExpire).
std::vector<CollectionPart> keyPartsOf(
    const LayoutModel& layout, std::uint32_t keyBytes, bool hasTtl, const AllocatorModel& allocator) {
    constexpr std::uint32_t kNeverEmbedded = 1u << 20;
    const auto threshold = layout.threshold();
    const KeyLayout raw = layout.describe(
        { keyBytes, kNeverEmbedded, hasTtl, ValueKind::String }, threshold ? threshold->value : 0, allocator);
    std::vector<CollectionPart> parts;
    for (std::size_t i = 0; i < raw.allocationCount; ++i) {
        const Allocation& a = raw.allocations[i];
        const auto count = static_cast<double>(a.count);
        switch (a.purpose) {
        case Purpose::Entry:
            parts.push_back({ "keyspace entry", a.requestedBytes, count });
            break;
        case Purpose::Key:
            parts.push_back({ "key", a.requestedBytes, count });
            break;
        case Purpose::Object:
            parts.push_back({ a.holdsKey ? "object (key embedded)" : "object", a.requestedBytes, count });
            break;
        case Purpose::ExpireEntry:
            parts.push_back({ "expire entry", a.requestedBytes, count });
            break;
        default:
            break; // the value
        }
    }
    return parts;
}
} // namespace collection

namespace {

// Occupied buckets, in expectation, of `buckets` buckets holding `members` members at random.
double occupiedBuckets(double buckets, double members) {
    if (buckets <= 0 || members <= 0)
        return 0;
    // Less than one bucket (the part of a table a rehash has not reached, near its end): occupied as far as
    // it holds members, where the formula below would take the log of a negative number.
    if (buckets < 1)
        return std::min(buckets, members);
    return buckets * -std::expm1(members * std::log1p(-1.0 / buckets));
}
} // namespace

const char* collectionTypeName(CollectionType type) {
    switch (type) {
    case CollectionType::Hash:
        return "hash";
    case CollectionType::Set:
        return "set";
    case CollectionType::SortedSet:
        return "zset";
    case CollectionType::List:
        return "list";
    }
    return "hash";
}

namespace {
// Every limit by name, and where CollectionLimits keeps it.
struct NamedLimit {
    std::string_view name;
    std::uint64_t CollectionLimits::*unsignedField = nullptr;
    std::int64_t CollectionLimits::*signedField = nullptr;
};
constexpr NamedLimit kLimits[] = {
    { "hash-max-listpack-entries", &CollectionLimits::hashMaxListpackEntries },
    { "hash-max-listpack-value", &CollectionLimits::hashMaxListpackValue },
    { "set-max-intset-entries", &CollectionLimits::setMaxIntsetEntries },
    { "set-max-listpack-entries", &CollectionLimits::setMaxListpackEntries },
    { "set-max-listpack-value", &CollectionLimits::setMaxListpackValue },
    { "zset-max-listpack-entries", &CollectionLimits::zsetMaxListpackEntries },
    { "zset-max-listpack-value", &CollectionLimits::zsetMaxListpackValue },
    { "list-max-listpack-size", nullptr, &CollectionLimits::listMaxListpackSize },
};
const NamedLimit* findLimit(std::string_view name) {
    for (const NamedLimit& l : kLimits)
        if (l.name == name)
            return &l;
    return nullptr;
}
} // namespace

std::vector<std::string_view> collectionLimitNames(CollectionType type) {
    switch (type) {
    case CollectionType::Hash:
        return { "hash-max-listpack-entries", "hash-max-listpack-value" };
    case CollectionType::Set:
        return { "set-max-intset-entries", "set-max-listpack-entries", "set-max-listpack-value" };
    case CollectionType::SortedSet:
        return { "zset-max-listpack-entries", "zset-max-listpack-value" };
    case CollectionType::List:
        return { "list-max-listpack-size" };
    }
    return {};
}

std::string_view entriesLimitName(CollectionType type, bool integerElements) {
    if (type == CollectionType::Set)
        return integerElements ? "set-max-intset-entries" : "set-max-listpack-entries";
    return collectionLimitNames(type).front();
}

bool setCollectionLimit(CollectionLimits& limits, std::string_view name, std::int64_t value) {
    const NamedLimit* l = findLimit(name);
    if (!l)
        return false;
    if (l->signedField)
        limits.*(l->signedField) = value;
    else
        limits.*(l->unsignedField) = static_cast<std::uint64_t>(std::max<std::int64_t>(value, 0));
    return true;
}

std::int64_t collectionLimit(const CollectionLimits& limits, std::string_view name) {
    const NamedLimit* l = findLimit(name);
    if (!l)
        return 0;
    return l->signedField ? limits.*(l->signedField) : static_cast<std::int64_t>(limits.*(l->unsignedField));
}

namespace listpack {
std::uint64_t stringEntryBytes(std::uint64_t length) {
    // lpEncodeString: 6-bit length under 64 bytes, 12-bit under 4,096, else a 32-bit length.
    const std::uint64_t encoded = length + (length < 64 ? 1 : length < 4096 ? 2 : 5);
    return encoded + backlenBytes(encoded);
}
std::uint64_t integerEntryBytes(std::int64_t v) {
    return entryBytes(0, integerClassOf(v));
}
std::uint64_t entryBytes(std::uint32_t length, IntegerClass integer) {
    if (integer == IntegerClass::None)
        return stringEntryBytes(length);
    // lpEncodeIntegerGetType: the encoding byte and the integer, by the class's width (7-bit unsigned in the
    // encoding byte itself; 13-bit in two; 16, 24, 32 or 64 bits after it).
    static constexpr std::uint64_t kEncodedBytes[kIntegerClassCount] = { 0, 1, 2, 3, 4, 5, 9 };
    const std::uint64_t encoded = kEncodedBytes[static_cast<unsigned>(integer)];
    return encoded + backlenBytes(encoded);
}
std::uint64_t entryBytes(std::uint32_t length, bool integer) {
    return integer ? integerEntryBytes(largestOfDigits(length)) : stringEntryBytes(length);
}
} // namespace listpack

double CollectionKeyLayout::usableBytes(const AllocatorModel& allocator) const {
    double total = 0;
    for (const CollectionPart& part : parts)
        total += static_cast<double>(allocator.usableSize(part.requestedBytes)) * part.count;
    return total;
}

namespace collection {

std::optional<Rules> rulesOf(const LayoutModel& layout, const CollectionShape& shape, const AllocatorModel& allocator) {
    Rules rules;
    if (const auto* valkey = dynamic_cast<const ValkeyLayout*>(&layout)) {
        const ValkeyParams& p = valkey->params();
        if (p.hashtableBytes == 0)
            return std::nullopt;
        rules.tableKind = IndexKind::ValkeyHashtable;
        rules.tableParams = engineIndexParams(IndexKind::ValkeyHashtable);
        rules.tableStruct = "hashtable";
        rules.tableStructBytes = p.hashtableBytes;
        rules.hashMetadataBytes = p.hashMetadataBytes;
        rules.hashEntriesEmbedValues = p.hashEntriesEmbedValues;
        rules.hashFieldsAsSent = p.keyAsSent;
        rules.zsetNodesEmbedMembers = p.zsetNodesEmbedMembers;
        rules.tableParams.shrinkStepSkipsEmpty = p.shrinkStepSkipsEmpty;
        rules.removalsPauseShrink = p.removalsPauseShrink;
        rules.rangeRemovalsPauseShrink = p.shrinkPauseHonoured;
        rules.sdsBytes = sds::valkeyNewLenBytes;
    } else if (const auto* redis = dynamic_cast<const RedisLayout*>(&layout)) {
        const bool is70 = redis->params().release == RedisRelease::V7_0;
        rules.hsetLookups = is70 ? 2 : 1;
        rules.hsetSizesTable = !is70;
        rules.listpackSets = !is70;
        rules.listpackLists = !is70;
        rules.setEntriesOnlyWhenShared = !is70;
        rules.zsetSizeHints = !is70;
        rules.zsetLongestMemberHint = false; // t_zset.c zaddGenericCommand: sdslen of the first member
        rules.zsetUnionSizedForLargestSource = false; // t_zset.c zunionInterDiffGenericCommand: the accumulator
        rules.zsetScoresIn17Digits = is70;
        rules.sdsBytes = sds::redisNewLenBytes;
    } else if (dynamic_cast<const ValkeyDictLayout*>(&layout)) {
        rules.tableKind = IndexKind::ValkeyDict; // t_hash.c hashTypeSet: dictAddRaw, one lookup
        rules.tableParams = engineIndexParams(IndexKind::ValkeyDict);
        rules.bucketRehashOnAccess = true;
        rules.sdsBytes = sds::valkeyNewLenBytes;
    } else {
        return std::nullopt;
    }
    rules.keyParts = keyPartsOf(layout, shape.keyBytes, shape.hasTtl, allocator);
    return rules;
}

std::size_t addTableParts(std::vector<CollectionPart>& parts, const IndexTableModel& table,
    const AllocatorModel& allocator, const std::string& structName, std::uint64_t structBytes) {
    parts.push_back({ structName, structBytes, 1 });
    const std::size_t firstArray = parts.size();
    const IndexFootprint footprint = table.footprint(allocator);
    // Its parts: the table, the one it rehashes into, child buckets (hashtable.c). The one in use after the
    // rehash comes first.
    // The old array of a rehash in expectation: the engine may have freed it already, or still hold one
    // whose rehash the model has ended (IndexFootprint::oldArrayHeld, residualArrayHeld).
    const std::size_t arrays = footprint.parts.size() - (footprint.childBuckets != 0 ? 1 : 0);
    for (std::size_t i = arrays; i-- > 0;) {
        const bool old = i + 1 != arrays;
        parts.push_back({ old ? "buckets being rehashed" : "buckets", footprint.parts[i].requestedBytes,
            static_cast<double>(footprint.parts[i].count) * (old ? footprint.oldArrayHeld : 1.0) });
    }
    if (footprint.residualArrayHeld > 0)
        parts.push_back({ "buckets being rehashed", footprint.residualArrayBytes, footprint.residualArrayHeld });
    // One collection's table holds a fraction of a child bucket in expectation; the keyspace's rounds it away.
    if (footprint.expectedChildBuckets > 0)
        parts.push_back({ "child buckets", footprint.childBucketBytes, footprint.expectedChildBuckets });
    return firstArray;
}

double membersWithEntries(const IndexTableModel& table, bool bucketRehashOnAccess) {
    const auto members = static_cast<double>(table.entries());
    const auto oldBuckets = static_cast<double>(table.buckets());
    if (table.targetBuckets() == 0)
        return members - occupiedBuckets(oldBuckets, members);
    if (oldBuckets == 0) // the first table, not a rehash (dict.c _dictExpand of an empty dict)
        return members - occupiedBuckets(static_cast<double>(table.targetBuckets()), members);
    const double newBuckets = static_cast<double>(table.targetBuckets());
    const double visited = std::min(table.rehashedBuckets(), oldBuckets);
    if (newBuckets < oldBuckets) {
        // Shrinking after deletes (dictResize, the auto shrink): the members spread over the old buckets at
        // random, those of the visited ones now in the smaller table.
        const double moved = members * visited / oldBuckets;
        return members - occupiedBuckets(oldBuckets - visited, members - moved) - occupiedBuckets(newBuckets, moved);
    }
    // Growing. The old table held a member per bucket when it grew (a dict grows when it is full), at
    // random: a fraction q of its buckets non-empty. Those rehashing has visited moved whole: a bucket's c
    // members (c >= 1) split at random over its `ratio` buckets of the new table (dict.c
    // rehashEntriesInBucketAtIndex), which leaves ratio (1 - E[(1 - 1/ratio)^c | c >= 1]) of them occupied.
    const double ratio = newBuckets / oldBuckets;
    const double q = occupiedBuckets(oldBuckets, oldBuckets) / oldBuckets;
    const double unmoved = oldBuckets - visited;
    const double inOld = std::min(members, unmoved);
    const double movedMembers = std::min(members - inOld, visited);
    const double added = members - inOld - movedMembers;
    const double moves = visited * q;
    // E[x^c | c >= 1] for c Poisson(1): (e^(x - 1) - e^(-1)) / (1 - e^(-1)), at x = 1 - 1/ratio.
    const double emptyTarget = (std::exp(-1 / ratio) - std::exp(-1.0)) / -std::expm1(-1.0);
    const double movedOccupied = moves * ratio * (1 - emptyTarget);
    // Members added since. On Valkey 8.0 an add whose old bucket is non-empty rehashes that bucket first and
    // joins one of its targets (dictFindPositionForInsert -> dictBucketRehash), occupied already unless the
    // split left it empty: q of the moves. The rest, and every one on Redis 7.2, fall at random, on a free
    // bucket or not.
    const double ownBucket = bucketRehashOnAccess ? std::min(added, moves * q) : 0;
    const double free = newBuckets - movedOccupied;
    const double addedOccupied
        = ownBucket * emptyTarget + occupiedBuckets(free, (added - ownBucket) * free / newBuckets);
    return members - occupiedBuckets(unmoved, inOld) - movedOccupied - addedOccupied;
}

} // namespace collection

Expected<CollectionKeyLayout> describeCollection(const LayoutModel& layout, const CollectionShape& shape,
    const AllocatorModel& allocator, const CollectionLimits& limits) {
    auto rules = collection::rulesOf(layout, shape, allocator);
    if (!rules)
        return usageError(fmt::format("layout '{}' has no {} model: collections are modelled for redis-7.0, "
                                      "redis-7.2 and valkey (8.0 and later)",
                              layout.spec(), collectionTypeName(shape.type)),
            "layout");
    if (shape.entries == 0)
        return usageError(fmt::format("a {} has at least one entry (removing its last deletes the key)",
                              collectionTypeName(shape.type)),
            "entries");
    if (shape.integerElements && (shape.elementBytes == 0 || shape.elementBytes > 19))
        return usageError("integer elements have 1 to 19 digits", "element bytes");
    if (shape.integerValues && (shape.valueBytes == 0 || shape.valueBytes > 19))
        return usageError("integer values have 1 to 19 digits", "value bytes");
    CollectionKeyLayout out;
    out.parts = rules->keyParts;
    Status described = Ok {};
    switch (shape.type) {
    case CollectionType::Hash:
        described = collection::describeHash(*rules, shape, limits, allocator, out);
        break;
    case CollectionType::Set:
        described = collection::describeSet(*rules, shape, limits, allocator, out);
        break;
    case CollectionType::SortedSet:
        described = collection::describeSortedSet(*rules, shape, limits, allocator, out);
        break;
    case CollectionType::List:
        described = collection::describeList(*rules, shape, limits, allocator, out);
        break;
    }
    if (!described)
        return described.error();
    return out;
}

} // namespace layoutlab
