// SPDX-License-Identifier: MIT
// The sorted-set workloads of collection_trace_test.cpp (collection_workloads.h): grown by ZADDs across both
// limits, churned by ZADD options and ZREM, and emptied by ranges as windows, leaderboards and indexes.

#include "workload_draw.h"

namespace layoutlab::test::workload {

// Sorted sets grown by ZADDs of 1 to 8 pairs to counts on both sides of zset-max-listpack-entries (128),
// members on both sides of zset-max-listpack-value (64), scores of every length; ZINCRBY on members held.
Workload zsetsGrow(std::uint64_t keys) {
    Workload w { fmt::format("zsets-grow-{}", keys), {}, {} };
    Draw d(keys * 17);
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::uint64_t r = d.between(0, 99);
        const std::uint64_t members = r < 50 ? d.between(1, 20) : r < 80 ? d.between(100, 140) : d.between(300, 900);
        const std::uint64_t length = d.chance(0.95) ? d.between(4, 40) : d.between(60, 80);
        w.collectionKeys.push_back(zsetKey(k));
        for (std::uint64_t i = 0; i < members;) {
            Command c { "ZADD", zsetKey(k) };
            for (std::uint64_t n = d.between(1, 8); n > 0 && i < members; --n, ++i) {
                c.push_back(score(d));
                c.push_back(stringMember(k, i, length));
            }
            w.commands.push_back(std::move(c));
            if (d.chance(0.2))
                w.commands.push_back(
                    { "ZINCRBY", zsetKey(k), d.chance(0.5) ? "1" : "0.25", stringMember(k, i / 2, length) });
        }
    }
    return w;
}

// Sorted sets whose members differ in length within one ZADD: 2 to 60 members of 4 to 90 bytes each, then ZADDs
// of 1 to 6 more, so that a short first member and a long later one meet (Redis 7.2 makes the key by the first
// member's length and converts an existing listpack by the count alone; Valkey by the longest: t_zset.c
// zaddGenericCommand), and at times a ZREM of a name the key may not hold.
Workload zsetsMixedLengths(std::uint64_t keys) {
    Workload w { fmt::format("zsets-mixed-lengths-{}", keys), {}, {} };
    Draw d(keys * 41);
    for (std::uint64_t k = 0; k < keys; ++k) {
        w.collectionKeys.push_back(zsetKey(k));
        std::uint64_t next = 0;
        for (std::uint64_t n = d.between(1, 4), size = d.between(2, 60); n > 0; --n, size = d.between(1, 6)) {
            Command c { "ZADD", zsetKey(k) };
            for (std::uint64_t i = 0; i < size; ++i, ++next) {
                c.push_back(score(d));
                c.push_back(stringMember(k, next, d.chance(0.9) ? d.between(4, 60) : d.between(65, 90)));
            }
            w.commands.push_back(std::move(c));
        }
        if (d.chance(0.3))
            w.commands.push_back({ "ZREM", zsetKey(k), stringMember(k, 0, 4) });
    }
    return w;
}

// Sorted sets of one ZADD (some past the limits at once), their scores rewritten (XX, GT, NX), emptied by ZREM
// to half or all, with ZSCORE, ZMSCORE and ZRANK between.
Workload zsetsChurn(std::uint64_t keys) {
    Workload w { fmt::format("zsets-churn-{}", keys), {}, {} };
    Draw d(keys * 29);
    for (std::uint64_t k = 0; k < keys; ++k) {
        static const std::uint64_t kSizes[] = { 10, 120, 300, 1000 };
        const std::uint64_t members = kSizes[d.between(0, 3)], length = d.between(4, 30);
        Command build { "ZADD", zsetKey(k) };
        for (std::uint64_t i = 0; i < members; ++i) {
            build.push_back(score(d));
            build.push_back(stringMember(k, i, length));
        }
        w.commands.push_back(std::move(build));
        w.collectionKeys.push_back(zsetKey(k));
        for (std::uint64_t i = 0; i < members / 4; ++i) {
            static const char* const kOptions[] = { "XX", "GT", "NX", "CH" };
            w.commands.push_back({ "ZADD", zsetKey(k), kOptions[d.between(0, 3)], score(d),
                stringMember(k, d.between(0, members), length) });
        }
        const std::uint64_t removed = d.chance(0.1) ? members : members / 2 + d.between(0, members / 2);
        for (std::uint64_t i = 0; i < removed;) {
            Command c { "ZREM", zsetKey(k) };
            for (std::uint64_t n = d.between(1, 5); n > 0 && i < removed; --n, ++i)
                c.push_back(stringMember(k, d.chance(0.8) ? i : d.between(0, members - 1), length));
            w.commands.push_back(std::move(c));
            if (d.chance(0.3))
                w.commands.push_back({ d.chance(0.5) ? "ZSCORE" : "ZRANK", zsetKey(k),
                    stringMember(k, d.between(0, members - 1), length) });
        }
        if (d.chance(0.2))
            w.commands.push_back({ "ZMSCORE", zsetKey(k), stringMember(k, 0, length), "missing" });
    }
    return w;
}

