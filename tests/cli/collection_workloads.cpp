// SPDX-License-Identifier: MIT
// The collection workloads (collection_workloads.h): hashes grown by HSETs, emptied by HDEL, counters and
// lifecycles beside strings; sets of strings and of integers of every intset width, grown and emptied;
// sorted sets with every score shape and ZADD option, and emptied by ranges; lists pushed and popped at both ends and
// trimmed.

#include "collection_workloads.h"
#include "workload_draw.h"

#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace layoutlab::test {

namespace {
using namespace workload;

// Keys grown by HSETs of a few pairs each to field counts on both sides of 512.
Workload grow(std::uint64_t keys) {
    Workload w { fmt::format("grow-{}", keys), {}, {} };
    Draw d(keys);
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::uint64_t r = d.between(0, 99);
        const std::uint64_t fields = r < 60 ? d.between(1, 10)
            : r < 85                        ? d.between(50, 400)
            : r < 95                        ? d.between(500, 530)
                                            : d.between(800, 1500);
        w.collectionKeys.push_back(hashKey(k));
        for (std::uint64_t i = 0; i < fields;) {
            Command c { d.chance(0.1) ? "HMSET" : "HSET", hashKey(k) };
            for (std::uint64_t n = d.between(1, 8); n > 0 && i < fields; --n, ++i) {
                c.push_back(field(k, i));
                c.push_back(d.value(k + i));
            }
            w.commands.push_back(std::move(c));
        }
    }
    return w;
}

// Keys built in one HSET, then emptied field by field (tables shrink; some keys go with their last field),
// with reads and overwrites between.
Workload churn(std::uint64_t keys) {
    Workload w { fmt::format("churn-{}", keys), {}, {} };
    Draw d(keys * 31);
    for (std::uint64_t k = 0; k < keys; ++k) {
        static const std::uint64_t kSizes[] = { 20, 200, 600, 2000 };
        const std::uint64_t fields = kSizes[d.between(0, 3)];
        Command build { "HSET", hashKey(k) };
        for (std::uint64_t i = 0; i < fields; ++i) {
            build.push_back(field(k, i));
            build.push_back(std::string(d.between(1, 30), 'x'));
        }
        w.commands.push_back(std::move(build));
        w.collectionKeys.push_back(hashKey(k));
        // Removed: from half to all of them.
        const std::uint64_t removed = d.chance(0.1) ? fields : fields / 2 + d.between(0, fields / 2);
        for (std::uint64_t i = 0; i < removed;) {
            Command c { "HDEL", hashKey(k) };
            for (std::uint64_t n = d.between(1, 5); n > 0 && i < removed; --n, ++i)
                c.push_back(field(k, i));
            w.commands.push_back(std::move(c));
            if (d.chance(0.3))
                w.commands.push_back({ "HGET", hashKey(k), field(k, d.between(0, fields - 1)) });
            if (d.chance(0.2) && i < fields) // a kept field's value at another length
                w.commands.push_back({ "HSET", hashKey(k), field(k, fields - 1), d.value(i) });
        }
        if (d.chance(0.2))
            w.commands.push_back({ "HMGET", hashKey(k), field(k, 0), field(k, fields - 1), "missing" });
    }
    return w;
}

// Counters: HINCRBY and HINCRBYFLOAT whose results change length, HSETNX on fields present and absent, and
// the errors the server answers (a non-integer field, an overflow).
Workload counters(std::uint64_t keys) {
    Workload w { fmt::format("counters-{}", keys), {}, {} };
    Draw d(keys * 57);
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::uint64_t fields = d.chance(0.9) ? d.between(1, 30) : d.between(520, 600);
        w.collectionKeys.push_back(hashKey(k));
        w.commands.push_back({ "HSET", hashKey(k), "name", d.value(k) });
        for (std::uint64_t i = 0; i < fields; ++i) {
            for (std::uint64_t n = d.between(1, 4); n > 0; --n)
                w.commands.push_back({ "HINCRBY", hashKey(k), field(k, i),
                    std::to_string(static_cast<std::int64_t>(d.between(0, 200000)) - 1000) });
            if (d.chance(0.2))
                w.commands.push_back({ "HINCRBYFLOAT", hashKey(k), field(k, i), d.chance(0.5) ? "0.25" : "1e3" });
            if (d.chance(0.2))
                w.commands.push_back({ "HSETNX", hashKey(k), field(k, i + d.between(0, 1)), d.value(i) });
        }
        w.commands.push_back({ "HINCRBY", hashKey(k), "name", "1" }); // not an integer: refused
        if (d.chance(0.1)) {
            w.commands.push_back({ "HSET", hashKey(k), "big", "9223372036854775800" });
            w.commands.push_back({ "HINCRBY", hashKey(k), "big", "100" }); // overflow: refused
        }
    }
    return w;
}

