// SPDX-License-Identifier: MIT
// A sorted-set key member by member (collection_key_ops.h), following t_zset.c of each engine line:
//   zaddGenericCommand (zsetCommand): a new key is made for the command's member count and longest member
//     (zsetTypeCreate: a listpack when both fit zset-max-listpack-entries and -value, else a skiplist whose
//     table is expanded for the count); an existing listpack either would overflow converts first, its
//     table expanded for the count (zsetTypeMaybeConvert). Redis 7.2 makes a new key by its first member's
//     length, not its longest, and converts an existing one by the count alone (Rules::zsetLongestMemberHint);
//     Redis 7.0 makes a new key by its first member's length alone and sizes no table (Rules::zsetSizeHints).
//   zsetAdd (zsetAdd, zsetUpdate): a listpack takes a new member it has room for (zzlInsert: the member, then
//     its score as d2string's text, which lpInsert stores as an integer when it is one), else converts to a
//     skiplist whose table is expanded for its members and the new one (zsetConvertAndExpand, zsetLength + 1;
//     7.0: zsetConvert, unsized); a changed score is deleted and inserted again (zzlDelete, zzlInsert). A
//     skiplist finds the member (one rehash step) and adds it (another: dictAdd, hashtableAdd) with its node
//     of a random level (zslInsert), or moves its node for a changed score, which changes no memory in
//     expectation (zslUpdateScore).
//   zsetDel (zsetRemove): zzlDelete, or the table's delete and the node's (zslDelete), after which Redis 7.x
//     resizes a table below 10% fill (htNeedsResize -> dictResize) and Valkey's shrink as their deletes do.
//   ZSCORE, ZMSCORE, ZRANK (CollectionKeyModel::read): a table's find, one rehash step.
//   zunionInterDiffGenericCommand's union (zsetUnionCommand): a skiplist whose table Valkey expands for the
//     largest source, Redis 7.x for the whole union (Rules::zsetUnionSizedForLargestSource), each member then
//     added by one find-or-insert (dictAddRaw, hashtableFindPositionForInsert: a rehash step), a member met
//     again in a later source found by it (a step on the dict lines only); a listpack when the union fits one.
// A node's level is drawn at random (zslRandomLevel): each member's node is counted at each level with its
// chance (zsetMemberParts), so a removed member takes away what an added one brings.

#include "collection_key_ops.h"
#include "layoutlab/trace/request.h"

#include <algorithm>

