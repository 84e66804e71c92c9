// SPDX-License-Identifier: MIT
#pragma once

// The profile job: the simulator and the reference engine (real jemalloc, the engines' own hash tables)
// on one trace, side by side: bytes per key, misses per GET, ns per GET, stored as a prediction run and
// a measured ("reference") run. The CLI's `profile` runs it; any front end can, on its own thread, with
// progress through a ProgressSink and cancel through a stop token.

#include "layoutlab/collect/profiler.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/store/results_db.h"

#include <nlohmann/json_fwd.hpp>

#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

struct ProfileRequest {
    std::string tracePath;
    ImportOptions importOptions;
    std::string layout; // a layout spec or "file:PATH": malloc-based layouts (Valkey, Redis) only
    std::string allocator = "jemalloc"; // the linked jemalloc: other models are refused
    std::vector<std::uint32_t> thresholds; // empty: the layout's own
    std::string thresholdsText; // as the user typed them (resolved against the layout when `thresholds` is empty)
    std::string counters = "auto"; // auto, perf, cachegrind, none
    std::string cacheGeometry; // empty: this machine's
    std::uint32_t sampleGets = 100000;
    CollectionLimits collectionLimits; // the compact encodings' limits of the prediction and the reference engine
    // The program whose `profile-replay` command cachegrind runs (the layoutlab executable).
    std::string replayProgram;
    std::string toolVersion;
};

struct ProfileReport {
    std::string trace;
    ProfileResult result;
    std::int64_t predictionRun = 0; // 0: not stored
    std::int64_t measuredRun = 0;
};

Expected<ProfileReport> runProfileJob(
    const ProfileRequest& request, ResultsDb* db, ProgressSink* progress = nullptr, std::stop_token stop = {});

nlohmann::json toJson(const ProfileReport& report);
std::string renderProfileTable(const ProfileReport& report);
// What the measured run stores.
std::vector<Measurement> profileMeasurements(const ProfileResult& result);

} // namespace layoutlab