// Hashes beside strings, deleted, expiring, persisted, overwritten by SET; string commands on hashes and hash
// commands on strings, refused.
Workload lifecycle(std::uint64_t keys) {
    Workload w { fmt::format("lifecycle-{}", keys), {}, {} };
    Draw d(keys * 91);
    for (std::uint64_t k = 0; k < keys; ++k) {
        Command c { "HSET", hashKey(k) };
        const std::uint64_t fields = d.chance(0.95) ? d.between(1, 12) : d.between(513, 700);
        for (std::uint64_t i = 0; i < fields; ++i) {
            c.push_back(field(k, i));
            c.push_back(d.value(i));
        }
        w.commands.push_back(std::move(c));
        w.commands.push_back({ "SET", fmt::format("string:{:07}", k), d.value(k) });
    }
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::uint64_t r = d.between(0, 99);
        const std::string key = hashKey(k);
        if (r < 10)
            w.commands.push_back({ d.chance(0.5) ? "DEL" : "UNLINK", key });
        else if (r < 40)
            w.commands.push_back({ "EXPIRE", key, "100000" });
        else if (r < 45)
            w.commands.push_back({ "SET", key, d.value(k) }); // a string now
        else if (r < 50)
            w.commands.push_back({ "APPEND", key, "tail" }); // WRONGTYPE
        else if (r < 55)
            w.commands.push_back({ "HSET", fmt::format("string:{:07}", k), "f", "v" }); // WRONGTYPE
        else if (r < 60)
            w.commands.push_back({ "INCR", key }); // WRONGTYPE
        if (r >= 10 && r < 40 && d.chance(0.3))
            w.commands.push_back({ "PERSIST", key });
        if (r >= 10 && (r < 40 || r >= 45)) // still a hash: expiring, or untouched by a refused command
            w.collectionKeys.push_back(key);
    }
    return w;
}

// Sets grown by SADDs of 1 to 8 members to counts on both sides of set-max-listpack-entries (128) and
// set-max-intset-entries (512): integer-only sets of each width, some joined by a string member late (an
// intset becomes a listpack or a table); string sets, a few with a member past 64 bytes; members repeated.
Workload setsGrow(std::uint64_t keys) {
    Workload w { fmt::format("sets-grow-{}", keys), {}, {} };
    Draw d(keys * 13);
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::uint64_t r = d.between(0, 99);
        const std::uint64_t members = r < 50 ? d.between(1, 20)
            : r < 75                         ? d.between(100, 140)
            : r < 92                         ? d.between(500, 530)
                                             : d.between(600, 1200);
        const bool integers = d.chance(0.5);
        const std::uint64_t width = d.between(0, 3);
        const std::uint64_t length = d.chance(0.95) ? d.between(4, 40) : d.between(60, 80);
        const std::uint64_t stringAt = integers && d.chance(0.2) ? d.between(0, members) : members;
        w.collectionKeys.push_back(setKey(k));
        for (std::uint64_t i = 0; i < members;) {
            Command c { "SADD", setKey(k) };
            for (std::uint64_t n = d.between(1, 8); n > 0 && i < members; --n, ++i) {
                c.push_back(i == stringAt || !integers ? stringMember(k, i, length) : integerMember(k, i, width));
                if (d.chance(0.05)) // a member given again
                    c.push_back(c.back());
            }
            w.commands.push_back(std::move(c));
        }
    }
    return w;
}

