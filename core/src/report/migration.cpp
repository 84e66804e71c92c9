// SPDX-License-Identifier: MIT
#include "layoutlab/report/migration.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/spec.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace layoutlab {

namespace {

// Whether `name` was validated on a real build: a preset as `layouts` lists it, measured; anything else
// (parameters changed, a layout file) is predicted from the source it models.
std::pair<bool, std::string> validationOf(const std::string& name) {
    const auto v = layoutValidation(name);
    return { v.measured, (v.measured ? "measured: " : "predicted from source: ") + v.detail };
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
    auto layout = parseLayout(layoutSpec);
    if (!layout)
        return nullptr; // a layout file that is gone
    const auto param = (*layout)->threshold();
    return shippedPoint(points, param ? std::optional<std::uint32_t>(param->value) : std::nullopt);
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
    if (const ThresholdPoint* shipped = shippedPoint(result)) {
        row.bytesPerKey = shipped->usableBytesPerKey;
        row.linesPerGet = shipped->linesTouchedPerGet;
        row.dependentLoadsPerGet = shipped->dependentLoadsPerGet;
        row.classes = shipped->sizeClasses;
    }
    // memcached's slabs (alloc/memcached_slabs.h): items sit in chunk classes, which a framing shifts.
    row.slabClasses = row.allocator.starts_with("memcached");
    if (result.points.size() > 1 && !row.thresholdName.empty()) {
        const auto& leanest = result.points[leanestPoint(result.points)];
        row.leanestThreshold = leanest.threshold;
        row.leanestBytesPerKey = leanest.usableBytesPerKey;
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

namespace {

// A sweep of several layouts: each one's leanest threshold beside the setting it ships with.
std::string renderLeanest(const MigrationTable& t, std::size_t width) {
    std::string out = fmt::format(
        "\nleanest threshold of each layout over {} (beside the setting it ships with)\n\n", t.sweptThresholds);
    out += fmt::format("{:<{}}  {:<18}  {:>10}  {:<18}  {:>10}  {:>13}  {:>12}\n", "layout", width, "shipped",
        "bytes/key", "leanest", "bytes/key", "saves per key", t.keysAt ? "saves scaled" : "saves");
    for (const auto& r : t.rows) {
        const auto setting = [&r](std::uint32_t v) { return fmt::format("{} {}", r.thresholdName, v); };
        if (!r.leanestThreshold) {
            out += fmt::format("{:<{}}  {:<18}  {:>10.2f}  {:<18}  {:>10}  {:>13}  {:>12}\n", r.name, width,
                r.thresholdName.empty() ? std::string("-") : setting(r.threshold), r.bytesPerKey, "(no threshold)", "-",
                "-", "-");
            continue;
        }
        const double saves = r.bytesPerKey - r.leanestBytesPerKey;
        out += fmt::format("{:<{}}  {:<18}  {:>10.2f}  {:<18}  {:>10.2f}  {:>13.2f}  {:>12}\n", r.name, width,
            setting(r.threshold), r.bytesPerKey, setting(*r.leanestThreshold), r.leanestBytesPerKey, saves,
            bytesText(saves * static_cast<double>(t.scaleKeys(r)), 2));
    }
    return out;
}

// Layouts on a slab allocator (memcached's framings): the items in each chunk class, side by side, so the
// classes a framing moves items into show.
std::string renderSlabClasses(const MigrationTable& t) {
    std::vector<const MigrationRow*> slab;
    for (const auto& r : t.rows)
        if (r.slabClasses)
            slab.push_back(&r);
    if (slab.size() < 2)
        return {};
    std::map<std::uint64_t, std::vector<std::uint64_t>> items; // chunk bytes -> items under each layout
    std::vector<std::uint64_t> totals(slab.size()), pages(slab.size()), chunkBytes(slab.size());
    for (std::size_t i = 0; i < slab.size(); ++i)
        for (const auto& c : slab[i]->classes) {
            auto& counts = items[c.classBytes];
            counts.resize(slab.size());
            counts[i] += c.allocations;
            totals[i] += c.allocations;
            pages[i] += c.slabs;
            chunkBytes[i] += c.usableBytes;
        }
    // Items in a larger chunk than under the first layout, at least: the largest gap between the shares of
    // items at or below a chunk size (exact when a framing moves no item more than one class up).
    std::vector<double> movedUp(slab.size());
    std::vector<std::uint64_t> below(slab.size());
    for (const auto& [chunk, counts] : items)
        for (std::size_t i = 0; i < slab.size(); ++i) {
            below[i] += i < counts.size() ? counts[i] : 0;
            if (totals[0] && totals[i])
                movedUp[i] = std::max(movedUp[i],
                    static_cast<double>(below[0]) / static_cast<double>(totals[0])
                        - static_cast<double>(below[i]) / static_cast<double>(totals[i]));
        }
    std::string out = "\nslab classes: the items in each chunk size under each layout (share of its items)\n\n";
    out += fmt::format("{:>10}", "chunk");
    for (std::size_t i = 0; i < slab.size(); ++i)
        out += fmt::format("  {:>18}", fmt::format("#{}", i + 1));
    out += "\n";
    for (const auto& [chunk, counts] : items) {
        out += fmt::format("{:>10}", fmt::format("{} B", chunk));
        for (std::size_t i = 0; i < slab.size(); ++i) {
            const auto n = i < counts.size() ? counts[i] : 0;
            out += fmt::format("  {:>18}",
                n ? fmt::format("{} ({:.1f}%)", countText(n), totals[i] ? 100.0 * n / totals[i] : 0.0) : "-");
        }
        out += "\n";
    }
    const auto summaryRow = [&](const char* label, auto cell) {
        out += fmt::format("{:>10}", label);
        for (std::size_t i = 0; i < slab.size(); ++i)
            out += fmt::format("  {:>18}", cell(i));
        out += "\n";
    };
    summaryRow("pages", [&](std::size_t i) { return countText(pages[i]); });
    summaryRow("mean chunk", [&](std::size_t i) {
        return fmt::format("{:.1f} B", totals[i] ? static_cast<double>(chunkBytes[i]) / totals[i] : 0.0);
    });
    summaryRow("moved up",
        [&](std::size_t i) { return i == 0 ? std::string("-") : fmt::format(">= {:.1f}%", 100.0 * movedUp[i]); });
    for (std::size_t i = 0; i < slab.size(); ++i)
        out += fmt::format("#{}: {}\n", i + 1, slab[i]->name);
    out += "pages: the slab pages the classes need at least (a class holds whole pages; 1 MiB each unless the "
           "allocator says otherwise); moved up: the share of items in a larger chunk than under #1, at least\n";
    return out;
}

} // namespace

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
                "{}{} ({:+.1f}%)", change > 0 ? "+" : "", bytesText(change, 2), base > 0 ? 100.0 * change / base : 0.0);
        out += fmt::format("{:<{}}  {:<18}  {:>10.2f}  {:>11}  {:>11}  {:>20}  {:>9.3f}  {:>9.3f}  {}\n", r.name, width,
            setting, r.bytesPerKey, bytesText(r.totalBytes(), 2), t.keysAt ? bytesText(t.scaledBytes(r), 2) : "",
            savingText, r.linesPerGet, r.dependentLoadsPerGet, r.measured ? "measured" : "predicted");
    }
    out += fmt::format("\nvs the first: each layout's memory against {}'s, {} (negative: it saves); figures: "
                       "whether the layout was measured against a real build (`layoutlab layouts` says which) or "
                       "is predicted from source\n",
        first, t.keysAt ? "at the scaled key count" : "at the trace's keys");
    if (!t.sweptThresholds.empty())
        out += renderLeanest(t, width);
    out += renderSlabClasses(t);
    return out;
}

