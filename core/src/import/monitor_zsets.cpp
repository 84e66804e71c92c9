// SPDX-License-Identifier: MIT
// Sorted-set commands as t_zset.c runs them (Redis 7.0-7.2, Valkey 8-9 alike for these):
//   zaddGenericCommand (ZADD, ZINCRBY): the options (NX|XX, GT|LT, CH, INCR) and every score checked first
//     (an error changes nothing); XX on a missing key does nothing; then the command's start (its member
//     count, longest member and first member's length: zsetTypeCreate, zsetTypeMaybeConvert), and zsetAdd
//     for each pair: a member held is looked up and its score replaced when it changes (INCR adds to it;
//     NX, or GT/LT refusing the change, leave it), a member not held added unless XX.
//   zremCommand: zsetDel for each member, a lookup for one that is not there; the key goes with its last
//     member, and the members after it are not looked at.
//   zscoreCommand, zmscoreCommand, zrankGenericCommand: a lookup per member.
//   zremrangeGenericCommand (ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREMRANGEBYLEX): the range parsed first (an
//     error changes nothing, whatever the key holds), then the members in it removed, lowest first
//     (zzlDeleteRangeBy*, zslDeleteRangeBy*), the key with the last. Each removal says it is a range's
//     (request.h kRemovedByRange): the table shrinks once, at the command's end (Redis 7.x dictResize after
//     the range; Valkey 8.0 dictPauseAutoResize; 9.0 and later hashtablePauseAutoShrink, which the 8.1
//     trees' hashtable.c does not honour: collection_rules.h).
// A score is stored as util.c d2string writes it: an integer within +-2^62 as its digits, else the shortest
// text that reads back to it (fpconv_dtoa), "inf", "-inf"; Redis 7.0 writes what is not an integer within
// +-2^52 with "%.17g", longer for most fractions: a request carries both lengths (request.h packScoreBytes).

#include "import_formats.h"
#include "monitor_collections.h"
#include "monitor_zset_ranges.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace layoutlab::monitor {

namespace {
constexpr std::array<std::string_view, 10> kElementCommands { "ZADD", "ZINCRBY", "ZREM", "ZSCORE", "ZMSCORE", "ZRANK",
    "ZREVRANK", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "ZREMRANGEBYLEX" };
constexpr std::array<std::string_view, 15> kWholeReads { "ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE",
    "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZCARD", "ZCOUNT", "ZLEXCOUNT", "ZSCAN", "ZRANDMEMBER", "ZUNION", "ZINTER",
    "ZDIFF", "ZINTERCARD" };

// util.c string2d: strtod of the whole string, no leading space, not NaN ("inf" and "-inf" are scores).
std::optional<double> parseScore(const std::string& text) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
        return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || std::isnan(v))
        return std::nullopt;
    return v;
}

class SortedSetCommand : CollectionCommand {
public:
    SortedSetCommand(
        std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs)
        : CollectionCommand(CollectionKind::SortedSet, name, args, keys, nowMs) { }