// Sets made by one SADD (some past the limits at once), emptied by SREM to half or all, with SISMEMBER and
// SMISMEMBER between, wider integers added to intsets, and SADDs to a set of another type refused.
Workload setsChurn(std::uint64_t keys) {
    Workload w { fmt::format("sets-churn-{}", keys), {}, {} };
    Draw d(keys * 71);
    for (std::uint64_t k = 0; k < keys; ++k) {
        static const std::uint64_t kSizes[] = { 10, 120, 300, 600, 2000 };
        const std::uint64_t members = kSizes[d.between(0, 4)];
        const bool integers = d.chance(0.5);
        const std::uint64_t width = d.between(0, 2), length = d.between(4, 30);
        auto member
            = [&](std::uint64_t i) { return integers ? integerMember(k, i, width) : stringMember(k, i, length); };
        Command build { "SADD", setKey(k) };
        for (std::uint64_t i = 0; i < members; ++i)
            build.push_back(member(i));
        w.commands.push_back(std::move(build));
        w.collectionKeys.push_back(setKey(k));
        if (integers && d.chance(0.3)) // an intset widened to 8 bytes
            w.commands.push_back({ "SADD", setKey(k), integerMember(k, members, 3) });
        const std::uint64_t removed = d.chance(0.1) ? members + 1 : members / 2 + d.between(0, members / 2);
        for (std::uint64_t i = 0; i < removed;) {
            Command c { "SREM", setKey(k) };
            for (std::uint64_t n = d.between(1, 5); n > 0 && i < removed; --n, ++i)
                c.push_back(i < members ? member(i) : integerMember(k, members, 3));
            w.commands.push_back(std::move(c));
            if (d.chance(0.3))
                w.commands.push_back({ "SISMEMBER", setKey(k), member(d.between(0, members - 1)) });
        }
        if (d.chance(0.2))
            w.commands.push_back({ "SMISMEMBER", setKey(k), member(0), member(members - 1), "missing" });
        if (d.chance(0.05))
            w.commands.push_back({ "HSET", setKey(k), "f", "v" }); // WRONGTYPE
    }
    return w;
}

// Sets emptied by SPOP, whose members the server draws at random (the capture does not say which): the members
// of a key alike in length (strings of 16 to 40 bytes; intsets of one width), so that whichever go, the same
// bytes go. SPOP of one, counts under a sixth of the set (one member at a time), the whole set and more (the key
// deleted), and counts that leave under a fifth (the rest moved into a new set, built member by member: a table's
// rest a listpack or an intset again where it is small enough).
Workload setsPops(std::uint64_t keys) {
    Workload w { fmt::format("sets-pops-{}", keys), {}, {} };
    Draw d(keys * 89);
    for (std::uint64_t k = 0; k < keys; ++k) {
        static const std::uint64_t kSizes[] = { 6, 40, 120, 300, 600 };
        const std::uint64_t size = kSizes[d.between(0, 4)];
        const bool integers = size <= 512 && d.chance(0.4);
        const std::uint64_t width = d.between(0, 2), length = d.between(16, 40);
        auto member
            = [&](std::uint64_t i) { return integers ? integerMember(k, i, width) : stringMember(k, i, length); };
        for (std::uint64_t i = 0; i < size;) {
            Command c { "SADD", setKey(k) };
            for (std::uint64_t n = d.between(1, 50); n > 0 && i < size; --n, ++i)
                c.push_back(member(i));
            w.commands.push_back(std::move(c));
        }
        w.collectionKeys.push_back(setKey(k));
        std::uint64_t left = size;
        while (left > 0) {
            const std::uint64_t r = d.between(0, 99);
            if (r < 35) {
                w.commands.push_back({ "SPOP", setKey(k) });
                --left;
            } else if (r < 70 && left >= 12) {
                const std::uint64_t n = d.between(2, left / 6);
                w.commands.push_back({ "SPOP", setKey(k), std::to_string(n) });
                left -= n;
            } else if (r < 80 && left >= 12) {
                const std::uint64_t n = left - d.between(1, left / 6); // the rest under a fifth of the count
                w.commands.push_back({ "SPOP", setKey(k), std::to_string(n) });
                left -= n;
            } else if (r < 83) {
                w.commands.push_back({ "SPOP", setKey(k), std::to_string(left + d.between(0, 3)) });
                left = 0;
            } else if (r < 88) {
                w.commands.push_back({ "SISMEMBER", setKey(k), member(d.between(0, size - 1)) });
            } else {
                break; // what is left stays
            }
        }
    }
    return w;
}

std::string listKey(std::uint64_t k) {
    return fmt::format("list:{:07}", k);
}
// A list element: a job of 10 to 400 bytes, or an id (an integer the listpack stores as one). No quotes: the
// 2025 development trees' MONITOR writes printable characters unescaped (sds.c sdscatrepr copies a run of
// them whole, '"' and '\\' included), so a quote in an argument makes their capture unreadable.
std::string listElement(Draw& d, std::uint64_t k, std::uint64_t i) {
    if (d.chance(0.3))
        return std::to_string(d.between(0, 5000000000ull));
    std::string v = fmt::format("job:{}:key:{}", i, k);
    v.resize(std::max<std::size_t>(v.size(), d.chance(0.9) ? d.between(10, 60) : d.between(100, 400)), '.');
    return v;
}

