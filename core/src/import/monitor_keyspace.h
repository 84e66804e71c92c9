// SPDX-License-Identifier: MIT
#pragma once

// What the MONITOR importer knows of each key from the commands it has seen, for the commands whose
// effect depends on the value or the TTL the key holds: INCR and INCRBYFLOAT (the result is not in the
// capture), MSETNX (all or nothing), EXPIRE's NX/XX/GT/LT. A key is known by a 64-bit hash of its name and
// its database (keyHashIn): a name in two databases is two keys.

#include "hll_sparse.h"
#include "layoutlab/trace/request.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace layoutlab::monitor {

// Seconds from `nowMs` to an absolute expiry `atMs`, at least 1 (an expiry in the past still removes the key at
// the next check), short of kKeepTtl.
inline std::uint32_t secondsUntil(std::uint64_t atMs, std::uint64_t nowMs) {
    const std::uint64_t s = atMs > nowMs ? (atMs - nowMs + 999) / 1000 : 0;
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(s, 1, kKeepTtl - 1));
}

// util.c string2ll: optional '-', no leading zero (but "0"), no '+', at most 20 chars, fits a long long.
std::optional<std::int64_t> parseLongLong(std::string_view text);
// util.c string2ld: strtold of the whole string, no leading space, no NaN, no overflow.
std::optional<long double> parseLongDouble(std::string_view text);
// util.c ld2string(LD_STR_HUMAN): "%.17Lf" without trailing zeros (or the dot), "-0" as "0".
std::string formatLongDouble(long double value);

// A hash field's value: its length, and its text where it is a number (HINCRBY and HINCRBYFLOAT read it).
struct FieldValue {
    std::uint32_t length = 0;
    std::string numeric;
};
using HashFields = std::unordered_map<std::string, FieldValue>;
// A set's members, each with its place in the order they were added (from 0, counting members since
// removed), and the places held, in order: the order a table's buckets chain members in decides what a
// removal frees (CollectionKeyModel), and so does how many members added after it are still there.
struct SetMembers {
    std::unordered_map<std::string, std::uint32_t> added;
    // Each held place's member (a key of `added`): SPOP's draw takes a place, then its member.
    std::unordered_map<std::uint32_t, const std::string*> byPlace;
    std::uint64_t draws = 0; // SPOP's draws so far, the next one's seed
    __gnu_pbds::tree<std::uint32_t, __gnu_pbds::null_type, std::less<>, __gnu_pbds::rb_tree_tag,
        __gnu_pbds::tree_order_statistics_node_update>
        places;
    std::uint32_t next = 0;

    // Adds a member at the next place; false (nothing changed) where the set holds it.
    bool add(const std::string& member) {
        const auto [it, isNew] = added.emplace(member, next);
        if (isNew) {
            byPlace.emplace(next, &it->first);
            places.insert(next++);
        }
        return isNew;
    }
    // Removes a member the set holds.
    void erase(std::unordered_map<std::string, std::uint32_t>::iterator found) {
        byPlace.erase(found->second);
        places.erase(found->second);
        added.erase(found);
    }
    // SPOP's next draw (the importer's, seeded by `seed` and the draws so far): a member, each equally likely.
    const std::string& draw(std::uint64_t seed);
};

// A HyperLogLog the capture made (PFADD, PFMERGE): its sparse form as the server holds it, and the length at
// which hllSparseSet last made room (the replay's model makes it again only after a change of length).
struct HyperLogLogState {
    hll::Sparse sparse;
    std::uint32_t roomMadeAt = 0;
};

struct KeyValue {
    // HyperLogLog: a string a PF command made (its length is the string's, `raw` set: a RAW sds).
    enum class Content : std::uint8_t { Absent, Integer, Float, Other, Hash, Set, SortedSet, List, HyperLogLog };
    Content content = Content::Absent;
    std::int64_t integer = 0; // Content::Integer
    long double number = 0; // Integer and Float
    std::uint64_t expireAtMs = 0; // 0: no TTL
    std::uint64_t length = 0; // the string's length (Integer: its digits)
    std::string text; // Float: the value as stored, for an APPEND or SETRANGE to it
    // A RAW sds whatever its length: a value APPEND grew, SETRANGE or SETBIT wrote, BITOP made (db.c
    // dbUnshareStringValue, bitops.c), which COPY duplicates as it is (object.c dupStringObject).
    bool raw = false;
    // Content::List: its elements' sizes given to the replay, before its first LINSERT (request.h
    // ElementAction::Size).
    bool listSizesGiven = false;
    std::unique_ptr<HashFields> hash; // Content::Hash: its fields
    std::unique_ptr<SetMembers> set; // Content::Set: its members
    std::unique_ptr<std::unordered_map<std::string, double>> zset; // Content::SortedSet: members and scores
    // Content::List: its elements, head first (LREM finds them by their text).
    std::unique_ptr<std::deque<std::string>> list;
    std::unique_ptr<HyperLogLogState> hll; // Content::HyperLogLog

