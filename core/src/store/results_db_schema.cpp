// SPDX-License-Identifier: MIT
// The results database's schema, as the migrations that build it (docs/results-db.md).
#include "sqlite_statement.h"

#include "layoutlab/store/results_db.h"

namespace layoutlab::sqlite {

namespace {

// Schema migrations, in order: migration i brings the schema from version i to i + 1.
const char* const kMigrations[] = {
    // 0 -> 1
    R"SQL(
CREATE TABLE traces (
  id            INTEGER PRIMARY KEY,
  source        TEXT NOT NULL,
  format        TEXT NOT NULL,
  content_hash  TEXT NOT NULL,
  size_bytes    INTEGER NOT NULL,
  requests      INTEGER NOT NULL DEFAULT 0,
  distinct_keys INTEGER NOT NULL DEFAULT 0,
  stats_json    TEXT NOT NULL DEFAULT '{}',
  first_seen_at TEXT NOT NULL,
  UNIQUE (content_hash, format)
);
CREATE TABLE runs (
  id              INTEGER PRIMARY KEY,
  kind            TEXT NOT NULL,
  trace_id        INTEGER REFERENCES traces(id),
  layout          TEXT NOT NULL,
  allocator       TEXT NOT NULL,
  parameters_json TEXT NOT NULL,
  tool_version    TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')),
  error           TEXT,
  replay_json     TEXT NOT NULL DEFAULT '{}',
  started_at      TEXT NOT NULL,
  finished_at     TEXT
);
CREATE INDEX runs_by_trace ON runs(trace_id);
CREATE TABLE points (
  run_id                       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  point_index                  INTEGER NOT NULL,
  threshold                    INTEGER,
  keys                         INTEGER NOT NULL,
  unstorable_keys              INTEGER NOT NULL,
  payload_bytes                INTEGER NOT NULL,
  requested_bytes              INTEGER NOT NULL,
  usable_bytes                 INTEGER NOT NULL,
  internal_fragmentation_bytes INTEGER NOT NULL,
  index_bytes                  INTEGER NOT NULL,
  allocations                  INTEGER NOT NULL,
  pointer_bytes                INTEGER NOT NULL,
  embedded_keys                INTEGER NOT NULL,
  usable_bytes_per_key         REAL NOT NULL,
  overhead_bytes_per_key       REAL NOT NULL,
  allocations_per_key          REAL NOT NULL,
  pointer_bytes_per_key        REAL NOT NULL,
  embedded_fraction            REAL NOT NULL,
  lines_touched_per_get        REAL NOT NULL,
  dependent_loads_per_get      REAL NOT NULL,
  l1_misses_per_get            REAL,
  l2_misses_per_get            REAL,
  llc_misses_per_get           REAL,
  PRIMARY KEY (run_id, point_index)
);
CREATE TABLE size_classes (
  run_id           INTEGER NOT NULL,
  point_index      INTEGER NOT NULL,
  class_bytes      INTEGER NOT NULL,
  allocations      INTEGER NOT NULL,
  requested_bytes  INTEGER NOT NULL,
  usable_bytes     INTEGER NOT NULL,
  regions_per_slab INTEGER NOT NULL,
  slabs            INTEGER NOT NULL,
  PRIMARY KEY (run_id, point_index, class_bytes),
  FOREIGN KEY (run_id, point_index) REFERENCES points(run_id, point_index) ON DELETE CASCADE
);
CREATE TABLE measurements (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  engine         TEXT NOT NULL,
  engine_version TEXT,
  metric         TEXT NOT NULL,
  value          REAL,
  unit           TEXT,
  details_json   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX measurements_by_run ON measurements(run_id);
)SQL",
    // 1 -> 2: measurements of one threshold of a profile (NULL: of the whole run).
    R"SQL(
ALTER TABLE measurements ADD COLUMN threshold INTEGER;
)SQL",
    // 2 -> 3: the key and value bytes of each size class (its requested bytes less headers).
    R"SQL(
ALTER TABLE size_classes ADD COLUMN payload_bytes INTEGER NOT NULL DEFAULT 0;
)SQL",
    // 3 -> 4: runs can be 'interrupted'; each run names its owner (host, pid, the process's start, a
    // heartbeat) so that a run another process is computing is told from one whose process died; a batch
    // cell's key is a column, so that concurrent batches claim cells. SQLite cannot change a CHECK
    // constraint in place: the table is rebuilt (with foreign keys off, see ResultsDb::migrate).
    R"SQL(
CREATE TABLE runs_v4 (
  id              INTEGER PRIMARY KEY,
  kind            TEXT NOT NULL,
  trace_id        INTEGER REFERENCES traces(id),
  layout          TEXT NOT NULL,
  allocator       TEXT NOT NULL,
  parameters_json TEXT NOT NULL,
  tool_version    TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'interrupted')),
  error           TEXT,
  replay_json     TEXT NOT NULL DEFAULT '{}',
  started_at      TEXT NOT NULL,
  finished_at     TEXT,
  owner_host      TEXT NOT NULL DEFAULT '',
  owner_pid       INTEGER NOT NULL DEFAULT 0,
  owner_process   TEXT NOT NULL DEFAULT '',
  heartbeat_at    TEXT,
  batch_cell      TEXT
);
INSERT INTO runs_v4 (id, kind, trace_id, layout, allocator, parameters_json, tool_version, status, error, replay_json,
                     started_at, finished_at, batch_cell)
  SELECT id, kind, trace_id, layout, allocator, parameters_json, tool_version, status, error, replay_json,
         started_at, finished_at,
         CASE WHEN json_valid(parameters_json) THEN json_extract(parameters_json, '$.batch_cell') END
  FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v4 RENAME TO runs;
