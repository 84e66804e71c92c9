// SPDX-License-Identifier: MIT
// Sorted-set keys (layout/collection_layout.h), from the engines' t_zset.c and dict.c or hashtable.c.
//   listpack: each member an entry followed by its score's (zzlInsertAt: the score as d2string's text, which
//     lpInsert stores as an integer when it is one), at most zset-max-listpack-entries members of at most
//     zset-max-listpack-value bytes.
//   skiplist: struct zset {dict or hashtable, zskiplist} (16 bytes), the table, and the skiplist: its struct
//     and a header node of ZSKIPLIST_MAXLEVEL (32) levels, then a node per member of a random level (1 plus
//     one per draw under ZSKIPLIST_P = 1/4, at most 32: zslRandomLevel), 16 bytes per level.
//     Redis 7.x, Valkey 8.0: a dict of 24-byte dictEntry (the member's sds, a pointer to the node's score:
//       zsetAdd's dictAdd(zs->dict, ele, &znode->score)); zslCreateNode: {ele, score, backward} (24 bytes)
//       and the levels; the member an sds of the smallest header (sdsdup), shared by node and entry.
//     Valkey 8.1 and 9.0: the table holds the nodes themselves (server.c zsetHashtableType); nodes as above.
//     Valkey 9.1: the member embedded in its node after the levels, with a byte giving its sds header's size
//       (zslCreateNode: {score, backward} and level[1] in 32 bytes, the other levels, 1, sdsReqSize); the
//       skiplist is its header node, 32 levels in one allocation (zslGetAllocSize: 528 bytes).
// ZADD makes the set for its member count and longest member (zsetTypeCreate): a listpack when both fit, else
// a skiplist whose table is expanded for the count; a member a listpack cannot take converts it, its table
// expanded for its members and the new one (zsetConvertAndExpand, zsetLength + 1). Redis 7.0 sizes neither
// (Rules::zsetSizeHints): its tables grow from 4 buckets. Each member added to a
// skiplist looks its table up twice: a find, then the add (zsetAdd: dictFind and dictAdd, or hashtableFindRef
// and hashtableAdd), a rehash step each.

#include "collection_rules.h"
#include "layoutlab/layout/sds.h"

#include <cmath>
#include <fmt/format.h>

