// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/simulation.h"

namespace layoutlab {

// Fills every point's missesPerGet: places the final keyspace the way the allocator would (per size
// class a run of page-aligned slabs, keys in key-id order, lowest free region first; large allocations
// page-aligned), then replays the sampled GETs' lines (index bucket, then the bytes read of each
// allocation) through the cache hierarchy. Returns the number of GETs counted per threshold. `progress`
// (may be null) gets the share of thresholds evaluated.
Expected<std::uint64_t> evaluateCache(const SimulationConfig& config, const std::vector<std::uint32_t>& thresholds,
    const KeyspaceReplay& replay, const std::vector<ShapeHistogram::Entry>& keyspace,
    std::vector<ThresholdPoint>& points, ProgressSink* progress, std::stop_token stop);

} // namespace layoutlab
