// SPDX-License-Identifier: MIT
// The engine sweep: its settings (Valkey builds or memcached slab settings), a drive at each, and the
// two stored runs. The report's table and JSON are in engine_sweep_report.cpp.

#include "layoutlab/jobs/engine_sweep_job.h"

#include "engine_build.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/spec.h"
#include "layoutlab/store/measured_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace layoutlab {

namespace {

// The Valkey layout whose threshold scripts/build-engine can set (embed-threshold).
constexpr const char* kDefaultValkeyLayout = "valkey-8.1";

// The build script's setting for each layout parameter (scripts/build-engine, "Settings").
const std::map<std::string, std::string, std::less<>> kBuildSettings {
    { "threshold", "embed-threshold" }, // object.c createStringObjectWithKeyAndExpire "if (size <= 64)"
    { "embstr-limit", "embstr-limit" }, // object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT
};

// Server arguments the job sets itself (engine_server.cpp engineArgv).
constexpr std::string_view kReservedMemcachedArgs[] = { "-p", "-l", "-U", "-d", "-s", "-u", "-P" };

std::vector<std::string> splitWords(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string word; in >> word;)
        out.push_back(word);
    return out;
}

// The layout's text with `name` set to `value` (added, or replacing the value given).
std::string layoutWith(const Spec& layout, const std::string& name, std::uint32_t value) {
    std::string out = layout.name();
    char separator = ':';
    for (const auto& [key, given] : layout.parameters())
        if (key != name) {
            out += fmt::format("{}{}={}", separator, key, given);
            separator = ',';
        }
    return out + fmt::format("{}{}={}", separator, name, value);
}

std::string baseLayout(const EngineSweepRequest& r) {
    return r.layout.empty() ? std::string(kDefaultValkeyLayout) : r.layout;
}

// The base layout as a sweep of it stores and predicts it: its canonical spec, its own threshold, and its
// engine's batch of a pipeline's lookups (LayoutModel::queuedKeyPrefetchBatch).
struct BaseLayout {
    std::string spec;
    std::uint32_t threshold = 0;
    std::uint32_t prefetchBatch = 0;
};
BaseLayout canonicalBase(const EngineSweepRequest& r) {
    auto layout = parseLayout(baseLayout(r)); // parsed before by settingsOf
    if (!layout)
        return { baseLayout(r) };
    const auto param = (*layout)->threshold();
    return { (*layout)->spec(), param ? param->value : 0, (*layout)->queuedKeyPrefetchBatch() };
}

// One server of the sweep: how it is made and started, and the layout to predict it with.
struct Setting {
    std::string label;
    std::optional<std::uint32_t> threshold;
    std::string binary; // picked (else built, or memcached on PATH)
    std::vector<std::string> buildSettings; // to build from the source
    std::vector<std::string> serverArgs;
    std::string layout;
};

Expected<std::vector<Setting>> settingsOf(const EngineSweepRequest& r) {
    std::vector<Setting> out;
    if (r.drive.engine == Engine::Memcached) {
        for (const auto& text : r.serverSettings)
            out.push_back({ text, std::nullopt, {}, {}, splitWords(text), {} });
        return out;
    }
    const std::string base = baseLayout(r);
    auto layout = parseLayout(base);
    if (!layout)
        return layout.error();
    const auto param = (*layout)->threshold();
    if (!param) {
        Error e = usageError(fmt::format("layout {} has no threshold to sweep", base), field::kLayout);
        e.tag = kTagNoThreshold;
        return e;
    }
    auto given = Spec::parse(base, "layout");
    if (!given)
        return given.error();
    std::vector<std::string> fixed; // the base layout's own parameters, built into every server
    if (!r.source.empty())
        for (const auto& [name, value] : given->parameters()) {
            const auto setting = kBuildSettings.find(name);
            if (setting == kBuildSettings.end())
                return usageError(fmt::format("layout parameter {} cannot be built from source (the build script "
                                              "sets threshold and embstr-limit); pick builds instead",
                                      name),
                    field::kLayout);
            if (name != param->name)
                fixed.push_back(setting->second + "=" + value);
        }
    auto add = [&](std::uint32_t threshold, const std::string& binary) -> Status {
        if (threshold < param->min || threshold > param->max)
            return usageError(fmt::format("threshold {} is outside {}'s {} range [{}, {}]", threshold, base,
                                  param->name, param->min, param->max),
                binary.empty() ? field::kBuildThresholds : field::kEngineBuilds);
        Setting s { fmt::format("threshold {}", threshold), threshold, binary, {}, {},
            layoutWith(*given, param->name, threshold) };
        if (binary.empty()) {
            const auto setting = kBuildSettings.find(param->name);
            if (setting == kBuildSettings.end())
                return usageError(fmt::format("{}'s {} has no build setting; pick builds instead", base, param->name),
                    field::kLayout);
            s.buildSettings = fixed;
            s.buildSettings.push_back(fmt::format("{}={}", setting->second, threshold));
        }
        out.push_back(std::move(s));
        return Ok {};
    };
    for (const auto t : r.thresholds)
        if (auto ok = add(t, {}); !ok)
            return ok.error();
    for (const auto& b : r.builds)
        if (auto ok = add(b.threshold, b.binary); !ok)
            return ok.error();
    std::sort(out.begin(), out.end(), [](const Setting& a, const Setting& b) { return a.threshold < b.threshold; });
    return out;
}