namespace layoutlab::collection {

namespace {
constexpr std::uint64_t kZsetBytes = 16; // server.h struct zset {dict *dict (or hashtable *ht); zskiplist *zsl}
constexpr int kMaxLevel = 32; // server.h ZSKIPLIST_MAXLEVEL
constexpr double kLevelP = 0.25; // server.h ZSKIPLIST_P
constexpr std::uint64_t kLevelBytes = 16; // struct zskiplistLevel {forward, span}
constexpr std::uint64_t kNodeBytes = 24; // struct zskiplistNode {ele, score, backward} (before 9.1)
constexpr std::uint64_t kSkiplistBytes = 32; // struct zskiplist {header, tail, length, level} (before 9.1)
// Valkey 9.1 server.h: struct zskiplistNode {score, backward, level[1]} and t_zset.c zslGetAllocSize.
constexpr std::uint64_t kEmbeddingNodeBytes = 32;
constexpr std::uint64_t kEmbeddingSkiplistBytes = kEmbeddingNodeBytes + (kMaxLevel - 1) * kLevelBytes;
constexpr std::uint64_t kMemberHeaderSizeByte = 1; // zslCreateNode: the sds header's size before the member

// zslRandomLevel: P(level = l) = (1 - p) p^(l-1), the levels past the last in the last.
double levelProbability(int level) {
    const double reach = std::pow(kLevelP, level - 1);
    return level == kMaxLevel ? reach : reach * (1 - kLevelP);
}

void addSkiplistNodes(std::vector<CollectionPart>& parts, const Rules& rules, const CollectionShape& shape) {
    const auto members = static_cast<double>(shape.entries);
    const std::uint64_t embedded
        = kMemberHeaderSizeByte + sds::reqSize(shape.elementBytes, sds::valkeyReqType(shape.elementBytes));
    double placed = 0;
    for (int level = 1; level <= kMaxLevel; ++level) {
        // Levels no key of the keyspace is likely to reach are folded into the last one listed.
        const double remaining = members - placed;
        double count = members * levelProbability(level);
        const bool last = level == kMaxLevel || remaining - count < std::max(members * 1e-4, 0.01);
        if (last)
            count = remaining;
        const std::uint64_t bytes = rules.zsetNodesEmbedMembers
            ? kEmbeddingNodeBytes + (level - 1) * kLevelBytes + embedded
            : kNodeBytes + level * kLevelBytes;
        parts.push_back({ fmt::format("skiplist nodes (level {})", level), bytes, count });
        placed += count;
        if (last)
            break;
    }
}
} // namespace

Status describeSortedSet(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out) {
    const std::uint64_t n = shape.entries;
    const bool longMember = shape.elementBytes > limits.zsetMaxListpackValue;
    // Redis 7.0 makes every new sorted set for one member (zaddGenericCommand), and sizes no table.
    const std::uint64_t hint = shape.oneCommand && rules.zsetSizeHints ? n : 1;
    std::uint64_t sizedFor = rules.zsetSizeHints ? hint : 0;
    std::uint64_t converted = 0;
    if (hint > limits.zsetMaxListpackEntries || longMember) {
        out.why = longMember
            ? fmt::format(
                "a member of {} bytes > zset-max-listpack-value {}", shape.elementBytes, limits.zsetMaxListpackValue)
            : fmt::format("{} members in one ZADD > zset-max-listpack-entries {}", n, limits.zsetMaxListpackEntries);
    } else if (n > limits.zsetMaxListpackEntries) {
        converted = limits.zsetMaxListpackEntries; // zsetAdd: the add a listpack cannot take
        sizedFor = rules.zsetSizeHints ? converted + 1 : 0;
        out.why = fmt::format("{} members > zset-max-listpack-entries {}", n, limits.zsetMaxListpackEntries);
    } else {
        out.encoding = "listpack";
        out.why = fmt::format("{} members <= zset-max-listpack-entries {}, each <= {} bytes", n,
            limits.zsetMaxListpackEntries, limits.zsetMaxListpackValue);
        const std::uint64_t pair = listpack::entryBytes(shape.elementBytes, shape.integerElements)
            + listpack::entryBytes(shape.valueBytes, shape.integerValues);
        out.parts.push_back({ "listpack", listpackBytes(n, pair), 1 });
        return Ok {};
    }
    out.encoding = "skiplist";
    const std::vector<CollectionPart> own = zsetSkiplistParts(rules);
    out.parts.push_back(own.front());
    const IndexTableModel table = filledTable(rules.tableKind, sizedFor, n, kZaddLookups, converted);
    addTableParts(out.parts, table, allocator, rules.tableStruct, rules.tableStructBytes);
    const auto members = static_cast<double>(n);
    if (rules.dictTables())
        out.parts.push_back({ "entries", kDictEntryBytes, members });
    out.parts.insert(out.parts.end(), own.begin() + 1, own.end());
    addSkiplistNodes(out.parts, rules, shape);
    if (!rules.zsetNodesEmbedMembers)
        out.parts.push_back({ "members", rules.sdsBytes(shape.elementBytes), members });
    return Ok {};
}

std::vector<CollectionPart> zsetSkiplistParts(const Rules& rules) {
    if (rules.zsetNodesEmbedMembers)
        return { { "zset", kZsetBytes, 1 }, { "skiplist (header node)", kEmbeddingSkiplistBytes, 1 } };
    return { { "zset", kZsetBytes, 1 }, { "skiplist", kSkiplistBytes, 1 },
        { "skiplist header node", kNodeBytes + kMaxLevel * kLevelBytes, 1 } };
}

std::vector<CollectionPart> zsetMemberParts(const Rules& rules, std::uint32_t memberBytes) {
    std::vector<CollectionPart> parts;
    if (rules.dictTables())
        parts.push_back({ "entries", kDictEntryBytes, 1 });
    const std::uint64_t embedded = kMemberHeaderSizeByte + sds::reqSize(memberBytes, sds::valkeyReqType(memberBytes));
    for (int level = 1; level <= kMaxLevel; ++level)
        parts.push_back({ kSkiplistNodePart,
            rules.zsetNodesEmbedMembers ? kEmbeddingNodeBytes + (level - 1) * kLevelBytes + embedded
                                        : kNodeBytes + level * kLevelBytes,
            levelProbability(level) });
    if (!rules.zsetNodesEmbedMembers)
        parts.push_back({ "members", rules.sdsBytes(memberBytes), 1 });
    return parts;
}

} // namespace layoutlab::collection
