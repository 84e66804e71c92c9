// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/trace/value_kind.h"

#include <cstdint>
#include <string_view>

namespace layoutlab {

// Operations a trace can carry; importers map their formats' commands onto these.
enum class Op : std::uint8_t {
    Get = 0,
    Set = 1, // create or overwrite; a TTL of 0 clears any expiry
    Add = 2, // set only if absent
    Replace = 3, // set only if present
    Append = 4, // value grows by valueBytes (created if absent, as Redis APPEND does, with `kind`)
    Prepend = 5,
    // The value becomes the command's result, valueBytes long, of `kind` (an integer; a string for
    // INCRBYFLOAT); its TTL stays; created if absent (Redis) or left absent (memcached).
    Incr = 6,
    Decr = 7,
    Delete = 8,
    Expire = 9, // set the TTL of an existing key
    Persist = 10, // clear the TTL of an existing key
    Other = 11, // counted, no effect on the keyspace
    // Redis SETRANGE: valueBytes is offset + length of the written range (never 0); the value becomes a
    // RAW string at least that long, zero-filled (created if absent).
    // With kind kHyperLogLogKind: a HyperLogLog's string changed in place by hyperloglog.c, valueBytes its new
    // length: where absent, created sparse (createHLLObject: sdsnewlen of valueBytes, RAW); with valueBytes
    // kHyperLogLogDenseBytes, made dense (hllSparseToDense: a new sds, the sparse one freed; nothing once dense);
    // else the sparse form's room made as hllSparseSet makes it (StringRules::HllRoom), then its length.
    SetRange = 12,
    // A write or read of one element of a collection key (a hash's field, a set's or sorted set's member, a
    // list's element), described by Request::element (ElementOp); the key is created by its first element
    // and deleted with its last, as the engines do.
    Element = 13,
    // A snapshot's keyspace tables expanded at once before its keys (rdb.c RESIZEDB -> dbExpand): the keys'
    // table for valueBytes keys, the expires table for ttlSeconds of them. Its keyId and keyBytes are those of
    // the first key after it (a key's statistics see no key that is not one). With valueBytes kEmptiedTables:
    // a flush's tables freed (its keyId and keyBytes: the last key it deleted; the tables of that key's database).
    // With valueBytes kKeyDatabase: the key (keyId, keyBytes) is kept in database ttlSeconds's tables, before its
    // first request (a key never placed is in database 0's): the engines keep one key table and one expires
    // table per database (server.h serverDb), which grow and shrink apart.
    Resize = 14,
    // Redis RENAME: two requests in a row, the source key's (valueBytes kRenameSource) then the
    // destination's (kRenameDestination): the destination deleted if it exists, then the source's value,
    // whatever its type, with its TTL, under the destination's name (db.c renameGenericCommand). Made only
    // where the server renamed (the source existed, and not onto itself; RENAMENX onto no key).
    // With kCopyDestination in the second: COPY of a collection key (db.c copyCommand): the source kept, the
    // destination deleted if it exists, then a copy of the source's value as its type's dup makes it, with
    // the source's TTL (a string's COPY is written as the SET or SETRANGE that makes the same object).
    Rename = 15,
};
inline constexpr int kOpCount = 16;
// Op::SetRange's kind for a HyperLogLog's change (the trace's value kind 3, only on a setrange).
inline constexpr ValueKind kHyperLogLogKind = ValueKind::RawString;
// hyperloglog.c HLL_DENSE_SIZE: the dense form's length (a 16-byte header and 16,384 6-bit registers).
inline constexpr std::uint32_t kHyperLogLogDenseBytes = 16 + 16384 * 6 / 8;
// hyperloglog.c createHLLObject: a new HLL's sparse length (the header and one XZERO opcode of every register).
inline constexpr std::uint32_t kHyperLogLogCreatedBytes = 16 + 2;
// config.c hll-sparse-max-bytes: its default, the same in every engine line; the longest sparse form.
inline constexpr std::uint32_t kHyperLogLogSparseMaxBytes = 3000;
// Op::Resize's valueBytes for a flush (FLUSHALL, FLUSHDB: db.c emptyData), after a delete of every key the
// trace had made: the tables are freed whole, not shrunk as deletes leave them.
inline constexpr std::uint32_t kEmptiedTables = UINT32_MAX;
// Op::Resize's valueBytes placing its key in the database its ttlSeconds names (MONITOR's "[<db> ...]", an
// RDB file's SELECTDB). A snapshot's table sizes stay below it.
inline constexpr std::uint32_t kKeyDatabase = UINT32_MAX - 1;
inline constexpr std::uint32_t kMaxResizeKeys = UINT32_MAX - 2;
inline constexpr std::uint32_t kRenameSource = 0;
inline constexpr std::uint32_t kRenameDestination = 1;
inline constexpr std::uint32_t kCopyDestination = 2;
std::string_view opName(Op op);

// What an Op::Element request does (Request::element packs it in 16 bits, the trace file stores it so):
//   Add      a new element: elementBytes long, its value (a hash's, a sorted set's score as d2string's text)
//            valueBytes
//   Update   an element's value replaced: valueBytes the new one, priorBytes (the TTL's field) the old one
//   Remove   an element removed: elementBytes, and its value's length in priorBytes; a set's member its
//            place in the order the set's members were added in valueBytes (from 1; 0 when not known), and
//            in priorBytes the members added after it that the set still holds; a sorted set's member
//            kRemovedByRange in valueBytes when a range command removes it (ZREMRANGEBY*)
//   Read     an element looked up (HGET, HEXISTS, ...): a table's lookup, which may advance its rehashing;
//            valueBytes kRandomDraw: a set's member drawn at random (SPOP), as the engine draws one
//   Command  a command's start, for the engines' decisions on all its arguments at once (t_hash.c
//            hashTypeTryConversion): valueBytes its elements, elementBytes its longest argument; a set's
//            its first member's integer class as the element's (t_set.c setTypeCreate); a sorted set's its
//            longest member in elementBytes and its first member's length in priorBytes (zsetTypeCreate,
//            Redis 7.0's zaddGenericCommand); a list's push its elements' lengths summed in elementBytes
//            (t_list.c listTypeTryConvertListpack), a LINSERT's its element's (priorBytes kNoPivot when it
//            found no pivot); a set's SINTERSTORE result's first its smallest source in priorBytes
//            (kIntersectionOfNonIntegers, kIntersectionOfIntegers); a sorted set's with atHead set is a
//            ZUNIONSTORE result's, its largest source's member count in priorBytes (no first member's length:
//            no engine sizes a union by it), its sources following (Size)
//   Load     a key read whole from a snapshot (rdb.c rdbLoadObject), before its elements, which follow as
//            Adds: valueBytes its elements; atHead set when the file holds it compact (a listpack or an
//            intset, which the server keeps as it is), and then a set's intset its width as the integer class
//            of its element (Int16, Int32 or Int64). A list has a Load before each quicklist node as the file
//            holds it: valueBytes the node's elements, priorBytes the nodes after it.
//   Size     a list's element as the importer knows it, changing nothing: elementBytes long, valueBytes places
//            from the head. A list's first LINSERT is preceded by one for each of its elements (after its
//            Command), since a quicklist node's split needs their sizes, which the replay does not follow
//            for lists that never meet a LINSERT. A set's: a member of SINTERSTORE's result after its last
//            add, when the result holds integers only (t_set.c maybeConvertToIntset: an intset, of these
//            members, when they are within set-max-intset-entries), the first's valueBytes their count.
//            A sorted set's: a source of the ZUNIONSTORE result whose Command precedes it, in the order the
//            command reads them (smallest first), before that source's members: valueBytes its member count,
//            the first's priorBytes all the sources' counts summed; each member then an Add when it is new to
//            the result (with its final score), else a Read with valueBytes kFoundForInsert.
// A list's Add is a push and its Remove a pop, at its head when the op's atHead is set, else at its tail; a
// Remove with valueBytes k > 0 removes the element k - 1 places from its head instead (LREM); its Update
// replaces the element valueBytes places from its head (LSET) by one of elementBytes, the one replaced
// priorBytes long. An Add with priorBytes k > 0 inserts the element beside the pivot k - 1 places from the
// head (LINSERT): before it when atHead is set, else after it; its valueBytes and value class the pivot's
// length and integer class.
// An element or value that is a canonical integer carries its integer class (IntegerClass), which a
// listpack or an intset stores it by.
enum class CollectionKind : std::uint8_t { Hash = 0, Set = 1, SortedSet = 2, List = 3 };
// A sorted set's Remove whose valueBytes is this was made by ZREMRANGEBYSCORE, ...BYRANK or ...BYLEX: every
// engine shrinks that command's table once, at its end (t_zset.c zremrangeGenericCommand), where a ZREM of
// several members shrinks it after each on all but Valkey 9.1.
inline constexpr std::uint32_t kRemovedByRange = 1;
// A sorted set's score in a request (an Add's or Update's valueBytes, an Update's or Remove's priorBytes): the low
// 16 bits are its text's length as Redis 7.2 and Valkey write it (util.c d2string: an integer's digits, else the
// shortest text that reads back, which the op's integer class is of), bits 16-23 its length as Redis 7.0's
// d2string writes it ("%.17g", never an integer's digits) where the two differ, else 0.
inline constexpr std::uint32_t packScoreBytes(std::uint32_t shortest, std::uint32_t seventeenDigits) {
    return shortest | (seventeenDigits == shortest ? 0u : seventeenDigits << 16);
}
inline constexpr std::uint32_t shortestScoreBytes(std::uint32_t packed) {
    return packed & 0xffffu;
}
// The "%.17g" length where it differs from the shortest, else 0.
inline constexpr std::uint32_t seventeenDigitScoreBytes(std::uint32_t packed) {
    return packed >> 16;
}
enum class ElementAction : std::uint8_t { Add = 0, Update = 1, Remove = 2, Read = 3, Command = 4, Load = 5, Size = 6 };
// A Read's valueBytes when the element is drawn at random (t_set.c setTypeRandomElement), which advances a
// rehashing table by the engine's draw's steps rather than a lookup's one.
inline constexpr std::uint32_t kRandomDraw = 1;
// A set's or sorted set's Read whose valueBytes is this: a member the key already holds, met by the add that
// finds it there (t_set.c setTypeAdd, for SADD and the set commands that add; a ZUNIONSTORE source's member the
// result holds: t_zset.c zunionInterDiffGenericCommand): dictAddRaw or hashtableFindPositionForInsert, not a
// lookup of its own.
inline constexpr std::uint32_t kFoundForInsert = 2;
// A list's Command's priorBytes when it is a LINSERT's that found no pivot: the conversion for the element is
// all the command did (t_list.c linsertCommand converts before it looks).
inline constexpr std::uint32_t kNoPivot = 1;
// A set's Command's priorBytes when it makes SINTERSTORE's result (t_set.c sinterGenericCommand: an intset when
// the smallest source is one, else a listpack whatever the members, on the engines with listpack sets): the
// first when that source holds a member that is not an integer, else the second plus its member count (an
// intset when within set-max-intset-entries). 0: any other command.
inline constexpr std::uint32_t kIntersectionOfNonIntegers = 1;
inline constexpr std::uint32_t kIntersectionOfIntegers = 2;
// Whether that smallest source is taken for an intset under `setMaxIntsetEntries` (the model's and a driven
// server's rule alike).
inline constexpr bool intersectionOfIntset(std::uint32_t smallestSource, std::uint64_t setMaxIntsetEntries) {
    return smallestSource >= kIntersectionOfIntegers && smallestSource - kIntersectionOfIntegers <= setMaxIntsetEntries;
}
inline constexpr unsigned kElementActionCount = 7;
std::string_view collectionKindName(CollectionKind kind); // "hash", "set", "zset", "list"
std::string_view elementActionName(ElementAction action);

struct ElementOp {
    CollectionKind collection = CollectionKind::Hash;
    ElementAction action = ElementAction::Add;
    IntegerClass element = IntegerClass::None;
    IntegerClass value = IntegerClass::None;
    IntegerClass prior = IntegerClass::None;
    // A list's element pushed or popped at its head (the left), else at its tail; a Load's key compact in the file;
    // a hash's, set's or sorted set's Remove that more removals of the same command follow (HDEL, SREM, ZREM
    // naming several: Valkey 9.1 shrinks the table once, at the command's end; ZREMRANGEBY*: every engine).
    bool atHead = false;

