// SPDX-License-Identifier: MIT
// A set key member by member (collection_key_ops.h), following t_set.c of each engine line (Redis 7.2,
// Valkey 8.0 and Valkey 9.1 run the same rules; Redis 7.0 has no listpack sets):
//   saddCommand: a new key is made for its first member and the command's member count (setTypeCreate: an
//     intset when that member is an integer and the count is at most set-max-intset-entries, else a listpack
//     when the count is at most set-max-listpack-entries, else a table expanded for the count; Redis 7.0: an
//     intset for an integer, else an unsized table). An existing intset or listpack the count would overflow
//     converts first, to a table expanded for the count (setTypeMaybeConvert; not on 7.0).
//   setTypeAddAux (setAdd): an intset takes an integer (intsetAdd: widened to the member's width,
//     intsetUpgradeAndAdd, and never narrowed), then converts once it holds more than set-max-intset-entries
//     (maybeConvertIntset -> setTypeConvert: a table expanded for its members). A non-integer converts it: to
//     a listpack of its members and the new one when all fit the listpack's limits (7.2 and Valkey), else to
//     a table expanded for them (Redis 7.0: for the members it held). A listpack appends a member it has
//     room for (lpAppend: an integer string as an integer), else converts to a table expanded for its
//     members and the new one (setTypeConvertAndExpand, lpLength + 1). A table adds the member: one rehash
//     step, its sds (and on Redis 7.0 a dictEntry; Redis 7.2's and Valkey 8.0's no_value entries are the
//     table's: membersWithEntries).
//   setTypeRemoveAux (setRemove): intsetRemove (its width kept), lpDelete, or the table's delete, after which
//     Redis 7.x resizes a table below 10% fill (htNeedsResize -> dictResize) and Valkey's shrink as their
//     deletes do. Valkey 9.1's SREM pauses the shrink until its last member (hashtablePauseAutoShrink): the
//     same for an SREM of one.
//   SISMEMBER, SMISMEMBER (CollectionKeyModel::read): a table's find, one rehash step.
// Redis 7.2's and Valkey 8.0's no_value set dicts hold a member alone in its bucket in the bucket itself, and
// give the others a dictEntryNoValue ahead of it (dict.c dictInsertAtPosition). A delete unlinks what it
// finds and frees nothing else (dictGenericDelete): removing the member the bucket held strands the entries
// before it, each now holding a member the bucket could have held, until a rehash moves the bucket and
// rebuilds it (rehashEntriesInBucketAtIndex). Those are followed in expectation (strandedEntries): a removal
// takes a bucket-held member as often as the bucket-held are among the members, and a stranded bucket goes
// when its last member does.

#include "collection_key_ops.h"

#include <algorithm>
#include <cmath>

