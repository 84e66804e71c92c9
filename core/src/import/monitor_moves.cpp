// SPDX-License-Identifier: MIT
// Collection commands that name several keys, applied as the single-key commands whose effect they have:
//   t_list.c blockingPopGenericCommand (BLPOP, BRPOP): the first key holding a list gives one element (a key
//     of another type before it: WRONGTYPE); none: the client blocks, nothing changes (the command shows
//     again in the capture if the server runs it when a list arrives).
//   t_list.c lmpopGenericCommand (LMPOP, BLMPOP): the same, up to COUNT elements off the chosen end.
//   t_list.c lmoveGenericCommand (LMOVE, BLMOVE, RPOPLPUSH, BRPOPLPUSH): the source checked, then the
//     destination (either of another type: WRONGTYPE, nothing moves); an element popped off the source's end
//     and pushed onto the destination's (lmoveHandlePush: as LPUSH or RPUSH of it); the source deleted when
//     emptied. A list moved onto itself with one element changes nothing.
//   t_set.c smoveCommand (SMOVE): both keys' types checked; the same key: a lookup; else the member removed
//     from the source (a lookup where it is not there) and added to the destination, made for it if absent.
//   t_zset.c genericZpopCommand (ZPOPMIN, ZPOPMAX, BZPOPMIN, BZPOPMAX, ZMPOP, BZMPOP): the first key holding a
//     sorted set loses its COUNT lowest (highest) members, by score and then by member (ZREM of them).
// SRANDMEMBER's count picks members at random and changes nothing; SPOP's draws are monitor_sets.cpp's.

#include "monitor_multi_key.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace layoutlab::monitor {