    // bits 0-1 the collection, 2-4 the action, 5-7 the element's integer class, 8-10 the value's, 11-13 the
    // prior value's, 14 atHead; bit 15 is clear.
    std::uint16_t packed() const {
        return static_cast<std::uint16_t>(static_cast<unsigned>(collection) | static_cast<unsigned>(action) << 2
            | static_cast<unsigned>(element) << 5 | static_cast<unsigned>(value) << 8
            | static_cast<unsigned>(prior) << 11 | (atHead ? 1u << 14 : 0u));
    }
    // Whether `bits` is a packed ElementOp (an action and integer classes in range, bit 15 clear).
    static bool valid(std::uint16_t bits) {
        return (bits >> 15) == 0 && ((bits >> 2) & 7) < kElementActionCount && ((bits >> 5) & 7) < kIntegerClassCount
            && ((bits >> 8) & 7) < kIntegerClassCount && ((bits >> 11) & 7) < kIntegerClassCount;
    }
    static ElementOp unpack(std::uint16_t bits) {
        return { static_cast<CollectionKind>(bits & 3), static_cast<ElementAction>((bits >> 2) & 7),
            static_cast<IntegerClass>((bits >> 5) & 7), static_cast<IntegerClass>((bits >> 8) & 7),
            static_cast<IntegerClass>((bits >> 11) & 7), ((bits >> 14) & 1) != 0 };
    }
    bool operator==(const ElementOp&) const = default;
};

// A write's TTL of kKeepTtl keeps whatever TTL the key has (Redis SET ... KEEPTTL).
inline constexpr std::uint32_t kKeepTtl = 0xffffffffu;
// The longest key any command accepts (16 MiB - 1: the simulator's shape packs key lengths in 24 bits).
// Importers refuse longer keys as the simulator would, so that what imports also replays.
inline constexpr std::uint32_t kMaxKeyBytes = (1u << 24) - 1;

struct Request {
    std::uint64_t timeMs = 0; // since the start of the trace
    std::uint32_t keyId = 0; // dense key id given at import/generation
    std::uint32_t keyBytes = 0;
    std::uint32_t valueBytes = 0;
    std::uint32_t ttlSeconds = 0; // 0: no expiry; kKeepTtl on a write: keep the key's current TTL
    Op op = Op::Get;
    ValueKind kind = ValueKind::String;
    std::uint16_t element = 0; // Op::Element: the ElementOp, packed
    std::uint32_t elementBytes = 0; // Op::Element: the field, member or list element's length

    // Op::Element requests carry no TTL (EXPIRE on a collection key is Op::Expire): their TTL field holds the
    // length of the value an Update replaces or a Remove removes.
    std::uint32_t priorBytes() const { return ttlSeconds; }
    ElementOp elementOp() const { return ElementOp::unpack(element); }

    auto operator<=>(const Request&) const = default;
};
static_assert(sizeof(Request) == 32, "a request stays at 32 bytes");

} // namespace layoutlab