CREATE INDEX runs_by_trace ON runs(trace_id);
CREATE INDEX runs_by_cell ON runs(batch_cell);
)SQL",
    // 4 -> 5: the slab model's figures per point (NULL: the run did not model the allocator's slabs).
    R"SQL(
ALTER TABLE points ADD COLUMN allocated_bytes INTEGER;
ALTER TABLE points ADD COLUMN active_bytes INTEGER;
ALTER TABLE points ADD COLUMN frag_ratio REAL;
ALTER TABLE points ADD COLUMN active_bytes_per_key REAL;
ALTER TABLE points ADD COLUMN peak_allocated_bytes INTEGER;
ALTER TABLE points ADD COLUMN peak_active_bytes INTEGER;
)SQL",
    // 5 -> 6: the slabs (memcached: pages) the slab model holds per class (NULL: no slab model), and the
    // timeline of a run made with one (`--timeline N`): per sample and point, the allocator's bytes.
    R"SQL(
ALTER TABLE size_classes ADD COLUMN held_slabs INTEGER;
CREATE TABLE timeline (
  run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  sample_index    INTEGER NOT NULL,
  point_index     INTEGER NOT NULL,
  requests        INTEGER NOT NULL,
  time_ms         INTEGER NOT NULL,
  live_keys       INTEGER NOT NULL,
  allocated_bytes INTEGER NOT NULL,
  active_bytes    INTEGER NOT NULL,
  PRIMARY KEY (run_id, sample_index, point_index)
);
)SQL",
    // 6 -> 7: a memory budget's figures per point (NULL: the run had no --maxmemory).
    R"SQL(
ALTER TABLE points ADD COLUMN maxmemory_bytes INTEGER;
ALTER TABLE points ADD COLUMN hit_ratio REAL;
ALTER TABLE points ADD COLUMN get_hits INTEGER;
ALTER TABLE points ADD COLUMN get_misses INTEGER;
ALTER TABLE points ADD COLUMN fills INTEGER;
ALTER TABLE points ADD COLUMN evicted_keys INTEGER;
ALTER TABLE points ADD COLUMN refused_writes INTEGER;
ALTER TABLE points ADD COLUMN used_memory_bytes INTEGER;
)SQL",
    // 7 -> 8: a run's collection keys by type and encoding (the same at every point; none: the trace held
    // only strings).
    R"SQL(
CREATE TABLE collections (
  run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  type            TEXT NOT NULL,
  encoding        TEXT NOT NULL,
  keys            INTEGER NOT NULL,
  entries         INTEGER NOT NULL,
  payload_bytes   INTEGER NOT NULL,
  allocations     REAL NOT NULL,
  requested_bytes REAL NOT NULL,
  usable_bytes    REAL NOT NULL,
  PRIMARY KEY (run_id, type, encoding)
);
)SQL",
    // 8 -> 9: the lines lookups of a collection's elements read (0 in older runs), and a collection limit swept
    // in the run's pass (sweep --param): each value's point figures and its collections.
    R"SQL(
ALTER TABLE collections ADD COLUMN lookup_lines REAL NOT NULL DEFAULT 0;
CREATE TABLE limit_points (
  run_id               INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  value_index          INTEGER NOT NULL,
  limit_name           TEXT NOT NULL,
  limit_value          INTEGER NOT NULL,
  keys                 INTEGER NOT NULL,
  usable_bytes         INTEGER NOT NULL,
  usable_bytes_per_key REAL NOT NULL,
  PRIMARY KEY (run_id, value_index)
);
CREATE TABLE limit_collections (
  run_id          INTEGER NOT NULL,
  value_index     INTEGER NOT NULL,
  type            TEXT NOT NULL,
  encoding        TEXT NOT NULL,
  keys            INTEGER NOT NULL,
  entries         INTEGER NOT NULL,
  payload_bytes   INTEGER NOT NULL,
  allocations     REAL NOT NULL,
  requested_bytes REAL NOT NULL,
  usable_bytes    REAL NOT NULL,
  lookup_lines    REAL NOT NULL,
  PRIMARY KEY (run_id, value_index, type, encoding),
  FOREIGN KEY (run_id, value_index) REFERENCES limit_points(run_id, value_index) ON DELETE CASCADE
);
)SQL",
    // 9 -> 10: memcached under a memory limit: the items each slab class's LRU evicted (NULL: no budget).
    R"SQL(
ALTER TABLE size_classes ADD COLUMN evictions INTEGER;
)SQL",
    // 10 -> 11: of a collection row's usable bytes, its tables' bucket arrays in expectation (0 in older runs).
    R"SQL(
ALTER TABLE collections ADD COLUMN bucket_array_bytes REAL NOT NULL DEFAULT 0;
ALTER TABLE limit_collections ADD COLUMN bucket_array_bytes REAL NOT NULL DEFAULT 0;
)SQL",
    // 11 -> 12: of a collection row's usable bytes, their variance over the engine's random draws (a sorted
    // set's skiplist levels; 0 in older runs).
    R"SQL(
ALTER TABLE collections ADD COLUMN usable_bytes_variance REAL NOT NULL DEFAULT 0;
ALTER TABLE limit_collections ADD COLUMN usable_bytes_variance REAL NOT NULL DEFAULT 0;
)SQL",
};
constexpr int kMigrationCount = sizeof(kMigrations) / sizeof(kMigrations[0]);
static_assert(kMigrationCount == kResultsSchemaVersion, "one migration per schema version");

} // namespace

const char* schemaMigration(int fromVersion) {
    return kMigrations[fromVersion];
}

} // namespace layoutlab::sqlite
