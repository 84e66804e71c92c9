// SPDX-License-Identifier: MIT
#pragma once

// The memory stall of a GET, predicted from the cache model's misses per level and this host's load
// latencies (`layoutlab latency`): each access that misses a level and hits the next costs that next
// level's latency, and each that misses the last level costs a load from memory.
//
// The latencies are those of dependent loads (a pointer chase), so counting every miss at them is the
// upper end: misses serialized one after another. A GET's pointer chase has 1 + dependent loads steps (the
// index, then each pointer followed); the lines within one step (an object's second line) are fetched
// while its first is, so the lower end counts only the share of the misses that start a step. The
// prediction is the middle of that range; its uncertainty is half the range, plus the latencies' own
// (half the spread of their passes) and the cache model's stated 3% on the misses.
//
// A server that looks up several GETs' keys together overlaps their chases: Valkey 9.0 and later, given a
// client's pipelined commands, walk all their keys' lookups a step at a time, prefetching each step's line
// for every key before taking the next step (networking.c prefetchCommandQueueKeys, through
// hashtable.c hashtableIncrementalFindStep, then the RAW values' first lines). The misses that start a
// step are then paid once per step for the whole batch: with `overlappedLookups` = k they cost 1/k of
// their latency each. The lines after a step's first are not prefetched: they cost nothing at the lower
// end (fetched with the first) and their whole latency at the upper.

#include "layoutlab/sim/results.h"
#include "layoutlab/sim/simulation.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace layoutlab {

// Latencies in ns: hit latency of each cache level from L1 outward (L1's is not used: a hit there is
// part of any load), then memory.
struct LoadLatencies {
    std::vector<double> levelNs; // one per cache level, as the model's missesPerGet
    double memoryNs = 0;
    std::vector<double> levelUncertaintyNs; // beside levelNs
    double memoryUncertaintyNs = 0;
    // GETs whose lookups the server overlaps (see above); 1: one at a time. Not a latency, but kept with
    // them because a stall is predicted from both and a stored run must give the same prediction again.
    std::uint32_t overlappedLookups = 1;
};

// The GETs whose lookups overlap, from the workload's pipeline depth (GETs a client sends per round trip,
// redis-benchmark -P) and the server's batch (prefetch-batch-max-size on a build that prefetches a client's
// queued commands; 0 on one that does not): min of the two, or 1 when either is below 2
// (prefetchCommandQueueKeys returns when `max_keys <= 1` or `num_keys <= 1`).
std::uint32_t overlappedLookups(std::uint32_t pipeline, std::uint32_t prefetchBatch);

struct StallEstimate {
    double ns = 0; // the middle of the range
    double uncertaintyNs = 0; // ±
    double serializedNs = 0; // every miss one after another
    double overlappedNs = 0; // only the misses that start a dependent step
};

// A point's stall per GET; nothing when the point has no cache-model misses or the latencies do not
// match its levels.
std::optional<StallEstimate> predictStall(const ThresholdPoint& point, const LoadLatencies& latencies);

// The change from `from` to `to` (negative: `to` stalls less), its uncertainty from both ends of the
// range, the latencies and the model's misses.
std::optional<StallEstimate> predictStallChange(
    const ThresholdPoint& from, const ThresholdPoint& to, const LoadLatencies& latencies);

// The change renderStallTable states: from the layout's own threshold (else the first) to the leanest; when
// the own one is the leanest, from the first to it. Nothing when those are one point.
struct StallChangeSpan {
    const ThresholdPoint* from = nullptr;
    const ThresholdPoint* to = nullptr;
    StallEstimate change;
};
std::optional<StallChangeSpan> stallChangeToLeanest(const SimulationResult& result, const LoadLatencies& latencies);

// The predicted stall of every point, and the change between the layout's own threshold (or the first)
// and the leanest, as text after a sweep's table.
std::string renderStallTable(const SimulationResult& result, const LoadLatencies& latencies);

// As kept with a run's parameters (`load_latencies`), and read back; nothing from JSON that is not one.
nlohmann::json toJson(const LoadLatencies& latencies);
std::optional<LoadLatencies> loadLatenciesFromJson(const nlohmann::json& json);

} // namespace layoutlab
