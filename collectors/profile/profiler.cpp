// SPDX-License-Identifier: MIT
#include "layoutlab/collect/profiler.h"
#include "layoutlab/enum_names.h"

#include "collectors_config.h"
#include "layoutlab/collect/cachegrind.h"
#include "layoutlab/collect/server_process.h"
#include "layoutlab/sim/arena_replay.h"
#if LAYOUTLAB_HAVE_PERF
#include "layoutlab/collect/perf_counters.h"
#endif

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h> // no-ops unless run under valgrind's callgrind
#define LAYOUTLAB_SIMULATION(request) request
#else
#define LAYOUTLAB_SIMULATION(request)
#endif

namespace layoutlab {

namespace {

constexpr std::size_t kTimedPasses = 5; // ns per GET: the median of this many passes
constexpr std::size_t kMeasuredIdChunk = 256; // key ids per refill of the simulated replay's 1 KiB buffer

// The sampled GETs, split as the cache model splits them: a warm-up, then the measured GETs.
struct SampleSplit {
    std::span<const std::uint32_t> warmup;
    std::span<const std::uint32_t> measured;
};
SampleSplit split(const std::vector<std::uint32_t>& sample) {
    const std::size_t warm = sample.size() / kCacheWarmupDivisor;
    const std::span<const std::uint32_t> all(sample);
    return { all.first(warm), all.subspan(warm) };
}

// Hardware read misses around the measured replay, when this build and machine have them.
struct MissCounts {
    std::optional<std::uint64_t> l1;
    std::optional<std::uint64_t> llc;
};

// The profile's work as equal stages (the simulation, then per threshold the reference engine's load and
// any cachegrind runs), each stage's own progress scaled into its share.
class ProfileProgress final : public ProgressSink {
public:
    ProfileProgress(ProgressSink* sink, std::size_t stages)
        : m_sink(sink)
        , m_stages(static_cast<double>(stages)) { }
    void progress(double fraction, std::uint64_t done) override {
        if (m_sink)
            m_sink->progress((m_stage + std::clamp(fraction, 0.0, 1.0)) / m_stages, done);
    }
    void nextStage() {
        ++m_stage;
        progress(0, 0);
    }

private:
    ProgressSink* m_sink;
    double m_stages;
    double m_stage = 0;
};

// One run of `profile-replay` under valgrind's cache simulator: the counts of the measured GETs.
Expected<CachegrindCounts> simulatedReplay(const ProfileConfig& config, const CacheGeometry& geometry,
    std::uint32_t threshold, std::uint64_t warmKeys, std::uint64_t expectedGets, std::stop_token stop) {
    auto dir = makeTempDir("layoutlab-cachegrind");
    if (!dir)
        return dir.error();
    std::vector<std::string> argv = config.replayCommand;
    argv.insert(argv.end(),
        { "--threshold", std::to_string(threshold), "--gets", std::to_string(config.sampleGets), "--warm-keys",
            std::to_string(warmKeys) });
    std::string log;
    auto counts = runUnderCacheSimulator(argv, geometry, *dir, stop, &log);
    removeTree(*dir);
    if (!counts)
        return counts.error();
    // The replay prints one JSON line with the GETs it measured: the same trace gives the same sample.
    const auto start = log.rfind("\n{\"");
    const auto end = start == std::string::npos ? start : log.find('\n', start + 1);
    const auto reported = start == std::string::npos
        ? nlohmann::json()
        : nlohmann::json::parse(
            log.substr(start + 1, end == std::string::npos ? end : end - start - 1), nullptr, false);
    if (!reported.is_object() || !reported.contains("gets"))
        return ioError("the replay under valgrind printed no summary: " + log.substr(0, 2000));
    if (reported["gets"].get<std::uint64_t>() != expectedGets)
        return dataError(fmt::format("the replay under valgrind measured {} GETs, the profile {}",
            reported["gets"].get<std::uint64_t>(), expectedGets));
    return counts;
}

} // namespace

Expected<CounterSource> parseCounterSource(std::string_view name) {
    for (auto s : { CounterSource::Auto, CounterSource::Perf, CounterSource::Cachegrind, CounterSource::None })
        if (counterSourceName(s) == name)
            return s;
    return usageError(
        fmt::format("unknown counter source '{}' (auto, perf, cachegrind, none)", name), field::kCounters);
}

std::string_view counterSourceName(CounterSource source) {
    static constexpr std::array<std::string_view, 4> kNames { "auto", "perf", "cachegrind", "none" };
    static_assert(static_cast<std::size_t>(CounterSource::None) == kNames.size() - 1, "a name for every value");
    return enumName(source, kNames, "none");
}

CounterSource chooseCounterSource(CounterSource requested, std::string* why) {
    if (requested != CounterSource::Auto) {
        if (why)
            *why = "as asked";
        return requested;
    }
    std::string perfReason = "this build has no perf collector (libpfm4)";
#if LAYOUTLAB_HAVE_PERF
    if (auto counters = PerfCounters::open({ "l1d-read-misses", "llc-read-misses" }); counters) {
        if ((*counters)->hardwareAvailable()) {
            if (why)
                *why = "this machine has hardware counters";
            return CounterSource::Perf;
        }
        perfReason = (*counters)->hardwareReason();
    }
#endif
    if (findValgrind()) {
        if (why)
            *why = "perf: " + perfReason + "; using cachegrind";
        return CounterSource::Cachegrind;
    }
    if (why)
        *why = "perf: " + perfReason + "; and no 'valgrind' on PATH for cachegrind";
    return CounterSource::None;
}

Expected<GetReplayReport> runReplayUnderSimulation(
    const ReferenceEngineConfig& engineConfig, TraceReader& trace, std::uint64_t warmKeys) {
    auto engine = ReferenceEngine::create(engineConfig);
    if (!engine)
        return engine.error();
    if (auto loaded = (*engine)->load(trace); !loaded)
        return loaded.error();
    const auto parts = split((*engine)->getSample());
    const auto warm = (*engine)->lastLiveKeys(warmKeys);
    LAYOUTLAB_SIMULATION(CALLGRIND_START_INSTRUMENTATION);
    (void)(*engine)->replayGets(warm);
    (void)(*engine)->replayGets(parts.warmup);
    LAYOUTLAB_SIMULATION(CALLGRIND_ZERO_STATS);
    // The measured GETs' key ids come from a small buffer refilled with the counting off: a store reads its
    // requests, not a sample array, and streaming 4 bytes per GET from one would add a sixteenth of a miss
    // per GET at every level.
    GetReplayReport report;
    std::array<std::uint32_t, kMeasuredIdChunk> chunk;
    for (std::size_t at = 0; at < parts.measured.size(); at += chunk.size()) {
        const std::size_t n = std::min(chunk.size(), parts.measured.size() - at);
        LAYOUTLAB_SIMULATION(CALLGRIND_TOGGLE_COLLECT);
        std::copy_n(parts.measured.begin() + static_cast<std::ptrdiff_t>(at), n, chunk.begin());
        LAYOUTLAB_SIMULATION(CALLGRIND_TOGGLE_COLLECT);
        const auto part = (*engine)->replayGets(std::span<const std::uint32_t>(chunk.data(), n));
        report.gets += part.gets;
        report.hits += part.hits;
        report.checksum += part.checksum;
    }
    LAYOUTLAB_SIMULATION(CALLGRIND_DUMP_STATS_AT(kMeasuredDump));
    LAYOUTLAB_SIMULATION(CALLGRIND_STOP_INSTRUMENTATION);
    return report;
}

Expected<ProfileResult> runProfile(const ProfileConfig& config, ProgressSink* progress, std::stop_token stop) {
    ProfileResult result;
    std::string why;
    result.counterSource = chooseCounterSource(config.counters, &why);
    result.counterNote = why;
    if (result.counterSource == CounterSource::Cachegrind && config.replayCommand.empty())
        return usageError("cachegrind needs a replay command", field::kCounters);
#if !LAYOUTLAB_HAVE_PERF
    if (result.counterSource == CounterSource::Perf)
        return usageError(
            "this build has no perf collector (libpfm4-dev was missing at configure time)", field::kCounters);
#endif

    CacheGeometry geometry = config.geometry ? *config.geometry : CacheGeometry::detect();
    if (result.counterSource == CounterSource::Cachegrind) {
        // Valgrind simulates D1 and LL: the model runs with the same two levels.
        const CacheGeometry twoLevels { { geometry.levels.front(), geometry.levels.back() } };
        geometry = cachegrindCompatible(twoLevels);
        if (geometry != twoLevels)
            result.counterNote += (result.counterNote.empty() ? "" : "; ")
                + fmt::format("cache geometry {} adjusted to {} (valgrind needs power-of-two set counts)",
                    twoLevels.describe(), geometry.describe());
    }
    result.geometry = geometry.describe();
    if (result.counterSource == CounterSource::Cachegrind)
        result.counterNote += "; valgrind's cache simulator (callgrind's) runs from the end of the load: the keys "
                              "the load leaves cached, the warm-up GETs, then the measured GETs, as the model does";

    auto trace = config.openTrace();
    if (!trace)
        return trace.error();
    // Stages: the simulation, then per threshold the load (and a run under valgrind).
    const std::size_t thresholdCount = std::max<std::size_t>(config.thresholds.size(), 1);
    ProfileProgress bar(progress, 1 + thresholdCount * (result.counterSource == CounterSource::Cachegrind ? 2 : 1));
    SimulationConfig simConfig;
    simConfig.layout = config.layout;
    simConfig.allocator = config.allocator;
    simConfig.thresholds = config.thresholds;
    simConfig.cache = geometry;
    simConfig.cacheSampleGets = config.sampleGets;
    simConfig.collectionLimits = config.collectionLimits;
    // The slab model as the reference engine allocates: from its own arena, without a thread cache.
    if (slabModelCovers(*config.allocator)) {
        SlabModelOptions slabs;
        slabs.threadCache = false;
        simConfig.slabs = std::move(slabs);
    }
    auto prediction = simulate(simConfig, **trace, &bar, stop);
    if (!prediction)
        return prediction.error();
    result.prediction = std::move(*prediction);
    bar.nextStage();
    for (const auto& predicted : result.prediction.points) {
        if (stop.stop_requested())
            return cancelledError();
        ProfilePoint point;
        point.threshold = predicted.threshold;
        point.keys = predicted.keys;
        point.predictedBytesPerKey = predicted.usableBytesPerKey;
        point.predictedUsableBytes = predicted.usableBytes;
        if (predicted.arena) {
            point.predictedAllocatedBytes = predicted.arena->allocatedBytes;
            point.predictedActiveBytes = predicted.arena->activeBytes;
        }
        point.predictedChildBuckets = result.prediction.indexChildBuckets;
        point.linesTouchedPerGet = predicted.linesTouchedPerGet;
        point.dependentLoadsPerGet = predicted.dependentLoadsPerGet;
        point.predictedMissesPerGet = predicted.missesPerGet;

        const ReferenceEngineConfig engineConfig { config.layout, config.allocator, predicted.threshold,
            config.sampleGets, config.collectionLimits };
        auto engine = ReferenceEngine::create(engineConfig);
        if (!engine)
            return engine.error();
        auto source = config.openTrace();
        if (!source)
            return source.error();
        auto loaded = (*engine)->load(**source, &bar, stop);
        if (!loaded)
            return loaded.error();
        result.liveKeys = loaded->liveKeys;
        point.measuredAllocatedBytes = loaded->allocatedBytes;
        point.measuredActiveBytes = loaded->activeBytes;
        point.measuredBytesPerKey = loaded->liveKeys
            ? static_cast<double>(loaded->allocatedBytes) / static_cast<double>(loaded->liveKeys)
            : 0;
        point.measuredChildBuckets = loaded->indexChildBuckets;
        point.arena = loaded->after;

        // The caches as the model starts from them: what the load left, then the warm-up GETs.
        const std::uint64_t warmKeys
            = warmKeyCount(predicted.keys, predicted.usableBytesPerKey, geometry.levels.back().sizeBytes);
        const auto parts = split((*engine)->getSample());
        (void)(*engine)->replayGets((*engine)->lastLiveKeys(warmKeys));
        (void)(*engine)->replayGets(parts.warmup);
        MissCounts misses;
#if LAYOUTLAB_HAVE_PERF
        std::unique_ptr<PerfCounters> counters;
        if (result.counterSource == CounterSource::Perf) {
            auto opened = PerfCounters::open({ "l1d-read-misses", "llc-read-misses" });
            if (!opened)
                return opened.error();
            if (!(*opened)->hardwareAvailable())
                return usageError("perf: " + (*opened)->hardwareReason(), field::kCounters);
            counters = std::move(*opened);
            counters->start();
        }
#endif
        const auto replay = (*engine)->replayGets(parts.measured);
#if LAYOUTLAB_HAVE_PERF
        if (counters) {
            counters->stop();
            for (const auto& value : counters->read())
                if (value.available)
                    (value.name == "l1d-read-misses" ? misses.l1 : misses.llc) = value.value;
        }
#endif
        point.measuredGets = replay.gets;
        point.measuredHits = replay.hits;
        // Timing on a shared machine is noisy: the median of several passes over the measured GETs (the
        // counters above cover the first pass only).
        std::vector<double> timings { replay.nanosecondsPerGet };
        while (timings.size() < kTimedPasses)
            timings.push_back((*engine)->replayGets(parts.measured).nanosecondsPerGet);
        std::nth_element(timings.begin(), timings.begin() + kTimedPasses / 2, timings.end());
        point.nsPerGet = timings[kTimedPasses / 2];
        engine->reset();
        bar.nextStage();

        if (result.counterSource == CounterSource::Cachegrind) {
            auto counted = simulatedReplay(config, geometry, predicted.threshold, warmKeys, replay.gets, stop);
            if (!counted)
                return counted.error();
            bar.nextStage();
            misses.l1 = counted->l1ReadMisses;
            misses.llc = counted->llReadMisses;
        }
        if (replay.gets) {
            const auto perGet
                = [&](std::uint64_t n) { return static_cast<double>(n) / static_cast<double>(replay.gets); };
            if (misses.l1)
                point.measuredL1MissesPerGet = perGet(*misses.l1);
            if (misses.llc)
                point.measuredLlcMissesPerGet = perGet(*misses.llc);
        }
        result.points.push_back(std::move(point));
    }
    return result;
}

} // namespace layoutlab