// Lists grown by RPUSH and LPUSH of 1 to 8 elements to lengths on both sides of a node's 8 KiB (a listpack
// that becomes a quicklist, quicklists of many nodes), RPUSHX and LPUSHX to lists that are there or not.
Workload listsGrow(std::uint64_t keys) {
    Workload w { fmt::format("lists-grow-{}", keys), {}, {} };
    Draw d(keys * 19);
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::uint64_t r = d.between(0, 99);
        const std::uint64_t elements = r < 50 ? d.between(1, 30) : r < 80 ? d.between(100, 300) : d.between(500, 2000);
        w.collectionKeys.push_back(listKey(k));
        for (std::uint64_t i = 0; i < elements;) {
            Command c { d.chance(0.5) ? "RPUSH" : "LPUSH", listKey(k) };
            for (std::uint64_t n = d.between(1, 8); n > 0 && i < elements; --n, ++i)
                c.push_back(listElement(d, k, i));
            w.commands.push_back(std::move(c));
        }
        if (d.chance(0.1))
            w.commands.push_back({ d.chance(0.5) ? "RPUSHX" : "LPUSHX", listKey(k + (d.chance(0.5) ? 0 : keys)), "x" });
    }
    return w;
}

// Queues: lists of one RPUSH (some past a node at once), popped from either end one or several at a time,
// trimmed with LTRIM, elements replaced with LSET (from either end, longer, shorter or integers; some out of
// range), pushed again; some emptied, one small node left a listpack again.
Workload listsChurn(std::uint64_t keys) {
    Workload w { fmt::format("lists-churn-{}", keys), {}, {} };
    Draw d(keys * 23);
    for (std::uint64_t k = 0; k < keys; ++k) {
        static const std::uint64_t kSizes[] = { 20, 200, 1000, 3000 };
        const std::uint64_t elements = kSizes[d.between(0, 3)];
        Command build { "RPUSH", listKey(k) };
        for (std::uint64_t i = 0; i < elements; ++i)
            build.push_back(listElement(d, k, i));
        w.commands.push_back(std::move(build));
        w.collectionKeys.push_back(listKey(k));
        const std::uint64_t rounds = d.between(5, 60);
        for (std::uint64_t i = 0; i < rounds; ++i) {
            const std::uint64_t r = d.between(0, 99);
            if (r < 40)
                w.commands.push_back({ d.chance(0.5) ? "LPOP" : "RPOP", listKey(k) });
            else if (r < 70)
                w.commands.push_back(
                    { d.chance(0.5) ? "LPOP" : "RPOP", listKey(k), std::to_string(d.between(1, 200)) });
            else if (r < 80)
                w.commands.push_back({ "LTRIM", listKey(k), std::to_string(d.between(0, 50)),
                    std::to_string(-static_cast<std::int64_t>(d.between(1, 50))) });
            else if (r < 90) {
                const auto at = static_cast<std::int64_t>(d.between(0, 1200));
                w.commands.push_back({ "LSET", listKey(k), std::to_string(d.chance(0.5) ? at : -at - 1),
                    d.chance(0.2) ? std::to_string(d.between(0, 100000)) : listElement(d, k, i + 7) });
            } else
                w.commands.push_back(
                    { d.chance(0.5) ? "RPUSH" : "LPUSH", listKey(k), listElement(d, k, i), listElement(d, k, i + 1) });
        }
    }
    return w;
}

