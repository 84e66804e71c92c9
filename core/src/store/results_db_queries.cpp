// SPDX-License-Identifier: MIT
// The results database read back: runs (with their owner's liveness), traces, and a run's points with
// their size classes, every column named.

#include "sqlite_statement.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/point_metrics.h"
#include "layoutlab/store/results_db.h"

#include <fmt/format.h>

namespace layoutlab {

using sqlite::dbError;
using sqlite::Statement;

namespace {
constexpr const char* kRunColumns
    = "SELECT r.id, r.kind, COALESCE(r.trace_id, 0), COALESCE(t.source, ''), r.layout, r.allocator, "
      "r.parameters_json, r.tool_version, r.status, COALESCE(r.error, ''), r.started_at, "
      "COALESCE(r.finished_at, ''), (SELECT COUNT(*) FROM points p WHERE p.run_id = r.id), r.replay_json, "
      "r.owner_host, r.owner_pid, r.owner_process, COALESCE(r.heartbeat_at, ''), COALESCE(r.batch_cell, ''), "
      // The name the run was made under (layout_name, or a layout file's own name); runs from before it was
      // kept are named from their spec (presetName).
      "COALESCE(CASE WHEN json_valid(r.parameters_json) THEN COALESCE(json_extract(r.parameters_json, "
      "'$.layout_name'), json_extract(r.parameters_json, '$.layout_file.name')) END, '') "
      "FROM runs r LEFT JOIN traces t ON t.id = r.trace_id";

RunRecord runFrom(const Statement& s) {
    RunRecord r;
    r.id = s.integer(0);
    r.kind = s.text(1);
    r.traceId = s.integer(2);
    r.traceSource = s.text(3);
    r.layout = s.text(4);
    r.allocator = s.text(5);
    r.parametersJson = s.text(6);
    r.toolVersion = s.text(7);
    r.status = s.text(8);
    r.error = s.text(9);
    r.startedAt = s.text(10);
    r.finishedAt = s.text(11);
    r.points = static_cast<std::uint64_t>(s.integer(12));
    r.replayJson = s.text(13);
    r.ownerHost = s.text(14);
    r.ownerPid = s.integer(15);
    r.ownerProcess = s.text(16);
    r.heartbeatAt = s.text(17);
    r.batchCell = s.text(18);
    r.layoutName = s.text(19);
    if (r.layoutName.empty())
        r.layoutName = presetName(r.layout);
    r.live = r.status == "running" && ownerIsLive(r.ownerHost, r.ownerPid, r.ownerProcess, r.heartbeatAt);
    return r;
}
} // namespace

Expected<std::vector<RunRecord>> ResultsDb::listRuns() {
    Statement s(m_db, (std::string(kRunColumns) + " ORDER BY r.id").c_str());
    if (!s.ok())
        return dbError(m_db, m_path, "cannot list runs");
    std::vector<RunRecord> out;
    while (s.step() == SQLITE_ROW)
        out.push_back(runFrom(s));
    return out;
}

Expected<RunRecord> ResultsDb::run(std::int64_t runId) {
    Statement s(m_db, (std::string(kRunColumns) + " WHERE r.id = ?").c_str());
    s.bind(1, runId);
    if (s.step() != SQLITE_ROW)
        return usageError(fmt::format("no run {} in {}", runId, m_path), "run");
    return runFrom(s);
}

Expected<std::vector<TraceRecord>> ResultsDb::listTraces() {
    Statement s(m_db,
        "SELECT id, source, format, content_hash, size_bytes, requests, distinct_keys, stats_json FROM "
        "traces ORDER BY id");
    std::vector<TraceRecord> out;
    while (s.step() == SQLITE_ROW)
        out.push_back({ s.integer(0), s.text(1), s.text(2), s.text(3), static_cast<std::uint64_t>(s.integer(4)),
            static_cast<std::uint64_t>(s.integer(5)), static_cast<std::uint64_t>(s.integer(6)), s.text(7) });
    return out;
}

Expected<std::vector<ThresholdPoint>> ResultsDb::points(std::int64_t runId) {
    const auto stored = metricsWith(kMetricStored);
    std::string sql = "SELECT point_index, threshold";
    for (const auto* m : stored)
        sql += fmt::format(", {}", m->name);
    Statement s(m_db, (sql + " FROM points WHERE run_id = ? ORDER BY point_index").c_str());
    Statement c(m_db,
        "SELECT class_bytes, allocations, requested_bytes, usable_bytes, regions_per_slab, slabs, payload_bytes, "
        "held_slabs, evictions FROM size_classes WHERE run_id = ? AND point_index = ? ORDER BY class_bytes");
    if (!s.ok() || !c.ok())
        return dbError(m_db, m_path, "cannot read the run's points");
    s.bind(1, runId);
    std::vector<ThresholdPoint> out;
    while (s.step() == SQLITE_ROW) {
        ThresholdPoint p;
        p.threshold = s.isNull(1) ? 0 : static_cast<std::uint32_t>(s.integer(1));
        std::optional<double> misses[3];
        int metricColumn = 2;
        for (const auto* m : stored) {
            if (s.isNull(metricColumn)) {
                // a metric the point did not carry
            } else if (m->missLevel < 0 && !m->set) {
                // derived from the point's other metrics (frag_ratio, active_bytes_per_key)
            } else if (m->missLevel >= 0)
                misses[m->missLevel] = s.real(metricColumn);
            else if (m->integral)
                m->set(p, static_cast<double>(s.integer(metricColumn)));
            else
                m->set(p, s.real(metricColumn));
            ++metricColumn;
        }
        setMissesFromLevels(p, misses[0], misses[1], misses[2]);
        c.reset();
        c.bind(1, runId).bind(2, s.integer(0));
        while (c.step() == SQLITE_ROW) {
            auto column = [&c](int i) { return static_cast<std::uint64_t>(c.integer(i)); };
            SizeClassUsage usage;
            usage.classBytes = column(0);
            usage.allocations = column(1);
            usage.requestedBytes = column(2);
            usage.usableBytes = column(3);
            usage.regionsPerSlab = column(4);
            usage.slabs = column(5);
            usage.payloadBytes = column(6);
            usage.heldSlabs = c.isNull(7) ? 0 : column(7);
            usage.evictions = c.isNull(8) ? 0 : column(8);
            p.sizeClasses.push_back(usage);
        }
        out.push_back(std::move(p));
    }
    return out;
}

Expected<std::vector<TimelineSample>> ResultsDb::timeline(std::int64_t runId) {
    Statement s(m_db,
        "SELECT sample_index, requests, time_ms, live_keys, allocated_bytes, active_bytes FROM timeline WHERE run_id = "
        "? "
        "ORDER BY sample_index, point_index");
    if (!s.ok())
        return dbError(m_db, m_path, "cannot read the run's timeline");
    s.bind(1, runId);
    std::vector<TimelineSample> out;
    std::int64_t current = -1;
    while (s.step() == SQLITE_ROW) {
        auto column = [&s](int i) { return static_cast<std::uint64_t>(s.integer(i)); };
        if (s.integer(0) != current) {
            current = s.integer(0);
            out.push_back({ column(1), column(2), column(3), {}, {} });
        }
        out.back().allocatedBytes.push_back(column(4));
        out.back().activeBytes.push_back(column(5));
    }
    return out;
}

namespace {
constexpr const char* kCollectionColumns
    = "type, encoding, keys, entries, payload_bytes, allocations, requested_bytes, usable_bytes, lookup_lines, "
      "bucket_array_bytes, usable_bytes_variance";
CollectionUsage collectionFrom(const Statement& s) {
    CollectionUsage c;
    c.type = s.text(0);
    c.encoding = s.text(1);
    c.keys = static_cast<std::uint64_t>(s.integer(2));
    c.entries = static_cast<std::uint64_t>(s.integer(3));
    c.payloadBytes = static_cast<std::uint64_t>(s.integer(4));
    c.allocations = s.real(5);
    c.requestedBytes = s.real(6);
    c.usableBytes = s.real(7);
    c.lookupLines = s.real(8);
    c.bucketArrayBytes = s.real(9);
    c.usableBytesVariance = s.real(10);
    return c;
}
} // namespace

Expected<std::vector<CollectionUsage>> ResultsDb::collections(std::int64_t runId) {
    Statement s(m_db,
        fmt::format("SELECT {} FROM collections WHERE run_id = ? ORDER BY type, encoding", kCollectionColumns).c_str());
    if (!s.ok())
        return dbError(m_db, m_path, "cannot read the run's collections");
    s.bind(1, runId);
    std::vector<CollectionUsage> out;
    while (s.step() == SQLITE_ROW)
        out.push_back(collectionFrom(s));
    return out;
}

Expected<std::vector<StoredLimitValue>> ResultsDb::limitValues(std::int64_t runId) {
    Statement values(m_db, "SELECT value_index, limit_value FROM limit_points WHERE run_id = ? ORDER BY value_index");
    Statement rows(m_db,
        fmt::format("SELECT {} FROM limit_collections WHERE run_id = ? AND value_index = ? ORDER BY type, encoding",
            kCollectionColumns)
            .c_str());
    if (!values.ok() || !rows.ok())
        return dbError(m_db, m_path, "cannot read the run's swept limit");
    values.bind(1, runId);
    std::vector<StoredLimitValue> out;
    while (values.step() == SQLITE_ROW) {
        StoredLimitValue v { values.integer(1), {} };
        rows.reset();
        rows.bind(1, runId).bind(2, values.integer(0));
        while (rows.step() == SQLITE_ROW)
            v.collections.push_back(collectionFrom(rows));
        out.push_back(std::move(v));
    }
    return out;
}

} // namespace layoutlab