    // The value's text where it is known (Integer, Float), else nullopt.
    std::optional<std::string> knownText() const {
        if (content == Content::Integer)
            return std::to_string(integer);
        if (content == Content::Float)
            return text;
        return std::nullopt;
    }

    bool present() const { return content != Content::Absent; }
    bool isCollection() const {
        return content == Content::Hash || content == Content::Set || content == Content::SortedSet
            || content == Content::List;
    }
    // The content of a string value, set as the server stores it (not RAW).
    void assign(std::string_view value);
    // A HyperLogLog's bytes changed by a string command (APPEND, SETRANGE, SETBIT): a string of its length
    // whose registers are no longer followed.
    void forgetHyperLogLog() {
        if (content == Content::HyperLogLog)
            content = Content::Other;
        hll.reset();
    }
    // The value's duplicate (COPY: object.c dupStringObject, the types' dup), its TTL with it: a collection's
    // elements too, a set's members added in the order the source holds them.
    KeyValue copy() const;
};

// What RENAME and RENAMENX did (db.c renameGenericCommand), for the importer to say so.
enum class RenameOutcome : std::uint8_t {
    Renamed, // the source's value, its TTL with it, is the destination's now; the source is gone
    NoSuchKey, // the source is absent: "ERR no such key"
    Unchanged, // the source renamed onto itself, or RENAMENX onto a key that exists
    Unseen, // the capture has not shown the source: the server may have held it
};

// The database of a capture's "<db> <client>" (a Lua script's "<db> lua" too); 0 where it has no number.
std::uint32_t databaseOf(std::string_view client);
// The hash a key of database `db` is known by: its name's (KeyInterner::hashKey) in database 0, mixed with the
// database's number in the others.
std::uint64_t keyHashIn(std::string_view key, std::uint32_t db);

class MonitorKeyspace;
RenameOutcome renameKey(
    MonitorKeyspace& keys, const std::string& from, const std::string& to, bool nx, std::uint64_t nowMs);
// MOVE of `key` from the keyspace's database to the one whose keys `toHolder` holds (monitor_rename.cpp):
// NoSuchKey where the source is absent (the server's reply 0, no error), Unchanged where the destination
// exists.
RenameOutcome moveKey(MonitorKeyspace& keys, const std::string& key, std::uint32_t toHolder, std::uint64_t nowMs);

class MonitorKeyspace {
public:
    // The database the commands that follow name keys in (the capture's "[<db> <client>]"). Its keys are
    // known by the database that held them when they were written (holderOf): a SWAPDB moves no key.
    void setDatabase(std::uint32_t db) { m_db = holderOf(db); }
    // The holder of the database the commands name keys in.
    std::uint32_t database() const { return m_db; }
    // Which database's keys database `db` holds now: itself unless a SWAPDB exchanged it.
    std::uint32_t holderOf(std::uint32_t db) const;
    // db.c swapdbCommand: the two databases' keys exchanged (their numbers in the capture, not holders).
    void swapDatabases(std::uint32_t a, std::uint32_t b);
    // The key's value at `nowMs` (a passed TTL makes it absent), or nullptr when the capture has not shown
    // the key before: it may have been in the server when the capture began.
    KeyValue* find(std::string_view key, std::uint64_t nowMs) { return findIn(key, m_db, nowMs); }
    // The key's entry, created absent when the capture has not shown it.
    KeyValue& at(std::string_view key, std::uint64_t nowMs) { return atIn(key, m_db, nowMs); }
    // As find() and at(), in the database whose keys `holder` holds (MOVE's destination).
    KeyValue* findIn(std::string_view key, std::uint32_t holder, std::uint64_t nowMs);
    KeyValue& atIn(std::string_view key, std::uint32_t holder, std::uint64_t nowMs);
    // Every key that holds a value (its TTL passed or not: the replay may hold it still), with the hash it is
    // known by, its name's length and the database that holds it (its holder): f(hash, keyBytes, holder, value);
    // in one holder's database, or every one (nullopt).
    template <class F> void forEachHeld(std::optional<std::uint32_t> holder, F&& f) {
        for (auto& [hash, entry] : m_keys)
            if (entry.value.present() && (!holder || entry.db == *holder))
                f(hash, entry.keyBytes, entry.db, entry.value);
    }

private:
    struct Entry {
        KeyValue value;
        std::uint32_t keyBytes = 0; // the name's length, for the requests a FLUSHALL makes of it
        std::uint32_t db = 0;
    };
    std::unordered_map<std::uint64_t, Entry> m_keys;
    std::uint32_t m_db = 0;
    std::unordered_map<std::uint32_t, std::uint32_t> m_holders; // by database, where SWAPDB made it another's
};

} // namespace layoutlab::monitor
