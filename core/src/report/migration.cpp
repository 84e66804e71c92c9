// SPDX-License-Identifier: MIT
#include "layoutlab/report/migration.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/spec.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace layoutlab {

namespace {

// Whether `name` was validated on a real build: a preset as `layouts` lists it, measured; anything else
// (parameters changed, a layout file) is predicted from the source it models.
std::pair<bool, std::string> validationOf(const std::string& name) {
    const auto v = layoutValidation(name);
    return { v.measured, (v.measured ? "measured: " : "predicted from source: ") + v.detail };
}

// 9.6 MiB, 3.42 GiB: binary units, three significant figures or so.
std::string bytesText(double bytes) {
    const char* const units[] { "B", "KiB", "MiB", "GiB", "TiB" };
    int unit = 0;
    double value = std::abs(bytes);
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    return fmt::format("{}{:.{}f} {}", bytes < 0 ? "-" : "", value, unit == 0 ? 0 : value < 10 ? 2 : 1, units[unit]);
}

std::string countText(std::uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace

const ThresholdPoint* shippedPoint(std::string_view layoutSpec, const std::vector<ThresholdPoint>& points) {
    if (points.size() == 1)
        return &points.front();
    auto layout = parseLayout(layoutSpec);
    const auto param = layout ? (*layout)->threshold() : std::nullopt;
    if (!param)
        return nullptr;
    for (const auto& p : points)
        if (p.threshold == param->value)
            return &p;
    return nullptr;
}

double MigrationTable::savingBytes(const MigrationRow& row) const {
    return rows.empty() ? 0 : scaledBytes(rows.front()) - scaledBytes(row);
}

MigrationRow migrationRow(const std::string& name, const SimulationResult& result) {
    MigrationRow row;
    row.name = name;
    row.spec = result.layoutSpec;
    row.allocator = result.allocatorSpec;
    row.thresholdName = result.thresholdName;
    row.threshold = result.configuredThreshold;
    row.keys = result.trace.liveKeys;
    if (!result.points.empty()) {
        const auto& p = result.points.front();
        row.bytesPerKey = p.usableBytesPerKey;
        row.linesPerGet = p.linesTouchedPerGet;
        row.dependentLoadsPerGet = p.dependentLoadsPerGet;
    }
    std::tie(row.measured, row.validation) = validationOf(name);
    return row;
}

Expected<std::uint64_t> parseKeyCount(const std::string& text) {
    double scale = 1;
    std::string number = text;
    if (!number.empty()) {
        switch (number.back()) {
        case 'k':
        case 'K':
            scale = 1e3;
            break;
        case 'm':
        case 'M':
            scale = 1e6;
            break;
        case 'g':
        case 'G':
            scale = 1e9;
            break;
        default:
            break;
        }
        if (scale != 1)
            number.pop_back();
    }
    const auto value = parseReal(number, field::kKeysAt);
    const double keys = value ? *value * scale : 0;
    if (!value || !(keys >= 1) || keys > 1e15)
        return usageError(
            fmt::format("'{}' is not a key count (e.g. 20M, 1.5G, 500K or 20000000)", text), field::kKeysAt);
    return static_cast<std::uint64_t>(std::llround(keys));
}

std::string renderMigrationTable(const MigrationTable& t) {
    std::string out
        = fmt::format("{} layouts on {}, each at the setting its engine ships with", t.rows.size(), t.trace);
    if (t.keysAt)
        out += fmt::format("; totals scaled to {} keys", countText(t.keysAt));
    out += "\nbytes per key include the hash index\n\n";
    std::size_t width = 6;
    for (const auto& r : t.rows)
        width = std::max(width, r.name.size());
    const std::string first = t.rows.empty() ? std::string() : t.rows.front().name;
    out += fmt::format("{:<{}}  {:<18}  {:>10}  {:>11}  {:>11}  {:>20}  {:>9}  {:>9}  {}\n", "layout", width, "setting",
        "bytes/key", "total", t.keysAt ? "scaled" : "", "vs the first", "lines/GET", "loads/GET", "figures");
    for (const auto& r : t.rows) {
        const std::string setting
            = r.thresholdName.empty() ? std::string("-") : fmt::format("{} {}", r.thresholdName, r.threshold);
        const double change = -t.savingBytes(r); // memory against the first: negative saves
        const double base = t.rows.empty() ? 0 : t.scaledBytes(t.rows.front());
        const std::string savingText = &r == &t.rows.front()
            ? std::string("(the base)")
            : fmt::format(
                "{}{} ({:+.1f}%)", change > 0 ? "+" : "", bytesText(change), base > 0 ? 100.0 * change / base : 0.0);
        out += fmt::format("{:<{}}  {:<18}  {:>10.2f}  {:>11}  {:>11}  {:>20}  {:>9.3f}  {:>9.3f}  {}\n", r.name, width,
            setting, r.bytesPerKey, bytesText(r.totalBytes()), t.keysAt ? bytesText(t.scaledBytes(r)) : "", savingText,
            r.linesPerGet, r.dependentLoadsPerGet, r.measured ? "measured" : "predicted");
    }
    out += fmt::format("\nvs the first: each layout's memory against {}'s, {} (negative: it saves); figures: "
                       "whether the layout was measured against a real build (`layoutlab layouts` says which) or "
                       "is predicted from source\n",
        first, t.keysAt ? "at the scaled key count" : "at the trace's keys");
    return out;
}

nlohmann::json toJson(const MigrationTable& t) {
    auto rows = nlohmann::json::array();
    for (const auto& r : t.rows) {
        const double base = t.rows.empty() ? 0 : t.scaledBytes(t.rows.front());
        rows.push_back({ { "layout", r.name }, { "spec", r.spec }, { "allocator", r.allocator },
            { "threshold_parameter",
                r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.thresholdName) },
            { "threshold", r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.threshold) },
            { "keys", r.keys }, { "bytes_per_key", r.bytesPerKey }, { "total_bytes", r.totalBytes() },
            { "scaled_keys", t.scaleKeys(r) }, { "scaled_bytes", t.scaledBytes(r) },
            { "saving_bytes", t.savingBytes(r) }, { "saving_fraction", base > 0 ? t.savingBytes(r) / base : 0.0 },
            { "lines_touched_per_get", r.linesPerGet }, { "dependent_loads_per_get", r.dependentLoadsPerGet },
            { "measured", r.measured }, { "validation", r.validation } });
    }
    return { { "trace", t.trace }, { "keys_at", t.keysAt ? nlohmann::json(t.keysAt) : nlohmann::json(nullptr) },
        { "rows", rows } };
}

} // namespace layoutlab
