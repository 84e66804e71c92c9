// SPDX-License-Identifier: MIT
#pragma once

// Where sim/sweep/import results go: --db PATH (default $LAYOUTLAB_DB, else layoutlab.db in the working
// directory), or nowhere with --no-db.

#include "layoutlab/import/importer.h"
#include "layoutlab/store/jobs.h"
#include "layoutlab/store/results_db.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace layoutlab::cli {

struct DbOptions {
    std::string path;
    bool disabled = false;

    void addTo(CLI::App& command, bool allowDisable = true);
    std::string resolvedPath() const;
    // nullptr when disabled; an error when the database cannot be opened.
    Expected<std::unique_ptr<ResultsDb>> open() const;
    // For commands that only read: opened read-only (ResultsDb::openReadOnly).
    Expected<std::unique_ptr<ResultsDb>> openForReading() const;
};

// Starts a run of `kind` by this version of the tool (layoutlab::beginRun).
Expected<std::int64_t> beginRun(ResultsDb& db, const std::string& kind, std::int64_t traceId, const std::string& layout,
    const std::string& allocator, const nlohmann::json& parameters);

// A run as `db list --json` and `compare --json` print it.
nlohmann::json runJson(const RunRecord& r);
// A run's status as `db list` shows it: a running run whose process is gone is "abandoned".
std::string displayStatus(const RunRecord& r);

// A prediction run (`predictionKind`, e.g. "profile" or "sim") and the run of what was measured beside it
// (`measuredKind`), both on the trace at `path`; the measured run's parameters name the prediction run.
struct RunPair {
    std::int64_t prediction = 0;
    std::int64_t measured = 0;
};
Expected<RunPair> beginMeasuredRuns(ResultsDb& db, const std::string& path, const ImportOptions& importOptions,
    const std::string& predictionKind, const std::string& measuredKind, const std::string& layout,
    const std::string& allocator, nlohmann::json parameters);

} // namespace layoutlab::cli
