// SPDX-License-Identifier: MIT
#include "layoutlab/store/results_db.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <thread>
#include <unistd.h>

#include "layoutlab/report/reporter.h"
#include "layoutlab/sim/point_metrics.h"
#include "sqlite_statement.h"

namespace layoutlab {

namespace {
using sqlite::dbError;
using sqlite::Statement;
using sqlite::toInt;

// INSERT INTO points (run_id, point_index, threshold, the stored metrics by name) VALUES (?, ...).
std::string pointInsertSql(const std::vector<const PointMetric*>& stored) {
    std::string names = "run_id, point_index, threshold", marks = "?,?,?";
    for (const auto* m : stored) {
        names += fmt::format(", {}", m->name);
        marks += ",?";
    }
    return fmt::format("INSERT INTO points ({}) VALUES ({})", names, marks);
}

// How long a writer waits for another to finish: 30 s, or $LAYOUTLAB_DB_BUSY_TIMEOUT_MS.
int busyTimeoutMs() {
    static const int ms = [] {
        const char* env = std::getenv("LAYOUTLAB_DB_BUSY_TIMEOUT_MS");
        const long v = env ? std::strtol(env, nullptr, 10) : 0;
        return v > 0 && v < 3600000 ? static_cast<int>(v) : 30000;
    }();
    return ms;
}
constexpr int kWalRetryMs = 10;

} // namespace

std::string utcNow() {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm {};
    gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

Expected<std::string> hashFile(const std::string& path, std::uint64_t* sizeBytes) {
    // A stream would be consumed by hashing it: only regular files have a content hash.
    if (std::error_code ec; std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        return ioError("not a regular file (a stream has no content hash: save it to a file first)", path);
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return ioError(fmt::format("cannot open: {}", std::strerror(errno)), path);
    std::vector<unsigned char> buffer(1 << 20);
    std::uint64_t h = 0x6a09e667f3bcc908ULL;
    std::uint64_t total = 0;
    while (true) {
        const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), f);
        if (n == 0)
            break;
        total += n;
        // Word-wise multiply-xorshift over the block (the tail word zero-padded).
        std::size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            std::uint64_t w;
            std::memcpy(&w, buffer.data() + i, 8);
            h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
            h ^= h >> 29;
        }
        if (i < n) {
            std::uint64_t w = 0;
            std::memcpy(&w, buffer.data() + i, n - i);
            h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
            h ^= h >> 29;
        }
    }
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed)
        return ioError("read failed", path);
    h ^= total * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
    if (sizeBytes)
        *sizeBytes = total;
    return fmt::format("{:016x}", h);
}