namespace layoutlab::collection {

namespace {
// A score as the engine writes it (request.h packScoreBytes): Redis 7.0 in 17 digits where that differs from
// the shortest text, and then never as an integer (util.c d2string "%.17g").
ElementValue stored(const KeyContext& c, ElementValue score) {
    const std::uint32_t seventeen = seventeenDigitScoreBytes(score.bytes);
    if (c.rules.zsetScoresIn17Digits && seventeen != 0)
        return { seventeen, IntegerClass::None };
    return { shortestScoreBytes(score.bytes), score.integer };
}

std::uint64_t pairBytes(ElementValue member, ElementValue score) {
    return listpack::entryBytes(member.bytes, member.integer) + listpack::entryBytes(score.bytes, score.integer);
}

// A member's parts, and the variance of its node's usable bytes over the level zslRandomLevel draws for it
// (the parts of each level, with its chance), added to the key's with `weight` (1 added, -1 removed).
void addMemberParts(const KeyContext& c, CollectionKeyState& key, std::uint32_t memberBytes, double weight) {
    const std::vector<CollectionPart> parts = zsetMemberParts(c.rules, memberBytes);
    addEntryParts(c, key, parts, weight);
    double mean = 0;
    double square = 0;
    for (const CollectionPart& part : parts)
        if (part.what == kSkiplistNodePart) {
            const auto usable = static_cast<double>(c.allocator.usableSize(part.requestedBytes));
            mean += part.count * usable;
            square += part.count * usable * usable;
        }
    key.entryUsableVariance += weight * (square - mean * mean);
}

void addMember(const KeyContext& c, CollectionKeyState& key, ElementValue member, std::uint32_t lookups) {
    for (std::uint32_t l = 1; l < lookups; ++l)
        key.index->lookup();
    key.index->insert();
    addMemberParts(c, key, member.bytes, 1);
}

// zsetConvertAndExpand: a table expanded for `sizedFor` (0: not expanded), the listpack's members inserted
// once each with their nodes.
void convertToSkiplist(const KeyContext& c, CollectionKeyState& key, std::uint64_t sizedFor) {
    key.index = newTable(c, sizedFor);
    for (const std::uint64_t packed : key.compactEntries)
        addMember(c, key, unpackEntry(packed).first, 1);
    key.table = true;
    key.compactEntries = {};
    key.listpackBytes = 0;
}
} // namespace

void zsetCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t members, std::uint32_t longest,
    std::uint32_t firstBytes) {
    const bool fewEnough = members <= c.limits.zsetMaxListpackEntries;
    const bool fits = fewEnough && longest <= c.limits.zsetMaxListpackValue;
    if (!key.made) {
        key.made = true;
        if (!c.rules.zsetSizeHints) { // Redis 7.0: by the first member's length, no table sized
            if (c.limits.zsetMaxListpackEntries == 0 || firstBytes > c.limits.zsetMaxListpackValue)
                convertToSkiplist(c, key, 0);
        } else if (c.rules.zsetLongestMemberHint ? !fits : !fewEnough || firstBytes > c.limits.zsetMaxListpackValue) {
            convertToSkiplist(c, key, members);
        }
        return;
    }
    if (!key.table && c.rules.zsetSizeHints && !(c.rules.zsetLongestMemberHint ? fits : fewEnough))
        convertToSkiplist(c, key, members);
}

void zsetUnionCommand(const KeyContext& c, CollectionKeyState& key, std::uint64_t members, std::uint32_t longest,
    std::uint64_t largestSource) {
    if (key.made) // not a fresh key: the importer deletes the destination first
        return zsetCommand(c, key, members, longest, longest);
    key.made = true;
    // Built as a skiplist, converted at its end when it fits a listpack (zsetConvertToListpackIfNeeded: the
    // count and the longest member, on every line): that listpack is what the model makes.
    if (members <= c.limits.zsetMaxListpackEntries && longest <= c.limits.zsetMaxListpackValue)
        return;
    convertToSkiplist(c, key, c.rules.zsetUnionSizedForLargestSource ? largestSource : members);
    key.unionAddsLeft = members;
}

void zsetAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue score) {
    score = stored(c, score);
    if (!key.made)
        zsetCommand(c, key, 1, member.bytes, member.bytes);
    key.payloadBytes += std::uint64_t { member.bytes } + score.bytes;
    const std::uint64_t held = key.entries++;
    if (!key.table) {
        if (held + 1 <= c.limits.zsetMaxListpackEntries && member.bytes <= c.limits.zsetMaxListpackValue) {
            key.listpackBytes += pairBytes(member, score);
            key.compactEntries.push_back(packEntry(member, score));
            return;
        }
        convertToSkiplist(c, key, c.rules.zsetSizeHints ? held + 1 : 0);
    }
    if (key.unionAddsLeft > 0) { // a union's member: one find-or-insert (zsetUnionCommand)
        --key.unionAddsLeft;
        return addMember(c, key, member, 1);
    }
    addMember(c, key, member, kZaddLookups);
}

void zsetUpdate(
    const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue before, ElementValue after) {
    before = stored(c, before);
    after = stored(c, after);
    key.payloadBytes += after.bytes;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, before.bytes);
    if (key.table) {
        key.index->lookup(); // the find; the node moves, its memory in expectation the same
        return;
    }
    key.listpackBytes = key.listpackBytes + listpack::entryBytes(after.bytes, after.integer)
        - listpack::entryBytes(before.bytes, before.integer);
    const auto it = std::find(key.compactEntries.begin(), key.compactEntries.end(), packEntry(member, before));
    if (it != key.compactEntries.end())
        *it = packEntry(member, after);
}