// Sorted sets emptied by ranges, as they are used: sliding windows (members stamped with the time, trimmed by
// ZREMRANGEBYSCORE to the window, open or closed, until the window passes them all), leaderboards cut to their
// best by ZREMRANGEBYRANK (and ranks from the head), lexical indexes (every score 0) cut by ZREMRANGEBYLEX.
// Sizes on both sides of zset-max-listpack-entries (128), some members past zset-max-listpack-value (64);
// ranges the server refuses, and ranges on keys of another type or on none.
Workload zsetsRanges(std::uint64_t keys) {
    Workload w { fmt::format("zsets-ranges-{}", keys), {}, {} };
    Draw d(keys * 31);
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::string key = zsetKey(k);
        const std::uint64_t length = d.chance(0.9) ? d.between(6, 40) : d.between(60, 80);
        w.collectionKeys.push_back(key);
        if (k % 3 == 0) { // a window of 5 to 120 ticks, 1 to 12 stamps a tick; a third left to run out
            const std::uint64_t window = d.between(5, 120), ticks = d.between(20, 200), burst = d.between(1, 12);
            const std::uint64_t end = ticks + (d.chance(0.3) ? window + 2 : 0);
            for (std::uint64_t t = 1; t <= end; t += d.between(1, 3)) {
                Command add { "ZADD", key };
                for (std::uint64_t i = 0, n = t <= ticks ? d.between(1, burst) : 0; i < n; ++i) {
                    add.push_back(std::to_string(1700000000000 + t * 1000 + i));
                    add.push_back(stringMember(k, t * 16 + i, length));
                }
                if (add.size() > 2)
                    w.commands.push_back(std::move(add));
                const std::string edge = std::to_string(1700000000000 + (t > window ? t - window : 0) * 1000);
                w.commands.push_back(
                    { "ZREMRANGEBYSCORE", key, d.chance(0.5) ? "-inf" : "0", d.chance(0.5) ? "(" + edge : edge });
            }
        } else if (k % 3 == 1) { // a leaderboard of 20 to 900 players, cut to its best 10, 100 or 200
            const std::uint64_t players = d.chance(0.4) ? d.between(20, 140) : d.between(300, 900);
            for (std::uint64_t i = 0; i < players;) {
                Command add { "ZADD", key };
                for (std::uint64_t n = d.between(1, 8); n > 0 && i < players; --n, ++i) {
                    add.push_back(score(d));
                    add.push_back(stringMember(k, i, length));
                }
                w.commands.push_back(std::move(add));
                if (d.chance(0.05)) {
                    static const char* const kKeep[] = { "-11", "-101", "-201" };
                    w.commands.push_back({ "ZREMRANGEBYRANK", key, "0", kKeep[d.between(0, 2)] });
                }
            }
            const std::uint64_t from = d.between(0, 50);
            w.commands.push_back(
                { "ZREMRANGEBYRANK", key, std::to_string(from), std::to_string(from + d.between(0, 400)) });
            if (d.chance(0.2))
                w.commands.push_back({ "ZREMRANGEBYRANK", key, "0", "-1" });
        } else { // a lexical index, cut by ranges of names, open and closed
            const std::uint64_t names = d.chance(0.5) ? d.between(10, 120) : d.between(200, 600);
            for (std::uint64_t i = 0; i < names;) {
                Command add { "ZADD", key };
                for (std::uint64_t n = d.between(1, 16); n > 0 && i < names; --n, ++i) {
                    add.push_back("0");
                    add.push_back(stringMember(k, d.between(0, 4 * names), length));
                }
                w.commands.push_back(std::move(add));
            }
            for (std::uint64_t cuts = d.between(1, 4); cuts > 0; --cuts) {
                std::string low = stringMember(k, d.between(0, 4 * names), 1).substr(0, d.between(2, 8));
                std::string high = low;
                high.back() = static_cast<char>(high.back() + d.between(0, 3));
                w.commands.push_back({ "ZREMRANGEBYLEX", key, d.chance(0.2) ? "-" : (d.chance(0.5) ? "[" : "(") + low,
                    d.chance(0.2) ? "+" : (d.chance(0.5) ? "[" : "(") + high });
            }
        }
        if (d.chance(0.1))
            w.commands.push_back({ "ZREMRANGEBYSCORE", key, "low", "(1" }); // refused: not a float
        if (d.chance(0.1))
            w.commands.push_back({ "ZREMRANGEBYLEX", key, "a", "+" }); // refused: not a range item
        if (d.chance(0.05))
            w.commands.push_back({ "ZREMRANGEBYRANK", hashKey(k), "0", "-1" }); // no such key
    }
    w.commands.push_back({ "SET", "zset:string", "v" });
    w.commands.push_back({ "ZREMRANGEBYRANK", "zset:string", "0", "-1" }); // WRONGTYPE
    return w;
}

} // namespace layoutlab::test::workload
