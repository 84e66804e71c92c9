// SPDX-License-Identifier: MIT
#pragma once

// The batch job: a plan of traces x layouts x allocators (docs/batch.md), each cell a stored sweep over
// the plan's thresholds. Cells run in parallel on `jobs` threads, cells already complete in the database
// are skipped (resume), a concurrent batch of the same plan shares the cells (each is claimed in the
// database), and a shard I/N runs only every N-th cell from the I-th. `layoutlab batch` runs it; so can
// any front end, on its own thread, with a stop token.

#include "layoutlab/expected.h"
#include "layoutlab/import/importer.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

namespace field {
inline constexpr const char* kPlan = "plan";
inline constexpr const char* kShard = "shard";
} // namespace field

struct BatchCell {
    std::size_t index = 0; // in the plan's order
    std::string trace; // as resolved against the plan's directory
    std::string layout;
    std::string allocator; // empty: the layout's engine default
    std::string key; // what determines its result: identifies it among stored runs (resume)
    std::string contentHash; // of the trace; empty when it could not be read (the cell then fails)
};

struct BatchPlan {
    std::string path;
    std::vector<BatchCell> cells;
    std::string thresholds = "16:512:16";
    bool cache = false;
    std::string cacheGeometry;
    bool slabs = false; // the slab model in every cell (memcached's too; glibc cells run without it)
    ImportOptions importOptions;
};

// A plan in JSON (comments allowed), or in TOML (a .toml file) with the same fields; traces and layout
// files relative to the plan's directory. Errors name the plan file.
Expected<BatchPlan> readBatchPlan(const std::string& path);

// Which cells a run takes: index % count == this index.
struct BatchShard {
    std::size_t index = 0;
    std::size_t count = 1;
};
// "I/N" with 0 <= I < N; an error names field::kShard.
Expected<BatchShard> parseBatchShard(const std::string& text);

struct BatchCellResult {
    const BatchCell* cell = nullptr;
    std::string status; // complete, skipped (complete already, or another batch has it), failed, interrupted
    std::int64_t runId = 0;
    std::string error;
    double seconds = 0;
    std::string layoutName; // the preset or layout file's name of a complete cell's run
    bool summarized = false; // the figures below are its run's (a complete cell, ran now or before)
    std::optional<std::uint32_t> bestThreshold; // the leanest (leanestPoint); none without a threshold
    double bestBytesPerKey = 0;
    // The setting the layout's engine ships with (its own threshold, always evaluated in a batch) and its
    // bytes per key: what a store gets without tuning, beside what the leanest threshold would save.
    std::optional<std::uint32_t> shippedThreshold;
    double shippedBytesPerKey = 0;
    // With the slab model: the active bytes per key at both settings.
    std::optional<double> bestActiveBytesPerKey;
    std::optional<double> shippedActiveBytesPerKey;
};

struct BatchRequest {
    BatchPlan plan;
    BatchShard shard;
    unsigned jobs = 0; // cells at once; 0: every core
    std::string dbPath; // the results database (a batch always stores)
    std::string toolVersion;
    // Called as each cell ends, from the worker that ran it, one call at a time: the cell, and how many of
    // the cells to run have ended.
    std::function<void(const BatchCellResult&, std::size_t done, std::size_t total)> cellDone;
};

struct BatchOutcome {
    std::vector<BatchCellResult> results; // every cell of the shard, in plan order
    std::size_t ran = 0; // cells run this time (the others were complete already)
    std::size_t skipped = 0;
    std::size_t failed = 0;
    std::size_t interrupted = 0; // not done because of a stop request: run the batch again to resume
    unsigned workers = 0;
    double seconds = 0;
};

// Runs the request's shard of its plan. The outcome lists failed cells with their errors; an error is
// returned only when the batch could not run at all (the database, the plan). A stop request starts no
// new cell, and marks the running cells' runs interrupted.
Expected<BatchOutcome> runBatchJob(BatchRequest& request, std::stop_token stop = {});

// A layout as a summary shows it: a layout file by its file name.
std::string batchLayoutName(const std::string& layout);
nlohmann::json toJson(const BatchOutcome& outcome, const BatchRequest& request);
std::string renderBatchTable(const BatchOutcome& outcome, const BatchRequest& request);

} // namespace layoutlab
