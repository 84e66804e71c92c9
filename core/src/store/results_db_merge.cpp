// SPDX-License-Identifier: MIT
// Merging results databases (`layoutlab db merge`): the runs of another database, with their points,
// size classes, timelines, collections, swept limits and measurements, are copied in under new ids, in one transaction.
// Traces are matched by content hash and format. A run already present (same trace, kind, models, parameters, start and
// end) is not copied twice, so merging the same shard again changes nothing.
#include "sqlite_statement.h"

#include "layoutlab/store/results_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace layoutlab {

using sqlite::dbError;
using sqlite::Statement;

namespace {
// The columns of `table` other than `skip`, comma-separated (the schema is the same on both sides,
// since both databases are opened, and so migrated, first).
std::string columnsExcept(sqlite3* db, const char* table, const char* skip) {
    Statement s(db, fmt::format("PRAGMA main.table_info({})", table).c_str());
    std::string out;
    while (s.step() == SQLITE_ROW)
        if (const auto name = s.text(1); name != skip)
            out += (out.empty() ? "" : ", ") + name;
    return out;
}
} // namespace

Expected<std::uint64_t> ResultsDb::mergeFrom(const std::string& otherPath) {
    {
        auto other = ResultsDb::open(otherPath); // a layoutlab database, at the current schema
        if (!other)
            return other.error();
    }
    Statement attach(m_db, "ATTACH DATABASE ? AS src");
    attach.bind(1, otherPath);
    if (attach.step() != SQLITE_DONE)
        return dbError(m_db, otherPath, "cannot attach the database to merge");
    std::uint64_t copied = 0;
    auto detach = [this] { (void)exec("DETACH DATABASE src"); };
    if (auto ok = exec("BEGIN IMMEDIATE"); !ok) {
        detach();
        return ok.error();
    }
    auto fail = [&](const char* what) {
        Error e = rollbackWith(what);
        detach();
        return e;
    };
    {
        const std::string traceColumns = columnsExcept(m_db, "traces", "id");
        if (auto ok
            = exec(fmt::format("INSERT OR IGNORE INTO main.traces ({0}) SELECT {0} FROM src.traces", traceColumns)
                       .c_str());
            !ok)
            return fail("cannot copy the traces");
        const std::string runColumns = columnsExcept(m_db, "runs", "id");
        std::string selectRun = runColumns;
        // trace_id is the id of the same trace (hash and format) in this database.
        const std::string mappedTrace = "(SELECT t.id FROM main.traces t JOIN src.traces s ON t.content_hash = "
                                        "s.content_hash AND t.format = s.format WHERE s.id = r.trace_id)";
        selectRun.replace(selectRun.find("trace_id"), 8, mappedTrace);
        Statement runs(m_db, "SELECT id FROM src.runs ORDER BY id");
        Statement present(m_db,
            ("SELECT COUNT(*) FROM main.runs m, src.runs r WHERE r.id = ? AND m.trace_id IS " + mappedTrace
                + " AND m.kind = r.kind AND m.layout = r.layout AND m.allocator = r.allocator AND m.parameters_json = "
                  "r.parameters_json AND m.started_at = r.started_at AND m.finished_at IS r.finished_at")
                .c_str());
        Statement insertRun(m_db,
            fmt::format("INSERT INTO main.runs ({}) SELECT {} FROM src.runs r WHERE r.id = ?", runColumns, selectRun)
                .c_str());
        // The tables of a run's results, keyed by run_id, copied row for row under the new id.
        std::vector<Statement> perRun;
        for (const char* table :
            { "points", "size_classes", "timeline", "collections", "limit_points", "limit_collections" })
            perRun.emplace_back(m_db,
                fmt::format("INSERT INTO main.{0} (run_id, {1}) SELECT ?1, {1} FROM src.{0} WHERE run_id = ?2", table,
                    columnsExcept(m_db, table, "run_id"))
                    .c_str());
        const std::string measurementColumns = columnsExcept(m_db, "measurements", "id");
        std::string measurementSelect = measurementColumns;
        measurementSelect.replace(measurementSelect.find("run_id"), 6, "?1");
        Statement measurements(m_db,
            fmt::format("INSERT INTO main.measurements ({}) SELECT {} FROM src.measurements WHERE run_id = ?2",
                measurementColumns, measurementSelect)
                .c_str());
        perRun.push_back(std::move(measurements));
        if (!runs.ok() || !present.ok() || !insertRun.ok()
            || !std::all_of(perRun.begin(), perRun.end(), [](const Statement& s) { return s.ok(); }))
            return fail("cannot prepare the merge");
        while (runs.step() == SQLITE_ROW) {
            const std::int64_t oldId = runs.integer(0);
            present.reset();
            present.bind(1, oldId);
            if (present.step() != SQLITE_ROW)
                return fail("cannot look for the run");
            if (present.integer(0) > 0)
                continue; // merged before
            insertRun.reset();
            insertRun.bind(1, oldId);
            if (insertRun.step() != SQLITE_DONE)
                return fail("cannot copy a run");
            const std::int64_t newId = sqlite3_last_insert_rowid(m_db);
            for (Statement& s : perRun) {
                s.reset();
                s.bind(1, newId).bind(2, oldId);
                if (s.step() != SQLITE_DONE)
                    return fail("cannot copy a run's results");
            }
            ++copied;
        }
    }
    if (auto ok = exec("COMMIT"); !ok) {
        detach();
        return ok.error();
    }
    detach();
    return copied;
}

} // namespace layoutlab
