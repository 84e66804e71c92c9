// SPDX-License-Identifier: MIT
// `layoutlab latency`: this host's load latency at each cache level and from memory, by pointer chase
// (layoutlab/collect/memory_latency.h): what a cache miss on the GET path costs here.

#include "commands.h"
#include "interrupts.h"

#include "layoutlab/collect/memory_latency.h"

#include <nlohmann/json.hpp>

namespace layoutlab::cli {

namespace {

struct LatencyOptions {
    std::string cacheGeometry;
    std::uint32_t passes = 5;
    bool json = false;
    std::string output;
};

int runLatency(const LatencyOptions& o) {
    LatencyCalibration calibration;
    if (o.cacheGeometry.empty()) {
        calibration.geometry = CacheGeometry::detect();
    } else {
        auto geometry = CacheGeometry::parse(o.cacheGeometry);
        if (!geometry)
            return reportError(geometry.error());
        calibration.geometry = *geometry;
    }
    calibration.passes = o.passes;
    auto latency = measureMemoryLatency(calibration, interruptToken());
    if (!latency)
        return reportError(latency.error());
    return printOutput(o.json ? toJson(*latency).dump(2) + "\n" : renderLatencyTable(*latency), o.output);
}

} // namespace

void addLatencyCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<LatencyOptions>();
    auto* cmd = app.add_subcommand(
        "latency", "Measure this host's load latency per cache level and from memory (pointer chase, a few seconds)");
    cmd->add_option("--cache-geometry", o->cacheGeometry,
        "Cache levels SIZE:WAYS from L1 outward, which size the buffers (default: this machine's)");
    cmd->add_option("--passes", o->passes, "Timed passes per buffer (the median is the figure)")
        ->capture_default_str()
        ->check(CLI::Range(1, 101));
    addJsonAndOutput(*cmd, o->json, o->output, "One JSON object with a `points` array");
    cmd->callback([o, &status] { status = runLatency(*o); });
}

} // namespace layoutlab::cli
