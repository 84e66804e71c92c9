// SPDX-License-Identifier: MIT
// A drive request checked before anything starts: its fields together, and what an RDB file allows.

#include "drive_steps.h"

#include "layoutlab/sim/limit_sweep.h"

#include <fmt/format.h>

namespace layoutlab {

Status checkDriveRequest(const DriveRequest& r) {
    if (!r.connect.empty() && !r.serverBinary.empty())
        return usageError("give a server to start or one to attach to, not both", field::kConnect);
    if (!r.connect.empty() && !r.serverArgs.empty())
        return usageError("server settings apply to a server layoutlab starts, not one attached to", field::kConnect);
    if (r.pipeline == 0)
        return usageError("the load pipeline must be at least 1", field::kPipeline);
    if (r.run.connections == 0 || r.run.connections > 256)
        return usageError("the run phase's connections must be between 1 and 256", field::kConnections);
    if (r.run.pipeline == 0)
        return usageError("the run phase's pipeline must be at least 1", field::kRunPipeline);
    if (r.run.seconds < 0)
        return usageError("the run phase's duration cannot be negative", field::kRunSeconds);
    if (r.expireWaitSeconds < 0 || r.expireWaitSeconds > 3600)
        return usageError("the wait for TTLs to pass must be between 0 and 3600 seconds", field::kExpireWait);
    if (r.engine != Engine::Memcached && r.framing != "raw")
        return usageError(
            "a framing applies to memcached (Dalli and Rails store framed values there)", field::kFraming);
    if (r.engine == Engine::Memcached && (!r.layout.empty() || r.calibrate))
        return usageError("a layout to predict with, or calibration, applies to valkey and redis", field::kLayout);
    constexpr std::uint64_t kMiB = 1024 * 1024;
    if (r.budget && r.engine == Engine::Memcached
        && (r.budget->maxmemoryBytes % kMiB != 0 || r.budget->maxmemoryBytes == 0))
        return usageError(
            fmt::format("memcached's -m is a whole number of megabytes (MiB), not {} bytes", r.budget->maxmemoryBytes),
            field::kMemoryLimit);
    const bool limitsGiven = r.collectionLimits != CollectionLimits {};
    if (limitsGiven && r.engine == Engine::Memcached)
        return usageError("memcached has no collections, nor their limits", field::kEngine);
    if (limitsGiven && !r.connect.empty())
        return usageError("collection limits are set on a server layoutlab starts; an attached server is measured "
                          "with the limits it has (read with CONFIG GET)",
            field::kConnect);
    if (limitsGiven && r.budget)
        return usageError("a cache drive sends strings: collection limits change nothing in it", field::kMaxmemory);
    if (auto ok = checkCollectionLimits(r.collectionLimits); !ok)
        return ok;
    if (r.budget && !r.connect.empty() && r.engine != Engine::Memcached) // memcached's -m is checked instead
        return usageError(
            "a cache drive sets maxmemory on a server it starts, not on one attached to", field::kMaxmemory);
    return Ok {};
}

namespace drive {
// An RDB file is driven by the server that loads it: one Valkey or Redis server layoutlab starts, with no
// budget (a cache drive sends a trace's GETs and SETs; a snapshot has none).
Status checkSnapshotDrive(const DriveRequest& r, bool snapshot) {
    if (!snapshot)
        return Ok {};
    if (r.engine == Engine::Memcached)
        return usageError("an RDB file is a Valkey or Redis snapshot: memcached cannot load it", field::kEngine);
    if (!r.connect.empty())
        return usageError("an RDB file is loaded by a server layoutlab starts (from its own directory), not by one "
                          "attached to",
            field::kConnect);
    if (r.budget)
        return usageError("a cache drive sends a trace's GETs and SETs, and a snapshot has none: drive the RDB file "
                          "without a budget",
            field::kMaxmemory);
    return Ok {};
}
Status checkCapturedDrive(const DriveRequest& r, const std::string& format) {
    if (!r.asCaptured)
        return Ok {};
    if (format != "monitor")
        return usageError(
            "--as-captured sends a MONITOR capture's commands as they were captured: this trace is " + format,
            field::kFormat);
    if (r.engine == Engine::Memcached)
        return usageError(
            "--as-captured sends Redis commands: drive a MONITOR capture into valkey or redis", field::kEngine);
    if (r.budget)
        return usageError("a cache drive sends a trace's GETs and SETs as a look-aside client: drive --as-captured "
                          "without a budget",
            field::kMaxmemory);
    return Ok {};
}
} // namespace drive

} // namespace layoutlab
