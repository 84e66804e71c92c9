// SPDX-License-Identifier: MIT
// Running a batch plan: cell keys, resume, the worker pool, and the summary.

#include "layoutlab/store/batch_job.h"

#include "layoutlab/layout/layout_file.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/store/results_db.h"
#include "layoutlab/store/simulation_request.h"
#include "layoutlab/store/stored_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace layoutlab {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// The stored runs' batch cell keys that are complete, and their run ids.
Expected<std::map<std::string, std::int64_t>> completeCells(ResultsDb& db) {
    auto runs = db.listRuns();
    if (!runs)
        return runs.error();
    std::map<std::string, std::int64_t> out;
    for (const auto& r : *runs)
        if (r.status == "complete" && !r.batchCell.empty()) // the runs table's column (schema 4)
            out[r.batchCell] = r.id;
    return out;
}

// Gives each cell of the shard its key: what determines its result, namely the trace's content, the models
// and the plan's sweep and source options. Renaming or moving a trace does not re-run it; changing a byte
// of it does, as does editing a layout file. Each file is hashed once, whatever its number of cells; a
// missing file hashes to "" and fails in its cells with the reason.
void keyCells(BatchPlan& plan, const BatchShard& shard) {
    std::map<std::string, std::string> hashes;
    auto contentHash = [&hashes](const std::string& path) -> const std::string& {
        if (!hashes.contains(path)) {
            auto hash = hashFile(path);
            hashes[path] = hash ? *hash : std::string();
        }
        return hashes[path];
    };
    const auto& source = plan.importOptions;
    for (auto& cell : plan.cells) {
        if (cell.index % shard.count != shard.index)
            continue;
        cell.contentHash = contentHash(cell.trace);
        std::string layoutKey = cell.layout;
        if (const auto file = layoutFilePath(cell.layout); !file.empty()) {
            const auto& hash = contentHash(file);
            layoutKey = "file#" + (hash.empty() ? file : hash);
        }
        // "+shipped": the layout's own threshold is evaluated beside the plan's (cells of older batches lack it).
        cell.key = fmt::format("{}|{}|{}|{}+shipped|{}|{}|{}|{}{}",
            cell.contentHash.empty() ? cell.trace : cell.contentHash, layoutKey, cell.allocator, plan.thresholds,
            plan.cache ? (plan.cacheGeometry.empty() ? "cache" : plan.cacheGeometry) : "", source.format,
            source.onError == OnError::Skip ? "skip" : "fail", source.oracleKeyBytes, plan.slabs ? "|slabs" : "");
    }
}

// A complete cell's figures: its leanest threshold and the one its engine ships with.
void summarize(BatchCellResult& result, const SimulationResult& sim, std::string name) {
    result.layoutName = std::move(name);
    if (sim.points.empty())
        return;
    result.summarized = true;
    const auto& best = sim.points[leanestPoint(sim.points)];
    const bool hasThreshold = !sim.thresholdName.empty();
    if (hasThreshold)
        result.bestThreshold = best.threshold;
    result.bestBytesPerKey = best.usableBytesPerKey;
    auto activePerKey = [](const ThresholdPoint& p) -> std::optional<double> {
        if (!p.arena || p.keys == 0)
            return std::nullopt;
        return static_cast<double>(p.arena->activeBytes) / static_cast<double>(p.keys);
    };
    result.bestActiveBytesPerKey = activePerKey(best);
    if (const ThresholdPoint* shipped = shippedPoint(sim)) {
        if (hasThreshold)
            result.shippedThreshold = shipped->threshold;
        result.shippedBytesPerKey = shipped->usableBytesPerKey;
        result.shippedActiveBytesPerKey = activePerKey(*shipped);
    }
}

