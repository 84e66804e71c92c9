// SPDX-License-Identifier: MIT
#include "layoutlab/jobs/profile_job.h"

#include "layoutlab/layout/layout_file.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/limit_sweep.h"
#include "layoutlab/sim/point_metrics.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/store/measured_runs.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

namespace {

double relativeError(double measured, double predicted) {
    return predicted != 0 ? (measured - predicted) / predicted : 0;
}

nlohmann::json optionalCount(const std::optional<std::uint64_t>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json optionalNumber(const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json firstOrNull(const std::vector<double>& v) {
    return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.front());
}

nlohmann::json lastOrNull(const std::vector<double>& v) {
    return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.back());
}

// The layout as the replay names it from its private directory: a layout file by its absolute path.
std::string replayLayoutSpec(const LayoutModel& layout) {
    const auto file = layoutFilePath(layout.spec());
    return file.empty() ? layout.spec() : layoutFileSpec(std::filesystem::absolute(file).string());
}

// The profile's configuration from the request, checked: the reference engine builds the engines' own
// hash tables from malloc, so layouts that change them, and memcached, are refused.
Expected<ProfileConfig> profileConfig(const ProfileRequest& r) {
    if (r.layout.empty())
        return usageError("a layout is required", field::kLayout);
    auto layout = parseLayout(r.layout);
    if (!layout)
        return layout.error();
    // The geometry, not how a shrink rehashes (shrinkStepSkipsEmpty: an engine release's own).
    auto tableGeometry = [](IndexParams p) {
        p.shrinkStepSkipsEmpty = false;
        return p;
    };
    if (const auto policy = (*layout)->indexPolicy(); tableGeometry(policy.params) != engineIndexParams(policy.kind))
        return usageError(
            fmt::format("profile's reference engine builds the engines' own hash tables, and {} changes the [index] "
                        "geometry (bucket size, entries, sizing or fill): compare it with a sweep instead",
                r.layout),
            field::kLayout);
    if ((*layout)->indexPolicy().kind == IndexKind::MemcachedAssoc)
        return usageError("profile builds malloc-based stores (Valkey, Redis) in its reference engine; memcached "
                          "items live in memcached's own slab allocator: measure them with a drive",
            field::kLayout);
    auto models = parseLayoutAndAllocator(r.layout, r.allocator);
    if (!models)
        return models.error();
    if (auto ok = checkCollectionLimits(r.collectionLimits); !ok)
        return ok.error();
    auto counters = parseCounterSource(r.counters);
    if (!counters)
        return counters.error();
    ProfileConfig config;
    config.layout = models->layout;
    config.allocator = models->allocator;
    config.counters = *counters;
    config.sampleGets = r.sampleGets;
    config.collectionLimits = r.collectionLimits;
    config.thresholds = r.thresholds;
    if (config.thresholds.empty() && !r.thresholdsText.empty()) {
        const auto param = config.layout->threshold();
        if (!param) {
            Error e = usageError(
                fmt::format("layout '{}' has no embed threshold", config.layout->spec()), field::kThresholds);
            e.tag = kTagNoThreshold;
            return e;
        }
        auto list = parseThresholds(r.thresholdsText, *param);
        if (!list)
            return list.error();
        config.thresholds = *list;
    }
    if (!r.cacheGeometry.empty()) {
        auto geometry = CacheGeometry::parse(r.cacheGeometry);
        if (!geometry)
            return geometry.error();
        config.geometry = *geometry;
    }
    config.openTrace = [path = r.tracePath, options = r.importOptions] { return openTrace(path, options); };
    // The replay runs in a private directory: it gets the trace's absolute path.
    const auto& source = r.importOptions;
    config.replayCommand = { r.replayProgram, "profile-replay", std::filesystem::absolute(r.tracePath).string(),
        "--layout", replayLayoutSpec(*config.layout), "--format", source.format.empty() ? "auto" : source.format,
        "--on-error", source.onError == OnError::Skip ? "skip" : "fail", "--key-size",
        std::to_string(source.oracleKeyBytes) };
    for (const auto& [name, value] : changedCollectionLimits(r.collectionLimits))
        config.replayCommand.insert(config.replayCommand.end(), { fmt::format("--{}", name), std::to_string(value) });
    return config;
}

} // namespace

