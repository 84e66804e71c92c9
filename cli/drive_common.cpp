// SPDX-License-Identifier: MIT
// What every engine's `drive` shares: the server (started or attached), the two stored runs, the
// prediction.

#include "drive_command.h"
#include "progress_bar.h"

#include "layoutlab/sim/simulation.h"

#include <fmt/format.h>

namespace layoutlab::cli {

Expected<DriveTarget> driveTarget(const DriveOptions& o, Engine engine) {
    DriveTarget target;
    if (o.connect.empty()) {
        auto started = EngineServer::start(engine, o.serverBinary);
        if (!started)
            return started.error();
        target.server = std::move(*started);
        target.endpoint = target.server->endpoint();
        return target;
    }
    auto parsed = parseEndpoint(o.connect, o.allowRemote);
    if (!parsed)
        return parsed.error();
    target.endpoint = *parsed;
    return target;
}

Status DriveRuns::begin(const DriveOptions& o, const ImportOptions& importOptions, const std::string& layout,
    const std::string& allocator, const nlohmann::json& parameters) {
    auto db = o.db.open();
    if (!db)
        return db.error();
    m_db = std::move(*db);
    m_path = o.db.resolvedPath();
    if (!m_db)
        return Ok {};
    nlohmann::json all = parameters;
    all.update({ { "trace", o.trace }, { "format", o.source.format }, { "on_error", o.source.onError },
        { "key_size", o.source.keyBytes }, { "pipeline", o.pipeline } });
    auto runs = beginMeasuredRuns(*m_db, o.trace, importOptions, "sim", "drive", layout, allocator, all);
    if (!runs)
        return runs.error();
    m_runs = *runs;
    return Ok {};
}

Status DriveRuns::complete(
    const SimulationResult& prediction, const std::vector<Measurement>& measurements, const std::string& summaryJson) {
    if (!m_db)
        return Ok {};
    if (auto ok = m_db->completeRun(m_runs.prediction, prediction); !ok)
        return ok;
    if (auto ok = m_db->completeMeasuredRun(m_runs.measured, measurements, summaryJson); !ok)
        return ok;
    fmt::print(
        stderr, "stored as runs {} (prediction) and {} (measured) in {}\n", m_runs.prediction, m_runs.measured, m_path);
    return Ok {};
}

int DriveRuns::fail(const Error& error, DriveTarget& target) {
    if (m_db && m_runs.measured) {
        (void)m_db->failRun(m_runs.prediction, error.describe());
        (void)m_db->failRun(m_runs.measured, error.describe());
    }
    Error shown = error;
    if (target.server && !target.server->running())
        shown.message += "\nthe server exited; its log ends:\n" + target.server->logTail();
    return reportError(shown);
}

Expected<SimulationResult> predictDrive(
    const DriveOptions& o, const ImportOptions& importOptions, const LayoutPtr& layout, const AllocatorPtr& alloc) {
    auto trace = openTrace(o.trace, importOptions);
    if (!trace)
        return trace.error();
    ProgressBar bar("predict");
    return simulate({ layout, alloc, {}, std::nullopt }, **trace, &bar);
}

} // namespace layoutlab::cli
