// SPDX-License-Identifier: MIT
// The sorted sets' algebra stored (t_zset.c zunionInterDiffGenericCommand: ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE
// dst numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX], Redis 7.0-7.2 and Valkey 8-9 alike for what they
// leave): numkeys (at least one) and the options checked first (an error changes nothing), then every source
// looked up: a sorted set, or a set whose members score 1 (zsetopsrc); a missing key is empty, a key of another
// type WRONGTYPE. The result is built as a skiplist (createZsetObject), each member's score its sources' weighted
// scores aggregated (zunionInterAggregate: a sum that is NaN is 0), and converted to a listpack when it fits one
// (zsetConvertToListpackIfNeeded: entries and the longest member within the limits), then put in place of
// whatever dst held (setKey: its value and TTL gone); an empty result deletes dst. ZINTERSTORE keeps the members
// every source holds; ZDIFFSTORE the first source's members no other holds, with the first's scores.
// The importer replays one as the lookups in the sources (zuiFind: ZINTERSTORE's in every other source until one
// lacks the member, ZDIFFSTORE's first algorithm's in the others until one holds it; each a rehash step of a
// table), then a delete of dst (when the capture showed it held) and a ZADD of each member of the result with
// its score (ZUNIONSTORE's in one ZADD marked as a union's, below): the encoding comes out as the conversion
// leaves it (a listpack exactly when the result fits one). ZRANGESTORE (zrangeGenericCommand) stores a range's
// members with their scores the same way (rangeStore, below). A union's result is marked as one (unionAsBuilt),
// with its sources, for the engines differ in its table: Valkey expands it for the largest source and grows it
// as the members go in, Redis 7.x for the whole union.
// Not followed: ZDIFFSTORE's second algorithm adds the whole first source and removes the others' members with
// the table's shrink paused, so a skiplist result keeps a table sized for the first source where it has not
// shrunk.

#include "line_importer.h"
#include "monitor_multi_key.h"
#include "monitor_zset_ranges.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

namespace layoutlab::monitor {

namespace {

constexpr std::array<std::string_view, 4> kCommands { "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZRANGESTORE" };

enum class Aggregate : std::uint8_t { Sum, Min, Max };

// A source's member as a union meets it: the source's place (smallest first), the member's in the result, and
// whether the result gained it there.
struct UnionStep {
    std::size_t source = 0;
    std::size_t member = 0;
    bool isNew = false;
};

// A source's members and scores (a set's score 1), and its weight.
struct Source {
    const std::string* key = nullptr;
    bool plainSet = false; // looked up as a set is (setTypeIsMember)
    std::vector<std::pair<std::string, double>> members; // in the order the source is iterated
    std::unordered_map<std::string_view, double> scores;
    double weight = 1;
};

class SortedSetStoreCommand : MultiKeyCommand {
public:
    using MultiKeyCommand::MultiKeyCommand;