    CollectionCommandEffect run() {
        const std::size_t n = m_args.size();
        // ZRANK and ZREVRANK take an optional WITHSCORE.
        const bool ranged = m_name.starts_with("ZREMRANGEBY");
        const bool ok = m_name == "ZADD"              ? n >= 4
            : m_name == "ZINCRBY" || ranged           ? n == 4
            : m_name == "ZREM" || m_name == "ZMSCORE" ? n >= 3
            : m_name == "ZSCORE"                      ? n == 3
                                                      : n == 3 || n == 4;
        if (!ok) {
            refuse("wrong number of arguments", fmt::format("{} arguments", n - 1));
            return std::move(m_effect);
        }
        if (m_name == "ZADD" || m_name == "ZINCRBY") {
            add();
        } else if (ranged) {
            removeRange();
        } else if (lookUpKey(KeyValue::Content::SortedSet)) {
            if (m_name == "ZREM")
                remove();
            else if (present())
                for (std::size_t i = 2; i < (m_name == "ZMSCORE" ? n : 3); ++i)
                    lookup(m_args[i]);
        }
        return std::move(m_effect);
    }

private:
    struct Options {
        bool nx = false, xx = false, gt = false, lt = false, incr = false;
        std::size_t scoreIndex = 2;
    };
    // zaddGenericCommand's option parsing and checks; nullopt (refused) on an error.
    std::optional<Options> options() {
        Options o;
        if (m_name == "ZINCRBY") {
            o.incr = true;
            return o;
        }
        for (; o.scoreIndex < m_args.size(); ++o.scoreIndex) {
            std::string word = m_args[o.scoreIndex];
            std::transform(word.begin(), word.end(), word.begin(), [](unsigned char ch) { return std::toupper(ch); });
            if (word == "NX")
                o.nx = true;
            else if (word == "XX")
                o.xx = true;
            else if (word == "GT")
                o.gt = true;
            else if (word == "LT")
                o.lt = true;
            else if (word == "INCR")
                o.incr = true;
            else if (word != "CH")
                break;
        }
        const std::size_t pairs = m_args.size() - o.scoreIndex;
        if (pairs == 0 || pairs % 2 != 0)
            return refused("syntax error", "score and member pairs expected");
        if (o.nx && o.xx)
            return refused("XX and NX options at the same time are not compatible", "the command's options");
        if ((o.gt && o.nx) || (o.lt && o.nx) || (o.gt && o.lt))
            return refused("GT, LT, and/or NX options at the same time are not compatible", "the command's options");
        if (o.incr && pairs > 2)
            return refused("INCR option supports a single increment-element pair", "the command's options");
        return o;
    }
    std::nullopt_t refused(std::string reason, std::string detail) {
        refuse(std::move(reason), std::move(detail));
        return std::nullopt;
    }

    void add() {
        const auto o = options();
        if (!o)
            return;
        std::vector<double> scores;
        for (std::size_t i = o->scoreIndex; i < m_args.size(); i += 2) {
            const auto score = parseScore(m_args[i]);
            if (!score)
                return refuse("value is not a valid float", "'" + m_args[i].substr(0, 40) + "'");
            scores.push_back(*score);
        }
        if (!lookUpKey(KeyValue::Content::SortedSet) || (!present() && o->xx))
            return;
        if (o->incr && present()) { // a NaN result is an error before anything changes
            const auto found = m_key->zset->find(m_args[o->scoreIndex + 1]);
            if (found != m_key->zset->end() && std::isnan(found->second + scores[0]))
                return refuse(
                    "resulting score is not a number (NaN)", "'" + m_args[o->scoreIndex + 1].substr(0, 40) + "'");
        }
        auto& members = *keyMade(KeyValue::Content::SortedSet).zset;
        std::size_t longest = 0;
        for (std::size_t i = o->scoreIndex + 1; i < m_args.size(); i += 2)
            longest = std::max(longest, m_args[i].size());
        Request start = element(ElementAction::Command, "");
        start.valueBytes = static_cast<std::uint32_t>(scores.size());
        start.elementBytes = static_cast<std::uint32_t>(std::min<std::size_t>(longest, UINT32_MAX));
        start.ttlSeconds = static_cast<std::uint32_t>(m_args[o->scoreIndex + 1].size()); // the first member's
        m_op.element = IntegerClass::None;
        push(start);
        for (std::size_t p = 0; p < scores.size(); ++p)
            addPair(members, *o, scores[p], m_args[o->scoreIndex + 1 + 2 * p]);
    }
    // zsetAdd.
    void addPair(
        std::unordered_map<std::string, double>& members, const Options& o, double score, const std::string& member) {
        const auto found = members.find(member);
        if (found == members.end()) {
            if (o.xx)
                return lookup(member);
            const std::string text = zsetScoreText(score);
            Request r = element(ElementAction::Add, member);
            r.valueBytes = packedScoreBytes(score, text.size());
            m_op.value = integerClassOf(text);
            push(r);
            members.emplace(member, score);
            return;
        }
        if (o.incr)
            score += found->second;
        if (o.nx || (o.lt && score >= found->second) || (o.gt && score <= found->second) || score == found->second)
            return lookup(member);
        const std::string before = zsetScoreText(found->second), after = zsetScoreText(score);
        Request r = element(ElementAction::Update, member);
        r.valueBytes = packedScoreBytes(score, after.size());
        r.ttlSeconds = packedScoreBytes(found->second, before.size()); // the prior score's text
        m_op.value = integerClassOf(after);
        m_op.prior = integerClassOf(before);
        push(r);
        found->second = score;
    }

