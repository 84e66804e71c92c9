// SPDX-License-Identifier: MIT
// The algebra of sets and sorted sets, stored: groups of two to four keys drawn from one pool of members each,
// whose intersections, unions and differences are stored into new keys, onto other collections, onto strings
// with a TTL and onto their own first source, with missing and WRONGTYPE sources among them; the results then
// changed as any key of their type is.
//   Sets (SINTERSTORE, SUNIONSTORE, SDIFFSTORE: t_set.c sinterGenericCommand, sunionDiffGenericCommand): pools
//   of integers of one width, strings of 4 to 80 bytes, or both mixed; sets of 8 to 900 members, so that the
//   results are intsets, listpacks and tables of every size; SDIFFSTORE with enough small sources to take its
//   second algorithm; SINTERSTORE whose smallest source is a table of integers too (its result built as a
//   listpack, a table past set-max-listpack-entries, an intset again at the end within set-max-intset-entries).
//   Sorted sets (ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE: t_zset.c zunionInterDiffGenericCommand; ZRANGESTORE:
//   zrangeGenericCommand): 5 to 600 members of 4 to 80 bytes with drawn scores (a fifth of the groups all
//   scored 0), a plain set among the sources at times (its members score 1), WEIGHTS and AGGREGATE SUM, MIN
//   and MAX; ranges by rank, by score and (in the groups scored alike) by member, with REV and LIMIT.

#include "workload_draw.h"

#include <array>
#include <map>
#include <set>

namespace layoutlab::test::workload {

namespace {
// What the groups share: the keys named so far (collections for the encodings asked at the end), the results.
struct Stores {
    Workload w;
    Draw d;
    std::set<std::string> collections;
    std::vector<std::string> results;
    std::uint64_t nextKey = 0;

    // Where a result goes: a new key, an earlier result, a string with a TTL, the group's first key, or any
    // collection named so far.
    std::string destination(const std::string& first, std::string (*keyOf)(std::uint64_t)) {
        const std::uint64_t r = d.between(0, 99);
        if (r < 40 || results.empty())
            return keyOf(nextKey++);
        if (r < 55)
            return results[d.between(0, results.size() - 1)];
        if (r < 65) {
            std::string key = fmt::format("str:{:07}", nextKey++);
            w.commands.push_back({ "SET", key, std::string(d.between(1, 60), 's'), "EX", "100000" });
            return key;
        }
        if (r < 80)
            return first;
        return *std::next(collections.begin(), static_cast<std::ptrdiff_t>(d.between(0, collections.size() - 1)));
    }
    // The group's keys in a drawn order, with a missing one and a hash (WRONGTYPE) at times.
    std::vector<std::string> sources(std::vector<std::string> keys) {
        std::shuffle(keys.begin(), keys.end(), std::mt19937_64(d.between(0, 1u << 30)));
        if (d.chance(0.1))
            keys.push_back("set:missing"); // an empty set
        if (d.chance(0.03))
            keys.push_back(hashKey(0)); // WRONGTYPE: nothing changes
        return keys;
    }
    void stored(const std::string& dst) {
        results.push_back(dst);
        collections.insert(dst);
    }
    Workload finish() {
        w.collectionKeys.assign(collections.begin(), collections.end());
        return std::move(w);
    }