    CollectionCommandEffect run() {
        if (m_name == "ZRANGESTORE") {
            rangeStore();
            return std::move(m_effect);
        }
        if (!arity(4))
            return std::move(m_effect);
        const auto numkeys = parseLongLong(m_args[2]);
        if (!numkeys) {
            refuse("value is not an integer or out of range", "'" + m_args[2].substr(0, 40) + "'");
            return std::move(m_effect);
        }
        if (*numkeys < 1) {
            refuse(fmt::format("at least 1 input key is needed for '{}' command", lower(m_name)), m_args[2]);
            return std::move(m_effect);
        }
        if (static_cast<std::uint64_t>(*numkeys) > m_args.size() - 3) {
            refuse("syntax error", fmt::format("numkeys {} with {} keys given", *numkeys, m_args.size() - 3));
            return std::move(m_effect);
        }
        const std::size_t keys = static_cast<std::size_t>(*numkeys);
        std::vector<Source> sources(keys);
        Aggregate aggregate = Aggregate::Sum;
        if (!options(3 + keys, sources, aggregate))
            return std::move(m_effect);
        for (std::size_t i = 0; i < keys; ++i)
            if (!read(m_args[3 + i], sources[i]))
                return std::move(m_effect); // WRONGTYPE
        // The sources' lookups first (dst may be one of them), then dst emptied and the result added to it.
        std::vector<UnionStep> steps;
        const auto result = m_name == "ZUNIONSTORE" ? unionOf(sources, aggregate, steps)
            : m_name == "ZINTERSTORE"               ? intersection(sources, aggregate)
                                                    : difference(sources);
        emptyDestination(m_args[1]);
        if (m_name == "ZUNIONSTORE" && !result.empty()) {
            const std::size_t first = m_effect.requests.size();
            addAtOnce(result);
            unionAsBuilt(first, sources, steps);
        } else {
            // ZINTERSTORE and ZDIFFSTORE add each member in turn (zslInsert, then the table's add: it grows as
            // it fills).
            for (const auto& [member, score] : result)
                apply({ "ZADD", m_args[1], fmt::format("{:.17g}", score), member });
        }
        return std::move(m_effect);
    }

private:
    // t_zset.c zrangeGenericCommand with a destination: ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV]
    // [LIMIT offset count], the options and the range checked first; a missing src stores nothing (dst
    // deleted), another type is refused. The result (zrangeResultBeginStore: zsetTypeCreate of a rank range's
    // length, else of none) gets each member with zsetAdd: a rank range's as one ZADD, whose count sizes it so,
    // the others' one member at a time.
    void rangeStore() {
        if (!arity(5))
            return;
        std::optional<ZsetRange::Kind> kind;
        bool reverse = false;
        std::int64_t offset = 0, limit = -1;
        for (std::size_t j = 5; j < m_args.size(); ++j) {
            const std::string& word = m_args[j];
            if (equalsIgnoreCase(word, "LIMIT") && m_args.size() - j - 1 >= 2) {
                const auto from = parseLongLong(m_args[j + 1]), count = parseLongLong(m_args[j + 2]);
                if (!from || !count)
                    return refuse("value is not an integer or out of range", "LIMIT " + m_args[j + 1].substr(0, 40));
                offset = *from;
                limit = *count;
                j += 2;
            } else if (!reverse && equalsIgnoreCase(word, "REV")) {
                reverse = true;
            } else if (!kind && (equalsIgnoreCase(word, "BYSCORE") || equalsIgnoreCase(word, "BYLEX"))) {
                kind = equalsIgnoreCase(word, "BYSCORE") ? ZsetRange::Kind::Score : ZsetRange::Kind::Lex;
            } else {
                return refuse("syntax error", "'" + word.substr(0, 40) + "'");
            }
        }
        const ZsetRange::Kind by = kind.value_or(ZsetRange::Kind::Rank);
        if (limit != -1 && by == ZsetRange::Kind::Rank)
            return refuse(
                "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX", "a rank range");
        // A reversed score or member range is given as max, then min.
        const bool swapped = reverse && by != ZsetRange::Kind::Rank;
        std::string refusal;
        const auto range = ZsetRange::parse(by, m_args[swapped ? 4 : 3], m_args[swapped ? 3 : 4], refusal);
        if (!range)
            return refuse(std::move(refusal), "'" + m_args[3].substr(0, 40) + "' '" + m_args[4].substr(0, 40) + "'");
        const auto source = typed(m_args[2], KeyValue::Content::SortedSet);
        if (!source)
            return; // WRONGTYPE
        std::vector<std::pair<std::string, double>> result;
        if (*source) {
            ScoredMembers chosen = range->select(*(*source)->zset, reverse);
            if (by != ZsetRange::Kind::Rank) {
                // The members in range from the walk's start: `offset` skipped (below 0: none left), then at most
                // `limit` of them (below 0: every one).
                const auto skip = static_cast<std::size_t>(
                    offset < 0 ? chosen.size() : std::min<std::uint64_t>(offset, chosen.size()));
                chosen.erase(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(skip));
                if (limit >= 0 && static_cast<std::uint64_t>(limit) < chosen.size())
                    chosen.resize(static_cast<std::size_t>(limit));
            }
            for (const auto& [score, member] : chosen) // copied: dst may be src, emptied below
                result.emplace_back(*member, score);
        }
        emptyDestination(m_args[1]);
        if (by == ZsetRange::Kind::Rank && !result.empty())
            return addAtOnce(result);
        for (const auto& [member, score] : result)
            apply({ "ZADD", m_args[1], fmt::format("{:.17g}", score), member });
    }
    // ZUNIONSTORE's result, made by the ZADD of its members from request `first` on, as the command builds it
    // (request.h): the Command marked a union's, with its largest source (Valkey expands the result's table
    // for that source and grows it as the members go in; Redis 7.x builds the union aside and expands it for
    // the whole), then each non-empty source behind a Size of its count, its members in the order the command
    // meets them: the ZADD's Add of each new one, a Read (kFoundForInsert) of each the result already holds.
    void unionAsBuilt(std::size_t first, const std::vector<Source>& sources, const std::vector<UnionStep>& steps) {
        auto& requests = m_effect.requests;
        std::size_t command = first;
        while (command < requests.size()
            && !(requests[command].op == Op::Element && requests[command].elementOp().action == ElementAction::Command))
            ++command;
        if (command == requests.size())
            return;
        std::uint64_t largest = 0;
        for (const Source& source : sources)
            largest = std::max<std::uint64_t>(largest, source.members.size());
        ElementOp op = requests[command].elementOp();
        op.atHead = true;
        requests[command].element = op.packed();
        requests[command].ttlSeconds = static_cast<std::uint32_t>(std::min<std::uint64_t>(largest, UINT32_MAX));
        const std::vector<Request> adds(requests.begin() + static_cast<std::ptrdiff_t>(command) + 1, requests.end());
        requests.resize(command + 1);
        std::optional<std::size_t> source;
        for (const UnionStep& step : steps) {
            const Request& add = adds.at(step.member);
            if (step.source != source) {
                source = step.source;
                Request size = add;
                size.element = ElementOp { CollectionKind::SortedSet, ElementAction::Size }.packed();
                size.elementBytes = 0;
                size.valueBytes = static_cast<std::uint32_t>(
                    std::min<std::uint64_t>(sources[step.source].members.size(), UINT32_MAX));
                size.ttlSeconds = requests.size() == command + 1
                    ? static_cast<std::uint32_t>(std::min<std::uint64_t>(steps.size(), UINT32_MAX))
                    : 0;
                requests.push_back(size);
            }
            if (step.isNew) {
                requests.push_back(add);
                continue;
            }
            Request found = add;
            ElementOp read = found.elementOp();
            read.action = ElementAction::Read;
            read.value = IntegerClass::None;
            found.element = read.packed();
            found.valueBytes = kFoundForInsert;
            found.ttlSeconds = 0;
            requests.push_back(found);
        }
        m_effect.keys.resize(command + 1);
        m_effect.keys.resize(requests.size(), m_args[1]);
    }
    // One ZADD of every member of the result, whose count sizes its table.
    void addAtOnce(const std::vector<std::pair<std::string, double>>& result) {
        std::vector<std::string> args { "ZADD", m_args[1] };
        for (const auto& [member, score] : result) {
            args.push_back(fmt::format("{:.17g}", score));
            args.push_back(member);
        }
        apply(std::move(args));
    }
    static std::string lower(std::string_view text) {
        std::string out(text);
        for (char& c : out)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    }
    // WEIGHTS and AGGREGATE (union and intersection only), each at most once as the server reads them: a
    // later one replaces an earlier.
    bool options(std::size_t at, std::vector<Source>& sources, Aggregate& aggregate) {
        const bool takesOptions = m_name != "ZDIFFSTORE";
        while (at < m_args.size()) {
            const std::size_t left = m_args.size() - at - 1;
            if (takesOptions && equalsIgnoreCase(m_args[at], "WEIGHTS") && left >= sources.size()) {
                for (std::size_t i = 0; i < sources.size(); ++i) {
                    const auto w = parseLongDouble(m_args[at + 1 + i]);
                    if (!w) {
                        refuse("weight value is not a float", "'" + m_args[at + 1 + i].substr(0, 40) + "'");
                        return false;
                    }
                    sources[i].weight = static_cast<double>(*w);
                }
                at += 1 + sources.size();
            } else if (takesOptions && equalsIgnoreCase(m_args[at], "AGGREGATE") && left >= 1) {
                const std::string& how = m_args[at + 1];
                if (equalsIgnoreCase(how, "SUM"))
                    aggregate = Aggregate::Sum;
                else if (equalsIgnoreCase(how, "MIN"))
                    aggregate = Aggregate::Min;
                else if (equalsIgnoreCase(how, "MAX"))
                    aggregate = Aggregate::Max;
                else {
                    refuse("syntax error", "AGGREGATE " + how.substr(0, 40));
                    return false;
                }
                at += 2;
            } else {
                refuse("syntax error", "'" + m_args[at].substr(0, 40) + "'");
                return false;
            }
        }
        return true;
    }
    // The key's members with their scores; false after a WRONGTYPE.
    bool read(const std::string& key, Source& source) {
        source.key = &key;
        KeyValue* v = m_keys.find(key, m_nowMs);
        if (!v || !v->present())
            return true;
        if (v->content == KeyValue::Content::SortedSet) {
            ScoredMembers ordered = scoredMembers(*v->zset); // iterated lowest first
            std::sort(ordered.begin(), ordered.end(), lowerInSortedSet);
            for (const auto& [score, member] : ordered)
                source.members.emplace_back(*member, score);
        } else if (v->content == KeyValue::Content::Set) {
            source.plainSet = true;
            for (const std::uint32_t place : v->set->places)
                source.members.emplace_back(*v->set->byPlace.at(place), 1.0);
        } else {
            refuse(std::string(kWrongType), "the key holds " + std::string(typeName(v->content)));
            return false;
        }
        for (const auto& [member, score] : source.members)
            source.scores.emplace(member, score);
        return true;
    }
    static void aggregateInto(double& target, double value, Aggregate how) {
        if (how == Aggregate::Sum) {
            target += value;
            if (std::isnan(target))
                target = 0;
        } else if (how == Aggregate::Min) {
            target = std::min(target, value);
        } else {
            target = std::max(target, value);
        }
    }
    static double weighted(double score, double weight) {
        const double s = score * weight;
        return std::isnan(s) ? 0 : s;
    }
    // zuiFind: a lookup (a table's find takes a rehash step); the member's score, if held.
    std::optional<double> find(const Source& source, const std::string& member) {
        apply({ source.plainSet ? "SISMEMBER" : "ZSCORE", *source.key, member });
        const auto found = source.scores.find(member);
        return found == source.scores.end() ? std::nullopt : std::optional<double>(found->second);
    }
    static void smallestFirst(std::vector<Source>& sources) { // zuiCompareByCardinality
        std::stable_sort(sources.begin(), sources.end(),
            [](const Source& a, const Source& b) { return a.members.size() < b.members.size(); });
    }
    // Every member of the smallest looked up in the others, in order, until one lacks it.
    std::vector<std::pair<std::string, double>> intersection(std::vector<Source>& sources, Aggregate how) {
        smallestFirst(sources);
        std::vector<std::pair<std::string, double>> out;
        for (const auto& [member, score] : sources.front().members) {
            double total = weighted(score, sources.front().weight);
            bool inEvery = true;
            for (std::size_t j = 1; j < sources.size() && inEvery; ++j) {
                if (sources[j].key && *sources[j].key == *sources.front().key) { // the same key: not looked up
                    aggregateInto(total, score * sources[j].weight, how);
                    continue;
                }
                const auto found = find(sources[j], member);
                inEvery = found.has_value();
                if (inEvery)
                    aggregateInto(total, *found * sources[j].weight, how);
            }
            if (inEvery)
                out.emplace_back(member, total);
        }
        return out;
    }
    // Every source's members in turn, each added or aggregated into the result (no source looked up).
    // `steps`: each source's members as the union meets them.
    static std::vector<std::pair<std::string, double>> unionOf(
        std::vector<Source>& sources, Aggregate how, std::vector<UnionStep>& steps) {
        smallestFirst(sources);
        std::vector<std::pair<std::string, double>> out;
        std::unordered_map<std::string_view, std::size_t> at;
        for (std::size_t i = 0; i < sources.size(); ++i)
            for (const auto& [member, score] : sources[i].members) {
                const double value = weighted(score, sources[i].weight);
                const auto [it, isNew] = at.emplace(member, out.size());
                steps.push_back({ i, it->second, isNew });
                if (isNew)
                    out.emplace_back(member, value);
                else
                    aggregateInto(out[it->second].second, value, how);
            }
        return out;
    }
    // zdiff: nothing when a later source is the first's key; the first algorithm looks each member of the
    // first up in the others (by decreasing size) until one holds it; the second iterates them
    // (zsetChooseDiffAlgorithm).
    std::vector<std::pair<std::string, double>> difference(std::vector<Source>& sources) {
        std::vector<std::pair<std::string, double>> out;
        const Source& first = sources.front();
        if (first.members.empty())
            return out;
        std::uint64_t firstWork = 0, allWork = 0;
        for (std::size_t j = 0; j < sources.size(); ++j) {
            if (j > 0 && *sources[j].key == *first.key)
                return out;
            firstWork += first.members.size();
            allWork += sources[j].members.size();
        }
        const bool looksUp = firstWork / 2 <= allWork;
        if (looksUp)
            std::stable_sort(sources.begin() + 1, sources.end(),
                [](const Source& a, const Source& b) { return a.members.size() > b.members.size(); });
        for (const auto& [member, score] : first.members) {
            bool elsewhere = false;
            for (std::size_t j = 1; j < sources.size() && !elsewhere; ++j)
                elsewhere = looksUp ? !sources[j].members.empty() && find(sources[j], member).has_value()
                                    : sources[j].scores.contains(member);
            if (!elsewhere)
                out.emplace_back(member, score);
        }
        return out;
    }
};

} // namespace

bool isSortedSetStoreCommand(std::string_view name) {
    return std::find(kCommands.begin(), kCommands.end(), name) != kCommands.end();
}

CollectionCommandEffect applySortedSetStoreCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
    return SortedSetStoreCommand(name, args, keys, nowMs).run();
}

} // namespace layoutlab::monitor
