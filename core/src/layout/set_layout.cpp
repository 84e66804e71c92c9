// SPDX-License-Identifier: MIT
// Set keys (layout/collection_layout.h), from the engines' t_set.c, intset.c and dict.c or hashtable.c.
//   intset (intset.c): an 8-byte header (encoding, length) and each member as an integer of the width the
//     largest needs (2, 4 or 8 bytes: _intsetValueEncoding), grown by realloc to its exact size
//     (intsetResize). Every member an integer and at most set-max-intset-entries of them.
//   listpack (Redis 7.2, Valkey): members as listpack entries, at most set-max-listpack-entries of at most
//     set-max-listpack-value bytes.
//   hashtable: Redis 7.0's dict of 24-byte dictEntry, one per member; Redis 7.2's and Valkey 8.0's dict of
//     no_value entries (an entry only for a member that shares its bucket, collection_rules.h); Valkey 8.1's
//     and later hashtable.c table holding the members' sds in its buckets. Each member an sds of the smallest
//     header (setTypeAddAux: sdsnewlen or sdsdup; sdsfromlonglong for an intset's).
// Which one, and when the table is made and for how many (t_set.c):
//   Redis 7.2 and Valkey: SADD makes the set for its first member and its member count (setTypeCreate): an
//     intset when that member is an integer and the count fits, else a listpack when the count fits it, else
//     a table expanded for the count. Adding a member a listpack cannot take (the count, or a member's
//     length) converts it to a table expanded for its members and the new one (setTypeConvertAndExpand,
//     lpLength + 1); an intset past its limit converts after the add, for its members (maybeConvertIntset).
//   Redis 7.0: SADD makes an intset for an integer first member and an unsized table otherwise
//     (setTypeCreate(value)); the intset converts as above.

#include "collection_rules.h"

#include <fmt/format.h>

namespace layoutlab::collection {

namespace {
enum class SetEncoding { Intset, Listpack, Table };
} // namespace

Status describeSet(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out) {
    const std::uint64_t n = shape.entries;
    const bool longMember = shape.elementBytes > limits.setMaxListpackValue;
    // The set SADD makes, and the count its table is expanded for (setTypeCreate).
    const std::uint64_t hint = shape.oneCommand ? n : 1;
    SetEncoding encoding = SetEncoding::Table;
    std::uint64_t sizedFor = rules.listpackSets ? hint : 0;
    std::uint64_t converted = 0;
    if (shape.integerElements && (!rules.listpackSets || hint <= limits.setMaxIntsetEntries))
        encoding = SetEncoding::Intset;
    else if (rules.listpackSets && hint <= limits.setMaxListpackEntries)
        encoding = SetEncoding::Listpack;
    // Its conversions as the members arrive.
    if (encoding == SetEncoding::Intset && n > limits.setMaxIntsetEntries) {
        encoding = SetEncoding::Table; // maybeConvertIntset, after the add that passed the limit
        converted = limits.setMaxIntsetEntries + 1;
        sizedFor = converted;
        out.why = fmt::format("{} integer members > set-max-intset-entries {}", n, limits.setMaxIntsetEntries);
    } else if (encoding == SetEncoding::Listpack && (n > limits.setMaxListpackEntries || longMember)) {
        encoding = SetEncoding::Table; // setTypeAddAux: the add a listpack cannot take
        converted = longMember ? 0 : limits.setMaxListpackEntries;
        sizedFor = converted + 1;
        out.why = longMember ? fmt::format("a member of {} bytes > set-max-listpack-value {}", shape.elementBytes,
                      limits.setMaxListpackValue)
                             : fmt::format("{} members > set-max-listpack-entries {}", n, limits.setMaxListpackEntries);
    } else if (encoding == SetEncoding::Table) {
        out.why = !rules.listpackSets
            ? std::string("members that are not all integers: a table (Redis 7.0 has no listpack sets)")
            : fmt::format("{} members in one SADD > set-max-{}-entries {}", n,
                shape.integerElements ? "intset" : "listpack",
                shape.integerElements ? limits.setMaxIntsetEntries : limits.setMaxListpackEntries);
    }

    if (encoding == SetEncoding::Intset) {
        out.encoding = "intset";
        out.why = fmt::format("{} integer members <= set-max-intset-entries {}", n, limits.setMaxIntsetEntries);
        out.parts.push_back({ "intset",
            kIntsetHeaderBytes + n * intsetWidthOf(integerClassOf(largestOfDigits(shape.elementBytes))), 1 });
        return Ok {};
    }
    if (encoding == SetEncoding::Listpack) {
        out.encoding = "listpack";
        out.why = fmt::format("{} members <= set-max-listpack-entries {}, each <= {} bytes", n,
            limits.setMaxListpackEntries, limits.setMaxListpackValue);
        out.parts.push_back(
            { "listpack", listpackBytes(n, listpack::entryBytes(shape.elementBytes, shape.integerElements)), 1 });
        return Ok {};
    }
    out.encoding = "hashtable";
    const IndexTableModel table = filledTable(rules.tableKind, sizedFor, n, 1, converted, rules.bucketRehashOnAccess);
    addTableParts(out.parts, table, allocator, rules.tableStruct, rules.tableStructBytes);
    const auto members = static_cast<double>(n);
    if (rules.dictTables()) {
        if (rules.setEntriesOnlyWhenShared)
            out.parts.push_back({ "entries (members sharing a bucket)", kDictEntryNoValueBytes,
                membersWithEntries(table, rules.bucketRehashOnAccess) });
        else
            out.parts.push_back({ "entries", kDictEntryBytes, members });
    }
    out.parts.push_back({ "members", rules.sdsBytes(shape.elementBytes), members });
    return Ok {};
}

std::vector<CollectionPart> setMemberParts(const Rules& rules, std::uint32_t memberBytes) {
    if (rules.dictTables() && !rules.setEntriesOnlyWhenShared)
        return { { "entries", kDictEntryBytes, 1 }, { "members", rules.sdsBytes(memberBytes), 1 } };
    return { { "members", rules.sdsBytes(memberBytes), 1 } };
}

} // namespace layoutlab::collection
