// SPDX-License-Identifier: MIT
// Set commands as t_set.c runs them (Redis 7.0-7.2, Valkey 8-9 alike for these):
//   saddCommand: setTypeCreate for a new key, or setTypeMaybeConvert for the command's member count (the
//     command's start, with its first member), then setTypeAdd for each: a member the set holds is looked
//     up and left (a table's find position takes a rehash step), any other added.
//   sremCommand: setTypeRemove for each member, a lookup for one that is not there (a table's delete takes a
//     rehash step first); the key goes with its last member, and the members after it are not looked at.
//   sismemberCommand, smismemberCommand: a lookup per member.
// A key of another type answers WRONGTYPE (checkType) and nothing changes.

#include "monitor_collections.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace layoutlab::monitor {

namespace {
constexpr std::array<std::string_view, 4> kElementCommands { "SADD", "SREM", "SISMEMBER", "SMISMEMBER" };
constexpr std::array<std::string_view, 4> kWholeReads { "SMEMBERS", "SCARD", "SSCAN", "SRANDMEMBER" };

class SetCommand : CollectionCommand {
public:
    SetCommand(std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs)
        : CollectionCommand(CollectionKind::Set, name, args, keys, nowMs) { }

    CollectionCommandEffect run() {
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
            if (members.added.emplace(m_args[i], members.next).second) {
                members.places.insert(members.next++);
                push(element(ElementAction::Add, m_args[i]));
            } else {
                lookup(m_args[i]);
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
            // Its place in the order of adds (from 1; 0: not known), and the members added after it still
            // there (in the prior value's field, which a set's member has no use for).
            Request r = element(ElementAction::Remove, m_args[i]);
            r.valueBytes = found->second + 1;
            r.ttlSeconds
                = static_cast<std::uint32_t>(members.places.size() - 1 - members.places.order_of_key(found->second));
            push(r);
            members.places.erase(found->second);
            members.added.erase(found);
            if (members.added.empty()) {
                *m_key = KeyValue {}; // the server deletes an empty set
                break;
            }
        }
        markRemovalsOfOneCommand(first);
    }
};
} // namespace

const CollectionCommands kSetCommands { kElementCommands, kWholeReads,
    [](std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
        return SetCommand(name, args, keys, nowMs).run();
    } };

} // namespace layoutlab::monitor
