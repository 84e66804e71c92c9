// SPDX-License-Identifier: MIT
#pragma once

// The points of an engine sweep (layoutlab/jobs/engine_sweep_job.h): one real server per setting, its
// measured bytes per key beside the prediction for the same setting. They are stored as an
// "engine-sweep" run's measurements and read back from them here, so that charts, Compare and `report`
// can draw them without the collectors.

#include "layoutlab/store/results_db.h"

#include <optional>
#include <string>
#include <vector>

namespace layoutlab {

inline constexpr const char* kEngineSweepKind = "engine-sweep";

struct EngineSweepPoint {
    std::string setting; // "threshold 96", "-f 1.08 -n 48"
    std::optional<std::uint32_t> threshold; // Valkey
    std::string engine; // as the server says: valkey, redis, memcached
    std::string version; // the server's version
    std::string server; // the binary started
    std::string build; // a Valkey built here: the build's settings ("embed-threshold=96")
    std::string model; // the layout (memcached: the slab allocator) predicted with
    double measuredBytesPerKey = 0;
    double predictedBytesPerKey = 0;
    std::uint64_t keys = 0;
    std::optional<double> getsPerSecond; // when the run phase ran
    // The allocator's active bytes per key (Valkey: Δallocator_active; memcached: total_malloced), measured
    // and by the slab model, where the server reports them.
    std::optional<double> measuredActiveBytesPerKey;
    std::optional<double> predictedActiveBytesPerKey;

    // The prediction's error relative to the measurement.
    double relativeError() const {
        return measuredBytesPerKey != 0 ? (predictedBytesPerKey - measuredBytesPerKey) / measuredBytesPerKey : 0;
    }
    std::optional<double> activeRelativeError() const {
        if (!measuredActiveBytesPerKey || !predictedActiveBytesPerKey || *measuredActiveBytesPerKey == 0)
            return std::nullopt;
        return (*predictedActiveBytesPerKey - *measuredActiveBytesPerKey) / *measuredActiveBytesPerKey;
    }
};

// The measurements an engine-sweep run stores for its points.
std::vector<Measurement> engineSweepMeasurements(const std::vector<EngineSweepPoint>& points);
// The points back from a run's measurements; empty when they are not an engine sweep's.
std::vector<EngineSweepPoint> engineSweepPoints(const std::vector<Measurement>& measurements);

// The largest error of any point, by magnitude (0 for none).
double worstError(const std::vector<EngineSweepPoint>& points);

} // namespace layoutlab
