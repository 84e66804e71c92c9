// SPDX-License-Identifier: MIT
// The measurements table: what profile (and, later, drive) measured, beside the run's predictions.
#include "layoutlab/store/results_db.h"

#include "sqlite_statement.h"

namespace layoutlab {

using sqlite::dbError;
using sqlite::Statement;

Status ResultsDb::completeMeasuredRun(
    std::int64_t runId, const std::vector<Measurement>& measurements, const std::string& replayJson) {
    if (auto ok = exec("BEGIN IMMEDIATE"); !ok)
        return ok;
    {
        Statement insert(m_db,
            "INSERT INTO measurements (run_id, engine, engine_version, metric, value, unit, details_json, threshold) "
            "VALUES (?,?,?,?,?,?,?,?)");
        if (!insert.ok())
            return rollbackWith("cannot prepare the measurement statement");
        for (const auto& m : measurements) {
            insert.reset();
            insert.bind(1, runId).bind(2, m.engine).bind(3, m.engineVersion).bind(4, m.metric);
            insert.bind(5, m.value).bind(6, m.unit).bind(7, m.detailsJson);
            if (m.threshold)
                insert.bind(8, std::int64_t { *m.threshold });
            if (insert.step() != SQLITE_DONE)
                return rollbackWith("cannot store a measurement");
        }
        if (auto ok = markComplete(runId, replayJson); !ok)
            return ok;
    }
    return exec("COMMIT");
}

Expected<std::vector<Measurement>> ResultsDb::measurements(std::int64_t runId) {
    Statement q(m_db,
        "SELECT threshold, engine, COALESCE(engine_version, ''), metric, value, COALESCE(unit, ''), details_json "
        "FROM measurements WHERE run_id = ? ORDER BY id");
    if (!q.ok())
        return dbError(m_db, m_path, "cannot read measurements");
    q.bind(1, runId);
    std::vector<Measurement> out;
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) {
        Measurement m;
        if (!q.isNull(0))
            m.threshold = static_cast<std::uint32_t>(q.integer(0));
        m.engine = q.text(1);
        m.engineVersion = q.text(2);
        m.metric = q.text(3);
        m.value = q.real(4);
        m.unit = q.text(5);
        m.detailsJson = q.text(6);
        out.push_back(std::move(m));
    }
    if (rc != SQLITE_DONE)
        return dbError(m_db, m_path, "cannot read measurements");
    return out;
}

} // namespace layoutlab
