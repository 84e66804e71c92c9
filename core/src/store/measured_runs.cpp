// SPDX-License-Identifier: MIT
#include "layoutlab/store/measured_runs.h"

#include "layoutlab/layout/declared_layout.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/reporter.h"
#include "layoutlab/store/jobs.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

RunParameters runParametersFor(const std::string& tracePath, const ImportOptions& importOptions,
    const LayoutModel& layout, const AllocatorModel& allocator, const std::vector<std::uint32_t>& thresholds) {
    RunParameters p;
    p.trace = tracePath;
    p.layout = layout.spec();
    p.layoutName = layoutName(layout);
    p.allocator = allocator.spec();
    p.thresholds = thresholds;
    p.format = importOptions.format.empty() ? std::string("auto") : importOptions.format;
    p.onError = importOptions.onError == OnError::Skip ? "skip" : "fail";
    p.keySize = importOptions.oracleKeyBytes;
    const auto param = layout.threshold();
    p.thresholdParameter = param ? param->name : std::string();
    if (const auto* declared = dynamic_cast<const DeclaredLayout*>(&layout)) {
        // The layout file as it was when the run was made: the path alone may point elsewhere later.
        const auto& def = declared->definition();
        p.layoutFile = RunParameters::LayoutFile { def.name, def.path, def.contentHash, def.sourceText };
    }
    return p;
}

MeasuredRuns::~MeasuredRuns() = default;

Status MeasuredRuns::begin(const std::string& tracePath, const ImportOptions& importOptions,
    const std::string& predictionKind, const std::string& measuredKind, const RunParameters& parameters,
    const std::string& toolVersion) {
    if (!m_db)
        return Ok {};
    auto format = traceFormat(tracePath, importOptions);
    if (!format)
        return format.error();
    auto traceId = recordTrace(*m_db, tracePath, *format);
    if (!traceId)
        return traceId.error();
    auto json = parameters.toJson();
    if (!predictionKind.empty()) {
        auto predicted
            = beginRun(*m_db, predictionKind, *traceId, parameters.layout, parameters.allocator, json, toolVersion);
        if (!predicted)
            return predicted.error();
        m_prediction = *predicted;
        json["prediction_run"] = m_prediction;
    }
    auto measured = beginRun(*m_db, measuredKind, *traceId, parameters.layout, parameters.allocator, json, toolVersion);
    if (!measured) {
        if (m_prediction)
            (void)m_db->failRun(m_prediction, measured.error().describe());
        return measured.error();
    }
    m_measured = *measured;
    m_heartbeat = std::make_unique<RunHeartbeat>(m_db->path(), ids());
    return Ok {};
}

Status MeasuredRuns::complete(
    const SimulationResult& prediction, const std::vector<Measurement>& measurements, const nlohmann::json& summary) {
    if (!stored())
        return Ok {};
    m_heartbeat.reset();
    auto keep = [&](const Error& why) -> Status {
        auto rows = nlohmann::json::array();
        for (const auto& m : measurements)
            rows.push_back(toJson(m));
        return keepUnstoredResults(*m_db, ids(),
            { { "prediction", toJson(prediction) }, { "measurements", rows }, { "summary", summary } }, why);
    };
    if (m_prediction)
        if (auto ok = m_db->completeRun(m_prediction, prediction); !ok)
            return keep(ok.error());
    if (auto ok = m_db->completeMeasuredRun(m_measured, measurements, summary.dump()); !ok)
        return keep(ok.error());
    return Ok {};
}

Error MeasuredRuns::end(const Error& error) {
    m_heartbeat.reset();
    if (!stored())
        return error;
    if (error.code == ErrorCode::Cancelled) {
        for (const auto id : ids())
            (void)m_db->interruptRun(id);
        Error stopped = error;
        stopped.message = m_prediction
            ? fmt::format("{}; runs {} and {} marked interrupted", error.message, m_prediction, m_measured)
            : fmt::format("{}; run {} marked interrupted", error.message, m_measured);
        return stopped;
    }
    for (const auto id : ids())
        (void)m_db->failRun(id, error.describe());
    return error;
}

std::vector<std::int64_t> MeasuredRuns::ids() const {
    std::vector<std::int64_t> out;
    for (const auto id : { m_prediction, m_measured })
        if (id)
            out.push_back(id);
    return out;
}

nlohmann::json toJson(const Measurement& m) {
    return { { "threshold", m.threshold ? nlohmann::json(*m.threshold) : nlohmann::json(nullptr) },
        { "engine", m.engine }, { "engine_version", m.engineVersion }, { "metric", m.metric }, { "value", m.value },
        { "unit", m.unit }, { "details", nlohmann::json::parse(m.detailsJson, nullptr, false) } };
}

} // namespace layoutlab
