// SPDX-License-Identifier: MIT
// The set algebra's STORE commands (t_set.c, Redis 7.0-7.2 and Valkey 8-9 alike for what they leave):
//   sinterGenericCommand (SINTERSTORE dst key...), sunionDiffGenericCommand (SUNIONSTORE, SDIFFSTORE): every
//   source looked up first (a missing key is an empty set; a key of another type: WRONGTYPE, nothing changes);
//   the result built in a new set object, member by member (setTypeAddAux: an intset, a listpack or a table as
//   the members come, as SADD of one member each makes it), then put in place of whatever dst held (setKey:
//   its value and its TTL gone); an empty result deletes dst.
//   SINTERSTORE iterates the smallest source (qsortCompareSetsByCardinality) and keeps the members every other
//   source holds; SDIFFSTORE with a later source the same key as the first: empty. SDIFFSTORE's first algorithm
//   keeps the first set's members no other source holds; its second (taken when half the first set's size
//   times the sources exceeds their sizes' sum) adds the whole first set, then removes each later source's
//   members from it, so that the result can be a table at a size the first keeps compact: both are followed.
// The importer replays one as the lookups in the sources (setTypeIsMember: SINTERSTORE's in every other source
// until one lacks the member, SDIFFSTORE's first algorithm's in the others until one holds it; each a rehash
// step of a table, which a table left rehashing by its last write needs to finish), then a delete of dst (when
// the capture showed it held) and the SADDs and SREMs of one member it amounts to, in the order the importer
// knows the sources' members in (a table's order is its hash seed's). SINTERSTORE's result is made as the server
// makes it (Redis 7.2 and later, Valkey: a listpack, whatever its members, unless the smallest source is an intset;
// Redis 7.0: an intset) and, when it holds integers only, turned into an intset at the end within the limit
// (maybeConvertToIntset): storeIntersection. A smallest source of integers only within set-max-intset-entries is
// taken for an intset (one that other members made a listpack or a table, removed since, is not followed).

#include "monitor_multi_key.h"

#include <algorithm>
#include <array>
#include <unordered_set>

namespace layoutlab::monitor {

namespace {

constexpr std::array<std::string_view, 3> kCommands { "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE" };

class SetStoreCommand : MultiKeyCommand {
public:
    using MultiKeyCommand::MultiKeyCommand;

