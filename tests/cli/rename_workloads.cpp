// SPDX-License-Identifier: MIT
// Keys renamed (RENAME, RENAMENX: db.c renameGenericCommand) whatever they hold: hashes, sets, sorted sets
// and lists in each encoding, strings, with TTLs, onto new names, onto keys of another type and onto
// themselves; then written again under their new names, so that a state that did not move whole shows in
// what those commands do (conversions, growth).

#include "workload_draw.h"

#include <map>

namespace layoutlab::test::workload {

namespace {

// The commands that make key `k` of `type` (0 hash, 1 set, 2 sorted set, 3 list), small (a listpack or
// an intset) or past its type's limits (a table, a skiplist, a quicklist of several nodes).
void make(Workload& w, Draw& d, int type, const std::string& key, std::uint64_t k, bool large) {
    const std::uint64_t n = large ? d.between(140, 700) : d.between(1, 60);
    Command c;
    switch (type) {
    case 0:
        c = { "HSET", key };
        for (std::uint64_t i = 0; i < n; ++i) {
            c.push_back(field(k, i));
            c.push_back(d.value(i));
        }
        break;
    case 1:
        c = { "SADD", key };
        for (std::uint64_t i = 0; i < n; ++i)
            c.push_back(k % 3 == 0 ? integerMember(k, i, k) : stringMember(k, i, d.between(4, 40)));
        break;
    case 2:
        c = { "ZADD", key };
        for (std::uint64_t i = 0; i < n; ++i) {
            c.push_back(score(d));
            c.push_back(stringMember(k, i, d.between(4, 40)));
        }
        break;
    default:
        c = { "RPUSH", key };
        for (std::uint64_t i = 0; i < n * (large ? 20 : 1); ++i)
            c.push_back(d.value(i));
        break;
    }
    w.commands.push_back(std::move(c));
}

std::string typedKey(int type, const std::string& name) {
    static const char* kPrefixes[] = { "hash:", "set:", "zset:", "list:" };
    return kPrefixes[type] + name;
}

} // namespace

Workload renames(std::uint64_t keys) {
    Workload w { fmt::format("renames-{}", keys), {}, {} };
    Draw d(keys * 71);
    std::map<std::string, bool> live; // the collection keys at the end (those whose encoding is asked for)
    for (std::uint64_t k = 0; k < keys; ++k) {
        const int type = static_cast<int>(k % 4);
        const std::string key = typedKey(type, fmt::format("{:07}", k));
        make(w, d, type, key, k, d.chance(0.3));
        live[key] = true;
        if (d.chance(0.2))
            w.commands.push_back({ "EXPIRE", key, "100000" });
        w.commands.push_back({ "SET", fmt::format("string:{:07}", k), d.value(k), "EX", "100000" });
    }
    for (std::uint64_t k = 0; k < keys; ++k) {
        const int type = static_cast<int>(k % 4);
        const std::string key = typedKey(type, fmt::format("{:07}", k));
        const std::uint64_t r = d.between(0, 99);
        if (r < 40) { // a new name, longer or shorter
            const std::string to = typedKey(type, d.chance(0.5) ? fmt::format("renamed:{:09}", k) : std::to_string(k));
            w.commands.push_back({ "RENAME", key, to });
            live.erase(key);
            live[to] = true;
            make(w, d, type, to, k + keys, d.chance(0.2)); // written again there: grown, maybe converted
        } else if (r < 55 && k + 1 < keys) { // onto the next key, of another type: that one deleted
            const std::string to = typedKey(static_cast<int>((k + 1) % 4), fmt::format("{:07}", k + 1));
            if (live.count(to)) {
                w.commands.push_back({ "RENAME", key, to });
                live.erase(key);
            }
        } else if (r < 65) { // RENAMENX onto a key that exists: nothing
            w.commands.push_back({ "RENAMENX", key, fmt::format("string:{:07}", k) });
        } else if (r < 75) {
            const std::string to = typedKey(type, fmt::format("nx:{:07}", k));
            w.commands.push_back({ "RENAMENX", key, to });
            live.erase(key);
            live[to] = true;
        } else if (r < 80) {
            w.commands.push_back({ "RENAME", key, key }); // itself: nothing
        } else if (r < 90) { // a string renamed onto the collection: the collection deleted
            w.commands.push_back({ "RENAME", fmt::format("string:{:07}", k), key });
            live.erase(key);
        }
    }
    for (const auto& [key, present] : live)
        if (present)
            w.collectionKeys.push_back(key);
    return w;
}

} // namespace layoutlab::test::workload
