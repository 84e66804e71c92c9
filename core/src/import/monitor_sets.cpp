// SPDX-License-Identifier: MIT
// Set commands as t_set.c runs them (Redis 7.0-7.2, Valkey 8-9 alike for these):
//   saddCommand: setTypeCreate for a new key, or setTypeMaybeConvert for the command's member count (the
//     command's start, with its first member), then setTypeAdd for each: a member the set holds is found
//     by the add that looked for its place (kFoundForInsert: dictAddRaw grows a full dict first, and takes a
//     rehash step), any other added.
//   sremCommand: setTypeRemove for each member, a lookup for one that is not there (a table's delete takes a
//     rehash step first); the key goes with its last member, and the members after it are not looked at.
//   sismemberCommand, smismemberCommand: a lookup per member.
//   spopCommand, spopWithCountCommand: members drawn at random (setTypePopRandom; a listpack's lpNextRandom)
//     removed; which ones is the server's draw, not in the capture (MONITOR shows SPOP, not the SREM it
//     propagates), so the importer draws its own from the set it knows, each equally likely: their lengths are
//     the server's in distribution, and exactly where a set's members are alike. A count of the whole set or
//     more deletes the key; where what remains is at most a fifth of the count (SPOP_MOVE_STRATEGY_MUL: "case
//     3"), the server draws the members that stay, adds them one by one to a new set (createSetListpackObject,
//     or createIntsetObject where the first drawn is an integer; setTypeAddAux converts it as the adds go),
//     frees the old set with the members popped, and keeps the key and its TTL (dbReplaceValue): taken as the
//     key deleted, made again by one-member adds, and its TTL set again.
// A key of another type answers WRONGTYPE (checkType) and nothing changes.

#include "monitor_collections.h"

#include "layoutlab/import/importer.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace layoutlab::monitor {

namespace {
constexpr std::array<std::string_view, 5> kElementCommands { "SADD", "SREM", "SISMEMBER", "SMISMEMBER", "SPOP" };
constexpr std::uint64_t kPopSalt = 0x5909; // SPOP's draws: the same members every import
constexpr std::uint64_t kMoveStrategyMul = 5; // t_set.c SPOP_MOVE_STRATEGY_MUL
constexpr std::array<std::string_view, 8> kWholeReads { "SMEMBERS", "SCARD", "SSCAN", "SRANDMEMBER", "SINTER", "SUNION",
    "SDIFF", "SINTERCARD" };

class SetCommand : CollectionCommand {
public:
    SetCommand(std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs)
        : CollectionCommand(CollectionKind::Set, name, args, keys, nowMs) { }