namespace layoutlab::collection {

namespace {
// t_set.c intsetMaxEntries: set-max-intset-entries, at most 2^30 (intset.c's own bound).
std::uint64_t intsetMaxEntries(const CollectionLimits& limits) {
    return std::min<std::uint64_t>(limits.setMaxIntsetEntries, 1ull << 30);
}

bool strandsEntries(const KeyContext& c) {
    return c.rules.dictTables() && c.rules.setEntriesOnlyWhenShared;
}

// The old table's part not yet rehashed (all of it when no rehash runs).
double unmovedFraction(const IndexTableModel& table) {
    if (table.targetBuckets() == 0 || table.buckets() == 0)
        return 1;
    return 1
        - std::min(table.rehashedBuckets(), static_cast<double>(table.buckets()))
        / static_cast<double>(table.buckets());
}

// The stranded entries left where the rehash has not reached: none once a rehash has replaced their table.
double strandedNow(const CollectionKeyState& key) {
    if (key.strandedEntries == 0 || key.index->buckets() != key.strandedTable || key.strandedUnmoved <= 0)
        return 0;
    return key.strandedEntries * unmovedFraction(*key.index) / key.strandedUnmoved;
}

void settleStranded(CollectionKeyState& key) {
    key.strandedEntries = strandedNow(key);
    key.strandedUnmoved = unmovedFraction(*key.index);
    key.strandedTable = key.index->buckets();
}

void addMember(const KeyContext& c, CollectionKeyState& key, ElementValue member) {
    key.index->insert();
    addEntryParts(c, key, setMemberParts(c.rules, member.bytes), 1);
}

// setTypeConvertAndExpand(OBJ_ENCODING_HASHTABLE / OBJ_ENCODING_HT): a table expanded for `sizedFor`, each
// member of the intset or listpack added once (setTypeNextObject: its digits for an intset's), in the order
// they were added: the first of them had place `key.adds - compactEntries.size()` among the set's adds (exact
// unless members were removed before the conversion).
void convertToTable(const KeyContext& c, CollectionKeyState& key, std::uint64_t sizedFor) {
    key.index = newTable(c, sizedFor);
    key.orderBase = static_cast<std::int64_t>(key.adds) - static_cast<std::int64_t>(key.compactEntries.size());
    key.orderBuckets = key.index->buckets();
    for (const std::uint64_t packed : key.compactEntries)
        addMember(c, key, unpackEntry(packed).first);
    key.table = true;
    key.intsetWidth = 0;
    key.compactEntries = {};
    key.listpackBytes = 0;
}

// setTypeConvertAndExpand(OBJ_ENCODING_LISTPACK) from an intset: its members as integer entries
// (lpAppendInteger), the listpack shrunk to fit after the new member (lpShrinkToFit).
void convertIntsetToListpack(CollectionKeyState& key) {
    key.listpackBytes = listpack::kHeaderBytes + listpack::kEndBytes;
    for (const std::uint64_t packed : key.compactEntries) {
        const ElementValue member = unpackEntry(packed).first;
        key.listpackBytes += listpack::entryBytes(member.bytes, member.integer);
    }
    key.intsetWidth = 0;
}

void appendToListpack(CollectionKeyState& key, ElementValue member) {
    key.listpackBytes += listpack::entryBytes(member.bytes, member.integer);
    key.compactEntries.push_back(packEntry(member));
}
} // namespace

void setCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t members, IntegerClass first) {
    const std::uint8_t newIntset = intsetWidthOf(IntegerClass::Uint7); // intset.c intsetNew: INTSET_ENC_INT16
    if (!key.made) {
        key.made = true;
        if (!c.rules.listpackSets) { // Redis 7.0 setTypeCreate(value)
            if (first != IntegerClass::None)
                key.intsetWidth = newIntset;
            else
                convertToTable(c, key, 0);
        } else if (first != IntegerClass::None && members <= c.limits.setMaxIntsetEntries) {
            key.intsetWidth = newIntset;
        } else if (members > c.limits.setMaxListpackEntries) {
            convertToTable(c, key, members);
        }
        return;
    }
    if (key.table || !c.rules.listpackSets)
        return;
    // setTypeMaybeConvert: the command's count, however many of its members the set holds already.
    const std::uint64_t limit = key.intsetWidth != 0 ? c.limits.setMaxIntsetEntries : c.limits.setMaxListpackEntries;
    if (members > limit)
        convertToTable(c, key, members);
}

void setAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member) {
    if (!key.made)
        setCommand(c, key, 1, member.integer);
    key.payloadBytes += member.bytes;
    const std::uint64_t held = key.entries++;
    // The member's add is counted (key.adds) before a conversion takes it with the others (an intset past
    // its limit), and after one it follows.
    auto addToTable = [&](std::uint64_t sizedFor) {
        if (!key.table)
            convertToTable(c, key, sizedFor);
        addMember(c, key, member);
        ++key.adds;
    };
    if (key.table)
        return addToTable(0);
    const bool fitsListpack
        = c.rules.listpackSets && held < c.limits.setMaxListpackEntries && member.bytes <= c.limits.setMaxListpackValue;
    if (key.intsetWidth != 0) {
        if (member.integer != IntegerClass::None) {
            key.intsetWidth = std::max(key.intsetWidth, intsetWidthOf(member.integer));
            key.compactEntries.push_back(packEntry(member));
            ++key.adds;
            if (key.entries > intsetMaxEntries(c.limits))
                convertToTable(c, key, key.entries); // maybeConvertIntset -> setTypeConvert
            return;
        }
        // The intset's longest member, in digits (sdigits10 of its least and greatest).
        std::uint32_t longest = 0;
        for (const std::uint64_t packed : key.compactEntries)
            longest = std::max(longest, unpackEntry(packed).first.bytes);
        if (!fitsListpack || longest > c.limits.setMaxListpackValue)
            return addToTable(c.rules.listpackSets ? held + 1 : held);
        convertIntsetToListpack(key);
    } else if (!fitsListpack) {
        return addToTable(held + 1);
    }
    appendToListpack(key, member);
    ++key.adds;
}