void zsetRemove(const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue score, bool moreFollow,
    bool byRange) {
    score = stored(c, score);
    --key.entries;
    key.payloadBytes -= std::min<std::uint64_t>(key.payloadBytes, std::uint64_t { member.bytes } + score.bytes);
    if (!key.table) {
        key.listpackBytes
            -= std::min(key.listpackBytes - listpack::kHeaderBytes - listpack::kEndBytes, pairBytes(member, score));
        eraseCompactEntry(key, packEntry(member, score));
        return;
    }
    // A ZREM's table may shrink after each removal, but on Valkey 9.1 (zremCommand: hashtablePauseAutoShrink); a
    // range's only after its last (zremrangeGenericCommand: Redis 7.x dictResize after zslDeleteRangeBy*, Valkey
    // 8.0 dictPauseAutoResize, 9.0 and later hashtablePauseAutoShrink; not the 8.1 trees: Rules).
    const bool shrinkWaits
        = moreFollow && (c.rules.removalsPauseShrink || (byRange && c.rules.rangeRemovalsPauseShrink));
    key.index->erase(!shrinkWaits);
    if (c.rules.tableKind == IndexKind::RedisDict && !shrinkWaits) // Redis 7.x: htNeedsResize -> dictResize
        key.index->shrinkIfNeeded();
    addMemberParts(c, key, member.bytes, -1);
}

} // namespace layoutlab::collection

// rdb.c rdbLoadObject of a sorted set:
//   RDB_TYPE_ZSET_LISTPACK (compact in the file): the listpack as saved, converted only when it holds more
//     than zset-max-listpack-entries (zsetConvert: a table expanded for them all).
//   RDB_TYPE_ZSET_2: a skiplist whose table is expanded for all the file's members (past
//     DICT_HT_INITIAL_SIZE on the dict lines), each member inserted (zslInsert, then dictAdd or hashtableAdd:
//     one rehash step), converted to a listpack after the last when they are at most zset-max-listpack-entries
//     and none is longer than zset-max-listpack-value ("Convert *after* loading").
namespace layoutlab::collection {

void zsetLoad(const KeyContext& c, CollectionKeyState& key, std::uint64_t members) {
    if (!key.loadForm.compact || members > c.limits.zsetMaxListpackEntries)
        convertToSkiplist(c, key, members);
    key.listpackBytes = listpack::kHeaderBytes + listpack::kEndBytes; // what a conversion after the last starts from
}

void zsetLoadAdd(const KeyContext& c, CollectionKeyState& key, ElementValue member, ElementValue score) {
    score = stored(c, score);
    key.payloadBytes += std::uint64_t { member.bytes } + score.bytes;
    ++key.entries;
    // A skiplist that may become a listpack keeps its pairs (they are at most the entries limit).
    const bool mayConvert = !key.loadForm.compact && key.entries + key.loadRemaining <= c.limits.zsetMaxListpackEntries;
    if (!key.table || mayConvert) {
        key.listpackBytes += pairBytes(member, score);
        key.compactEntries.push_back(packEntry(member, score));
    }
    if (key.table)
        addMember(c, key, member, 1);
    if (!mayConvert || key.loadRemaining > 0 || key.loadLongest > c.limits.zsetMaxListpackValue)
        return;
    key.table = false; // zsetConvert(o, OBJ_ENCODING_LISTPACK): the skiplist and its table freed
    key.index.reset();
    key.entryAllocations = key.entryRequestedBytes = key.entryUsableBytes = key.entryUsableVariance = 0;
    key.entrySizes.clear();
}

} // namespace layoutlab::collection
