// SPDX-License-Identifier: MIT
#pragma once

// Where sim/sweep/import results go: --db PATH (default $LAYOUTLAB_DB, else layoutlab.db in the working
// directory), or nowhere with --no-db.

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
};

// Records the trace file (content hash, format) and returns its id.
Expected<std::int64_t> recordTrace(ResultsDb& db, const std::string& path, const std::string& format,
    const std::string& statsJson = "{}", std::uint64_t requests = 0, std::uint64_t distinctKeys = 0);

// Starts a run of `kind` ('running' until completed or failed) and returns its id.
Expected<std::int64_t> beginRun(ResultsDb& db, const std::string& kind, std::int64_t traceId, const std::string& layout,
    const std::string& allocator, const nlohmann::json& parameters);

} // namespace layoutlab::cli