Expected<ProfileReport> runProfileJob(
    const ProfileRequest& r, ResultsDb* db, ProgressSink* progress, std::stop_token stop) {
    auto config = profileConfig(r);
    if (!config)
        return config.error();
    MeasuredRuns runs(db);
    RunParameters parameters
        = runParametersFor(r.tracePath, r.importOptions, *config->layout, *config->allocator, config->thresholds);
    parameters.extra = { { "counters", r.counters }, { "sample_gets", r.sampleGets } };
    for (const auto& [name, value] : changedCollectionLimits(r.collectionLimits))
        parameters.extra["collection_limits"][std::string(name)] = value;
    if (!r.cacheGeometry.empty())
        parameters.cacheGeometry = r.cacheGeometry;
    if (auto ok = runs.begin(r.tracePath, r.importOptions, "profile", "reference", parameters, r.toolVersion); !ok)
        return ok.error();
    auto result = runProfile(*config, progress, stop);
    if (!result) {
        Error e = result.error();
        if (e.code == ErrorCode::Cancelled && runs.stored())
            e.message = "stopped";
        return runs.end(e);
    }
    ProfileReport report { r.tracePath, std::move(*result), runs.prediction(), runs.measured() };
    const nlohmann::json summary { { "live_keys", report.result.liveKeys },
        { "counter_source", counterSourceName(report.result.counterSource) },
        { "counter_note", report.result.counterNote }, { "cache_geometry", report.result.geometry } };
    if (auto ok = runs.complete(report.result.prediction, profileMeasurements(report.result), summary); !ok)
        return ok.error();
    return report;
}

nlohmann::json toJson(const ProfileReport& report) {
    const ProfileResult& r = report.result;
    nlohmann::json points = nlohmann::json::array();
    const std::string source(counterSourceName(r.counterSource));
    const bool haveCounters = r.counterSource != CounterSource::None;
    for (const auto& p : r.points) {
        nlohmann::json bins = nlohmann::json::array();
        for (const auto& b : p.arena.bins)
            bins.push_back({ { "region_bytes", b.regionBytes }, { "nregs", b.regionsPerSlab },
                { "slab_bytes", b.slabBytes }, { "curregs", b.currentRegions }, { "curslabs", b.currentSlabs },
                { "utilisation", b.utilisation } });
        points.push_back({ { "threshold", p.threshold }, { "keys", p.keys },
            { "predicted_bytes_per_key", p.predictedBytesPerKey }, { "measured_bytes_per_key", p.measuredBytesPerKey },
            { "bytes_relative_error", relativeError(p.measuredBytesPerKey, p.predictedBytesPerKey) },
            { "predicted_usable_bytes", p.predictedUsableBytes },
            { "measured_allocated_bytes", p.measuredAllocatedBytes },
            { "predicted_allocated_bytes", optionalCount(p.predictedAllocatedBytes) },
            { "predicted_active_bytes", optionalCount(p.predictedActiveBytes) },
            { "measured_active_bytes", p.measuredActiveBytes },
            { "active_relative_error",
                p.predictedActiveBytes ? nlohmann::json(relativeError(
                    static_cast<double>(p.measuredActiveBytes), static_cast<double>(*p.predictedActiveBytes)))
                                       : nlohmann::json(nullptr) },
            { "predicted_child_buckets", p.predictedChildBuckets },
            { "measured_child_buckets", p.measuredChildBuckets }, { "lines_touched_per_get", p.linesTouchedPerGet },
            { "dependent_loads_per_get", p.dependentLoadsPerGet },
            { "predicted_misses_per_get", firstOrNull(p.predictedMissesPerGet) },
            { "measured_misses_per_get", haveCounters ? optionalNumber(p.measuredL1MissesPerGet) : nullptr },
            { "predicted_llc_misses_per_get", lastOrNull(p.predictedMissesPerGet) },
            { "measured_llc_misses_per_get", haveCounters ? optionalNumber(p.measuredLlcMissesPerGet) : nullptr },
            { "predicted_misses_per_get_by_level", p.predictedMissesPerGet }, { "counter_source", source },
            { "ns_per_get", p.nsPerGet }, { "measured_gets", p.measuredGets }, { "measured_hits", p.measuredHits },
            { "arena",
                { { "allocated_bytes", p.arena.allocatedBytes }, { "active_bytes", p.arena.activeBytes },
                    { "resident_bytes", p.arena.residentBytes }, { "bins", bins } } } });
    }
    nlohmann::json out { { "trace", report.trace }, { "layout", r.prediction.layoutSpec },
        { "allocator", r.prediction.allocatorSpec }, { "threshold_parameter", r.prediction.thresholdName },
        { "cache_geometry", r.geometry }, { "counter_source", source }, { "counter_note", r.counterNote },
        { "live_keys", r.liveKeys }, { "sampled_gets", r.prediction.cacheSampledGets }, { "points", points } };
    if (report.predictionRun)
        out["runs"] = { { "prediction", report.predictionRun }, { "measured", report.measuredRun } };
    return out;
}

