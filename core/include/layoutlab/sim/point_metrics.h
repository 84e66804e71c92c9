// SPDX-License-Identifier: MIT
#pragma once

// The one table of a threshold point's metrics: the name --json, --csv, the results database and the
// GUI's CSV give each, its unit, the decimals it is shown with, and what it means. The reporters, the
// database's points columns, `compare`, `report`, the GUI's sweep models and the user guide's metric
// list (`layoutlab metrics --markdown`) all read this table, so a metric is added in one place.

#include "layoutlab/sim/results.h"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

// Where a metric appears. A metric can be in several places.
enum MetricUse : unsigned {
    kMetricOutput = 1u << 0, // --json, --csv, `compare`, `report`'s tables, in table order
    kMetricStored = 1u << 1, // a column of the results database's points table, of the same name
    kMetricShown = 1u << 2, // a column of the human table and of the GUI's sweep table and charts
};

// How the human table prints a value.
enum class MetricStyle {
    Count, // a whole number
    Fixed, // `decimals` decimals
    Percent, // a fraction shown as a percentage with `decimals` decimals
    Bytes, // a byte count in B/KiB/MiB/GiB
};

struct PointMetric {
    std::string_view name; // the --json/--csv name and database column
    std::string_view heading; // for people: "Bytes per key"
    std::string_view unit; // "bytes", "bytes/key", "lines/GET", "fraction", "count"
    int decimals; // shown with (the JSON and the database keep 4, or whole numbers)
    bool integral; // a count: printed and stored as an integer
    unsigned uses; // MetricUse bits
    std::string_view description; // one sentence, for the docs and tooltips
    // The human table's column (`sim`, `sweep`): header, width, position from 1 (0: not a column), style.
    std::string_view tableHeader;
    int tableWidth;
    int tableColumn;
    MetricStyle style;
    // The point's value. Cache-model misses have no value without the cache model (or, for L2, without a
    // third level): then nothing.
    std::optional<double> (*get)(const ThresholdPoint&);
    // Writes a stored value back into a point (nullptr for derived metrics, and for the misses, which
    // ThresholdPoint keeps as one vector: see setMissesFromLevels). A stored metric without one is a
    // column for the database's readers, recomputed from the others when a run is read back.
    void (*set)(ThresholdPoint&, double);
    int missLevel = -1; // 0: L1, 1: L2, 2: the last level; -1: not a cache-model metric
    bool fromArena = false; // the slab model's (ThresholdPoint::arena): no value without it
    bool fromBudget = false; // a memory budget's (ThresholdPoint::budget): no value without it
};

// Every metric, in table order.
std::span<const PointMetric> pointMetricTable();

// 15.8 MiB, 8.95 MiB (with 2 decimals below ten), -720.8 MiB, 96 B: binary units.
std::string bytesText(double bytes, int decimalsBelowTen = 1);

// The metrics with a use, in table order. With `cacheLevels` given, only the miss metrics a point with
// that many cache levels carries are included (two levels: L1 and LLC; three: L1, L2, LLC; other counts:
// none); without it, all of them.
// With `withArena` given, the slab model's metrics are included only when it is true.
// With `withBudget` given, a memory budget's metrics are included only when it is true.
std::vector<const PointMetric*> metricsWith(unsigned use, std::optional<std::size_t> cacheLevels = std::nullopt,
    std::optional<bool> withArena = std::nullopt, std::optional<bool> withBudget = std::nullopt);
// The metrics a point carries: its cache levels' misses, the slab model's figures when it has them.
std::vector<const PointMetric*> metricsOf(unsigned use, const ThresholdPoint& point);

// The human table's columns in their order, of those a point with `cacheLevels` levels (and the slab
// model's figures, `withArena`) carries.
std::vector<const PointMetric*> tableColumns(std::size_t cacheLevels, bool withArena = false, bool withBudget = false);

// The metric of that name, or nullptr.
const PointMetric* findPointMetric(std::string_view name);

// Rebuilds ThresholdPoint::missesPerGet from stored per-level values (L1, L2, last level).
void setMissesFromLevels(
    ThresholdPoint& point, std::optional<double> l1, std::optional<double> l2, std::optional<double> llc);

// Every output metric of a point that it carries, by name, in table order.
std::vector<std::pair<std::string, double>> pointMetrics(const ThresholdPoint& point);

// The value as the human table prints it, right-aligned to the metric's width (no leading space).
std::string formatForTable(const PointMetric& metric, double value);

// The metric list of docs/user-guide.md, as a Markdown table.
std::string metricsMarkdown();

} // namespace layoutlab
