// SPDX-License-Identifier: MIT
// The engine sweep's report: the JSON `drive --json` prints for a sweep and the table `drive` prints.

#include "layoutlab/jobs/engine_sweep_job.h"

#include "layoutlab/report/reporter.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

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
    for (const auto& p : r.points)
        anyRun = anyRun || p.getsPerSecond.has_value();
    std::size_t width = 7;
    for (const auto& p : r.points)
        width = std::max(width, p.setting.size());
    out += fmt::format("{:<{}}  {:>10}  {:>10}  {:>10}  {:>8}{}\n", "setting", width, "keys", "measured", "predicted",
        "error", anyRun ? "      GETs/s" : "");
    for (const auto& p : r.points) {
        out += fmt::format("{:<{}}  {:>10}  {:>10.2f}  {:>10.2f}  {:>+7.2f}%", p.setting, width, p.keys,
            p.measuredBytesPerKey, p.predictedBytesPerKey, 100.0 * p.relativeError());
        if (p.getsPerSecond)
            out += fmt::format("  {:>10.0f}", *p.getsPerSecond);
        out += "\n";
    }
    out += fmt::format("\nworst error {:+.2f}%", 100.0 * worstError(r.points));
    if (!r.points.empty())
        out += fmt::format(" ({} {}{})", r.points.front().engine, r.points.front().version,
            memcached ? "" : fmt::format(", {}", r.points.front().build.empty() ? "builds picked" : "built here"));
    return out + "\n";
}

} // namespace layoutlab
