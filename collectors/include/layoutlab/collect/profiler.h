// SPDX-License-Identifier: MIT
#pragma once

// `layoutlab profile`: the simulator's prediction and the reference engine's measurement of the same
// trace, threshold by threshold. For each threshold the reference engine loads the trace into a fresh
// jemalloc arena (bytes per key from the arena's stats.allocated), then replays the trace's sampled GETs
// (the ones the cache model replays, warmed up the same way) and times them; misses per GET come from
// hardware counters (perf) or from cachegrind running the same replay, the load phase subtracted.

#include "layoutlab/collect/reference_engine.h"
#include "layoutlab/sim/cache_model.h"
#include "layoutlab/sim/simulation.h"

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

enum class CounterSource : std::uint8_t { Auto, Perf, Cachegrind, None };
Expected<CounterSource> parseCounterSource(std::string_view name);
std::string_view counterSourceName(CounterSource source);

struct ProfileConfig {
    LayoutPtr layout;
    AllocatorPtr allocator; // the linked jemalloc
    std::vector<std::uint32_t> thresholds; // empty: the layout's own
    std::optional<CacheGeometry> geometry; // default: this machine's (sysfs)
    CounterSource counters = CounterSource::Auto;
    std::uint32_t sampleGets = 100000;
    CollectionLimits collectionLimits;
    // Opens the trace afresh (the simulator and every reference-engine load read it from the start).
    std::function<Expected<std::unique_ptr<TraceReader>>()> openTrace;
    // For cachegrind: the command that replays this trace in a reference engine of its own
    // (`layoutlab profile-replay TRACE --layout L ...`); the profiler appends
    // `--threshold T --gets N --phase warm|measure`.
    std::vector<std::string> replayCommand;
};

struct ProfilePoint {
    std::uint32_t threshold = 0;
    std::uint64_t keys = 0;
    double predictedBytesPerKey = 0; // usable bytes per key, index tables included
    double measuredBytesPerKey = 0; // the arena's stats.allocated delta per key
    std::uint64_t predictedUsableBytes = 0;
    std::uint64_t measuredAllocatedBytes = 0;
    // The slab model's stats.allocated and stats.active (no thread cache, as the reference engine
    // allocates) beside the arena's own: what deletes and overwrites leave behind.
    std::optional<std::uint64_t> predictedAllocatedBytes;
    std::optional<std::uint64_t> predictedActiveBytes;
    std::uint64_t measuredActiveBytes = 0;
    double predictedChildBuckets = 0; // Valkey: the simulator's estimate ...
    std::uint64_t measuredChildBuckets = 0; // ... and the real table's count
    double linesTouchedPerGet = 0;
    double dependentLoadsPerGet = 0;
    std::vector<double> predictedMissesPerGet; // cache model, per level from L1 outward
    std::optional<double> measuredL1MissesPerGet; // perf l1d-read-misses or cachegrind D1mr, per GET
    std::optional<double> measuredLlcMissesPerGet; // perf llc-read-misses or cachegrind DLmr, per GET
    std::uint64_t measuredGets = 0; // GETs replayed after the warm-up
    std::uint64_t measuredHits = 0;
    double nsPerGet = 0;
    ArenaStats arena;
};

struct ProfileResult {
    SimulationResult prediction;
    std::vector<ProfilePoint> points;
    std::string geometry; // the cache geometry both sides used
    CounterSource counterSource = CounterSource::None;
    std::string counterNote; // why counters are missing, or what was adjusted
    std::uint64_t liveKeys = 0;
};

// What `--counters auto` chooses on this machine, and why.
CounterSource chooseCounterSource(CounterSource requested, std::string* why);

Expected<ProfileResult> runProfile(
    const ProfileConfig& config, ProgressSink* progress = nullptr, std::stop_token stop = {});

// The reference side of a run under valgrind's cache simulator (`layoutlab profile-replay`): loads the
// trace unsimulated, then with the simulation on reads the last `warmKeys` live keys (what the load leaves
// cached, warmKeyCount) and the warm-up GETs, zeroes the counts, replays the measured GETs and dumps the
// counts (kMeasuredDump). Returns the GETs it measured.
Expected<GetReplayReport> runReplayUnderSimulation(
    const ReferenceEngineConfig& engine, TraceReader& trace, std::uint64_t warmKeys);

} // namespace layoutlab