BatchCellResult runCell(const BatchCell& cell, const BatchRequest& batch, std::stop_token stop) {
    BatchCellResult result;
    result.cell = &cell;
    const auto start = Clock::now();
    auto fail = [&](const Error& e) {
        result.status = e.code == ErrorCode::Cancelled ? "interrupted" : "failed";
        result.error = e.code == ErrorCode::Cancelled ? std::string() : e.describe();
        result.seconds = secondsSince(start);
        return result;
    };
    const BatchPlan& plan = batch.plan;
    SimulationRequest request;
    request.tracePath = cell.trace;
    request.traceContentHash = cell.contentHash;
    request.importOptions = plan.importOptions;
    // One thread per cell: a batch's parallelism is across cells, and a decoding thread per cell would
    // only compete with the other cells for the cores.
    request.importOptions.decodeAhead = false;
    request.toolVersion = batch.toolVersion;
    request.layout = cell.layout;
    request.allocator = cell.allocator;
    request.thresholds = plan.thresholds;
    request.layoutWithoutThresholdRunsOnce = true; // memcached in a plan: one point, no threshold to sweep
    request.withShippedThreshold
        = SimulationRequest::Shipped::Always; // the summary shows the shipped setting beside the leanest
    request.cache = plan.cache;
    request.cacheGeometry = plan.cacheGeometry;
    request.slabs = plan.slabs;
    request.slabsWhereCovered = true; // a glibc cell beside them runs without it
    request.extraParametersJson = nlohmann::json { { "batch_cell", cell.key } }.dump();
    request.batchCell = cell.key; // claimed in the database: a concurrent batch of the same plan skips it
    auto job = buildSimulationJob(request);
    if (!job)
        return fail(job.error());
    auto db = ResultsDb::open(batch.dbPath);
    if (!db)
        return fail(db.error());
    auto outcome = runSimulationJob(*job, db->get(), nullptr, stop);
    if (!outcome)
        return fail(outcome.error());
    result.seconds = secondsSince(start);
    if (outcome->takenBy) {
        result.status = "skipped"; // another batch computes (or has computed) this cell
        result.runId = outcome->takenBy;
        return result;
    }
    result.status = "complete";
    result.runId = outcome->runId;
    summarize(result, outcome->result, layoutName(*job->config.layout));
    return result;
}

} // namespace

Expected<BatchOutcome> runBatchJob(BatchRequest& request, std::stop_token stop) {
    const auto start = Clock::now();
    BatchPlan& plan = request.plan;
    if (request.shard.count == 0 || request.shard.index >= request.shard.count)
        return usageError("the shard's index must be below its count", field::kShard);
    std::map<std::string, std::int64_t> done;
    std::vector<std::size_t> skippedRuns; // results of cells complete already, summarized from their runs
    auto db = ResultsDb::open(request.dbPath); // each worker opens its own connection besides
    if (!db)
        return db.error();
    if (auto complete = completeCells(**db); complete)
        done = std::move(*complete);
    else
        return complete.error();
    keyCells(plan, request.shard);
    BatchOutcome outcome;
    std::vector<const BatchCell*> todo;
    for (const auto& cell : plan.cells) {
        if (cell.index % request.shard.count != request.shard.index)
            continue;
        if (const auto it = done.find(cell.key); it != done.end()) {
            BatchCellResult skipped;
            skipped.cell = &cell;
            skipped.status = "skipped";
            skipped.runId = it->second;
            outcome.results.push_back(skipped);
            skippedRuns.push_back(outcome.results.size() - 1);
        } else {
            todo.push_back(&cell);
        }
    }
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    outcome.workers = std::max(1u,
        std::min<unsigned>(
            request.jobs ? request.jobs : cores, static_cast<unsigned>(std::max<std::size_t>(todo.size(), 1))));
    std::vector<BatchCellResult> ran(todo.size());
    std::atomic<std::size_t> next { 0 }, finished { 0 };
    std::mutex reportMutex;
    {
        std::vector<std::jthread> pool;
        for (unsigned w = 0; w < outcome.workers; ++w)
            pool.emplace_back([&] {
                for (std::size_t i; (i = next.fetch_add(1)) < todo.size();) {
                    if (stop.stop_requested()) { // no new cell starts
                        ran[i].cell = todo[i];
                        ran[i].status = "interrupted";
                        continue;
                    }
                    ran[i] = runCell(*todo[i], request, stop);
                    const std::size_t n = ++finished;
                    if (request.cellDone) {
                        const std::lock_guard lock(reportMutex);
                        request.cellDone(ran[i], n, todo.size());
                    }
                }
            });
    }
    for (const std::size_t i : skippedRuns) // the summary shows what their runs found
        if (auto stored = loadStoredRun(**db, outcome.results[i].runId))
            summarize(outcome.results[i], stored->result, stored->run.layoutName);
    outcome.results.insert(outcome.results.end(), ran.begin(), ran.end());
    std::sort(outcome.results.begin(), outcome.results.end(),
        [](const auto& a, const auto& b) { return a.cell->index < b.cell->index; });
    outcome.ran = todo.size();
    for (const auto& r : outcome.results) {
        outcome.failed += r.status == "failed";
        outcome.skipped += r.status == "skipped";
        outcome.interrupted += r.status == "interrupted";
    }
    outcome.seconds = secondsSince(start);
    return outcome;
}

std::string batchLayoutName(const std::string& layout) {
    const auto file = layoutFilePath(layout);
    return file.empty() ? layout : std::filesystem::path(file).filename().string();
}

