// SPDX-License-Identifier: MIT
#pragma once

// Engines and versions side by side on one trace ("what would moving to Valkey 9.1 save me?"): each layout
// at the setting its engine ships with, its bytes per key, the total at the trace's keys and at a key
// count the user gives, the saving against the first, the GET path, and whether the layout's figures were
// measured against a real build or are predicted from source.

#include "layoutlab/expected.h"
#include "layoutlab/report/svg_chart.h"
#include "layoutlab/sim/point_metrics.h"
#include "layoutlab/sim/results.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace layoutlab {

struct MigrationRow {
    std::string name; // as given: valkey-8.1, redis-7.0:shared-integers=no, a layout file's spec
    std::string spec; // the full parameter set
    std::string allocator;
    std::string thresholdName; // empty for a layout without one (memcached)
    std::uint32_t threshold = 0; // the setting it ships with
    std::uint64_t keys = 0; // live keys at the end of the trace
    double bytesPerKey = 0; // usable bytes per key, hash index included
    double linesPerGet = 0;
    double dependentLoadsPerGet = 0;
    bool measured = false; // validated against a real build (layoutlab layouts says which)
    std::string validation;
    // From a sweep: its leanest threshold (leanestPoint) and that threshold's bytes per key.
    std::optional<std::uint32_t> leanestThreshold;
    double leanestBytesPerKey = 0;
    // The allocator's classes at the shipped setting: for a slab allocator (memcached), where the items
    // are, so that framings side by side show which classes they move items into.
    bool slabClasses = false;
    std::vector<SizeClassUsage> classes;

    double totalBytes() const { return bytesPerKey * static_cast<double>(keys); }
};

struct MigrationTable {
    std::string trace;
    std::uint64_t keysAt = 0; // the key count totals are scaled to (0: the trace's own)
    std::string sweptThresholds; // as given to a sweep of several layouts; empty for `sim`
    std::vector<MigrationRow> rows;

    std::uint64_t scaleKeys(const MigrationRow& row) const { return keysAt ? keysAt : row.keys; }
    double scaledBytes(const MigrationRow& row) const { return row.bytesPerKey * static_cast<double>(scaleKeys(row)); }
    // Bytes saved against the first row at the scaled key count (negative: it costs more).
    double savingBytes(const MigrationRow& row) const;
};

// shippedPoint() of the points of a stored run of `layoutSpec` (the CLI's and the GUI's compare load the
// points alone); null also when its layout file is gone.
const ThresholdPoint* shippedPoint(std::string_view layoutSpec, const std::vector<ThresholdPoint>& points);

// One row from a simulation of `name`: its figures at its shipped setting (shippedPoint), and from a sweep
// its leanest threshold.
MigrationRow migrationRow(const std::string& name, const SimulationResult& result);

// "20M", "1.5G", "500K", "20000000": decimal key counts. Errors name the field.
Expected<std::uint64_t> parseKeyCount(const std::string& text);

std::string renderMigrationTable(const MigrationTable& table);
// The table as one chart: a bar of bytes per key per layout, labelled with its setting, its change against
// the first, and its GET path (lines and dependent loads per GET).
SvgBarChart migrationChart(const MigrationTable& table);
// The change against the first row at the scaled key count, as a fraction (0 for the first).
double savingFraction(const MigrationTable& table, const MigrationRow& row);
// "embstr-limit 44", or "-" for a layout without a threshold.
std::string settingText(const MigrationRow& row);
nlohmann::json toJson(const MigrationTable& table);

} // namespace layoutlab
