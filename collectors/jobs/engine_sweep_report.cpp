// SPDX-License-Identifier: MIT
// The engine sweep's report: the JSON `drive --json` prints for a sweep and the table `drive` prints.

#include "layoutlab/jobs/engine_sweep_job.h"

#include "layoutlab/report/reporter.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

std::vector<ThroughputChange> throughputChanges(const EngineSweepReport& r) {
    std::vector<ThroughputChange> out;
    const auto& predicted = r.prediction.points;
    if (!r.latencies || r.points.size() < 2 || predicted.size() != r.points.size() || !r.points[0].getsPerSecond
        || *r.points[0].getsPerSecond <= 0)
        return out;
    const double baseNs = 1e9 / *r.points[0].getsPerSecond; // one thread serves every GET
    for (std::size_t i = 1; i < r.points.size(); ++i) {
        const auto change = predictStallChange(predicted[0], predicted[i], *r.latencies);
        if (!change || !r.points[i].getsPerSecond)
            continue;
        ThroughputChange t;
        t.setting = r.points[i].setting;
        t.measured = *r.points[i].getsPerSecond / *r.points[0].getsPerSecond;
        auto ratio = [&](double stallNs) { return baseNs + stallNs > 0 ? baseNs / (baseNs + stallNs) : 0.0; };
        t.predicted = ratio(change->ns);
        t.low = ratio(change->ns + change->uncertaintyNs);
        t.high = ratio(change->ns - change->uncertaintyNs);
        t.stallChange = *change;
        out.push_back(t);
    }
    return out;
}

nlohmann::json toJson(const EngineSweepReport& r) {
    auto points = nlohmann::json::array();
    for (const auto& p : r.points) {
        nlohmann::json j { { "setting", p.setting },
            { "threshold", p.threshold ? nlohmann::json(*p.threshold) : nlohmann::json(nullptr) },
            { "engine", p.engine }, { "version", p.version }, { "server", p.server }, { "model", p.model },
            { "keys", p.keys }, { "measured_bytes_per_key", p.measuredBytesPerKey },
            { "predicted_bytes_per_key", p.predictedBytesPerKey }, { "error", p.relativeError() } };
        if (!p.build.empty())
            j["build"] = p.build;
        if (p.getsPerSecond)
            j["gets_per_sec"] = *p.getsPerSecond;
        if (const auto error = p.activeRelativeError())
            j.update({ { "measured_active_bytes_per_key", *p.measuredActiveBytesPerKey },
                { "predicted_active_bytes_per_key", *p.predictedActiveBytesPerKey }, { "active_error", *error } });
        points.push_back(std::move(j));
    }
    nlohmann::json out { { "trace", r.trace }, { "engine", r.engine }, { "measures", r.measures }, { "points", points },
        { "worst_error", worstError(r.points) } };
    if (!r.layout.empty())
        out["layout"] = r.layout;
    if (!r.framing.empty())
        out["framing"] = r.framing;
    if (r.predictionRun)
        out["prediction_run"] = r.predictionRun;
    if (r.measuredRun)
        out["measured_run"] = r.measuredRun;
    if (const auto changes = throughputChanges(r); !changes.empty()) {
        auto rows = nlohmann::json::array();
        for (const auto& t : changes)
            rows.push_back(
                { { "setting", t.setting }, { "measured_ratio", t.measured }, { "predicted_ratio", t.predicted },
                    { "predicted_low", t.low }, { "predicted_high", t.high }, { "stall_change_ns", t.stallChange.ns },
                    { "stall_change_uncertainty_ns", t.stallChange.uncertaintyNs } });
        out["throughput_against_first"] = rows;
        out["load_latencies"] = toJson(*r.latencies);
    }
    return out;
}

std::string renderEngineSweepTable(const EngineSweepReport& r) {
    const bool memcached = r.engine == "memcached";
    std::string out = fmt::format("engine sweep of {} on {}: {} settings\n", r.engine, r.trace, r.points.size());
    if (!r.layout.empty())
        out += fmt::format("predicted with {} at each threshold\n", r.layout);
    if (!r.framing.empty())
        out += fmt::format("values framed as {}\n", r.framing);
    out += fmt::format("bytes per key: {}\n\n", r.measures);
    bool anyRun = false;
    bool anyActive = false;
    for (const auto& p : r.points) {
        anyRun = anyRun || p.getsPerSecond.has_value();
        anyActive = anyActive || p.activeRelativeError().has_value();
    }
    std::size_t width = 7;
    for (const auto& p : r.points)
        width = std::max(width, p.setting.size());
    out += fmt::format("{:<{}}  {:>10}  {:>10}  {:>10}  {:>8}{}{}\n", "setting", width, "keys", "measured", "predicted",
        "error", anyActive ? "  active/key measured  predicted    error" : "", anyRun ? "      GETs/s" : "");
    for (const auto& p : r.points) {
        out += fmt::format("{:<{}}  {:>10}  {:>10.2f}  {:>10.2f}  {:>+7.2f}%", p.setting, width, p.keys,
            p.measuredBytesPerKey, p.predictedBytesPerKey, 100.0 * p.relativeError());
        if (const auto error = p.activeRelativeError())
            out += fmt::format("  {:>19.2f}  {:>9.2f}  {:>+7.2f}%", *p.measuredActiveBytesPerKey,
                *p.predictedActiveBytesPerKey, 100.0 * *error);
        else if (anyActive)
            out += fmt::format("  {:>19}  {:>9}  {:>8}", "-", "-", "-");
        if (p.getsPerSecond)
            out += fmt::format("  {:>10.0f}", *p.getsPerSecond);
        out += "\n";
    }
    if (const auto changes = throughputChanges(r); !changes.empty()) {
        out += fmt::format("\nGET throughput against {} (predicted: its measured time per GET plus the memory stall "
                           "per GET each setting saves or adds, from the cache model and this host's load latencies)\n",
            r.points.front().setting);
        out += fmt::format("{:<{}}  {:>9}  {:>9}  {:>15}  {:>18}\n", "setting", width, "measured", "predicted", "range",
            "stall ns/GET");
        for (const auto& t : changes)
            out += fmt::format("{:<{}}  {:>8.3f}x  {:>8.3f}x  {:>6.3f}..{:<6.3f}  {:>+10.0f} ± {:<5.0f}\n", t.setting,
                width, t.measured, t.predicted, t.low, t.high, t.stallChange.ns, t.stallChange.uncertaintyNs);
    }
    out += fmt::format("\nworst error {:+.2f}%", 100.0 * worstError(r.points));
    if (!r.points.empty())
        out += fmt::format(" ({} {}{})", r.points.front().engine, r.points.front().version,
            memcached ? "" : fmt::format(", {}", r.points.front().build.empty() ? "builds picked" : "built here"));
    return out + "\n";
}

} // namespace layoutlab