namespace {

constexpr std::array<std::string_view, 15> kCommands { "BLPOP", "BRPOP", "LMPOP", "BLMPOP", "LMOVE", "BLMOVE",
    "RPOPLPUSH", "BRPOPLPUSH", "SMOVE", "ZPOPMIN", "ZPOPMAX", "BZPOPMIN", "BZPOPMAX", "ZMPOP", "BZMPOP" };

std::string upper(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

class MoveCommand : MultiKeyCommand {
public:
    using MultiKeyCommand::MultiKeyCommand;

    CollectionCommandEffect run() {
        if (m_name == "BLPOP" || m_name == "BRPOP")
            blockingPop();
        else if (m_name == "LMPOP" || m_name == "BLMPOP" || m_name == "ZMPOP" || m_name == "BZMPOP")
            multiPop();
        else if (m_name == "SMOVE")
            smove();
        else if (m_name == "ZPOPMIN" || m_name == "ZPOPMAX")
            zpop(m_name == "ZPOPMIN", m_args.size() == 3 ? std::optional<std::string>(m_args[2]) : std::nullopt);
        else if (m_name == "BZPOPMIN" || m_name == "BZPOPMAX")
            blockingZpop();
        else
            lmove();
        return std::move(m_effect);
    }

private:
    void blockingPop() {
        if (!arity(3) || !timeout(m_args.back()))
            return;
        const auto names = std::span<const std::string>(m_args).subspan(1, m_args.size() - 2);
        if (const std::string* key = firstHolding(names, KeyValue::Content::List))
            apply({ m_name == "BLPOP" ? "LPOP" : "RPOP", *key });
    }
    // LMPOP numkeys key... LEFT|RIGHT [COUNT n], ZMPOP numkeys key... MIN|MAX [COUNT n], and their blocking
    // forms with a timeout first.
    void multiPop() {
        const bool blocking = m_name[0] == 'B';
        const bool lists = m_name.find('L') != std::string_view::npos;
        const std::size_t numkeysAt = blocking ? 2 : 1;
        if (!arity(numkeysAt + 3) || (blocking && !timeout(m_args[1])))
            return;
        const auto numkeys = parseLongLong(m_args[numkeysAt]);
        if (!numkeys || *numkeys <= 0 || static_cast<std::uint64_t>(*numkeys) > m_args.size() - numkeysAt - 2)
            return refuse(numkeys && *numkeys <= 0 ? "numkeys should be greater than 0" : "syntax error",
                "numkeys '" + m_args[numkeysAt].substr(0, 40) + "'");
        const std::size_t whereAt = numkeysAt + 1 + static_cast<std::size_t>(*numkeys);
        const std::string where = upper(m_args[whereAt]);
        const bool fromHead = where == (lists ? "LEFT" : "MIN");
        if (!fromHead && where != (lists ? "RIGHT" : "MAX"))
            return refuse("syntax error", "'" + m_args[whereAt].substr(0, 40) + "'");
        std::string count = "1";
        if (m_args.size() == whereAt + 3 && upper(m_args[whereAt + 1]) == "COUNT") {
            const auto n = parseLongLong(m_args[whereAt + 2]);
            if (!n || *n <= 0)
                return refuse("count should be greater than 0", "'" + m_args[whereAt + 2].substr(0, 40) + "'");
            count = m_args[whereAt + 2];
        } else if (m_args.size() != whereAt + 1) {
            return refuse("syntax error", "after " + where);
        }
        const auto names
            = std::span<const std::string>(m_args).subspan(numkeysAt + 1, static_cast<std::size_t>(*numkeys));
        const std::string* key = firstHolding(names, lists ? KeyValue::Content::List : KeyValue::Content::SortedSet);
        if (!key)
            return;
        if (lists)
            apply({ fromHead ? "LPOP" : "RPOP", *key, count });
        else
            popLowestOrHighest(*key, fromHead, static_cast<std::uint64_t>(*parseLongLong(count)));
    }

    void lmove() {
        const bool rpoplpush = m_name.find("RPOPLPUSH") != std::string_view::npos;
        const bool blocking = m_name[0] == 'B';
        const std::size_t given = 3 + (rpoplpush ? 0 : 2) + (blocking ? 1 : 0);
        if (!arity(given, given) || (blocking && !timeout(m_args.back())))
            return;
        bool fromHead = false, toHead = true;
        if (!rpoplpush) {
            const std::string from = upper(m_args[3]), to = upper(m_args[4]);
            if ((from != "LEFT" && from != "RIGHT") || (to != "LEFT" && to != "RIGHT"))
                return refuse("syntax error", from + " " + to);
            fromHead = from == "LEFT";
            toHead = to == "LEFT";
        }
        const auto source = typed(m_args[1], KeyValue::Content::List);
        if (!source || !*source)
            return; // WRONGTYPE, or nothing to move (a blocking form blocks)
        if (!typed(m_args[2], KeyValue::Content::List))
            return;
        const std::deque<std::string>& list = *(*source)->list;
        if (m_args[1] == m_args[2] && list.size() == 1)
            return; // the one element popped and pushed back onto the same list
        const std::string element = fromHead ? list.front() : list.back();
        apply({ fromHead ? "LPOP" : "RPOP", m_args[1] });
        apply({ toHead ? "LPUSH" : "RPUSH", m_args[2], element }); // lmoveHandlePush: as a push of it
    }

    void smove() {
        if (!arity(4, 4))
            return;
        const auto source = typed(m_args[1], KeyValue::Content::Set);
        if (!source)
            return;
        if (!typed(m_args[2], KeyValue::Content::Set) || !*source)
            return; // a WRONGTYPE, or no source: nothing changes
        if (m_args[1] == m_args[2])
            return apply({ "SISMEMBER", m_args[1], m_args[3] });
        const bool held = (*source)->set->added.contains(m_args[3]);
        apply({ "SREM", m_args[1], m_args[3] });
        if (held)
            apply({ "SADD", m_args[2], m_args[3] });
    }

    void zpop(bool lowest, const std::optional<std::string>& countText) {
        if (!arity(2, 3))
            return;
        std::uint64_t count = 1;
        if (countText) {
            const auto n = parseLongLong(*countText);
            if (!n || *n < 0)
                return refuse("value is out of range, must be positive", "'" + countText->substr(0, 40) + "'");
            count = static_cast<std::uint64_t>(*n);
        }
        const auto zset = typed(m_args[1], KeyValue::Content::SortedSet);
        if (zset && *zset && count > 0)
            popLowestOrHighest(m_args[1], lowest, count);
    }
    void blockingZpop() {
        if (!arity(3) || !timeout(m_args.back()))
            return;
        const auto names = std::span<const std::string>(m_args).subspan(1, m_args.size() - 2);
        if (const std::string* key = firstHolding(names, KeyValue::Content::SortedSet))
            popLowestOrHighest(*key, m_name == "BZPOPMIN", 1);
    }
    // ZREM of the `count` lowest (highest) members of a sorted set, by score and then by member, as its
    // listpack or skiplist orders them.
    void popLowestOrHighest(const std::string& key, bool lowest, std::uint64_t count) {
        ScoredMembers order = scoredMembers(*m_keys.find(key, m_nowMs)->zset);
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(count, order.size()));
        auto before = [lowest](const auto& a, const auto& b) {
            return lowest ? lowerInSortedSet(a, b) : lowerInSortedSet(b, a);
        };
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(), before);
        std::vector<std::string> args { "ZREM", key };
        for (std::size_t i = 0; i < take; ++i)
            args.push_back(*order[i].second);
        apply(std::move(args));
    }
};

} // namespace

bool isMultiKeyCollectionCommand(std::string_view name) {
    return std::find(kCommands.begin(), kCommands.end(), name) != kCommands.end() || isSetStoreCommand(name)
        || isSortedSetStoreCommand(name);
}

CollectionCommandEffect applyMultiKeyCollectionCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
    if (isSetStoreCommand(name))
        return applySetStoreCommand(name, args, keys, nowMs);
    if (isSortedSetStoreCommand(name))
        return applySortedSetStoreCommand(name, args, keys, nowMs);
    return MoveCommand(name, args, keys, nowMs).run();
}

} // namespace layoutlab::monitor