    CollectionCommandEffect run() {
        if (m_name == "SPOP") {
            pop();
            return std::move(m_effect);
        }
        // SISMEMBER takes one member; the others one or more.
        if (m_args.size() < 3 || (m_name == "SISMEMBER" && m_args.size() != 3)) {
            refuse("wrong number of arguments", fmt::format("{} arguments", m_args.size() - 1));
            return std::move(m_effect);
        }
        if (!lookUpKey(KeyValue::Content::Set))
            return std::move(m_effect);
        if (m_name == "SADD")
            add();
        else if (m_name == "SREM")
            remove();
        else if (present())
            for (std::size_t i = 2; i < m_args.size(); ++i)
                lookup(m_args[i]);
        return std::move(m_effect);
    }

private:
    void add() {
        SetMembers& members = *keyMade(KeyValue::Content::Set).set;
        command(m_args.size() - 2, 2, integerClassOf(m_args[2]));
        for (std::size_t i = 2; i < m_args.size(); ++i) {
            if (members.add(m_args[i])) {
                push(element(ElementAction::Add, m_args[i]));
            } else { // setTypeAdd looks for its place to add it (request.h kFoundForInsert)
                Request found = element(ElementAction::Read, m_args[i]);
                found.valueBytes = kFoundForInsert;
                push(found);
            }
        }
    }
    void remove() {
        if (!present())
            return; // a missing key: nothing to remove
        SetMembers& members = *m_key->set;
        const std::size_t first = requestsSoFar();
        for (std::size_t i = 2; i < m_args.size(); ++i) {
            const auto found = members.added.find(m_args[i]);
            if (found == members.added.end()) {
                lookup(m_args[i]);
                continue;
            }
            if (!removeMember(members, found))
                break;
        }
        markRemovalsOfOneCommand(first);
    }
    // The member's removal; false when it was the last (the key is gone).
    bool removeMember(SetMembers& members, std::unordered_map<std::string, std::uint32_t>::iterator found) {
        // Its place in the order of adds (from 1; 0: not known), and the members added after it still there
        // (in the prior value's field, which a set's member has no use for).
        Request r = element(ElementAction::Remove, found->first);
        r.valueBytes = found->second + 1;
        r.ttlSeconds
            = static_cast<std::uint32_t>(members.places.size() - 1 - members.places.order_of_key(found->second));
        push(r);
        members.erase(found);
        if (!members.added.empty())
            return true;
        *m_key = KeyValue {}; // the server deletes an empty set
        return false;
    }
    // t_set.c spopWithCountCommand's case 3: `remaining` members drawn to stay, the rest popped with the old set.
    void rebuild(SetMembers& members, std::uint64_t remaining, std::uint64_t seed) {
        std::vector<std::string> kept;
        for (std::uint64_t i = 0; i < remaining; ++i) {
            const auto found = members.added.find(members.draw(seed));
            kept.push_back(found->first);
            members.erase(found);
        }
        const std::uint64_t expireAtMs = m_key->expireAtMs;
        Request gone;
        gone.op = Op::Delete;
        m_effect.requests.push_back(gone);
        *m_key = KeyValue {};
        SetMembers& made = *keyMade(KeyValue::Content::Set).set;
        for (const std::string& member : kept) {
            // Each add a command of its own (the new set gets no size hint: setTypeAddAux one member at a time),
            // the first's creating it by its member's class (an integer: an intset).
            Request start = element(ElementAction::Command, member);
            start.valueBytes = 1;
            push(start);
            made.add(member);
            push(element(ElementAction::Add, member));
        }
        m_key->expireAtMs = expireAtMs;
        if (expireAtMs != 0) {
            Request ttl;
            ttl.op = Op::Expire;
            ttl.ttlSeconds = secondsUntil(expireAtMs, m_nowMs);
            m_effect.requests.push_back(ttl);
        }
    }

    void pop() {
        // t_set.c spopCommand: a count only as its third argument; spopWithCountCommand: a count of 0 or more
        // (getPositiveLongFromObjectOrReply), the key looked up after it.
        if (m_args.size() < 2 || m_args.size() > 3) {
            refuse(m_args.size() < 2 ? "wrong number of arguments" : "syntax error",
                fmt::format("{} arguments", m_args.size() - 1));
            return;
        }
        std::uint64_t count = 1;
        if (m_args.size() == 3) {
            const auto n = parseLongLong(m_args[2]);
            if (!n) {
                refuse("value is not an integer or out of range", "'" + m_args[2].substr(0, 40) + "'");
                return;
            }
            if (*n < 0) {
                refuse("value is out of range, must be positive", m_args[2]);
                return;
            }
            count = static_cast<std::uint64_t>(*n);
        }
        if (!lookUpKey(KeyValue::Content::Set) || !present() || count == 0)
            return;
        SetMembers& members = *m_key->set;
        m_effect.drawn = true;
        const std::uint64_t seed = KeyInterner::hashKey(m_args[1]) ^ kPopSalt;
        if (const std::uint64_t size = members.places.size();
            count < size && (size - count) * kMoveStrategyMul <= count)
            return rebuild(members, size - count, seed);
        // Each member drawn (setTypeRandomElement: a table's draw advances its rehash), then removed, the table
        // free to shrink after each (only SREM pauses it, on Valkey 9.1).
        for (std::uint64_t i = 0; i < count; ++i) {
            const std::string& member = members.draw(seed);
            Request draw = element(ElementAction::Read, member);
            draw.valueBytes = kRandomDraw;
            push(draw);
            if (!removeMember(members, members.added.find(member)))
                break; // every member popped: the key is deleted (count >= size)
        }
    }
};
} // namespace

const CollectionCommands kSetCommands { kElementCommands, kWholeReads,
    [](std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
        return SetCommand(name, args, keys, nowMs).run();
    } };

} // namespace layoutlab::monitor