// A drive's phases inside the sweep: "threshold 96: load", with the fraction of the whole sweep.
class SettingProgress final : public ProgressSink {
public:
    SettingProgress(ProgressSink* outer, std::size_t index, std::size_t count, std::string label, bool builds)
        : m_outer(outer)
        , m_index(index)
        , m_count(count)
        , m_label(std::move(label))
        , m_builds(builds) { }

    void phase(std::string_view name) override {
        m_phase = std::string(name);
        if (m_outer)
            m_outer->phase(fmt::format("{}: {}", m_label, name));
    }
    void progress(double fraction, std::uint64_t done) override {
        if (m_outer)
            m_outer->progress(overall(fraction), done);
    }

private:
    // Each phase's share of one setting: a build (when there is one) and the load take most of it.
    double overall(double fraction) const {
        struct Share {
            std::string_view phase;
            double weight;
        };
        const Share shares[] { { "build", m_builds ? 4.0 : 0.0 }, { "load", 4.0 }, { "settle", 0.5 }, { "run", 1.0 },
            { "predict", 0.5 } };
        double total = 0, before = 0, weight = 0;
        for (const auto& s : shares) {
            if (s.phase == m_phase)
                before = total, weight = s.weight;
            total += s.weight;
        }
        const double within = (before + weight * std::clamp(fraction, 0.0, 1.0)) / total;
        return (static_cast<double>(m_index) + within) / static_cast<double>(m_count);
    }

    ProgressSink* m_outer;
    std::size_t m_index, m_count;
    std::string m_label;
    bool m_builds;
    std::string m_phase;
};

EngineSweepPoint pointOf(const Setting& s, const DriveReport& d, const std::string& server, const std::string& build) {
    EngineSweepPoint p;
    p.setting = s.label;
    p.threshold = s.threshold;
    p.engine = d.engine;
    p.version = d.version;
    p.server = server;
    p.build = build;
    p.model = d.isMemcached() ? d.prediction.allocatorSpec : d.chosenLayout;
    p.measuredBytesPerKey = d.measuredBytesPerKey;
    p.predictedBytesPerKey = d.predictedBytesPerKey;
    p.keys = d.serverKeys;
    if (d.run)
        p.getsPerSecond = d.run->requestsPerSecond;
    if (d.allocator.comparable() && d.serverKeys && d.prediction.trace.liveKeys) {
        p.measuredActiveBytesPerKey
            = static_cast<double>(d.allocator.measuredActive()) / static_cast<double>(d.serverKeys);
        p.predictedActiveBytesPerKey
            = static_cast<double>(d.allocator.predictedActive) / static_cast<double>(d.prediction.trace.liveKeys);
    }
    return p;
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

// Runs one setting's drive (building its server first when it is built from source).
Expected<EngineSweepPoint> measureSetting(const EngineSweepRequest& r, const Setting& s, SettingProgress& progress,
    std::stop_token stop, DriveReport& driven) {
    DriveRequest drive = r.drive;
    drive.serverBinary = s.binary;
    drive.serverArgs = s.serverArgs;
    drive.layout = s.layout;
    if (!s.buildSettings.empty()) {
        progress.phase("build");
        auto built = buildEngine(
            { r.buildScript, r.source, s.buildSettings, r.buildSpeed },
            [&progress](double f) { progress.progress(f, 0); }, stop);
        if (!built)
            return built.error();
        drive.serverBinary = *built;
    }
    auto report = runDriveJob(drive, nullptr, &progress, stop);
    if (!report)
        return report.error();
    // The binary started: picked, built here, or (memcached) the one on PATH.
    auto point = pointOf(s, *report, drive.serverBinary.empty() ? std::string("memcached on PATH") : drive.serverBinary,
        joined(s.buildSettings, ","));
    driven = std::move(*report);
    return point;
}

RunParameters sweepParameters(const EngineSweepRequest& r, const DriveReport& first, const std::string& baseSpec) {
    RunParameters p;
    p.trace = r.drive.tracePath;
    p.format = r.drive.importOptions.format.empty() ? std::string("auto") : r.drive.importOptions.format;
    p.onError = r.drive.importOptions.onError == OnError::Skip ? "skip" : "fail";
    p.keySize = r.drive.importOptions.oracleKeyBytes;
    p.allocator = first.prediction.allocatorSpec;
    if (r.drive.engine == Engine::Memcached) {
        p.layout = first.prediction.layoutSpec;
        p.layoutName = presetName(p.layout);
        p.extra = { { "engine", first.engine }, { "framing", r.drive.framing }, { "settings", r.serverSettings } };
        return p;
    }
    p.layout = baseSpec;
    p.layoutName = presetName(p.layout);
    p.thresholdParameter = first.prediction.thresholdName;
    p.thresholds = r.thresholds;
    for (const auto& b : r.builds)
        p.thresholds.push_back(b.threshold);
    std::sort(p.thresholds.begin(), p.thresholds.end());
    p.extra
        = { { "engine", first.engine }, { "engine_version", first.version }, { "mem_allocator", first.memAllocator } };
    if (!r.source.empty())
        p.extra["source"] = std::filesystem::path(r.source).filename().string();
    return p;
}

} // namespace

