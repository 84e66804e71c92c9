// SPDX-License-Identifier: MIT
#pragma once

// `layoutlab report`'s part for a collection limit swept in the run's pass (sweep --param, advise --param):
// a chart of bytes per key against the limit's value, and a table of each value with its lines per lookup,
// its collection keys by encoding and the advice at equal weights.

#include "layoutlab/sim/results.h"

#include <optional>
#include <string>
#include <utility>

namespace layoutlab::cli {

// The chart as (file name beside index.html, SVG text); none when the run swept no limit.
std::optional<std::pair<std::string, std::string>> limitSweepChart(const SimulationResult& r, const std::string& base);
// The table as HTML; empty when the run swept no limit.
std::string limitSweepTable(const SimulationResult& r);

} // namespace layoutlab::cli
