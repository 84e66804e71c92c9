// SPDX-License-Identifier: MIT
#pragma once

// This host's load latency at each cache level and from memory, by pointer chasing: a buffer of
// 64-byte lines linked in one random cycle, each load's address read by the one before it, so that no
// two loads overlap and no prefetcher can guess the next line. A buffer that fits a level measures that
// level's hit latency; one several times the last level measures memory. This is what a miss costs on
// the GET path, where every step is a dependent load (docs/cache-model.md).
//
// Each buffer is timed several times; the median is the figure and half the spread of the passes its
// uncertainty, since a shared machine's timings move from one pass to the next.

#include "layoutlab/expected.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/sim/cache_model.h"
#include "layoutlab/store/simulation_request.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

struct LatencyPoint {
    std::string name; // "L1", "L2", "LLC", "memory"
    std::uint64_t bufferBytes = 0;
    double nanosecondsPerLoad = 0; // the median of the passes
    double uncertainty = 0; // half the spread of the passes, ns
};

struct MemoryLatency {
    std::string geometry; // the cache geometry the buffers were sized from
    std::vector<LatencyPoint> points; // each level from L1 outward, then memory
    std::uint32_t passes = 0;
    const LatencyPoint* find(std::string_view name) const;
};

struct LatencyCalibration {
    CacheGeometry geometry; // the buffers: half of each level, and memoryMultiple times the last
    std::uint32_t passes = 5;
    std::uint64_t loadsPerPass = 1000000;
    std::uint64_t memoryMultiple = 8; // the memory buffer against the last level (at least 64 MiB)
};

// Chases pointers through one buffer per level and one beyond the last, after checking that the memory
// is there. A stop request ends it with ErrorCode::Cancelled.
Expected<MemoryLatency> measureMemoryLatency(const LatencyCalibration& calibration, std::stop_token stop = {});

nlohmann::json toJson(const MemoryLatency& latency);

// This host's load latencies for a run's memory-stall prediction (report/get_time.h), measured with
// `geometry`'s buffers and kept in the job's parameters (`load_latencies`), so that the stored run shows
// the same prediction later. The CLI's --latency and the GUI's "Predict the memory stall" share it.
Expected<LoadLatencies> measureAndKeepLoadLatencies(SimulationJob& job, std::stop_token stop = {});
// The same latencies, measured with `geometry`'s buffers (drive's engine sweep keeps them in its report).
Expected<LoadLatencies> measureLoadLatencies(const CacheGeometry& geometry, std::stop_token stop = {});
std::string renderLatencyTable(const MemoryLatency& latency);

} // namespace layoutlab
