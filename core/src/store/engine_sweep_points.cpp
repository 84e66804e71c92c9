// SPDX-License-Identifier: MIT
#include "layoutlab/store/engine_sweep_points.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace layoutlab {

namespace {
constexpr const char* kBytesPerKey = "bytes_per_key";
constexpr const char* kGetsPerSecond = "gets_per_sec";
} // namespace

std::vector<Measurement> engineSweepMeasurements(const std::vector<EngineSweepPoint>& points) {
    std::vector<Measurement> out;
    for (const auto& p : points) {
        nlohmann::json details { { "setting", p.setting }, { "server", p.server }, { "model", p.model },
            { "predicted_bytes_per_key", p.predictedBytesPerKey }, { "error", p.relativeError() }, { "keys", p.keys } };
        if (!p.build.empty())
            details["build"] = p.build;
        if (p.measuredActiveBytesPerKey && p.predictedActiveBytesPerKey)
            details.update({ { "measured_active_bytes_per_key", *p.measuredActiveBytesPerKey },
                { "predicted_active_bytes_per_key", *p.predictedActiveBytesPerKey } });
        out.push_back(
            { p.threshold, p.engine, p.version, kBytesPerKey, p.measuredBytesPerKey, "bytes", details.dump() });
        if (p.getsPerSecond)
            out.push_back({ p.threshold, p.engine, p.version, kGetsPerSecond, *p.getsPerSecond, "ops/s",
                nlohmann::json { { "setting", p.setting } }.dump() });
    }
    return out;
}

std::vector<EngineSweepPoint> engineSweepPoints(const std::vector<Measurement>& measurements) {
    std::vector<EngineSweepPoint> out;
    for (const auto& m : measurements) {
        const auto details = nlohmann::json::parse(m.detailsJson, nullptr, false);
        if (!details.is_object() || !details.contains("setting") || !details["setting"].is_string())
            continue;
        const auto setting = details["setting"].get<std::string>();
        if (m.metric == kGetsPerSecond) {
            for (auto& p : out)
                if (p.setting == setting)
                    p.getsPerSecond = m.value;
            continue;
        }
        if (m.metric != kBytesPerKey)
            continue;
        EngineSweepPoint p;
        p.setting = setting;
        p.threshold = m.threshold;
        p.engine = m.engine;
        p.version = m.engineVersion;
        p.server = details.value("server", std::string());
        p.build = details.value("build", std::string());
        p.model = details.value("model", std::string());
        p.measuredBytesPerKey = m.value;
        p.predictedBytesPerKey = details.value("predicted_bytes_per_key", 0.0);
        p.keys = details.value("keys", std::uint64_t { 0 });
        if (details.contains("measured_active_bytes_per_key") && details.contains("predicted_active_bytes_per_key")) {
            p.measuredActiveBytesPerKey = details["measured_active_bytes_per_key"].get<double>();
            p.predictedActiveBytesPerKey = details["predicted_active_bytes_per_key"].get<double>();
        }
        out.push_back(std::move(p));
    }
    return out;
}

double worstError(const std::vector<EngineSweepPoint>& points) {
    double worst = 0;
    for (const auto& p : points)
        if (std::abs(p.relativeError()) > std::abs(worst))
            worst = p.relativeError();
    return worst;
}

} // namespace layoutlab