    CollectionCommandEffect run() {
        if (!arity(3))
            return std::move(m_effect);
        std::vector<Source> sources;
        for (std::size_t i = 2; i < m_args.size(); ++i) {
            const auto v = typed(m_args[i], KeyValue::Content::Set);
            if (!v)
                return std::move(m_effect); // WRONGTYPE
            sources.push_back({ &m_args[i], *v ? (*v)->set.get() : nullptr });
        }
        // The sources' lookups first (dst may be one of them), then dst emptied and the result built in it.
        if (m_name == "SINTERSTORE")
            intersection(sources);
        else if (m_name == "SUNIONSTORE")
            unionOf(sources);
        else
            difference(sources);
        emptyDestination(m_args[1]);
        if (m_name == "SINTERSTORE")
            storeIntersection();
        else
            for (const std::string& member : m_added)
                apply({ "SADD", m_args[1], member });
        for (const std::string& member : m_removed)
            if (const KeyValue* dst = m_keys.find(m_args[1], m_nowMs); dst && dst->present())
                apply({ "SREM", m_args[1], member });
        return std::move(m_effect);
    }

private:
    struct Source {
        const std::string* key;
        const SetMembers* set; // nullptr: a missing key (an empty set)
        std::size_t size() const { return set ? set->added.size() : 0; }
    };
    // A set's members in the order they were added (SetMembers::places).
    static std::vector<std::string> inOrder(const SetMembers& set) {
        std::vector<std::string> out;
        out.reserve(set.places.size());
        for (const std::uint32_t place : set.places)
            out.push_back(*set.byPlace.at(place));
        return out;
    }
    // setTypeIsMember: a lookup (a table's find takes a rehash step).
    bool holds(const Source& source, const std::string& member) {
        apply({ "SISMEMBER", *source.key, member });
        return source.set->added.contains(member);
    }
    // Every member of the smallest source looked up in the others, in order, until one lacks it.
    void intersection(std::vector<Source> sources) {
        if (std::any_of(sources.begin(), sources.end(), [](const Source& s) { return !s.set; }))
            return; // an empty set among them: nothing looked up
        std::stable_sort(
            sources.begin(), sources.end(), [](const Source& a, const Source& b) { return a.size() < b.size(); });
        const auto& smallest = sources.front().set->added;
        m_smallestSource
            = std::all_of(smallest.begin(), smallest.end(), [](const auto& m) { return isInteger(m.first); })
            ? static_cast<std::uint32_t>(
                std::min<std::uint64_t>(kIntersectionOfIntegers + std::uint64_t { smallest.size() }, UINT32_MAX))
            : kIntersectionOfNonIntegers;
        for (std::string& member : inOrder(*sources.front().set)) {
            bool everywhere = true;
            for (std::size_t j = 1; j < sources.size() && everywhere; ++j)
                if (sources[j].set != sources.front().set) // the same key twice: not looked up
                    everywhere = holds(sources[j], member);
            if (everywhere)
                m_added.push_back(std::move(member));
        }
    }
    // Every source's members added in turn (the sources iterated, not looked up), those the result holds
    // already too: setTypeAddAux looks each up in it (a table's find takes a rehash step).
    void unionOf(const std::vector<Source>& sources) {
        for (const Source& s : sources)
            if (s.set)
                for (std::string& member : inOrder(*s.set))
                    m_added.push_back(std::move(member));
    }
    void difference(std::vector<Source> sources) {
        const SetMembers* first = sources.front().set;
        if (!first)
            return;
        for (std::size_t j = 1; j < sources.size(); ++j)
            if (sources[j].set == first)
                return; // the first set taken from itself: empty, nothing looked at
        std::uint64_t firstWork = 0, allWork = 0;
        for (const Source& s : sources)
            if (s.set) {
                firstWork += first->added.size();
                allWork += s.size();
            }
        if (firstWork / 2 <= allWork) {
            // Algorithm 1: the others by decreasing size, each member of the first looked up in them until
            // one holds it.
            std::stable_sort(sources.begin() + 1, sources.end(),
                [](const Source& a, const Source& b) { return a.size() > b.size(); });
            for (std::string& member : inOrder(*first)) {
                bool elsewhere = false;
                for (std::size_t j = 1; j < sources.size() && !elsewhere; ++j)
                    elsewhere = sources[j].set && holds(sources[j], member);
                if (!elsewhere)
                    m_added.push_back(std::move(member));
            }
            return;
        }
        // Algorithm 2: the whole first set, then each later source's members removed from it (setTypeRemoveAux:
        // one it does not hold is looked up), in turn, until none is left.
        m_added = inOrder(*first);
        std::unordered_set<std::string> left(m_added.begin(), m_added.end());
        for (auto s = sources.begin() + 1; s != sources.end() && !left.empty(); ++s)
            if (s->set)
                for (std::string& member : inOrder(*s->set)) {
                    left.erase(member);
                    m_removed.push_back(std::move(member));
                    if (left.empty())
                        break;
                }
    }

    // SINTERSTORE's result as one SADD of its members whose Command names its smallest source (request.h): the
    // model makes it as sinterGenericCommand does, its members added one at a time, not as a SADD's count
    // would. When it holds integers only, its members follow as Sizes, which turn it into an intset within the
    // limit (maybeConvertToIntset): the limit is the layout's, not the importer's.
    void storeIntersection() {
        if (m_added.empty())
            return;
        auto& requests = m_effect.requests;
        const std::size_t command = requests.size();
        std::vector<std::string> sadd { "SADD", m_args[1] };
        sadd.insert(sadd.end(), m_added.begin(), m_added.end());
        apply(std::move(sadd));
        for (std::size_t i = command; i < requests.size(); ++i)
            if (requests[i].op == Op::Element && requests[i].elementOp().action == ElementAction::Command) {
                requests[i].ttlSeconds = m_smallestSource; // the SADD's start
                break;
            }
        if (!std::all_of(m_added.begin(), m_added.end(), isInteger))
            return;
        for (const std::string& member : m_added) {
            Request r;
            r.op = Op::Element;
            r.keyBytes = static_cast<std::uint32_t>(m_args[1].size());
            r.elementBytes = static_cast<std::uint32_t>(member.size());
            if (&member == &m_added.front())
                r.valueBytes = static_cast<std::uint32_t>(std::min<std::size_t>(m_added.size(), UINT32_MAX));
            r.element = ElementOp { CollectionKind::Set, ElementAction::Size, integerClassOf(member) }.packed();
            requests.push_back(r);
            m_effect.keys.push_back(m_args[1]);
        }
    }

    // A member an intset could hold (t_set.c: string2ll).
    static bool isInteger(const std::string& member) { return integerClassOf(member) != IntegerClass::None; }

    std::vector<std::string> m_added;
    std::vector<std::string> m_removed;
    std::uint32_t m_smallestSource = kIntersectionOfNonIntegers;
};

} // namespace

bool isSetStoreCommand(std::string_view name) {
    return std::find(kCommands.begin(), kCommands.end(), name) != kCommands.end();
}

CollectionCommandEffect applySetStoreCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
    return SetStoreCommand(name, args, keys, nowMs).run();
}

} // namespace layoutlab::monitor