Expected<std::unique_ptr<ResultsDb>> ResultsDb::open(const std::string& path) {
    std::unique_ptr<ResultsDb> db(new ResultsDb());
    db->m_path = path;
    if (const auto parent = std::filesystem::path(path).parent_path();
        !parent.empty() && !std::filesystem::is_directory(parent))
        return ioError(
            fmt::format("cannot create the results database: directory {} does not exist", parent.string()), path);
    if (std::error_code ec; std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        return ioError("the results database must be a regular file", path);
    if (sqlite3_open_v2(
            path.c_str(), &db->m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr)
        != SQLITE_OK)
        return dbError(db->m_db, path, "cannot open the results database");
    sqlite3_busy_timeout(db->m_db, busyTimeoutMs());
    // Before anything is written (WAL mode writes the header): a file that is not ours stays as it is.
    if (auto ours = db->checkIsOurs(); !ours)
        return ours.error();
    // Switching a new file to WAL while another process does the same can fail at once with SQLITE_BUSY:
    // SQLite does not call the busy handler there, so wait and retry up to the same timeout.
    for (int waitedMs = 0;; waitedMs += kWalRetryMs) {
        auto ok = db->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
        if (ok)
            break;
        if (sqlite3_errcode(db->m_db) != SQLITE_BUSY || waitedMs >= busyTimeoutMs())
            return ok.error();
        std::this_thread::sleep_for(std::chrono::milliseconds(kWalRetryMs));
    }
    // Foreign keys stay off while migrating: a migration that rebuilds a table drops the old one, which
    // must not cascade to the rows that refer to it.
    if (auto ok = db->migrate(); !ok)
        return ok.error();
    if (auto ok = db->exec("PRAGMA foreign_keys=ON"); !ok)
        return ok.error();
    return db;
}

Expected<std::unique_ptr<ResultsDb>> ResultsDb::openReadOnly(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        // Nothing stored yet: an empty database in memory, and no file made.
        auto empty = open(":memory:");
        if (empty)
            (*empty)->m_path = path;
        return empty;
    }
    if (!std::filesystem::is_regular_file(path, ec))
        return ioError("the results database must be a regular file", path);
    // Returns the open database, or the SQLite result code of the first read when it failed.
    auto connect = [&path](bool immutable, int& rc) -> std::unique_ptr<ResultsDb> {
        std::unique_ptr<ResultsDb> db(new ResultsDb());
        db->m_path = path;
        db->m_readOnly = true;
        // immutable=1: for a file where SQLite cannot make the WAL index beside it (a read-only mount, a
        // directory this user cannot write). Only then: a writer elsewhere is not seen that way.
        char* uri = sqlite3_mprintf("file:%q%s", path.c_str(), immutable ? "?immutable=1" : "?mode=ro");
        rc = sqlite3_open_v2(uri, &db->m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr);
        sqlite3_free(uri);
        if (rc != SQLITE_OK)
            return db;
        sqlite3_busy_timeout(db->m_db, busyTimeoutMs());
        rc = sqlite3_exec(db->m_db, "SELECT COUNT(*) FROM sqlite_master", nullptr, nullptr, nullptr);
        return db;
    };
    int rc = SQLITE_OK;
    auto db = connect(false, rc);
    if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN)
        db = connect(true, rc);
    if (rc != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_NOTADB)
            return dataError("not a layoutlab results database (not an SQLite file)", path);
        return dbError(db->m_db, path, "cannot read the results database");
    }
    if (auto ours = db->checkIsOurs(); !ours)
        return ours.error();
    auto version = db->storedSchemaVersion();
    if (!version)
        return version.error();
    if (*version > kResultsSchemaVersion)
        return dataError(fmt::format("this database has schema version {}, newer than this layoutlab ({}); use a "
                                     "newer layoutlab",
                             *version, kResultsSchemaVersion),
            path);
    if (*version < kResultsSchemaVersion) {
        if (::access(path.c_str(), W_OK) == 0) {
            db.reset();
            return open(path); // migrated once, then read
        }
        return dataError(fmt::format("this database has schema version {} and cannot be written here to bring it to "
                                     "version {}; open it once where it can be written",
                             *version, kResultsSchemaVersion),
            path);
    }
    db->m_version = *version;
    return db;
}

Status ResultsDb::checkIsOurs() {
    Statement tables(
        m_db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    if (!tables.ok())
        return dataError(fmt::format("not a layoutlab results database ({})", sqlite3_errmsg(m_db)), m_path);
    std::vector<std::string> names;
    bool hasVersion = false;
    while (tables.step() == SQLITE_ROW) {
        names.push_back(tables.text(0));
        hasVersion = hasVersion || names.back() == "schema_version";
    }
    if (names.empty() || hasVersion)
        return Ok {};
    std::string listed;
    for (std::size_t i = 0; i < names.size() && i < 5; ++i)
        listed += (i ? ", " : "") + names[i];
    return dataError(fmt::format("not a layoutlab results database: it is an SQLite file with other tables ({}{}); "
                                 "open another database",
                         listed, names.size() > 5 ? ", ..." : ""),
        m_path);
}

Expected<int> ResultsDb::storedSchemaVersion() {
    Statement has(m_db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
    if (has.step() != SQLITE_ROW)
        return dbError(m_db, m_path, "cannot read the schema");
    if (has.integer(0) == 0)
        return 0;
    Statement q(m_db, "SELECT version FROM schema_version");
    return q.step() == SQLITE_ROW ? static_cast<int>(q.integer(0)) : 0;
}

ResultsDb::~ResultsDb() {
    if (m_db)
        sqlite3_close(m_db);
}

Status ResultsDb::exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message ? message : sqlite3_errmsg(m_db);
        sqlite3_free(message);
        if (text.find("not a database") != std::string::npos || text.find("malformed") != std::string::npos)
            return dataError("not a layoutlab results database (or damaged): " + text, m_path);
        return ioError(text, m_path);
    }
    return Ok {};
}

