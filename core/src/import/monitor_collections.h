// SPDX-License-Identifier: MIT
#pragma once

// The MONITOR importer's collection commands: what each does to the importer's keyspace, as element requests
// (Op::Element) the replay applies in order, with the lengths of the values they replace or remove, which the
// capture does not show but the importer's keyspace knows. Hashes (t_hash.c) in monitor_hashes.cpp, sets
// (t_set.c) in monitor_sets.cpp, sorted sets (t_zset.c) in monitor_zsets.cpp, lists (t_list.c) in
// monitor_lists.cpp; what they share here.

#include "monitor_keyspace.h"

#include "layoutlab/trace/request.h"

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace layoutlab::monitor {

// Whether `name` (upper case) is a collection command the importer models, or one that reads a collection
// whole (HGETALL, SMEMBERS and the like: no element changes, skipped).
bool isCollectionCommand(std::string_view name);
bool readsCollectionWhole(std::string_view name);

// A collection command's effect: its element requests for the key args[1] (time and key id are the
// caller's), or the error the server answers with (nothing changes).
struct CollectionCommandEffect {
    std::vector<Request> requests;
    // Each request's key when the command names several (LMOVE's source and destination); empty: args[1].
    std::vector<std::string> keys;
    std::string refusal; // the server's error, empty when applied
    std::string detail;
    bool drawn = false; // its elements are the importer's draw, not the server's (SPOP)
};

CollectionCommandEffect applyCollectionCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs);

// Commands that pop from the first non-empty of several keys or move an element between two (BLPOP, LMPOP,
// LMOVE, RPOPLPUSH, SMOVE, ZPOPMIN, BZPOPMAX, ZMPOP and their blocking forms: monitor_moves.cpp), applied as
// the single-key commands whose effect they have; each request names its key.
// The algebra's STORE commands among them: SINTERSTORE, SUNIONSTORE, SDIFFSTORE (monitor_set_store.cpp) and
// ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE (monitor_zset_store.cpp).
bool isMultiKeyCollectionCommand(std::string_view name);
CollectionCommandEffect applyMultiKeyCollectionCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs);
bool isSetStoreCommand(std::string_view name);
CollectionCommandEffect applySetStoreCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs);
bool isSortedSetStoreCommand(std::string_view name);
CollectionCommandEffect applySortedSetStoreCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs);

// A sorted set's members with their scores, to be put in the order its listpack or skiplist keeps them:
// lowest first, by score and then by member (t_zset.c zslInsert, zzlInsert).
using ScoredMembers = std::vector<std::pair<double, const std::string*>>;
ScoredMembers scoredMembers(const std::unordered_map<std::string, double>& zset);
inline bool lowerInSortedSet(const ScoredMembers::value_type& a, const ScoredMembers::value_type& b) {
    return a.first < b.first || (a.first == b.first && *a.second < *b.second);
}

// "a hash", "a set", "a sorted set", "a string": what a key holds, for a WRONGTYPE's detail.
std::string_view typeName(KeyValue::Content content);

inline constexpr std::string_view kWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";

// One command on one collection key: its arguments, the key as the importer knows it, and the requests it
// makes. A type's command class runs it (run()).
class CollectionCommand {
public:
    CollectionCommand(CollectionKind kind, std::string_view name, const std::vector<std::string>& args,
        MonitorKeyspace& keys, std::uint64_t nowMs)
        : m_kind(kind)
        , m_name(name)
        , m_args(args)
        , m_keys(keys)
        , m_nowMs(nowMs) { }

protected:
    // The key looked up; false (WRONGTYPE refused) when it holds another type (checkType).
    bool lookUpKey(KeyValue::Content content);
    // The key made this type when absent (lookupKeyWrite, then the type's create), its entry returned.
    KeyValue& keyMade(KeyValue::Content content);
    bool present() const { return m_key && m_key->present(); }
    void refuse(std::string reason, std::string detail);
    // A request for an element of the key; push() completes it with the ElementOp as changed since.
    Request element(ElementAction action, std::string_view text);
    void push(Request r);
    void lookup(std::string_view text) { push(element(ElementAction::Read, text)); }
    // The removals pushed since request `first` are one command's: all but the last carry atHead (request.h),
    // for the engines whose table waits for the command's end to shrink (HDEL, SREM, ZREM on Valkey 9.1).
    void markRemovalsOfOneCommand(std::size_t first);
    std::size_t requestsSoFar() const { return m_effect.requests.size(); }
    // A command's start: `elements` elements, the longest of args[firstArg...] (t_hash.c
    // hashTypeTryConversion), the first's integer class (t_set.c setTypeCreate).
    void command(std::uint64_t elements, std::size_t firstArg, IntegerClass first = IntegerClass::None);

    CollectionKind m_kind;
    std::string_view m_name;
    const std::vector<std::string>& m_args;
    MonitorKeyspace& m_keys;
    std::uint64_t m_nowMs;
    KeyValue* m_key = nullptr;
    ElementOp m_op;
    CollectionCommandEffect m_effect;
};

// One type's commands (monitor_hashes.cpp, monitor_sets.cpp, monitor_zsets.cpp, monitor_lists.cpp): those it
// models (upper case), those that read a key of it whole (skipped), and how one is applied.
struct CollectionCommands {
    std::span<const std::string_view> modelled;
    std::span<const std::string_view> wholeReads;
    CollectionCommandEffect (*apply)(
        std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs);
};
extern const CollectionCommands kHashCommands;
extern const CollectionCommands kSetCommands;
extern const CollectionCommands kSortedSetCommands;
extern const CollectionCommands kListCommands;

} // namespace layoutlab::monitor