Expected<std::vector<std::string>> parseSlabSettings(const std::string& text) {
    std::vector<std::string> out;
    for (const auto item : splitString(text, ',')) {
        const auto words = splitWords(std::string(item));
        const auto colon = words.size() == 1 ? words[0].find(':') : std::string::npos;
        const auto factor = colon == std::string::npos ? Expected<double>(0.0)
                                                       : parseReal(words[0].substr(0, colon), field::kServerSettings);
        const auto chunk = colon == std::string::npos
            ? Expected<std::uint64_t>(0)
            : parseUnsigned(words[0].substr(colon + 1), field::kServerSettings);
        // memcached.c: -f must be above 1.0; -n at least 1 (slabs.c rounds it up with the item header).
        if (!factor || !chunk || *factor <= 1.0 || *chunk == 0 || *chunk > 1024 * 1024)
            return usageError(fmt::format("'{}' is not FACTOR:MIN_CHUNK with a factor above 1 and a chunk of 1 to "
                                          "1048576 bytes (e.g. 1.25:48)",
                                  item),
                field::kServerSettings);
        out.push_back(fmt::format("-f {} -n {}", words[0].substr(0, colon), *chunk));
    }
    return out;
}

Expected<std::vector<EngineBuild>> parseEngineBuilds(const std::string& text) {
    std::vector<EngineBuild> out;
    for (const auto item : splitString(text, ',')) {
        const auto eq = item.find('=');
        const auto threshold = eq == std::string_view::npos ? Expected<std::uint64_t>(0)
                                                            : parseUnsigned(item.substr(0, eq), field::kEngineBuilds);
        if (!threshold || *threshold == 0 || *threshold > UINT32_MAX || eq + 1 >= item.size())
            return usageError(
                fmt::format("'{}' is not THRESHOLD=BINARY (e.g. 128=/opt/valkey-t128/valkey-server)", item),
                field::kEngineBuilds);
        out.push_back({ static_cast<std::uint32_t>(*threshold), std::string(item.substr(eq + 1)) });
    }
    return out;
}