double savingFraction(const MigrationTable& t, const MigrationRow& row) {
    const double base = t.rows.empty() ? 0 : t.scaledBytes(t.rows.front());
    return base > 0 ? t.savingBytes(row) / base : 0.0;
}

std::string settingText(const MigrationRow& r) {
    return r.thresholdName.empty() ? std::string("-") : fmt::format("{} {}", r.thresholdName, r.threshold);
}

SvgBarChart migrationChart(const MigrationTable& t) {
    SvgBarChart chart;
    chart.title = fmt::format("Bytes per key at each engine's shipped setting, {}", t.trace);
    chart.valueLabel = "bytes per key (hash index included)";
    for (const auto& r : t.rows) {
        SvgBar bar;
        bar.label = r.thresholdName.empty() ? r.name : fmt::format("{} ({})", r.name, settingText(r));
        bar.value = r.bytesPerKey;
        bar.valueText = &r == &t.rows.front()
            ? fmt::format("{:.1f} (base)", r.bytesPerKey)
            : fmt::format("{:.1f} ({:+.1f}%)", r.bytesPerKey, -100.0 * savingFraction(t, r));
        bar.note = fmt::format("GET: {:.2f} lines, {:.2f} dependent loads; {}", r.linesPerGet, r.dependentLoadsPerGet,
            r.measured ? "measured" : "predicted");
        chart.bars.push_back(std::move(bar));
    }
    return chart;
}

nlohmann::json toJson(const MigrationTable& t) {
    auto rows = nlohmann::json::array();
    for (const auto& r : t.rows) {
        rows.push_back({ { "layout", r.name }, { "spec", r.spec }, { "allocator", r.allocator },
            { "threshold_parameter",
                r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.thresholdName) },
            { "threshold", r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.threshold) },
            { "keys", r.keys }, { "bytes_per_key", r.bytesPerKey }, { "total_bytes", r.totalBytes() },
            { "scaled_keys", t.scaleKeys(r) }, { "scaled_bytes", t.scaledBytes(r) },
            { "saving_bytes", t.savingBytes(r) }, { "saving_fraction", savingFraction(t, r) },
            { "lines_touched_per_get", r.linesPerGet }, { "dependent_loads_per_get", r.dependentLoadsPerGet },
            { "measured", r.measured }, { "validation", r.validation } });
        auto& row = rows.back();
        if (!t.sweptThresholds.empty()) {
            row["leanest_threshold"]
                = r.leanestThreshold ? nlohmann::json(*r.leanestThreshold) : nlohmann::json(nullptr);
            row["leanest_bytes_per_key"]
                = r.leanestThreshold ? nlohmann::json(r.leanestBytesPerKey) : nlohmann::json(nullptr);
        }
        if (r.slabClasses) {
            auto classes = nlohmann::json::array();
            for (const auto& c : r.classes)
                classes.push_back(
                    { { "chunk_bytes", c.classBytes }, { "items", c.allocations }, { "pages", c.slabs } });
            row["slab_classes"] = classes;
        }
    }
    nlohmann::json out { { "trace", t.trace },
        { "keys_at", t.keysAt ? nlohmann::json(t.keysAt) : nlohmann::json(nullptr) }, { "rows", rows } };
    if (!t.sweptThresholds.empty())
        out["swept_thresholds"] = t.sweptThresholds;
    return out;
}

} // namespace layoutlab
