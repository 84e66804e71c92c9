// SPDX-License-Identifier: MIT
#pragma once

// The engine sweep: the drive job at several settings of one engine, so that the measured figures meet
// the predicted curve they are meant to confirm.
// - Valkey: builds of one source archive at chosen thresholds (made on demand, once, by the project's
//   engine build script into its cache), or binaries the user picked, each told its threshold. Each is
//   started, loaded with the trace, measured once settled, and predicted with the layout at that
//   threshold.
// - memcached: the Debian server at several slab settings (-f growth factor, -n minimum chunk), each
//   predicted with the slab classes it reports.
// One measured run holds every setting's measured and predicted bytes per key (the error beside each);
// for Valkey a "sweep" run beside it holds the predicted points at the thresholds measured.

#include "layoutlab/jobs/drive_job.h"
#include "layoutlab/jobs/engine_build_speed.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/store/engine_sweep_points.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

// A binary the user picked, and the threshold it was built with.
struct EngineBuild {
    std::uint32_t threshold = 0;
    std::string binary;
};

struct EngineSweepRequest {
    // The trace, engine, framing, run phase and the like; its serverBinary, serverArgs, connect and layout
    // are set per setting by the job and must be left empty.
    DriveRequest drive;
    // Valkey: the layout the source builds, without its threshold (e.g. valkey-8.1, or
    // valkey-8.1:embstr-limit=108 for builds with that limit too); each setting sets its threshold
    // parameter. Empty: valkey-8.1, the layout whose threshold the build script can set.
    std::string layout;
    // Valkey, built on demand: the source archive and the thresholds to build it at.
    std::string source;
    std::vector<std::uint32_t> thresholds;
    EngineBuildSpeed buildSpeed = EngineBuildSpeed::Release;
    // Valkey, picked: binaries and their thresholds (instead of a source).
    std::vector<EngineBuild> builds;
    // memcached: one server argument string per setting, e.g. "-f 1.25 -n 48".
    std::vector<std::string> serverSettings;
    // The engine build script (empty: $LAYOUTLAB_BUILD_ENGINE, else the project's scripts/build-engine).
    std::string buildScript;
    // Valkey, with drive.cache: this host's load latencies, to predict each setting's GET throughput
    // against the first one's from the memory stall per GET (report/get_time.h) beside the measured.
    std::optional<LoadLatencies> latencies;
};

// The request's fields checked together; errors name the field.
Status checkEngineSweepRequest(const EngineSweepRequest& request);

// memcached's default slab settings (memcached.c settings_init: factor 1.25, chunk_size 48) and two
// that move items between classes: finer classes, and larger minimum chunks; as parseSlabSettings reads.
inline constexpr const char* kDefaultSlabSettings = "1.25:48,1.08:48,1.25:96";

// memcached settings as "FACTOR:MIN_CHUNK" items separated by commas ("1.25:48,1.08:48"), as server
// arguments ("-f 1.25 -n 48"). Errors name the server settings field.
Expected<std::vector<std::string>> parseSlabSettings(const std::string& text);
// Builds as "THRESHOLD=BINARY" items separated by commas.
Expected<std::vector<EngineBuild>> parseEngineBuilds(const std::string& text);

struct EngineSweepReport {
    std::string trace;
    std::string engine;
    std::string layout; // Valkey: the base layout
    std::string framing; // memcached
    // What bytes per key counts: used_memory's growth per key (hash index included), or memcached's slab
    // chunk bytes per item (hash index not included).
    std::string measures;
    std::vector<EngineSweepPoint> points;
    SimulationResult prediction; // Valkey: the predicted points at the thresholds measured
    std::int64_t predictionRun = 0; // Valkey only
    std::int64_t measuredRun = 0;
    std::optional<LoadLatencies> latencies; // EngineSweepRequest::latencies
};

// A setting's GET throughput against the first setting's: measured, and predicted from the first's
// measured time per GET plus the memory stall per GET the setting saves or adds (with the stall's range).
struct ThroughputChange {
    std::string setting;
    double measured = 0; // GETs/s over the first setting's
    double predicted = 0, low = 0, high = 0;
    StallEstimate stallChange; // ns per GET against the first setting
};
// Each setting after the first, when the report has latencies, the cache model's misses and measured GETs/s.
std::vector<ThroughputChange> throughputChanges(const EngineSweepReport& report);

// Runs the sweep, storing its runs in `db` when not null. Progress names each setting's phases
// ("threshold 96: build", "-f 1.08 -n 48: load", ...) and the fraction is of the whole sweep. A stop
// request stops the build or server at work and marks the runs interrupted.
Expected<EngineSweepReport> runEngineSweepJob(
    const EngineSweepRequest& request, ResultsDb* db, ProgressSink* progress = nullptr, std::stop_token stop = {});

// The report as `drive --json` prints it for a sweep.
nlohmann::json toJson(const EngineSweepReport& report);
// The report as `drive` prints it for a sweep.
std::string renderEngineSweepTable(const EngineSweepReport& report);

} // namespace layoutlab