void setIntersectionCommand(
    const KeyContext& c, CollectionKeyState& key, IntegerClass first, std::uint32_t smallestSource) {
    // sinterGenericCommand: dstset is an intset when the smallest source is one (taken for one of integers only
    // within set-max-intset-entries), else an empty listpack (lpNew, sized like the source's but shrunk to fit
    // at the end), whatever the members; Redis 7.0 makes an intset either way, which its first add of a
    // non-integer converts (setTypeAdd -> setTypeConvert), as setTypeCreate's unsized table.
    const bool sourceIntset = intersectionOfIntset(smallestSource, intsetMaxEntries(c.limits));
    if (!c.rules.listpackSets || sourceIntset) {
        setCommand(c, key, 1, sourceIntset ? IntegerClass::Uint7 : first);
        return;
    }
    key.made = true; // a listpack, empty
}

void setIntegersKnown(const KeyContext& c, CollectionKeyState& key, bool first, ElementValue member) {
    if (first) {
        // sinterGenericCommand's end: only_integers -> maybeConvertToIntset, within set-max-intset-entries
        // (an intset already stays one).
        if (key.intsetWidth != 0 || key.entries > intsetMaxEntries(c.limits))
            return;
        // The listpack or table freed whole (freeSetObject): a new intset keeps only the set's own counts.
        CollectionKeyState intset;
        intset.kind = key.kind;
        intset.made = true;
        intset.entries = key.entries;
        intset.payloadBytes = key.payloadBytes;
        intset.adds = key.adds;
        intset.reallocatedBytes = key.reallocatedBytes;
        intset.intsetWidth = intsetWidthOf(IntegerClass::Uint7); // intsetNew: INTSET_ENC_INT16
        key = std::move(intset);
    } else if (key.intsetWidth == 0 || key.compactEntries.size() >= key.entries) {
        return; // not converted (or an intset all along)
    }
    key.intsetWidth = std::max(key.intsetWidth, intsetWidthOf(member.integer)); // intsetAdd, as iterated
    key.compactEntries.push_back(packEntry(member));
}

void setRemove(const KeyContext& c, CollectionKeyState& key, ElementValue member, MemberOrder order, bool moreFollow) {
    --key.entries;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, member.bytes);
    if (!key.table) {
        if (key.intsetWidth == 0)
            key.listpackBytes -= std::min(key.listpackBytes - listpack::kHeaderBytes - listpack::kEndBytes,
                listpack::entryBytes(member.bytes, member.integer));
        eraseCompactEntry(key, packEntry(member));
        return;
    }
    if (strandsEntries(c)) {
        settleStranded(key);
        // Of the members before this removal, those the buckets hold (one per occupied bucket not stranded),
        // and the occupied buckets that hold one member (Poisson, at the table's load).
        const double members = static_cast<double>(key.entries + 1);
        const double occupied = members - membersWithEntries(*key.index, c.rules.bucketRehashOnAccess);
        const double held = std::max(0.0, occupied - key.strandedEntries);
        const double buckets = static_cast<double>(std::max<std::uint64_t>(key.index->buckets(), 1));
        const double load = members / buckets;
        const double alone = load > 0 ? load * std::exp(-load) / -std::expm1(-load) : 1;
        // The removed member is the one its bucket holds, with others beside it: while the table keeps the
        // order of adds, exactly when no member added before it fell in its bucket and one added since, still
        // there, did; else as often as the bucket-held are among the members, in a bucket of more than one as
        // often as those are.
        double strands = held / members * (1 - alone);
        const std::int64_t place = static_cast<std::int64_t>(order.place) - 1;
        const bool ordered = key.orderBase >= 0 && key.index->targetBuckets() == 0
            && key.index->buckets() == key.orderBuckets && place >= key.orderBase;
        if (ordered) {
            const double miss = std::log1p(-1 / buckets);
            strands = std::exp(static_cast<double>(place - key.orderBase) * miss)
                * -std::expm1(static_cast<double>(order.younger) * miss);
        }
        key.strandedEntries = std::max(0.0, key.strandedEntries + strands - key.strandedEntries * alone / members);
    }
    key.index->erase(!(c.rules.removalsPauseShrink && moreFollow));
    if (c.rules.tableKind == IndexKind::RedisDict) // Redis 7.x setTypeRemoveAux: htNeedsResize -> dictResize
        key.index->shrinkIfNeeded();
    addEntryParts(c, key, setMemberParts(c.rules, member.bytes), -1);
}

