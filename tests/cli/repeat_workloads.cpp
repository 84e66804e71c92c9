// SPDX-License-Identifier: MIT
// Members and fields named again: sets, hashes and sorted sets grown to counts at and around their tables' sizes
// (powers of two), by commands that name some members twice and members the key holds, then written again with
// nothing new. An insert that finds its member or field there already grows a full dict first (dict.c
// dictAddRaw on Redis 7.0, dictFindPositionForInsert on Redis 7.2 and Valkey 8.0: SADD's setTypeAdd, 7.2's and
// 8.0's HSET through hashTypeSet), where a lookup does not (a ZADD's zsetAdd finds the member with dictFind); and a
// ZADD whose repeated member keeps its score is one command the server sizes its table for whole; a ZADD XX of a
// long member the key does not hold converts a listpack all the same.

#include "workload_draw.h"

namespace layoutlab::test::workload {

namespace {

// The members of key k: strings past every listpack value limit (a table from the first), short strings (a
// listpack up to its entries limit on Redis 7.2 and Valkey, a table on Redis 7.0), or integers (an intset).
std::string memberOf(std::uint64_t k, std::uint64_t i, std::uint64_t shape) {
    if (shape == 2)
        return integerMember(k, i, 2);
    return stringMember(k, i, shape == 0 ? 66 + (k + i) % 15 : 6 + (k + i) % 30);
}

} // namespace

Workload namedAgain(std::uint64_t keys) {
    Workload w { fmt::format("named-again-{}", keys), {}, {} };
    Draw d(keys * 29);
    static const std::uint64_t kCounts[] = { 4, 8, 16, 32, 64, 128, 256, 512, 1024 };
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::uint64_t type = k % 3; // a set, a hash, a sorted set
        const std::uint64_t count = kCounts[d.between(0, 8)] + (d.chance(0.2) ? 1 : 0) - (d.chance(0.2) ? 1 : 0);
        const std::uint64_t shape = type == 1 ? d.between(0, 1) : d.between(0, 2);
        const std::string key = type == 0 ? setKey(k) : type == 1 ? hashKey(k) : zsetKey(k);
        w.collectionKeys.push_back(key);
        std::vector<std::string> scores(count);
        auto write = [&](const std::vector<std::uint64_t>& names) {
            Command c { type == 0 ? "SADD" : type == 1 ? "HSET" : "ZADD", key };
            for (std::uint64_t i : names) {
                if (type == 2) {
                    if (scores[i].empty())
                        scores[i] = score(d);
                    c.push_back(scores[i]); // the member's score, unchanged when it is named again
                }
                c.push_back(memberOf(k, i, shape));
                if (type == 1) // a value of the field's shape: the pair stays a table's, or a listpack's
                    c.push_back(std::string(shape == 0 ? 70 : 10, static_cast<char>('a' + d.between(0, 25))));
            }
            w.commands.push_back(std::move(c));
        };
        for (std::uint64_t i = 0; i < count;) {
            std::vector<std::uint64_t> names;
            for (std::uint64_t n = d.between(1, 40); n > 0 && i < count; --n, ++i) {
                names.push_back(i);
                if (d.chance(0.15)) // named again within the command, or one named before it
                    names.push_back(d.between(0, i));
            }
            write(names);
        }
        // Written again with nothing new: the dict full at a power of two grows here on the lines above.
        for (std::uint64_t again = d.between(1, 3); again > 0; --again)
            write({ d.between(0, count - 1), d.between(0, count - 1) });
        // A ZADD XX naming a member past zset-max-listpack-value that the key does not hold: nothing added, and
        // a listpack converted all the same (zsetTypeMaybeConvert decides on the arguments).
        if (type == 2 && d.chance(0.3)) {
            const std::uint64_t held = d.between(0, count - 1);
            w.commands.push_back(
                { "ZADD", key, "XX", "1", memberOf(k, count + 1, 0), scores[held], memberOf(k, held, shape) });
        }
    }
    return w;
}

} // namespace layoutlab::test::workload
