// SPDX-License-Identifier: MIT
#pragma once

// simulate() under a memory budget (budget_simulation.cpp), and what it shares with simulate()
// (simulation.cpp).

#include "layoutlab/sim/simulation.h"

namespace layoutlab {

// A keyspace and the GET hits on it, by shape: the keys whose shape says it all, and those counted with
// their stale field's bound and sds buffer (KeyspaceReplay::thresholdKeyspaceShapes).
struct KeyspaceShapes {
    std::vector<ShapeHistogram::Entry> keyspace;
    std::vector<ShapeHistogram::Entry> gets;
    std::vector<ThresholdShapeHistogram::Entry> thresholdKeyspace;
    std::vector<ThresholdShapeHistogram::Entry> thresholdGets;
};

// The points of `thresholds` from a keyspace's shapes and its index tables' footprints; notes the tables and
// the trace's shapes in `result`. No GET hits: every live key read once.
Expected<std::vector<ThresholdPoint>> evaluateKeyspace(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceShapes& shapes,
    const std::vector<IndexFootprint>& indexes, SimulationResult& result, std::stop_token stop);

// The footprints of a replay's index tables: every database's key table, and its expires table where that
// holds keys.
std::vector<IndexFootprint> indexFootprints(const KeyspaceReplay& replay, const AllocatorModel& allocator);

// evaluateKeyspace() of a finished replay.
Expected<std::vector<ThresholdPoint>> evaluateReplay(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, SimulationResult& result,
    std::stop_token stop);

// The run's description, whatever the replays.
SimulationResult resultHeader(const SimulationConfig& config, const TraceReader& trace);

// A replay of every key as a budgeted run makes it at `threshold` (room for `keysSeen` key ids), and the
// budget that keeps it within `options` (memcached's when the allocator is memcached's slabs).
std::unique_ptr<KeyspaceReplay> budgetReplayAt(
    const SimulationConfig& config, std::uint32_t threshold, std::uint64_t keysSeen);
std::unique_ptr<KeyspaceBudget> makeBudget(
    const SimulationConfig& config, EvictionOptions options, std::uint32_t threshold, KeyspaceReplay& replay);
// "allkeys-lru, 5 samples", "exact-lru, raw object sizes": SimulationResult::budgetPolicy.
std::string budgetPolicyText(const SimulationConfig& config);

// One replay per threshold and budget (per sample too, with SimulationConfig::budgetSampleRate below 1),
// since what each keeps depends on what its keys cost, all fed from one pass over the trace.
Expected<SimulationResult> simulateWithBudget(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, TraceReader& trace, ProgressSink* progress, std::stop_token stop);

} // namespace layoutlab