void ResultsDb::rollbackQuietly() {
    // Already failing: the original error is the one to report, not a failed rollback.
    (void)exec("ROLLBACK");
}

Error ResultsDb::rollbackWith(const char* what) {
    Error e = dbError(m_db, m_path, what);
    rollbackQuietly();
    return e;
}

Status ResultsDb::markComplete(std::int64_t runId, const std::string& replayJson) {
    // Only a running run: a run marked failed (or completed) meanwhile stays as it is.
    Statement done(m_db,
        "UPDATE runs SET status = 'complete', finished_at = ?, replay_json = ? WHERE id = ? AND status = 'running'");
    done.bind(1, utcNow()).bind(2, replayJson).bind(3, runId);
    if (done.step() != SQLITE_DONE || sqlite3_changes(m_db) != 1)
        return rollbackWith("cannot mark the run complete");
    return Ok {};
}

Status ResultsDb::migrate() {
    // BEGIN IMMEDIATE: two processes creating the same file do not both migrate.
    if (auto ok = exec("BEGIN IMMEDIATE"); !ok)
        return ok;
    auto rollback = [this](Error e) {
        rollbackQuietly();
        return e;
    };
    if (auto ok = exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"); !ok)
        return rollback(ok.error());
    {
        Statement q(m_db, "SELECT version FROM schema_version");
        m_version = q.step() == SQLITE_ROW ? static_cast<int>(q.integer(0)) : 0;
    }
    if (m_version > kResultsSchemaVersion)
        return rollback(dataError(fmt::format("this database has schema version {}, newer than this layoutlab ({}); "
                                              "use a newer layoutlab",
                                      m_version, kResultsSchemaVersion),
            m_path));
    for (int v = m_version; v < kResultsSchemaVersion; ++v)
        if (auto ok = exec(sqlite::schemaMigration(v)); !ok)
            return rollback(ok.error());
    if (m_version != kResultsSchemaVersion) {
        if (auto ok = exec("DELETE FROM schema_version"); !ok)
            return rollback(ok.error());
        Statement s(m_db, "INSERT INTO schema_version (version) VALUES (?)");
        s.bind(1, std::int64_t { kResultsSchemaVersion });
        if (s.step() != SQLITE_DONE)
            return rollback(dbError(m_db, m_path, "cannot record the schema version"));
        m_version = kResultsSchemaVersion;
    }
    return exec("COMMIT");
}

Expected<std::int64_t> ResultsDb::upsertTrace(const TraceRecord& t) {
    // One write transaction, and INSERT ... ON CONFLICT DO NOTHING: two processes recording the same
    // trace at once both end up with the one row.
    if (auto ok = exec("BEGIN IMMEDIATE"); !ok)
        return ok.error();
    {
        Statement insert(m_db,
            "INSERT INTO traces (source, format, content_hash, size_bytes, requests, distinct_keys, "
            "stats_json, first_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (content_hash, format) DO NOTHING");
        insert.bind(1, t.source).bind(2, t.format).bind(3, t.contentHash).bind(4, toInt(t.sizeBytes));
        insert.bind(5, toInt(t.requests)).bind(6, toInt(t.distinctKeys));
        insert.bind(7, t.statsJson.empty() ? std::string("{}") : t.statsJson).bind(8, utcNow());
        if (insert.step() != SQLITE_DONE)
            return rollbackWith("cannot record the trace");
    }
    std::int64_t id = 0;
    {
        Statement find(m_db, "SELECT id FROM traces WHERE content_hash = ? AND format = ?");
        find.bind(1, t.contentHash).bind(2, t.format);
        if (find.step() != SQLITE_ROW)
            return rollbackWith("cannot find the recorded trace");
        id = find.integer(0);
    }
    if (t.statsJson.size() > 2) {
        Statement update(
            m_db, "UPDATE traces SET stats_json = ?, requests = ?, distinct_keys = ?, source = ? WHERE id = ?");
        update.bind(1, t.statsJson)
            .bind(2, toInt(t.requests))
            .bind(3, toInt(t.distinctKeys))
            .bind(4, t.source)
            .bind(5, id);
        if (update.step() != SQLITE_DONE)
            return rollbackWith("cannot update the trace");
    }
    if (auto ok = exec("COMMIT"); !ok)
        return ok.error();
    return id;
}

Expected<std::int64_t> ResultsDb::beginRun(const RunRecord& r) {
    Statement s(m_db,
        "INSERT INTO runs (kind, trace_id, layout, allocator, parameters_json, tool_version, status, "
        "started_at, owner_host, owner_pid, owner_process, heartbeat_at, batch_cell) "
        "VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)");
    s.bind(1, r.kind);
    if (r.traceId)
        s.bind(2, r.traceId);
    else
        s.bindNull(2);
    const auto now = utcNow();
    const RunOwner& owner = RunOwner::self();
    s.bind(3, r.layout).bind(4, r.allocator).bind(5, r.parametersJson).bind(6, r.toolVersion).bind(7, now);
    s.bind(8, owner.host).bind(9, owner.pid).bind(10, owner.process).bind(11, now);
    if (r.batchCell.empty())
        s.bindNull(12);
    else
        s.bind(12, r.batchCell);
    if (s.step() != SQLITE_DONE)
        return dbError(m_db, m_path, "cannot record the run");
    return static_cast<std::int64_t>(sqlite3_last_insert_rowid(m_db));
}

Expected<std::int64_t> ResultsDb::claimCell(const RunRecord& r, std::int64_t* takenBy) {
    if (auto ok = exec("BEGIN IMMEDIATE"); !ok)
        return ok.error();
    {
        Statement holders(m_db,
            "SELECT id, status, owner_host, owner_pid, owner_process, COALESCE(heartbeat_at, '') FROM runs "
            "WHERE batch_cell = ? AND status IN ('complete', 'running') ORDER BY status = 'complete' DESC, id");
        holders.bind(1, r.batchCell);
        while (holders.step() == SQLITE_ROW) {
            if (holders.text(1) == "complete"
                || ownerIsLive(holders.text(2), holders.integer(3), holders.text(4), holders.text(5))) {
                if (takenBy)
                    *takenBy = holders.integer(0);
                rollbackQuietly();
                return std::int64_t { 0 };
            }
        }
    }
    auto id = beginRun(r);
    if (!id) {
        rollbackQuietly();
        return id.error();
    }
    if (auto ok = exec("COMMIT"); !ok)
        return ok.error();
    return *id;
}

Status ResultsDb::heartbeat(const std::vector<std::int64_t>& runIds) {
    Statement s(m_db, "UPDATE runs SET heartbeat_at = ? WHERE id = ? AND status = 'running'");
    const auto now = utcNow();
    for (const auto id : runIds) {
        s.reset();
        s.bind(1, now).bind(2, id);
        if (s.step() != SQLITE_DONE)
            return dbError(m_db, m_path, "cannot record the heartbeat");
    }
    return Ok {};
}

Status ResultsDb::completeRun(std::int64_t runId, const SimulationResult& result) {
    if (auto ok = exec("BEGIN IMMEDIATE"); !ok)
        return ok;
    {
        const auto stored = metricsWith(kMetricStored);
        Statement point(m_db, pointInsertSql(stored).c_str());
        Statement cls(m_db,
            "INSERT INTO size_classes (run_id, point_index, class_bytes, allocations, requested_bytes, usable_bytes, "
            "regions_per_slab, slabs, payload_bytes, held_slabs, evictions) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
        Statement sample(m_db,
            "INSERT INTO timeline (run_id, sample_index, point_index, requests, time_ms, live_keys, allocated_bytes, "
            "active_bytes) VALUES (?,?,?,?,?,?,?,?)");
        Statement collection(m_db,
            "INSERT INTO collections (run_id, type, encoding, keys, entries, payload_bytes, allocations, "
            "requested_bytes, usable_bytes, lookup_lines, bucket_array_bytes, usable_bytes_variance) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
        if (!point.ok() || !cls.ok() || !sample.ok() || !collection.ok())
            return rollbackWith("cannot prepare the result statements");
        for (const CollectionUsage& c : result.collections) {
            collection.reset();
            collection.bind(1, runId).bind(2, c.type).bind(3, c.encoding).bind(4, toInt(c.keys));
            collection.bind(5, toInt(c.entries)).bind(6, toInt(c.payloadBytes)).bind(7, c.allocations);
            collection.bind(8, c.requestedBytes).bind(9, c.usableBytes).bind(10, c.lookupLines);
            collection.bind(11, c.bucketArrayBytes).bind(12, c.usableBytesVariance);
            if (collection.step() != SQLITE_DONE)
                return rollbackWith("cannot store a collection row");
        }
        if (result.limitSweep)
            if (auto ok = storeLimitSweep(runId, *result.limitSweep); !ok) {
                rollbackQuietly();
                return ok;
            }
        for (std::size_t i = 0; i < result.points.size(); ++i) {
            const auto& p = result.points[i];
            point.reset();
            point.bind(1, runId).bind(2, static_cast<std::int64_t>(i));
            if (result.thresholdName.empty())
                point.bindNull(3);
            else
                point.bind(3, std::int64_t { p.threshold });
            // The metrics by name; a metric the point does not carry (the misses without --cache) is NULL.
            int column = 4;
            for (const auto* m : stored) {
                if (const auto v = m->get(p); !v)
                    point.bindNull(column);
                else if (m->integral)
                    point.bind(column, static_cast<std::int64_t>(*v));
                else
                    point.bind(column, *v);
                ++column;
            }
            if (point.step() != SQLITE_DONE)
                return rollbackWith("cannot store a point");
            for (const auto& c : p.sizeClasses) {
                cls.reset();
                cls.bind(1, runId).bind(2, static_cast<std::int64_t>(i)).bind(3, toInt(c.classBytes));
                cls.bind(4, toInt(c.allocations)).bind(5, toInt(c.requestedBytes)).bind(6, toInt(c.usableBytes));
                cls.bind(7, toInt(c.regionsPerSlab)).bind(8, toInt(c.slabs)).bind(9, toInt(c.payloadBytes));
                if (p.arena || p.budget)
                    cls.bind(10, toInt(c.heldSlabs));
                else
                    cls.bindNull(10);
                if (p.budget)
                    cls.bind(11, toInt(c.evictions));
                else
                    cls.bindNull(11);
                if (cls.step() != SQLITE_DONE)
                    return rollbackWith("cannot store a size class");
            }
        }
        for (std::size_t k = 0; k < result.timeline.size(); ++k) {
            const TimelineSample& t = result.timeline[k];
            for (std::size_t i = 0; i < t.allocatedBytes.size() && i < t.activeBytes.size(); ++i) {
                sample.reset();
                sample.bind(1, runId).bind(2, static_cast<std::int64_t>(k)).bind(3, static_cast<std::int64_t>(i));
                sample.bind(4, toInt(t.requests)).bind(5, toInt(t.timeMs)).bind(6, toInt(t.liveKeys));
                sample.bind(7, toInt(t.allocatedBytes[i])).bind(8, toInt(t.activeBytes[i]));
                if (sample.step() != SQLITE_DONE)
                    return rollbackWith("cannot store a timeline sample");
            }
        }
        const auto summary = toJson(result);
        nlohmann::json replay { { "replay", summary["replay"] }, { "index", summary["index"] },
            { "get_weights", summary["get_weights"] } };
        if (summary.contains("cache"))
            replay["cache"] = summary["cache"];
        if (summary.contains("slab_model"))
            replay["slab_model"] = summary["slab_model"];
        for (const char* key : { "budget", "fill_batch" })
            if (summary.contains(key))
                replay[key] = summary[key];
        if (result.limitSweep) // its header: the values are the limit tables' rows
            replay["limit_sweep"] = { { "name", result.limitSweep->name }, { "run_value", result.limitSweep->runValue },
                { "threshold", result.limitSweep->threshold } };
        if (auto ok = markComplete(runId, replay.dump()); !ok)
            return ok;
        // A trace first seen by a run has no counts yet: take them from the replay.
        Statement counts(m_db,
            "UPDATE traces SET requests = ?, distinct_keys = ? WHERE id = (SELECT trace_id FROM "
            "runs WHERE id = ?) AND requests = 0");
        counts.bind(1, toInt(result.trace.requests)).bind(2, toInt(result.trace.distinctKeys)).bind(3, runId);
        if (counts.step() != SQLITE_DONE)
            return rollbackWith("cannot update the trace's counts");
    }
    return exec("COMMIT");
}

Status ResultsDb::storeLimitSweep(std::int64_t runId, const LimitSweepResult& sweep) {
    Statement value(m_db,
        "INSERT INTO limit_points (run_id, value_index, limit_name, limit_value, keys, usable_bytes, "
        "usable_bytes_per_key) VALUES (?,?,?,?,?,?,?)");
    Statement row(m_db,
        "INSERT INTO limit_collections (run_id, value_index, type, encoding, keys, entries, payload_bytes, "
        "allocations, requested_bytes, usable_bytes, lookup_lines, bucket_array_bytes, usable_bytes_variance) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!value.ok() || !row.ok())
        return dbError(m_db, m_path, "cannot prepare the swept limit's statements");
    for (std::size_t i = 0; i < sweep.points.size(); ++i) {
        const LimitPoint& p = sweep.points[i];
        value.reset();
        value.bind(1, runId).bind(2, static_cast<std::int64_t>(i)).bind(3, sweep.name).bind(4, p.value);
        value.bind(5, toInt(p.point.keys)).bind(6, toInt(p.point.usableBytes)).bind(7, p.point.usableBytesPerKey);
        if (value.step() != SQLITE_DONE)
            return dbError(m_db, m_path, "cannot store a swept limit's value");
        for (const CollectionUsage& c : p.collections) {
            row.reset();
            row.bind(1, runId).bind(2, static_cast<std::int64_t>(i)).bind(3, c.type).bind(4, c.encoding);
            row.bind(5, toInt(c.keys)).bind(6, toInt(c.entries)).bind(7, toInt(c.payloadBytes));
            row.bind(8, c.allocations).bind(9, c.requestedBytes).bind(10, c.usableBytes).bind(11, c.lookupLines);
            row.bind(12, c.bucketArrayBytes).bind(13, c.usableBytesVariance);
            if (row.step() != SQLITE_DONE)
                return dbError(m_db, m_path, "cannot store a swept limit's collection row");
        }
    }
    return Ok {};
}

Status ResultsDb::failRun(std::int64_t runId, const std::string& error) {
    Statement s(m_db, "UPDATE runs SET status = 'failed', error = ?, finished_at = ? WHERE id = ?");
    s.bind(1, error).bind(2, utcNow()).bind(3, runId);
    if (s.step() != SQLITE_DONE)
        return dbError(m_db, m_path, "cannot mark the run failed");
    return Ok {};
}

Status ResultsDb::interruptRun(std::int64_t runId, const std::string& reason) {
    Statement s(
        m_db, "UPDATE runs SET status = 'interrupted', error = ?, finished_at = ? WHERE id = ? AND status = 'running'");
    s.bind(1, reason).bind(2, utcNow()).bind(3, runId);
    if (s.step() != SQLITE_DONE)
        return dbError(m_db, m_path, "cannot mark the run interrupted");
    return Ok {};
}

Expected<std::uint64_t> ResultsDb::deleteRuns(const std::vector<std::int64_t>& runIds) {
    if (auto ok = exec("BEGIN IMMEDIATE"); !ok)
        return ok.error();
    std::uint64_t deleted = 0;
    Statement s(m_db, "DELETE FROM runs WHERE id = ?");
    for (const auto id : runIds) {
        s.reset();
        s.bind(1, id);
        if (s.step() != SQLITE_DONE) {
            Error e = dbError(m_db, m_path, "cannot delete a run");
            rollbackQuietly();
            return e;
        }
        deleted += static_cast<std::uint64_t>(sqlite3_changes(m_db));
    }
    if (auto ok = exec("COMMIT"); !ok)
        return ok.error();
    return deleted;
}

Expected<IncompleteDeletion> ResultsDb::deleteIncompleteRuns() {
    auto runs = listRuns();
    if (!runs)
        return runs.error();
    IncompleteDeletion done;
    std::vector<std::int64_t> gone;
    for (const auto& r : *runs) {
        if (r.status == "complete")
            continue;
        if (r.live)
            ++done.liveLeft; // another process is computing it: its results would have nowhere to go
        else
            gone.push_back(r.id);
    }
    auto deleted = deleteRuns(gone);
    if (!deleted)
        return deleted.error();
    done.deleted = *deleted;
    return done;
}

Status ResultsDb::vacuum() {
    return exec("VACUUM");
}

Expected<std::string> ResultsDb::integrityCheck() {
    Statement s(m_db, "PRAGMA integrity_check");
    std::string out;
    while (s.step() == SQLITE_ROW)
        out += (out.empty() ? "" : "\n") + s.text(0);
    return out;
}

} // namespace layoutlab