    void remove() {
        if (!present())
            return;
        auto& members = *m_key->zset;
        const std::size_t first = requestsSoFar();
        for (std::size_t i = 2; i < m_args.size(); ++i) {
            const auto found = members.find(m_args[i]);
            if (found == members.end()) {
                lookup(m_args[i]);
                continue;
            }
            if (removeMember(found, 0))
                break;
        }
        markRemovalsOfOneCommand(first);
    }
    // The member removed, with its score's text (the listpack's entry); true when it was the last, and the
    // key is gone with it.
    // `rangeMark`: 0, or kRemovedByRange for a range's (the removal's valueBytes).
    bool removeMember(std::unordered_map<std::string, double>::iterator found, std::uint32_t rangeMark) {
        auto& members = *m_key->zset;
        const std::string text = zsetScoreText(found->second);
        Request r = element(ElementAction::Remove, found->first);
        r.valueBytes = rangeMark;
        r.ttlSeconds = packedScoreBytes(found->second, text.size());
        m_op.prior = integerClassOf(text);
        push(r);
        members.erase(found);
        if (!members.empty())
            return false;
        *m_key = KeyValue {}; // the server deletes an empty sorted set
        return true;
    }

    void removeRange() {
        const auto kind = m_name == "ZREMRANGEBYSCORE" ? ZsetRange::Kind::Score
            : m_name == "ZREMRANGEBYRANK"              ? ZsetRange::Kind::Rank
                                                       : ZsetRange::Kind::Lex;
        std::string refusal;
        const auto range = ZsetRange::parse(kind, m_args[2], m_args[3], refusal);
        if (!range) {
            refused(std::move(refusal), "'" + m_args[2].substr(0, 40) + "' '" + m_args[3].substr(0, 40) + "'");
            return;
        }
        // An absent or empty key: nothing (the reply is 0); another type, refused.
        if (!lookUpKey(KeyValue::Content::SortedSet) || !present())
            return;
        const std::size_t first = requestsSoFar();
        // Each member's name is its map node's, which stays until that member is removed.
        for (const auto& [score, member] : range->select(*m_key->zset))
            if (removeMember(m_key->zset->find(*member), kRemovedByRange))
                break;
        markRemovalsOfOneCommand(first);
    }
};
} // namespace

const CollectionCommands kSortedSetCommands { kElementCommands, kWholeReads,
    [](std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs) {
        return SortedSetCommand(name, args, keys, nowMs).run();
    } };

} // namespace layoutlab::monitor

namespace layoutlab {

std::string zsetScoreText(double v) {
    // util.c d2string.
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    if (v == 0)
        return std::signbit(v) ? "-0" : "0";
    constexpr double kIntegerLimit = 4611686018427387903.0; // double2ll: LLONG_MAX / 2
    if (v >= -kIntegerLimit && v <= kIntegerLimit && v == std::trunc(v))
        return std::to_string(static_cast<long long>(v));
    std::array<char, 32> buf {};
    const auto written = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    return std::string(buf.data(), written.ptr);
}

std::uint32_t packedScoreBytes(double v, std::size_t shortest) {
    // Redis 7.0 util.c d2string: inf, -inf, 0, -0 and an integer strictly within +-2^52 (ll2string) as the
    // later lines write them; anything else as snprintf "%.17g" prints it.
    const auto length = static_cast<std::uint32_t>(shortest);
    constexpr double kIntegerLimit = 4503599627370496.0; // 2^52
    if (std::isinf(v) || v == 0 || (v > -kIntegerLimit && v < kIntegerLimit && v == std::trunc(v)))
        return length;
    std::array<char, 40> buf {}; // to_chars with a precision prints as printf does, several times faster
    const auto written = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::general, 17);
    return packScoreBytes(length, static_cast<std::uint32_t>(written.ptr - buf.data()));
}

} // namespace layoutlab
