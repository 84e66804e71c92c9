// SPDX-License-Identifier: MIT
#pragma once

// Renders simulation results as a human table, one JSON object or CSV rows. The core returns text;
// the CLI decides where it goes.

#include "layoutlab/sim/point_metrics.h" // pointMetrics: every output metric of a point
#include "layoutlab/sim/results.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace layoutlab {

enum class OutputFormat { Table, Json, Csv };

// The sweep's verdict: the threshold with the fewest bytes per key (ties go to fewer lines per GET,
// then the smaller threshold), and where the two thresholds of the Valkey debate stand.
struct SweepVerdict {
    const ThresholdPoint* best = nullptr;
    const ThresholdPoint* at64 = nullptr;
    const ThresholdPoint* at128 = nullptr;
};
SweepVerdict sweepVerdict(const SimulationResult& result);

nlohmann::json toJson(const SimulationResult& result);
std::string renderJson(const SimulationResult& result);
std::string renderCsv(const SimulationResult& result);
// withClasses: add the per-size-class breakdown of each point (the `sim` view).
std::string renderTable(const SimulationResult& result, bool withClasses);

} // namespace layoutlab