// Elements moved between keys and popped from the first of several: lists moved onto others and onto themselves
// (LMOVE every way, RPOPLPUSH, their blocking forms), popped by BLPOP, BRPOP, LMPOP and BLMPOP across keys that
// are absent or of another type; members moved between sets (held or not, onto the same set, onto a set not
// there yet); sorted sets popped from both ends (ZPOPMIN, ZPOPMAX with counts, BZPOPMIN, BZPOPMAX, ZMPOP,
// BZMPOP); elements removed by LREM from the head, the tail or all through, from lists of repeated elements.
// The workload follows the keys' lengths so that a blocking form finds something to take (a blocked
// client waits out its timeout, which a server checks only every 100 ms), but for a few that wait 10 ms.
Workload moves(std::uint64_t keys) {
    Workload w { fmt::format("moves-{}", keys), {}, {} };
    Draw d(keys * 31);
    std::vector<std::vector<std::string>> members(keys);
    std::vector<std::uint64_t> listLength(keys + 2), zsetSize(keys);
    for (std::uint64_t k = 0; k < keys; ++k) {
        static const std::uint64_t kLengths[] = { 1, 12, 150, 900, 2500 };
        Command list { "RPUSH", listKey(k) };
        listLength[k] = kLengths[d.between(0, 4)];
        for (std::uint64_t i = 0; i < listLength[k]; ++i)
            list.push_back(listElement(d, k, i));
        w.commands.push_back(std::move(list));
        const bool integers = d.chance(0.4);
        Command set { "SADD", setKey(k) };
        for (std::uint64_t i = 0, n = d.chance(0.6) ? d.between(1, 30) : d.between(100, 600); i < n; ++i) {
            members[k].push_back(integers ? integerMember(k, i, k % 4) : stringMember(k, i, d.between(4, 40)));
            set.push_back(members[k].back());
        }
        w.commands.push_back(std::move(set));
        Command zset { "ZADD", zsetKey(k) };
        zsetSize[k] = d.chance(0.6) ? d.between(1, 30) : d.between(100, 300);
        for (std::uint64_t i = 0; i < zsetSize[k]; ++i) {
            zset.push_back(d.chance(0.3) ? "7" : score(d)); // ties broken by member
            zset.push_back(stringMember(k, i, d.between(4, 30)));
        }
        w.commands.push_back(std::move(zset));
        for (const std::string& key : { listKey(k), setKey(k), zsetKey(k) })
            w.collectionKeys.push_back(key);
    }
    for (const std::uint64_t extra : { keys, keys + 1 }) // destinations made by the moves
        for (const std::string& key : { listKey(extra), setKey(extra) })
            w.collectionKeys.push_back(key);
    // Lists LREM takes elements from: six texts repeated (an integer among them), some past a node's bytes.
    constexpr std::uint64_t kRemovalLists = 20;
    auto repeated = [](std::uint64_t m, std::uint64_t j) {
        return j == 5 ? std::to_string(1000 + m) : fmt::format("task:{}:{}", m, std::string(10 + j * 30, 't'));
    };
    for (std::uint64_t m = 0; m < kRemovalLists; ++m) {
        Command c { "RPUSH", listKey(keys + 10 + m) };
        for (std::uint64_t i = 0, n = m % 4 == 0 ? 600 : 60; i < n; ++i)
            c.push_back(repeated(m, d.between(0, 5)));
        w.commands.push_back(std::move(c));
        w.collectionKeys.push_back(listKey(keys + 10 + m));
    }
    auto side = [&d] { return d.chance(0.5) ? "LEFT" : "RIGHT"; };
    auto popped = [](std::uint64_t& length, std::uint64_t n) { length -= std::min(length, n); };
    std::uint64_t waits = 0; // blocking forms that find nothing (each waits out its timeout)
    for (std::uint64_t round = 0; round < keys * 12; ++round) {
        const std::uint64_t k = d.between(0, keys - 1), r = d.between(0, 99);
        const std::uint64_t j = d.chance(0.1) ? k : d.chance(0.1) ? keys + d.between(0, 1) : d.between(0, keys - 1);
        const std::uint64_t n = d.chance(0.5) ? 1 : d.between(2, 40);
        const bool blocking = d.chance(0.4) && (listLength[k] > 0 || waits++ < 3);
        if (r < 27) { // a move, blocking or not; a list of one moved onto itself changes nothing
            const bool rpoplpush = d.chance(0.3);
            Command c { blocking ? (rpoplpush ? "BRPOPLPUSH" : "BLMOVE") : (rpoplpush ? "RPOPLPUSH" : "LMOVE"),
                listKey(k), listKey(j) };
            if (!rpoplpush) {
                c.push_back(side());
                c.push_back(side());
            }
            if (blocking)
                c.push_back("0.01");
            w.commands.push_back(std::move(c));
            if (listLength[k] > 0 && j != k) {
                --listLength[k];
                ++listLength[j];
            }
        } else if (r < 30) { // LREM on lists of their own, of repeated elements: from the head, the tail, all
            const std::uint64_t m = k % kRemovalLists;
            w.commands.push_back({ "LREM", listKey(keys + 10 + m),
                std::to_string(static_cast<std::int64_t>(d.between(0, 4)) - 2), repeated(m, d.between(0, 5)) });
        } else if (r < 32) { // an absent key first, then maybe a set (WRONGTYPE), then the list
            const bool wrongType = d.chance(0.1);
            if (!wrongType && listLength[k] == 0 && waits++ >= 3)
                continue;
            w.commands.push_back(
                { d.chance(0.5) ? "BLPOP" : "BRPOP", listKey(keys + 5), wrongType ? setKey(k) : listKey(k), "0.01" });
            if (!wrongType)
                popped(listLength[k], 1);
        } else if (r < 40) {
            if (blocking)
                w.commands.push_back({ "BLMPOP", "0.01", "1", listKey(k), side(), "COUNT", std::to_string(n) });
            else
                w.commands.push_back(
                    { "LMPOP", "2", listKey(keys + 5), listKey(k), side(), "COUNT", std::to_string(n) });
            popped(listLength[k], n);
        } else if (r < 60) {
            const std::string member = members[k].empty() || d.chance(0.1)
                ? "absent-member"
                : members[k][d.between(0, members[k].size() - 1)];
            w.commands.push_back({ "SMOVE", setKey(k), setKey(j), member });
        } else if (r < 78) {
            Command c { d.chance(0.5) ? "ZPOPMIN" : "ZPOPMAX", zsetKey(k) };
            if (d.chance(0.6))
                c.push_back(std::to_string(n));
            popped(zsetSize[k], c.size() == 3 ? n : 1);
            w.commands.push_back(std::move(c));
        } else if (zsetSize[k] > 0 || waits++ < 3) {
            const bool many = d.chance(0.6);
            if (many && d.chance(0.6))
                w.commands.push_back({ "ZMPOP", "2", zsetKey(keys + 5), zsetKey(k), d.chance(0.5) ? "MIN" : "MAX",
                    "COUNT", std::to_string(n) });
            else if (many)
                w.commands.push_back(
                    { "BZMPOP", "0.01", "1", zsetKey(k), d.chance(0.5) ? "MIN" : "MAX", "COUNT", std::to_string(n) });
            else
                w.commands.push_back(
                    { d.chance(0.5) ? "BZPOPMIN" : "BZPOPMAX", zsetKey(keys + 5), zsetKey(k), "0.01" });
            popped(zsetSize[k], many ? n : 1);
        }
    }
    return w;
}

} // namespace

