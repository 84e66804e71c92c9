// SPDX-License-Identifier: MIT
#pragma once

// A trace's collection keys rebuilt on a real Valkey or Redis server from its element requests (Op::Element).
// A trace keeps each field's, member's or element's length and integer class, not its text, so the writer
// makes texts up, per key: names unique within their key, of exactly the trace's length and integer class (an
// integer of that many characters in that class's range, listpack.c lpEncodeIntegerGetType's; else letters
// and digits that start with a letter, which no server takes for an integer), and remembers each one's shape
// to remove or update one of the same shape later. Which of two fields of one shape goes changes nothing a
// server's memory shows.
//
// Each request becomes the command that makes the same change:
//   hash     HSET (a field added or its value replaced), HDEL;
//   set      SADD, SREM;
//   zset     ZADD (a member added, or its score replaced), ZREM; a range's removals (ZREMRANGEBY*) as a ZADD XX
//            of their members at -inf (no made-up score is one) and ZREMRANGEBYSCORE -inf -inf, which removes
//            them as the range did, the table's shrink held to the end on every engine (the ZADD's lookups
//            take rehash steps the range did not: a table still rehashing then may finish sooner);
//   list     LPUSH or RPUSH, LPOP or RPOP, LSET at the trace's place from the head.
// A command's start (ElementAction::Command) holds its elements back until they have all come, and sends them
// as one command, as the capture's did (a SINTERSTORE's result, whose smallest source was not an intset, as
// three: intersectionRebuilt; a ZUNIONSTORE's by the server's own ZUNIONSTORE of its sources: UnionRebuild),
// and so do one command's removals, with the names it looked up and did
// not find between them (Valkey 9.1 shrinks a table once, at the end of an HDEL, SREM or ZREM of several): the engines
// decide a conversion on all of a command's arguments at once (t_hash.c hashTypeTryConversion, t_set.c, t_zset.c,
// t_list.c listTypeTryConversionAppend). A lookup is sent as HEXISTS, SISMEMBER or ZSCORE, for the rehash step it takes
// (a list's read changes nothing, and is not sent); one within a SADD or ZADD (a member named again, unchanged)
// is sent within that command, by a held name of its shape, and a ZADD's member the key does not hold (ZADD
// XX's) by a name it has not had, the command sent with XX. A snapshot's loaded key (ElementAction::Load) is refused:
// the server loads an RDB file itself (loadSnapshotFile), as it would.

#include "layoutlab/collect/union_rebuild.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/trace/request.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace layoutlab {

// A text of exactly `bytes` characters in integer class `cls` (None: not an integer), the `n`th from the
// `first`th of them, round again past the last: the positive integers of that length and class, then the
// negative ones; else letters and digits, a letter first. False when `n` has gone round (the text repeats the
// `n - count`th), or no integer of that class is that long (a 2-digit Int64: `out` is then letters).
bool elementText(std::uint32_t bytes, IntegerClass cls, std::uint64_t n, std::string& out, std::uint64_t first = 0);

// A sorted-set score whose text (t_zset.c: d2string, as listpacks keep scores) has the lengths `packed` gives
// (request.h packScoreBytes) and class `cls`: an integer as above; else 1 + 2^-k, whose k fraction digits print
// exactly, also in 17 digits; else, where Redis 7.0's 17 digits are longer, a number of that shortest text
// that prints in 17 digits to that length, drawn from a fixed sequence. False when none is found (a non-integer
// score of 1, 2 or more than 18 characters, a pair of lengths no number has): the nearest is given.
bool scoreText(std::uint32_t packed, IntegerClass cls, std::string& out);

class ElementCommandWriter {
public:
    using Command = std::vector<std::string>;

    // `limits`: the server's, which tell a SINTERSTORE's smallest source of integers an intset
    // (set-max-intset-entries) and whether a ZUNIONSTORE's result ends a listpack.
    explicit ElementCommandWriter(const CollectionLimits& limits = {})
        : m_limits(limits) { }

