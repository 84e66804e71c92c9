// SPDX-License-Identifier: MIT
// Keys renamed (RENAME, RENAMENX: db.c renameGenericCommand) whatever they hold: hashes, sets, sorted sets
// and lists in each encoding, strings, with TTLs, onto new names, onto keys of another type and onto
// themselves; then written again under their new names, so that a state that did not move whole shows in
// what those commands do (conversions, growth). Keys copied (COPY: db.c copyCommand) to new names and onto
// keys of another type, with and without REPLACE, the copy or its source written again.

#include "workload_draw.h"

#include <map>

namespace layoutlab::test::workload {

namespace {

// The commands that make key `k` of `type` (0 hash, 1 set, 2 sorted set, 3 list), small (a listpack or
// an intset) or past its type's limits (a table, a skiplist, a quicklist of several nodes); returns how many
// elements (fields, members) the command sent.
std::uint64_t make(Workload& w, Draw& d, int type, const std::string& key, std::uint64_t k, bool large) {
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
    return n;
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
        } else if (r < 96) { // copied to a new name (its TTL with it), then the copy or the source written again
            const std::string to = typedKey(type, fmt::format("copy:{:07}", k));
            w.commands.push_back({ "COPY", key, to });
            live[to] = true;
            make(w, d, type, d.chance(0.5) ? to : key, k + 2 * keys, d.chance(0.2));
        } else if (k > 0) { // copied onto the key before, of another type: REPLACE deletes it, else nothing
            // (where it was renamed away, the copy makes it: asked for either way, the test skips a string)
            const std::string to = typedKey(static_cast<int>((k - 1) % 4), fmt::format("{:07}", k - 1));
            if (d.chance(0.7))
                w.commands.push_back({ "COPY", key, to, "REPLACE" });
            else
                w.commands.push_back({ "COPY", key, to });
            live[to] = true;
        }
    }
    for (const auto& [key, present] : live)
        if (present)
            w.collectionKeys.push_back(key);
    return w;
}

// Keys of every type and encoding copied (COPY: each type's dup), a table's from a key that once held many
// more elements (its table larger than the copy's, expanded for the count: dictExpand, hashtableExpand), some
// with TTLs, some copies written again: the copies are about half of the keyspace's memory, so a copy's
// table or bytes made other than the engine makes them shows past the test's bound.
Workload copies(std::uint64_t keys) {
    Workload w { fmt::format("copies-{}", keys), {}, {} };
    Draw d(keys * 89);
    for (std::uint64_t k = 0; k < keys; ++k) {
        const int type = static_cast<int>(k % 4);
        const std::string key = typedKey(type, fmt::format("{:07}", k));
        const bool large = d.chance(0.6);
        const std::uint64_t n = make(w, d, type, key, k, large);
        if (large && d.chance(0.7)) { // most of its elements removed: the table stays as it grew
            const std::uint64_t keep = d.between(1, 120);
            if (type == 0)
                for (std::uint64_t i = keep; i < n; ++i)
                    w.commands.push_back({ "HDEL", key, field(k, i) });
            else if (type == 1) // one at a time (a count's pop may make the set again: t_set.c spopWithCountCommand)
                for (std::uint64_t i = keep; i < n; ++i)
                    w.commands.push_back({ "SPOP", key });
            else if (type == 2)
                w.commands.push_back({ "ZREMRANGEBYRANK", key, std::to_string(keep), "-1" });
            else
                w.commands.push_back({ "LTRIM", key, "0", std::to_string(keep * 10) });
        }
        if (d.chance(0.2))
            w.commands.push_back({ "EXPIRE", key, "100000" });
        const std::string to = typedKey(type, fmt::format("copy:{:07}", k));
        w.commands.push_back({ "COPY", key, to });
        w.collectionKeys.push_back(key);
        w.collectionKeys.push_back(to);
        if (d.chance(0.2))
            make(w, d, type, to, k + keys, false); // grown past a copy's size: its listpack or table grows
    }
    return w;
}

} // namespace layoutlab::test::workload