std::string renderProfileTable(const ProfileReport& report) {
    const ProfileResult& r = report.result;
    std::string out = fmt::format("profile of {}\n  layout {} on the linked {}; {} live keys; cache {}\n", report.trace,
        r.prediction.layoutSpec, ReferenceEngine::allocatorVersion(), r.liveKeys, r.geometry);
    const bool haveCounters = r.counterSource != CounterSource::None;
    const std::string note = !r.counterNote.empty() ? r.counterNote
        : r.counterSource == CounterSource::None    ? "counters none: measured misses are not counted"
                                                    : "";
    out += fmt::format(
        "  misses measured by: {}{}\n\n", counterSourceName(r.counterSource), note.empty() ? "" : " (" + note + ")");
    out += fmt::format(
        "{:>9}  {:>26}  {:>22}  {:>22}  {:>8}\n", "", "bytes per key", "L1 misses per GET", "LLC misses per GET", "");
    out += fmt::format("{:>9}  {:>8} {:>8} {:>8}  {:>10} {:>11}  {:>10} {:>11}  {:>8}\n",
        r.prediction.thresholdName.empty() ? "-" : r.prediction.thresholdName, "model", "jemalloc", "error", "model",
        "measured", "model", "measured", "ns/GET");
    auto measured = [&](const std::optional<double>& v) {
        return haveCounters && v ? fmt::format("{:.3f}", *v) : std::string("-");
    };
    for (const auto& p : r.points) {
        const double l1 = p.predictedMissesPerGet.empty() ? 0 : p.predictedMissesPerGet.front();
        const double llc = p.predictedMissesPerGet.empty() ? 0 : p.predictedMissesPerGet.back();
        out += fmt::format("{:>9}  {:>8.2f} {:>8.2f} {:>7.2f}%  {:>10.3f} {:>11}  {:>10.3f} {:>11}  {:>8.1f}\n",
            p.threshold, p.predictedBytesPerKey, p.measuredBytesPerKey,
            100 * relativeError(p.measuredBytesPerKey, p.predictedBytesPerKey), l1, measured(p.measuredL1MissesPerGet),
            llc, measured(p.measuredLlcMissesPerGet), p.nsPerGet);
    }
    // What the allocator keeps: the slab model (no thread cache, as the reference engine allocates) against
    // the arena's stats.allocated and stats.active.
    if (!r.points.empty() && r.points.front().predictedActiveBytes) {
        out += fmt::format("\n{:>9}  {:>12} {:>12} {:>8}  {:>12} {:>12} {:>8}  {:>6}\n",
            r.prediction.thresholdName.empty() ? "-" : r.prediction.thresholdName, "allocated", "arena", "error",
            "active", "arena", "error", "frag");
        for (const auto& p : r.points) {
            const auto allocated = static_cast<double>(p.predictedAllocatedBytes.value_or(0));
            const auto active = static_cast<double>(p.predictedActiveBytes.value_or(0));
            out += fmt::format("{:>9}  {:>12} {:>12} {:>7.3f}%  {:>12} {:>12} {:>7.3f}%  {:>6.3f}\n", p.threshold,
                bytesText(allocated), bytesText(static_cast<double>(p.measuredAllocatedBytes)),
                100 * relativeError(static_cast<double>(p.measuredAllocatedBytes), allocated), bytesText(active),
                bytesText(static_cast<double>(p.measuredActiveBytes)),
                100 * relativeError(static_cast<double>(p.measuredActiveBytes), active),
                p.measuredAllocatedBytes
                    ? static_cast<double>(p.measuredActiveBytes) / static_cast<double>(p.measuredAllocatedBytes)
                    : 0.0);
        }
    }
    return out;
}

std::vector<Measurement> profileMeasurements(const ProfileResult& r) {
    std::vector<Measurement> out;
    const std::string source(counterSourceName(r.counterSource));
    const std::string jemallocVersion = ReferenceEngine::allocatorVersion();
    for (const auto& p : r.points) {
        auto add = [&](const char* metric, double value, const char* unit,
                       const nlohmann::json& details = nlohmann::json::object()) {
            out.push_back({ p.threshold, "reference", jemallocVersion, metric, value, unit, details.dump() });
        };
        nlohmann::json bins = nlohmann::json::array();
        for (const auto& b : p.arena.bins)
            bins.push_back({ b.regionBytes, b.regionsPerSlab, b.currentRegions, b.currentSlabs });
        add("allocated_bytes", static_cast<double>(p.measuredAllocatedBytes), "bytes",
            { { "bins", bins }, { "bin_columns", { "region_bytes", "nregs", "curregs", "curslabs" } } });
        add("active_bytes", static_cast<double>(p.measuredActiveBytes), "bytes");
        add("resident_bytes", static_cast<double>(p.arena.residentBytes), "bytes");
        add("bytes_per_key", p.measuredBytesPerKey, "bytes");
        add("child_buckets", static_cast<double>(p.measuredChildBuckets), "buckets");
        add("ns_per_get", p.nsPerGet, "ns", { { "gets", p.measuredGets }, { "hits", p.measuredHits } });
        const nlohmann::json counter { { "counter_source", source }, { "geometry", r.geometry },
            { "note", r.counterNote } };
        if (p.measuredL1MissesPerGet)
            add("l1_misses_per_get", *p.measuredL1MissesPerGet, "misses/GET", counter);
        if (p.measuredLlcMissesPerGet)
            add("llc_misses_per_get", *p.measuredLlcMissesPerGet, "misses/GET", counter);
    }
    return out;
}

} // namespace layoutlab
