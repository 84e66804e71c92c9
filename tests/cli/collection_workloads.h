// SPDX-License-Identifier: MIT
#pragma once

// The collection workloads collection_trace_test.cpp runs on real servers: drawn at random with fixed seeds,
// every type's commands across its limits (the file's comment says what each covers).

#include <cstdint>
#include <string>
#include <vector>

namespace layoutlab::test {

using Command = std::vector<std::string>;

// One workload: its commands, and the collection keys whose encoding the server is asked for at the end.
struct Workload {
    std::string name;
    std::vector<Command> commands;
    std::vector<std::string> collectionKeys;
};

// Hashes grown to field counts on both sides of 512 (the warm-up the test runs first).
Workload hashesGrown(std::uint64_t keys);
// Elements moved between keys (LMOVE, SMOVE, ...), popped from the first of several keys, removed by LREM.
Workload movesAndRemovals(std::uint64_t keys);
// Sorted sets emptied by ranges (ZREMRANGEBYSCORE, ...BYRANK, ...BYLEX) as windows, leaderboards and indexes.
Workload rangeRemovals(std::uint64_t keys);
// Keys of every type renamed (RENAME, RENAMENX), onto new names, other types' keys and themselves.
Workload keyRenames(std::uint64_t keys);
// Sets emptied by SPOP (members the server draws at random), each set's members alike in length.
Workload setPops(std::uint64_t keys);
// Groups of sets, and of sorted sets, whose intersections, unions and differences are stored (SINTERSTORE,
// ZUNIONSTORE, ...).
Workload setStores(std::uint64_t groups);
Workload zsetStores(std::uint64_t groups);
// Lists written in their middle (LINSERT), thinned by LREM and pops.
Workload listInserts(std::uint64_t keys);
// Sets, hashes and sorted sets grown to counts at their tables' sizes by commands that name members again.
Workload namedAgain(std::uint64_t keys);
// Every workload, or the one LAYOUTLAB_COLLECTION_WORKLOAD names (a file of commands, one a line).
std::vector<Workload> collectionWorkloads();

} // namespace layoutlab::test