    Stores(std::string name, std::uint64_t seed)
        : w { std::move(name), {}, {} }
        , d(seed) {
        w.commands.push_back({ "HSET", hashKey(0), "f", "v" }); // a WRONGTYPE source
        collections.insert(hashKey(0));
    }
};
} // namespace

// SINTERSTORE of two tables (sinterGenericCommand builds the result in a listpack, a table past
// set-max-listpack-entries, made an intset again at the end when it holds integers only within
// set-max-intset-entries): tables of 600 to 1,000 integers of one width, or of integers and a few strings,
// overlapping by 60 to 900, so that results of integers fall on every side of 128 and 512.
namespace {
void intersectionsOfTables(Stores& s, std::uint64_t groups) {
    Draw& d = s.d;
    for (std::uint64_t g = 0; g < groups; ++g) {
        const std::uint64_t width = d.between(0, 2), first = d.between(600, 1000);
        const std::uint64_t overlap = std::min(first, d.between(60, 900));
        const bool strings = d.chance(0.3); // a string every 50 members: tables whatever their size
        auto member = [&](std::uint64_t i) {
            return strings && i % 50 == 49 ? stringMember(1000 + g, i, 12) : integerMember(1000 + g, i, width);
        };
        std::vector<std::string> keys;
        for (const auto [start, size] : { std::pair { std::uint64_t { 0 }, first },
                 std::pair { first - overlap, std::max(overlap, d.between(600, 1000)) } }) {
            const std::string key = setKey(s.nextKey++);
            Command c { "SADD", key };
            for (std::uint64_t i = start; i < start + size; ++i)
                c.push_back(member(i));
            s.w.commands.push_back(std::move(c));
            s.collections.insert(key);
            keys.push_back(key);
        }
        const std::string dst = s.destination(keys.front(), setKey);
        s.w.commands.push_back({ "SINTERSTORE", dst, keys[0], keys[1] });
        s.stored(dst);
        if (d.chance(0.5)) // the result changed as any set is: an intset widened, a table joined by a string
            s.w.commands.push_back({ "SADD", dst, d.chance(0.5) ? member(5000) : stringMember(2000 + g, 0, 9) });
    }
}
} // namespace

Workload setStores(std::uint64_t groups) {
    Stores s(fmt::format("set-stores-{}", groups), groups * 97);
    Draw& d = s.d;
    for (std::uint64_t g = 0; g < groups; ++g) {
        // The pool: integers (an intset's width per group), strings, or seven in ten integers.
        const std::uint64_t kind = d.between(0, 2);
        const std::uint64_t poolSize = 1200, width = d.between(0, 2);
        auto pooled = [&](std::uint64_t i) {
            const bool integer = kind == 0 || (kind == 2 && i % 10 < 7);
            return integer ? integerMember(g, i, width) : stringMember(g, i, 4 + (g * 31 + i * 7) % 77);
        };
        std::vector<std::string> keys;
        std::map<std::string, std::uint64_t> sizes;
        for (std::uint64_t n = d.between(2, 4); n > 0; --n) {
            static const std::uint64_t kSizes[] = { 8, 60, 200, 400, 900 };
            const std::uint64_t size = kSizes[d.between(0, 4)];
            const std::string key = setKey(s.nextKey++);
            // A run of the pool from a drawn start, so that the group's sets overlap in part.
            const std::uint64_t start = d.between(0, poolSize - 1);
            for (std::uint64_t i = 0; i < size;) {
                Command c { "SADD", key };
                for (std::uint64_t k = d.between(1, 100); k > 0 && i < size; --k, ++i)
                    c.push_back(pooled((start + i * (1 + g % 3)) % poolSize));
                s.w.commands.push_back(std::move(c));
            }
            keys.push_back(key);
            sizes[key] = size;
            s.collections.insert(key);
        }
        std::uint64_t smallest = UINT64_MAX;
        for (const auto& [key, size] : sizes)
            smallest = std::min(smallest, size);
        for (std::uint64_t n = d.between(1, 4); n > 0; --n) {
            const std::string name = std::array { "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE" }[d.between(0, 2)];
            const std::string dst = s.destination(keys.front(), setKey);
            Command c { name, dst };
            std::vector<std::string> from = s.sources(keys);
            if (name == "SDIFFSTORE" && d.chance(0.5)) // the largest first, small ones after: the second algorithm
                std::stable_sort(from.begin(), from.end(),
                    [&](const std::string& a, const std::string& b) { return sizes[a] > sizes[b]; });
            c.insert(c.end(), from.begin(), from.end());
            s.w.commands.push_back(std::move(c));
            s.stored(dst);
            for (std::uint64_t k = d.between(0, 3); k > 0; --k) // the result changed as any set is
                s.w.commands.push_back({ d.chance(0.5) ? "SADD" : "SREM", dst, pooled(d.between(0, poolSize - 1)),
                    pooled(d.between(0, poolSize - 1)) });
        }
    }
    intersectionsOfTables(s, groups / 4);
    return s.finish();
}

namespace {
// ZRANGESTORE dst src ...: a rank range (from either end, past the end at times); a score range (open, closed and
// infinite ends) with REV and LIMIT at times; on a group scored alike, a member range ("[a", "(b", "-", "+").
Command rangeStore(Draw& d, const std::string& dst, const std::string& src, bool byMember, const std::string& low,
    const std::string& high) {
    Command c { "ZRANGESTORE", dst, src };
    const bool reverse = d.chance(0.3);
    const std::uint64_t kind = byMember ? 2 : d.between(0, 1);
    if (kind == 0) {
        const std::int64_t start = d.chance(0.3) ? -static_cast<std::int64_t>(d.between(1, 300)) : d.between(0, 150);
        c.push_back(std::to_string(start));
        c.push_back(d.chance(0.3) ? "-1" : std::to_string(start < 0 ? -1 : start + d.between(0, 700)));
    } else {
        std::string min, max;
        if (kind == 1) {
            min = d.chance(0.2) ? "-inf" : (d.chance(0.3) ? "(" : "") + std::to_string(d.between(0, 150));
            max = d.chance(0.3) ? "+inf" : (d.chance(0.3) ? "(" : "") + std::to_string(d.between(150, 300));
        } else {
            min = d.chance(0.2) ? "-" : (d.chance(0.5) ? "[" : "(") + std::min(low, high);
            max = d.chance(0.2) ? "+" : (d.chance(0.5) ? "[" : "(") + std::max(low, high);
        }
        c.push_back(reverse ? max : min);
        c.push_back(reverse ? min : max);
        c.push_back(kind == 1 ? "BYSCORE" : "BYLEX");
        if (d.chance(0.3)) {
            c.push_back("LIMIT");
            c.push_back(std::to_string(d.between(0, 20)));
            c.push_back(d.chance(0.3) ? "-1" : std::to_string(d.between(0, 300)));
        }
    }
    if (reverse)
        c.push_back("REV");
    return c;
}
} // namespace

Workload zsetStores(std::uint64_t groups) {
    Stores s(fmt::format("zset-stores-{}", groups), groups * 101);
    Draw& d = s.d;
    for (std::uint64_t g = 0; g < groups; ++g) {
        const std::uint64_t poolSize = 1000;
        auto pooled = [&](std::uint64_t i) { return stringMember(g, i, 4 + (g * 13 + i * 5) % 77); };
        // A group of members all scored 0 (an index walked by member), where ZRANGESTORE ... BYLEX takes ranges:
        // elsewhere a skiplist's walk by member starts where its random levels say.
        const bool byMember = d.chance(0.2);
        auto scored = [&] { return byMember ? std::string("0") : score(d); };
        std::vector<std::string> keys;
        for (std::uint64_t n = d.between(2, 4); n > 0; --n) {
            static const std::uint64_t kSizes[] = { 5, 60, 120, 200, 600 };
            const std::uint64_t size = kSizes[d.between(0, 4)];
            const bool plainSet = d.chance(0.15);
            const std::string key = plainSet ? setKey(s.nextKey++) : zsetKey(s.nextKey++);
            const std::uint64_t start = d.between(0, poolSize - 1);
            for (std::uint64_t i = 0; i < size;) {
                Command c { plainSet ? "SADD" : "ZADD", key };
                for (std::uint64_t k = d.between(1, 100); k > 0 && i < size; --k, ++i) {
                    if (!plainSet)
                        c.push_back(scored());
                    c.push_back(pooled((start + i * (1 + g % 2)) % poolSize));
                }
                s.w.commands.push_back(std::move(c));
            }
            keys.push_back(key);
            s.collections.insert(key);
        }
        for (std::uint64_t n = d.between(1, 4); n > 0; --n) {
            const std::string name
                = std::array { "ZINTERSTORE", "ZUNIONSTORE", "ZDIFFSTORE", "ZRANGESTORE" }[d.between(0, 3)];
            const std::string dst = s.destination(keys.front(), zsetKey);
            if (name == "ZRANGESTORE") {
                s.w.commands.push_back(rangeStore(d, dst, keys[d.between(0, keys.size() - 1)], byMember,
                    pooled(d.between(0, poolSize - 1)), pooled(d.between(0, poolSize - 1))));
                s.stored(dst);
                continue;
            }
            const std::vector<std::string> from = s.sources(keys);
            Command c { name, dst, std::to_string(from.size()) };
            c.insert(c.end(), from.begin(), from.end());
            if (name != "ZDIFFSTORE" && d.chance(0.4)) {
                c.push_back("WEIGHTS");
                for (std::size_t k = 0; k < from.size(); ++k)
                    c.push_back(std::array { "1", "2", "0.5", "-1", "3.25" }[d.between(0, 4)]);
            }
            if (name != "ZDIFFSTORE" && d.chance(0.4)) {
                c.push_back("AGGREGATE");
                c.push_back(std::array { "SUM", "min", "MAX" }[d.between(0, 2)]);
            }
            s.w.commands.push_back(std::move(c));
            s.stored(dst);
            for (std::uint64_t k = d.between(0, 3); k > 0; --k) { // the result changed as any sorted set is
                const std::string member = pooled(d.between(0, poolSize - 1));
                s.w.commands.push_back(
                    d.chance(0.5) ? Command { "ZADD", dst, scored(), member } : Command { "ZREM", dst, member });
            }
        }
    }
    return s.finish();
}

} // namespace layoutlab::test::workload
