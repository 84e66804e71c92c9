// SPDX-License-Identifier: MIT
#include "run_store.h"

#include "layoutlab/layout/layout_registry.h"

#include <cstdlib>

namespace layoutlab::cli {

void DbOptions::addTo(CLI::App& command, bool allowDisable) {
    command.add_option("--db", path, "Results database (default: $LAYOUTLAB_DB, else layoutlab.db here)");
    if (allowDisable)
        command.add_flag("--no-db", disabled, "Do not store this run in the results database");
}

std::string DbOptions::resolvedPath() const {
    if (!path.empty())
        return path;
    if (const char* env = std::getenv("LAYOUTLAB_DB"); env && *env)
        return env;
    return "layoutlab.db";
}

Expected<std::unique_ptr<ResultsDb>> DbOptions::open() const {
    if (disabled)
        return std::unique_ptr<ResultsDb>();
    return ResultsDb::open(resolvedPath());
}

Expected<std::unique_ptr<ResultsDb>> DbOptions::openForReading() const {
    if (disabled)
        return std::unique_ptr<ResultsDb>();
    return ResultsDb::openReadOnly(resolvedPath());
}

Expected<std::int64_t> beginRun(ResultsDb& db, const std::string& kind, std::int64_t traceId, const std::string& layout,
    const std::string& allocator, const nlohmann::json& parameters) {
    return layoutlab::beginRun(db, kind, traceId, layout, allocator, parameters, LAYOUTLAB_VERSION);
}

nlohmann::json runJson(const RunRecord& r) {
    return { { "id", r.id }, { "kind", r.kind }, { "trace", r.traceSource }, { "layout", r.layout },
        { "layout_name", r.layoutName }, { "allocator", r.allocator },
        { "parameters", nlohmann::json::parse(r.parametersJson, nullptr, false) }, { "tool_version", r.toolVersion },
        { "status", r.status }, { "error", r.error }, { "started_at", r.startedAt }, { "finished_at", r.finishedAt },
        { "points", r.points }, { "live", r.live },
        { "owner", { { "host", r.ownerHost }, { "pid", r.ownerPid }, { "heartbeat_at", r.heartbeatAt } } } };
}

std::string displayStatus(const RunRecord& r) {
    return r.status == "running" && !r.live ? "abandoned" : r.status;
}

Expected<RunPair> beginMeasuredRuns(ResultsDb& db, const std::string& path, const ImportOptions& importOptions,
    const std::string& predictionKind, const std::string& measuredKind, const std::string& layout,
    const std::string& allocator, nlohmann::json parameters) {
    auto format = traceFormat(path, importOptions);
    if (!format)
        return format.error();
    auto traceId = recordTrace(db, path, *format);
    if (!traceId)
        return traceId.error();
    RunPair runs;
    auto predicted = beginRun(db, predictionKind, *traceId, layout, allocator, parameters);
    if (!predicted)
        return predicted.error();
    runs.prediction = *predicted;
    parameters["prediction_run"] = runs.prediction;
    auto measured = beginRun(db, measuredKind, *traceId, layout, allocator, parameters);
    if (!measured)
        return measured.error();
    runs.measured = *measured;
    return runs;
}

} // namespace layoutlab::cli