Status checkEngineSweepRequest(const EngineSweepRequest& r) {
    const auto& d = r.drive;
    if (!d.connect.empty() || !d.serverBinary.empty() || !d.serverArgs.empty() || !d.layout.empty())
        return usageError("an engine sweep starts its own servers, one per setting", field::kConnect);
    if (d.calibrate)
        return usageError("an engine sweep predicts each build with the layout it was built as; calibration does "
                          "not apply",
            field::kLayout);
    if (auto ok = checkDriveRequest(d); !ok)
        return ok;
    if (d.engine == Engine::Memcached) {
        if (!r.source.empty() || !r.thresholds.empty() || !r.builds.empty())
            return usageError("memcached is swept over slab settings, not builds", field::kEngineBuilds);
        if (r.serverSettings.size() < 2)
            return usageError("give at least two memcached settings (e.g. \"-f 1.25 -n 48\" and \"-f 1.08 -n 48\")",
                field::kServerSettings);
        for (const auto& text : r.serverSettings)
            for (const auto& word : splitWords(text))
                if (std::find(std::begin(kReservedMemcachedArgs), std::end(kReservedMemcachedArgs), word)
                    != std::end(kReservedMemcachedArgs))
                    return usageError(
                        fmt::format("{} is set by layoutlab for the servers it starts (in \"{}\")", word, text),
                        field::kServerSettings);
        return Ok {};
    }
    if (!r.serverSettings.empty())
        return usageError("server settings are for memcached; Valkey is swept over builds", field::kServerSettings);
    if (r.source.empty() && r.thresholds.empty() && r.builds.empty())
        return usageError(
            "give a source archive and thresholds to build it at, or builds to start", field::kEngineSource);
    if (!r.source.empty() && r.thresholds.empty())
        return usageError("give the thresholds to build the source at", field::kBuildThresholds);
    if (r.source.empty() && !r.thresholds.empty())
        return usageError("thresholds to build need a source archive", field::kEngineSource);
    if (!r.source.empty() && !std::filesystem::is_regular_file(r.source))
        return ioError("no such source archive", r.source);
    for (const auto& b : r.builds)
        if (b.binary.empty() || !std::filesystem::is_regular_file(b.binary))
            return usageError(
                fmt::format("no server binary for threshold {}: '{}'", b.threshold, b.binary), field::kEngineBuilds);
    std::set<std::uint32_t> seen;
    for (const auto t : r.thresholds)
        if (!seen.insert(t).second)
            return usageError(fmt::format("threshold {} is given twice", t), field::kBuildThresholds);
    for (const auto& b : r.builds)
        if (!seen.insert(b.threshold).second)
            return usageError(fmt::format("threshold {} is given twice", b.threshold), field::kEngineBuilds);
    if (seen.size() + r.serverSettings.size() < 2)
        return usageError("a sweep measures at least two settings",
            r.source.empty() ? field::kEngineBuilds : field::kBuildThresholds);
    return Ok {};
}

Expected<EngineSweepReport> runEngineSweepJob(
    const EngineSweepRequest& r, ResultsDb* db, ProgressSink* progress, std::stop_token stop) {
    if (auto ok = checkEngineSweepRequest(r); !ok)
        return ok.error();
    auto settings = settingsOf(r);
    if (!settings)
        return settings.error();
    EngineSweepReport report;
    report.trace = r.drive.tracePath;
    const BaseLayout base = canonicalBase(r);
    report.latencies = r.latencies;
    if (report.latencies) // the run phase's GETs per round trip, batched as the base layout's engine does
        report.latencies->overlappedLookups = overlappedLookups(r.drive.run.pipeline, base.prefetchBatch);
    report.framing = r.drive.engine == Engine::Memcached ? r.drive.framing : std::string();
    report.layout = r.drive.engine == Engine::Memcached ? std::string() : base.spec;
    report.measures = r.drive.engine == Engine::Memcached ? "slab chunk bytes per item (hash index not included)"
                                                          : "used_memory per key (hash index included)";
    MeasuredRuns runs(db);
    for (std::size_t i = 0; i < settings->size(); ++i) {
        const auto& s = (*settings)[i];
        SettingProgress within(progress, i, settings->size(), s.label, !s.buildSettings.empty());
        DriveReport driven;
        auto point = measureSetting(r, s, within, stop, driven);
        if (!point)
            return runs.end(point.error());
        if (i == 0) {
            report.engine = driven.engine;
            // The runs begin once the first server has told what it is (its allocator, its version).
            if (auto ok = runs.begin(r.drive.tracePath, r.drive.importOptions,
                    r.drive.engine == Engine::Memcached ? std::string() : std::string("sweep"), kEngineSweepKind,
                    sweepParameters(r, driven, base.spec), r.drive.toolVersion);
                !ok)
                return ok.error();
            report.prediction = driven.prediction;
            report.prediction.points.clear();
            if (!report.layout.empty()) { // a sweep of the base layout over the thresholds measured
                report.prediction.layoutSpec = report.layout;
                report.prediction.configuredThreshold = base.threshold;
            }
        }
        if (r.drive.engine != Engine::Memcached)
            report.prediction.points.push_back(driven.prediction.points.at(0));
        report.points.push_back(std::move(*point));
    }
    if (auto ok = runs.complete(report.prediction, engineSweepMeasurements(report.points), toJson(report)); !ok)
        return ok.error();
    report.predictionRun = runs.prediction();
    report.measuredRun = runs.measured();
    return report;
}

} // namespace layoutlab
