// SPDX-License-Identifier: MIT
#pragma once

// simulate() under a memory budget (budget_simulation.cpp), and what it shares with simulate()
// (simulation.cpp).

#include "layoutlab/sim/simulation.h"

namespace layoutlab {

// The points of `thresholds` from a finished replay's keyspace and GETs; notes the index tables and the
// trace's shapes in `result`.
Expected<std::vector<ThresholdPoint>> evaluateReplay(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, SimulationResult& result,
    std::stop_token stop);

// The run's description, whatever the replays.
SimulationResult resultHeader(const SimulationConfig& config, const TraceReader& trace);

// One replay per threshold and budget (per sample too, with SimulationConfig::budgetSampleRate below 1),
// since what each keeps depends on what its keys cost, all fed from one pass over the trace.
Expected<SimulationResult> simulateWithBudget(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, TraceReader& trace, ProgressSink* progress, std::stop_token stop);

} // namespace layoutlab