double setTableEntries(const KeyContext& c, const CollectionKeyState& key) {
    if (!c.rules.dictTables() || !c.rules.setEntriesOnlyWhenShared)
        return 0;
    return membersWithEntries(*key.index, c.rules.bucketRehashOnAccess) + strandedNow(key);
}

void addSetTableEntries(const KeyContext& c, const CollectionKeyState& key, CollectionFootprint& out) {
    const double entries = setTableEntries(c, key);
    out.allocations += entries;
    out.requestedBytes += entries * static_cast<double>(kDictEntryNoValueBytes);
    out.usableBytes += entries * static_cast<double>(c.allocator.usableSize(kDictEntryNoValueBytes));
}

} // namespace layoutlab::collection

// rdb.c rdbLoadObject of a set:
//   RDB_TYPE_SET_INTSET, RDB_TYPE_SET_LISTPACK (compact in the file): the intset (its width as saved) or
//     listpack as saved, converted only when it holds more than set-max-intset-entries or
//     set-max-listpack-entries (setTypeConvert: a table expanded for them all).
//   RDB_TYPE_SET: more members than set-max-intset-entries (at most 2^30) make a table at once, expanded for
//     them all; else an intset takes integers (intsetAdd) until a member that is not one: then, on Redis 7.2
//     and Valkey, a listpack of the integers when the members so far are fewer than
//     set-max-listpack-entries and none is longer than set-max-listpack-value, which appends each member
//     while they stay so, else a table expanded for all the file's members (setTypeConvertAndExpand); on
//     Redis 7.0 a table sized for the intset's members (setTypeConvert), then expanded for all
//     (dictTryExpand).
namespace layoutlab::collection {

void setLoad(const KeyContext& c, CollectionKeyState& key, std::uint64_t members) {
    const std::uint64_t limit = !key.loadForm.compact    ? intsetMaxEntries(c.limits)
        : key.loadForm.intsetWidth != IntegerClass::None ? c.limits.setMaxIntsetEntries
                                                         : c.limits.setMaxListpackEntries;
    if (members > limit) {
        convertToTable(c, key, members);
        return;
    }
    if (!key.loadForm.compact) // createIntsetObject: intsetNew, INTSET_ENC_INT16
        key.intsetWidth = intsetWidthOf(IntegerClass::Uint7);
    else if (key.loadForm.intsetWidth != IntegerClass::None)
        key.intsetWidth = intsetWidthOf(key.loadForm.intsetWidth);
}

void setLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member) {
    key.payloadBytes += member.bytes;
    const std::uint64_t held = key.entries++;
    const std::uint64_t members = held + 1 + key.loadRemaining;
    if (!key.table && !key.loadForm.compact) {
        if (key.intsetWidth != 0 && member.integer == IntegerClass::None) {
            if (c.rules.listpackSets && held < c.limits.setMaxListpackEntries
                && key.loadLongest <= c.limits.setMaxListpackValue) {
                convertIntsetToListpack(key);
            } else if (c.rules.listpackSets) {
                convertToTable(c, key, members);
            } else { // Redis 7.0
                convertToTable(c, key, held);
                key.index->expand(members);
            }
        } else if (key.intsetWidth == 0
            && (held >= c.limits.setMaxListpackEntries || member.bytes > c.limits.setMaxListpackValue)) {
            convertToTable(c, key, members);
        }
    }
    if (key.table) {
        addMember(c, key, member);
    } else if (key.intsetWidth != 0) {
        key.intsetWidth = std::max(key.intsetWidth, intsetWidthOf(member.integer));
        key.compactEntries.push_back(packEntry(member));
    } else {
        appendToListpack(key, member);
    }
    ++key.adds;
}

} // namespace layoutlab::collection