namespace {
std::string shownLayout(const BatchCellResult& r) {
    return r.layoutName.empty() ? batchLayoutName(r.cell->layout) : r.layoutName;
}
nlohmann::json thresholdJson(const std::optional<std::uint32_t>& t) {
    return t ? nlohmann::json(*t) : nlohmann::json(nullptr);
}
} // namespace

nlohmann::json toJson(const BatchOutcome& outcome, const BatchRequest& request) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& r : outcome.results) {
        const bool complete = r.summarized;
        cells.push_back({ { "cell", r.cell->index }, { "trace", r.cell->trace }, { "layout", r.cell->layout },
            { "layout_name", shownLayout(r) }, { "allocator", r.cell->allocator }, { "status", r.status },
            { "run", r.runId ? nlohmann::json(r.runId) : nlohmann::json(nullptr) },
            { "shipped_threshold", thresholdJson(r.shippedThreshold) },
            { "shipped_bytes_per_key", complete ? nlohmann::json(r.shippedBytesPerKey) : nlohmann::json(nullptr) },
            { "best_threshold", thresholdJson(r.bestThreshold) },
            { "best_bytes_per_key", complete ? nlohmann::json(r.bestBytesPerKey) : nlohmann::json(nullptr) },
            { "shipped_active_bytes_per_key",
                r.shippedActiveBytesPerKey ? nlohmann::json(*r.shippedActiveBytesPerKey) : nlohmann::json(nullptr) },
            { "best_active_bytes_per_key",
                r.bestActiveBytesPerKey ? nlohmann::json(*r.bestActiveBytesPerKey) : nlohmann::json(nullptr) },
            { "seconds", r.seconds }, { "error", r.error } });
    }
    return { { "plan", request.plan.path }, { "shard", fmt::format("{}/{}", request.shard.index, request.shard.count) },
        { "cells", cells }, { "ran", outcome.ran }, { "skipped", outcome.skipped }, { "failed", outcome.failed },
        { "workers", outcome.workers }, { "seconds", outcome.seconds } };
}

std::string renderBatchTable(const BatchOutcome& outcome, const BatchRequest& request) {
    std::size_t layoutWidth = 16; // layout file names can be longer than the built-in names
    for (const auto& r : outcome.results)
        layoutWidth = std::max(layoutWidth, shownLayout(r).size());
    auto setting = [](const BatchCellResult& r, const std::optional<std::uint32_t>& t, double bytesPerKey) {
        if (!r.summarized)
            return std::string("-");
        return fmt::format("{:>5} {:>8.2f}", t ? std::to_string(*t) : std::string("-"), bytesPerKey);
    };
    const bool slabs = request.plan.slabs;
    auto active
        = [](const std::optional<double>& v) { return v ? fmt::format("{:>8.2f}", *v) : fmt::format("{:>8}", "-"); };
    std::string text = fmt::format("{:>4}  {:<9} {:>5}  {:<32} {:<{}} {:<24} {:>14}{}  {:>14}{} {:>8}\n", "cell",
        "status", "run", "trace", "layout", layoutWidth, "allocator", "shipped  B/key", slabs ? "  active" : "",
        "leanest  B/key", slabs ? "  active" : "", "seconds");
    for (const auto& r : outcome.results) {
        text += fmt::format("{:>4}  {:<9} {:>5}  {:<32} {:<{}} {:<24} {:>14}{}  {:>14}{} {:>8.2f}\n", r.cell->index,
            r.status, r.runId ? std::to_string(r.runId) : "-", std::filesystem::path(r.cell->trace).filename().string(),
            shownLayout(r), layoutWidth, r.cell->allocator.empty() ? "(engine default)" : r.cell->allocator,
            setting(r, r.shippedThreshold, r.shippedBytesPerKey), slabs ? active(r.shippedActiveBytesPerKey) : "",
            setting(r, r.bestThreshold, r.bestBytesPerKey), slabs ? active(r.bestActiveBytesPerKey) : "", r.seconds);
        if (!r.error.empty())
            text += fmt::format("      why: {}\n", r.error);
    }
    text += "\nshipped: the threshold the layout's engine ships with; leanest: of the plan's thresholds and the "
            "shipped one, the one with the fewest bytes per key (B/key: usable bytes per key, hash index included)\n";
    if (slabs)
        text += "active: the slab model's active bytes per key, the pages the allocator keeps\n";
    text += fmt::format("{} cells: {} ran, {} already complete (skipped), {} failed; {} workers, {:.1f} s; runs in "
                        "{}\n",
        outcome.results.size(), outcome.ran, outcome.skipped, outcome.failed, outcome.workers, outcome.seconds,
        request.dbPath);
    return text;
}

} // namespace layoutlab