    // Appends the commands of `r` (Op::Element) on key `key`: none while a command's elements are still coming.
    Status write(const Request& r, const std::string& key, std::vector<Command>& out);
    // Any other request on `keyId` is about to be sent: a command still held is sent first, and a write that
    // replaces or deletes the key (SET, SET XX, DEL) forgets its elements.
    void before(const Request& r, std::vector<Command>& out);
    // The key `from` was renamed `to` (sent after before() of it): its elements' names go with it, `to`'s
    // are forgotten.
    void renamed(std::uint32_t from, std::uint32_t to) {
        m_keys.erase(to);
        if (auto node = m_keys.extract(from)) {
            node.key() = to;
            m_keys.insert(std::move(node));
        }
    }
    // The key `from` was copied to `to` (COPY): `to` holds the same elements, under the same names.
    void copied(std::uint32_t from, std::uint32_t to) {
        m_keys.erase(to);
        if (const auto source = m_keys.find(from); source != m_keys.end()) {
            Key copy = source->second;
            m_keys.emplace(to, std::move(copy));
        }
    }
    // The end of the trace: a command still held (its trace ended inside it) is sent as it stands.
    void flush(std::vector<Command>& out);
    // Elements whose text could not have the trace's length and class, or whose name had to repeat within its
    // key (more of one short length than it has names): the server's figures differ from the trace's by these.
    std::uint64_t approximated() const { return m_approximated; }
    // Removes and updates of an element of a shape the key did not hold (a trace cut out of a longer one).
    std::uint64_t unmatched() const { return m_unmatched; }

private:
    // A field's or member's shape: its length and class, and its value's (a hash's value, a sorted set's score).
    struct Shape {
        std::uint32_t bytes = 0;
        std::uint32_t valueBytes = 0;
        IntegerClass cls = IntegerClass::None;
        IntegerClass valueClass = IntegerClass::None;
        auto operator<=>(const Shape&) const = default;
    };
    struct Key {
        std::map<Shape, std::vector<std::string>> held; // names held, by shape (hashes, sets, sorted sets)
        std::map<std::uint64_t, std::uint64_t> made; // names made so far, by length and class
        // Where the key's names start: keys that hold the same number of fields do not all hold the same
        // names, which would place them alike in every table (their hashes are the same) and make one random
        // draw of a table's layout count once per key.
        std::uint64_t firstName = 0;
        std::uint64_t elements = 0;
    };
    struct Pending {
        std::uint32_t keyId = 0;
        std::uint64_t remaining = 0;
        Command command;
        // A SINTERSTORE's result whose smallest source was not an intset (request.h kIntersectionOfNonIntegers):
        // made as that command makes it (intersectionRebuilt).
        bool intersection = false;
        // A ZADD that left a member it names out (the key does not hold it): ZADD XX, sent with XX.
        bool onlyExisting = false;
    };
    // One command's removals (request.h: all but its last say more follow), sent together.
    struct Removals {
        std::uint32_t keyId = 0;
        std::string key;
        CollectionKind collection = CollectionKind::Hash;
        bool byRange = false; // ZREMRANGEBY*'s (kRemovedByRange)
        std::vector<std::string> names;
    };

    Key& keyOf(std::uint32_t keyId);
    // Key::made's index of a name's length and class.
    static std::uint64_t shapeKey(std::uint32_t bytes, IntegerClass cls) {
        return std::uint64_t { bytes } << 3 | static_cast<std::uint64_t>(cls);
    }
    std::string newName(Key& key, std::uint32_t bytes, IntegerClass cls);
    // A held name of `shape` taken out of the key (removed or about to be re-filed); empty when none.
    std::string take(Key& key, const Shape& shape);
    // A name of that length and class the key has not had (the next one newName would make, not taken from it):
    // a member a command names and the key does not hold.
    std::string absentName(Key& key, std::uint32_t bytes, IntegerClass cls);
    std::string value(std::uint32_t bytes, IntegerClass cls);
    std::string score(std::uint32_t bytes, IntegerClass cls);
    // Appends `words` to the command held for the key, or sends `whole` when none is held.
    void add(std::uint32_t keyId, std::vector<std::string> words, Command whole, std::vector<Command>& out);
    void removed(std::uint32_t keyId, Key& key);
    void sendRemovals(std::vector<Command>& out);
    // A lookup within a SADD or ZADD of the key (a member it names again, or one the key holds, unchanged):
    // appended to the command as a held name of its length and class, so that the server decides the
    // command's encoding and sizes its table on all its members as the capture's did (t_set.c saddCommand,
    // t_zset.c zaddGenericCommand: zsetTypeCreate). False when the key holds no such name.
    bool namedAgain(const Request& r, const std::string& key, std::vector<Command>& out);
    Status listCommand(const Request& r, const std::string& key, std::vector<Command>& out);
    // A LINSERT beside the pivot a list's Add names by its place (request.h), as three commands.
    void insertBesidePlace(const Request& r, const std::string& key, std::string element, std::vector<Command>& out);

    // A SINTERSTORE result's members sent so that the server builds it as that command did: `SADD key ~
    // members...` (a listpack or a table, not an intset), `SREM key ~`, then `SINTERSTORE key key`, whose only
    // source is not an intset (no made-up name is "~").
    static void intersectionRebuilt(Command members, std::vector<Command>& out);

    // A ZUNIONSTORE's result whose sources are coming (UnionRebuild): its members named, a listpack's scored.
    Status unionWrite(const Request& r, std::vector<Command>& out);
    void sendUnion(std::vector<Command>& out);

    CollectionLimits m_limits;
    std::optional<UnionRebuild> m_union;
    std::unordered_map<std::uint32_t, Key> m_keys;
    std::optional<Pending> m_pending; // the command whose elements are coming
    std::optional<Removals> m_removals; // the command whose removals are coming
    std::uint64_t m_approximated = 0;
    std::uint64_t m_unmatched = 0;
};

} // namespace layoutlab
