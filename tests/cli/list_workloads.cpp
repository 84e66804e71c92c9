// SPDX-License-Identifier: MIT
// Lists written in their middle: LINSERT before and after pivots at a node's head, its tail and inside it (a
// full node split, the nodes around merged where they fit: quicklist.c _quicklistInsert), on listpacks near
// the node limit (converted by the element, whether or not the pivot is there) and quicklists of up to a dozen
// nodes; between them LREM, pops and pushes thin and grow the nodes, so that later splits meet neighbours with
// room. The workload keeps a copy of each list to draw pivots from.

#include "workload_draw.h"

#include <algorithm>

namespace layoutlab::test::workload {

namespace {

std::string listKeyOf(std::uint64_t k) {
    return fmt::format("list:{:07}", k);
}

// An element: an integer (a listpack's 7-bit or wider entry) or a string of 1 to 900 bytes, mostly short.
std::string drawnElement(Draw& d, std::uint64_t k, std::uint64_t i) {
    const std::uint64_t r = d.between(0, 99);
    if (r < 15)
        return std::to_string(d.chance(0.5) ? d.between(0, 127) : d.between(128, 5000000000ULL));
    const std::uint64_t length = r < 75 ? d.between(1, 40) : r < 95 ? d.between(41, 200) : d.between(201, 900);
    std::string e = fmt::format("e{:x}.{}", k * 2654435761ULL % 65521, i);
    e.resize(length, '.');
    return e;
}

} // namespace

Workload listInserts(std::uint64_t keys) {
    Workload w { fmt::format("lists-inserts-{}", keys), {}, {} };
    Draw d(keys * 41);
    std::vector<std::vector<std::string>> lists(keys);
    std::uint64_t made = 0; // elements drawn so far (each one's name apart)
    for (std::uint64_t k = 0; k < keys; ++k) {
        static const std::uint64_t kLengths[] = { 3, 40, 120, 400, 1500 };
        Command build { "RPUSH", listKeyOf(k) };
        for (std::uint64_t i = 0, n = kLengths[d.between(0, 4)]; i < n; ++i) {
            lists[k].push_back(drawnElement(d, k, made++));
            build.push_back(lists[k].back());
        }
        w.commands.push_back(std::move(build));
        w.collectionKeys.push_back(listKeyOf(k));
    }
    // Refused or changing nothing: a key of another type, a missing key, a word other than BEFORE or AFTER.
    w.commands.push_back({ "SET", "string:inserts", "1" });
    w.commands.push_back({ "LINSERT", "string:inserts", "AFTER", "x", "y" });
    w.commands.push_back({ "LINSERT", listKeyOf(keys + 1), "BEFORE", "x", "y" });
    w.commands.push_back({ "LINSERT", listKeyOf(0), "BESIDE", lists[0].front(), "y" });
    for (std::uint64_t round = 0; round < keys * 25; ++round) {
        const std::uint64_t k = d.between(0, keys - 1), r = d.between(0, 99);
        auto& list = lists[k];
        const std::string key = listKeyOf(k);
        if (list.empty() || r >= 90) { // a push of one to three elements at either end
            const bool head = d.chance(0.5);
            Command push { head ? "LPUSH" : "RPUSH", key };
            for (std::uint64_t i = 0, n = d.between(1, 3); i < n; ++i) {
                std::string e = drawnElement(d, k, made++);
                list.insert(head ? list.begin() : list.end(), e);
                push.push_back(std::move(e));
            }
            w.commands.push_back(std::move(push));
        } else if (r < 55) { // beside a pivot at the list's head, its tail, or anywhere
            const std::uint64_t at = d.chance(0.2) ? 0
                : d.chance(0.25)                   ? list.size() - 1
                                                   : d.between(0, list.size() - 1);
            const bool before = d.chance(0.5);
            std::string e = drawnElement(d, k, made++);
            const std::string pivot = list[at];
            const auto found = std::find(list.begin(), list.end(), pivot); // the first equal from the head
            list.insert(before ? found : found + 1, e);
            w.commands.push_back({ "LINSERT", key, before ? "BEFORE" : "AFTER", pivot, std::move(e) });
        } else if (r < 60) { // no such pivot: the element's conversion all the same
            w.commands.push_back({ "LINSERT", key, d.chance(0.5) ? "BEFORE" : "AFTER", "no-such-pivot",
                std::string(d.between(200, 900), 'n') });
        } else if (r < 75) { // LREM of one element: a node thinned, or freed when emptied
            const std::string gone = list[d.between(0, list.size() - 1)];
            list.erase(std::find(list.begin(), list.end(), gone));
            w.commands.push_back({ "LREM", key, "1", gone });
        } else if (r < 85) { // a pop of 1 to 30 at either end
            const bool head = d.chance(0.5);
            const std::uint64_t n = std::min<std::uint64_t>(d.between(1, 30), list.size());
            for (std::uint64_t i = 0; i < n; ++i)
                list.erase(head ? list.begin() : list.end() - 1);
            w.commands.push_back({ head ? "LPOP" : "RPOP", key, std::to_string(n) });
        } else { // LSET of an element anywhere
            const std::uint64_t at = d.between(0, list.size() - 1);
            list[at] = drawnElement(d, k, made++);
            w.commands.push_back({ "LSET", key, std::to_string(at), list[at] });
        }
    }
    return w;
}

} // namespace layoutlab::test::workload