Workload hashesGrown(std::uint64_t keys) {
    return grow(keys);
}

Workload movesAndRemovals(std::uint64_t keys) {
    return moves(keys);
}
Workload rangeRemovals(std::uint64_t keys) {
    return workload::zsetsRanges(keys);
}
Workload keyRenames(std::uint64_t keys) {
    return workload::renames(keys);
}
Workload setPops(std::uint64_t keys) {
    return setsPops(keys);
}
Workload setStores(std::uint64_t groups) {
    return workload::setStores(groups);
}
Workload zsetStores(std::uint64_t groups) {
    return workload::zsetStores(groups);
}
Workload listInserts(std::uint64_t keys) {
    return workload::listInserts(keys);
}
Workload namedAgain(std::uint64_t keys) {
    return workload::namedAgain(keys);
}

std::vector<Workload> collectionWorkloads() {
    // LAYOUTLAB_COLLECTION_WORKLOAD=FILE runs the commands of FILE instead (one per line, arguments split at
    // spaces; collection keys start with "hash:", "set:", "zset:" or "list:"), to look into a workload that
    // fails.
    if (const char* file = std::getenv("LAYOUTLAB_COLLECTION_WORKLOAD")) {
        Workload w { "custom", {}, {} };
        std::ifstream in(file);
        std::set<std::string> keys;
        for (std::string line; std::getline(in, line);) {
            std::istringstream words(line);
            Command c;
            for (std::string word; words >> word;)
                c.push_back(word);
            if (c.size() > 1
                && (c[1].rfind("hash:", 0) == 0 || c[1].rfind("set:", 0) == 0 || c[1].rfind("zset:", 0) == 0
                    || c[1].rfind("list:", 0) == 0))
                keys.insert(c[1]);
            if (!c.empty())
                w.commands.push_back(std::move(c));
        }
        w.collectionKeys.assign(keys.begin(), keys.end());
        return { w };
    }
    return { grow(700), churn(512), counters(1000), lifecycle(1025), setsGrow(600), setsChurn(513), setsPops(300),
        zsetsGrow(500), zsetsChurn(511), zsetsRanges(511), workload::zsetsMixedLengths(300), listsGrow(400),
        listsChurn(257), moves(130), workload::renames(257), workload::copies(96), workload::setStores(40),
        workload::zsetStores(40), workload::listInserts(160) };
}

} // namespace layoutlab::test
