// SPDX-License-Identifier: MIT
// `layoutlab batch PLAN`: a plan of traces × layouts × allocators, each cell a stored sweep over the
// plan's thresholds (docs/batch.md, datasets/plans/example.json). Cells run in parallel (-j), cells
// already complete in the database are skipped (resume), and --shard I/N runs only every N-th cell from
// the I-th, so a scheduler can spread a plan over machines (`db merge` joins their databases).

#include "commands.h"
#include "interrupts.h"
#include "run_store.h"

#include "layoutlab/layout/layout_file.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/output_file.h"
#include "layoutlab/store/simulation_request.h"
#include "layoutlab/toml_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace layoutlab::cli {

namespace {

struct BatchOptions {
    std::string plan;
    unsigned jobs = 0; // 0: every core
    std::string shard;
    bool json = false;
    DbOptions db;
};

struct Cell {
    std::size_t index = 0; // in the plan's order
    std::string trace; // as resolved against the plan's directory
    std::string layout;
    std::string allocator;
    std::string key; // identifies the cell among stored runs (resume)
    std::string contentHash; // of the trace; empty when it could not be read (the cell then fails)
};

struct Plan {
    std::vector<Cell> cells;
    std::string thresholds;
    bool cache = false;
    std::string cacheGeometry;
    ImportOptions importOptions;
};

Error planError(const std::string& path, const std::string& what) {
    Error e = usageError(what, "PLAN");
    e.file = path;
    return e;
}

std::vector<std::string> stringList(
    const nlohmann::json& j, const char* field, bool required, const std::string& path, std::optional<Error>& error) {
    std::vector<std::string> out;
    if (!j.contains(field)) {
        if (required)
            error = planError(path, fmt::format("field {} is missing (a list of strings)", field));
        return out;
    }
    const auto& v = j[field];
    if (!v.is_array() || v.empty()) {
        error = planError(path, fmt::format("field {} must be a non-empty list of strings", field));
        return out;
    }
    for (const auto& item : v) {
        if (!item.is_string()) {
            error = planError(path, fmt::format("field {}: every entry must be a string", field));
            return {};
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

// A layout as the summary shows it: a layout file by its file name.
std::string shortLayout(const std::string& layout) {
    const auto file = layoutFilePath(layout);
    return file.empty() ? layout : std::filesystem::path(file).filename().string();
}

// A plan in JSON, or in TOML (a .toml file) with the same fields.
Expected<nlohmann::json> readPlanDocument(const std::string& path) {
    // A plan names a few hundred cells at most: 4 MiB is far beyond any, and /dev/zero is refused quickly.
    auto text = readSmallFile(path, std::size_t { 4 } << 20, "plan");
    if (!text)
        return text.error();
    if (std::filesystem::path(path).extension() == ".toml")
        return parseTomlAsJson(*text, path);
    try {
        return nlohmann::json::parse(*text, nullptr, true, true); // comments allowed
    } catch (const nlohmann::json::parse_error& e) {
        Error err = dataError(fmt::format("not a JSON plan: {}", e.what()));
        err.file = path;
        err.offset = e.byte;
        err.hasOffset = true;
        return err;
    }
}

Expected<Plan> readPlan(const std::string& path) {
    auto document = readPlanDocument(path);
    if (!document)
        return document.error();
    const nlohmann::json& j = *document;
    if (!j.is_object())
        return planError(path, "a plan is a JSON object or a TOML document (see datasets/plans/)");
    static const std::set<std::string> known { "traces", "layouts", "layout_files", "allocators", "thresholds", "cache",
        "cache_geometry", "format", "on_error", "key_size", "comment" };
    for (const auto& [field, value] : j.items())
        if (!known.contains(field))
            return planError(path, fmt::format("unknown field '{}'", field));
    std::optional<Error> error;
    const auto traces = stringList(j, "traces", true, path, error);
    auto layouts = stringList(j, "layouts", !j.contains("layout_files"), path, error);
    const auto layoutFiles = stringList(j, "layout_files", false, path, error);
    auto allocators = stringList(j, "allocators", false, path, error);
    if (error)
        return *error;
    if (allocators.empty())
        allocators.push_back(""); // each layout's engine default
    Plan plan;
    plan.thresholds = j.value("thresholds", std::string("16:512:16"));
    plan.cache = j.value("cache", false);
    plan.cacheGeometry = j.value("cache_geometry", std::string());
    TraceSourceOptions source;
    source.format = j.value("format", std::string("auto"));
    source.onError = j.value("on_error", std::string("fail"));
    source.keyBytes = j.value("key_size", 16u);
    auto importOptions = source.toImportOptions();
    if (!importOptions)
        return planError(path, importOptions.error().message);
    plan.importOptions = *importOptions;
    const auto base = std::filesystem::path(path).parent_path();
    auto relative = [&base](const std::string& p) {
        return std::filesystem::path(p).is_absolute() ? p : (base / p).lexically_normal().string();
    };
    for (const auto& file : layoutFiles)
        layouts.push_back(layoutFileSpec(relative(file))); // relative to the plan, as traces are
    for (const auto& trace : traces)
        for (const auto& layout : layouts)
            for (const auto& allocator : allocators) {
                Cell c;
                c.index = plan.cells.size();
                c.trace = relative(trace);
                c.layout = layout;
                c.allocator = allocator;
                plan.cells.push_back(std::move(c));
            }
    return plan;
}

// "I/N" with 0 <= I < N.
Expected<std::pair<std::size_t, std::size_t>> parseShard(const std::string& text) {
    unsigned long i = 0, n = 0;
    char slash = 0;
    if (std::sscanf(text.c_str(), "%lu%c%lu", &i, &slash, &n) != 3 || slash != '/' || n == 0 || i >= n)
        return usageError("--shard must be I/N with 0 <= I < N (e.g. 0/4 .. 3/4), got '" + text + "'", "--shard");
    return std::make_pair(static_cast<std::size_t>(i), static_cast<std::size_t>(n));
}

struct CellResult {
    const Cell* cell = nullptr;
    std::string status; // complete, skipped (already complete), failed
    std::int64_t runId = 0;
    std::string error;
    double seconds = 0;
    std::optional<std::uint32_t> bestThreshold;
    double bestBytesPerKey = 0;
};

// The stored runs' batch cell keys that are complete, and their run ids.
Expected<std::map<std::string, std::int64_t>> completeCells(ResultsDb& db) {
    auto runs = db.listRuns();
    if (!runs)
        return runs.error();
    std::map<std::string, std::int64_t> out;
    for (const auto& r : *runs) {
        if (r.status != "complete")
            continue;
        if (!r.batchCell.empty()) // the runs table's column, filled from the parameters by schema 4
            out[r.batchCell] = r.id;
    }
    return out;
}

CellResult runCell(const Cell& cell, const Plan& plan, const std::string& dbPath) {
    CellResult result;
    result.cell = &cell;
    const auto start = std::chrono::steady_clock::now();
    auto fail = [&](const Error& e) {
        result.status = e.code == ErrorCode::Cancelled ? "interrupted" : "failed";
        result.error = e.code == ErrorCode::Cancelled ? std::string() : e.describe();
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    };
    SimulationRequest request;
    request.tracePath = cell.trace;
    request.traceContentHash = cell.contentHash;
    request.importOptions = plan.importOptions;
    // One thread per cell: a batch's parallelism is across cells (-j), and a decoding thread per cell
    // would only compete with the other cells for the cores.
    request.importOptions.decodeAhead = false;
    request.toolVersion = LAYOUTLAB_VERSION;
    request.layout = cell.layout;
    request.allocator = cell.allocator;
    request.thresholds = plan.thresholds;
    request.layoutWithoutThresholdRunsOnce = true; // memcached in a plan: one point, no threshold to sweep
    request.cache = plan.cache;
    request.cacheGeometry = plan.cacheGeometry;
    request.extraParametersJson = nlohmann::json { { "batch_cell", cell.key } }.dump();
    request.batchCell = cell.key; // claimed in the database: a concurrent batch of the same plan skips it
    auto job = buildSimulationJob(request);
    if (!job)
        return fail(job.error());
    auto db = ResultsDb::open(dbPath);
    if (!db)
        return fail(db.error());
    auto outcome = runSimulationJob(*job, db->get(), nullptr, interruptToken());
    if (!outcome)
        return fail(outcome.error());
    if (outcome->takenBy) {
        result.status = "skipped"; // another batch computes (or has computed) this cell
        result.runId = outcome->takenBy;
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    }
    result.status = "complete";
    result.runId = outcome->runId;
    if (!outcome->result.points.empty()) {
        const auto& best = outcome->result.points[leanestPoint(outcome->result.points)];
        if (!outcome->result.thresholdName.empty())
            result.bestThreshold = best.threshold;
        result.bestBytesPerKey = best.usableBytesPerKey;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

void drawProgress(std::size_t done, std::size_t total, double seconds) {
    const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const int filled = static_cast<int>(fraction * 30);
    const double eta = done ? seconds * static_cast<double>(total - done) / static_cast<double>(done) : 0.0;
    fmt::print(stderr, "\r\033[Kbatch [{}{}] {}/{} cells  {:.0f}s  ETA {:.0f}s", std::string(filled, '#'),
        std::string(30 - filled, '.'), done, total, seconds, eta);
    std::fflush(stderr);
}

int runBatch(const BatchOptions& o) {
    auto plan = readPlan(o.plan);
    if (!plan)
        return reportError(plan.error());
    std::size_t shardIndex = 0, shardCount = 1;
    if (!o.shard.empty()) {
        auto shard = parseShard(o.shard);
        if (!shard)
            return reportError(shard.error());
        std::tie(shardIndex, shardCount) = *shard;
    }
    const std::string dbPath = o.db.resolvedPath();
    auto db = ResultsDb::open(dbPath);
    if (!db)
        return reportError(db.error());
    auto done = completeCells(**db);
    if (!done)
        return reportError(done.error());
    // A cell is known by what determines its result: the trace's content, the models and the plan's
    // sweep options. Renaming or moving a trace does not re-run it; changing a byte of it does.
    std::vector<CellResult> results;
    std::vector<const Cell*> todo;
    // Content hashes by path: each trace and layout file is read once, whatever its number of cells. A
    // missing file hashes to "", and fails in its cells with the reason.
    std::map<std::string, std::string> hashes;
    auto contentHash = [&hashes](const std::string& path) -> const std::string& {
        if (!hashes.contains(path)) {
            auto hash = hashFile(path);
            hashes[path] = hash ? *hash : std::string();
        }
        return hashes[path];
    };
    for (auto& cell : plan->cells) {
        if (cell.index % shardCount != shardIndex)
            continue;
        cell.contentHash = contentHash(cell.trace);
        // Every plan field that changes a cell's result is in its key: the source options too (with
        // on_error=skip the rejected lines are left out; key_size splits oracleGeneral sizes).
        const auto& source = plan->importOptions;
        // A layout file counts by its content: an edited file runs again.
        std::string layoutKey = cell.layout;
        if (const auto file = layoutFilePath(cell.layout); !file.empty()) {
            const auto& hash = contentHash(file);
            layoutKey = "file#" + (hash.empty() ? file : hash);
        }
        cell.key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", cell.contentHash.empty() ? cell.trace : cell.contentHash,
            layoutKey, cell.allocator, plan->thresholds,
            plan->cache ? (plan->cacheGeometry.empty() ? "cache" : plan->cacheGeometry) : "", source.format,
            source.onError == OnError::Skip ? "skip" : "fail", source.oracleKeyBytes);
        if (const auto it = done->find(cell.key); it != done->end()) {
            CellResult skipped;
            skipped.cell = &cell;
            skipped.status = "skipped";
            skipped.runId = it->second;
            results.push_back(skipped);
        } else {
            todo.push_back(&cell);
        }
    }
    db->reset(); // each worker opens its own connection

    const unsigned workers = std::max(1u,
        std::min<unsigned>(o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency()),
            static_cast<unsigned>(std::max<std::size_t>(todo.size(), 1))));
    std::vector<CellResult> ran(todo.size());
    std::atomic<std::size_t> next { 0 }, finished { 0 };
    std::mutex progressMutex;
    const bool tty = ::isatty(STDERR_FILENO) == 1;
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    {
        std::vector<std::jthread> pool;
        for (unsigned w = 0; w < workers; ++w)
            pool.emplace_back([&] {
                for (std::size_t i; (i = next.fetch_add(1)) < todo.size();) {
                    if (interruptToken().stop_requested()) { // a signal: no new cell starts
                        ran[i].cell = todo[i];
                        ran[i].status = "interrupted";
                        continue;
                    }
                    ran[i] = runCell(*todo[i], *plan, dbPath);
                    const std::size_t n = ++finished;
                    std::lock_guard lock(progressMutex);
                    if (tty)
                        drawProgress(n, todo.size(), elapsed());
                    else
                        fmt::print(stderr, "batch: cell {}/{} {} ({}, {}) {}\n", n, todo.size(), ran[i].status,
                            shortLayout(todo[i]->layout), std::filesystem::path(todo[i]->trace).filename().string(),
                            ran[i].error);
                }
            });
    }
    if (tty && !todo.empty())
        fmt::print(stderr, "\r\033[K");
    results.insert(results.end(), ran.begin(), ran.end());
    std::sort(
        results.begin(), results.end(), [](const auto& a, const auto& b) { return a.cell->index < b.cell->index; });

    std::size_t failed = 0, skipped = 0, interrupted = 0;
    for (const auto& r : results) {
        failed += r.status == "failed";
        skipped += r.status == "skipped";
        interrupted += r.status == "interrupted";
    }
    if (interrupted) {
        Error stopped = cancelledError();
        stopped.message = fmt::format("stopped; {} of {} cells not done (their runs are marked interrupted); run the "
                                      "same batch again to resume",
            interrupted, results.size());
        return reportError(stopped);
    }
    std::string text;
    if (o.json) {
        nlohmann::json cells = nlohmann::json::array();
        for (const auto& r : results)
            cells.push_back({ { "cell", r.cell->index }, { "trace", r.cell->trace }, { "layout", r.cell->layout },
                { "allocator", r.cell->allocator }, { "status", r.status },
                { "run", r.runId ? nlohmann::json(r.runId) : nlohmann::json(nullptr) },
                { "best_threshold", r.bestThreshold ? nlohmann::json(*r.bestThreshold) : nlohmann::json(nullptr) },
                { "best_bytes_per_key",
                    r.status == "complete" ? nlohmann::json(r.bestBytesPerKey) : nlohmann::json(nullptr) },
                { "seconds", r.seconds }, { "error", r.error } });
        text = nlohmann::json { { "plan", o.plan }, { "shard", o.shard.empty() ? "0/1" : o.shard }, { "cells", cells },
            { "ran", todo.size() }, { "skipped", skipped }, { "failed", failed }, { "workers", workers },
            { "seconds", elapsed() } }
                   .dump(2)
            + "\n";
    } else {
        std::size_t layoutWidth = 16; // layout file names can be longer than the built-in names
        for (const auto& r : results)
            layoutWidth = std::max(layoutWidth, shortLayout(r.cell->layout).size());
        text = fmt::format("{:>4}  {:<9} {:>5}  {:<32} {:<{}} {:<28} {:>6} {:>10} {:>7}\n", "cell", "status", "run",
            "trace", "layout", layoutWidth, "allocator", "best", "bytes/key", "seconds");
        for (const auto& r : results) {
            text += fmt::format("{:>4}  {:<9} {:>5}  {:<32} {:<{}} {:<28} {:>6} {:>10} {:>7.2f}\n", r.cell->index,
                r.status, r.runId ? std::to_string(r.runId) : "-",
                std::filesystem::path(r.cell->trace).filename().string(), shortLayout(r.cell->layout), layoutWidth,
                r.cell->allocator.empty() ? "(engine default)" : r.cell->allocator,
                r.bestThreshold ? std::to_string(*r.bestThreshold) : "-",
                r.status == "complete" ? fmt::format("{:.2f}", r.bestBytesPerKey) : "-", r.seconds);
            if (!r.error.empty())
                text += fmt::format("      why: {}\n", r.error);
        }
        text += fmt::format("\n{} cells: {} ran, {} already complete (skipped), {} failed; {} workers, {:.1f} s; "
                            "runs in {}\n",
            results.size(), todo.size(), skipped, failed, workers, elapsed(), dbPath);
    }
    if (auto ok = writeOutput(text, ""); !ok)
        return reportError(ok.error());
    return failed ? kExitData : kExitOk;
}

} // namespace

void addBatchCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<BatchOptions>();
    auto* cmd = app.add_subcommand("batch",
        "Run a plan of traces x layouts x allocators (JSON or TOML, see docs/batch.md): parallel, resumable, "
        "shardable");
    cmd->add_option("plan", o->plan, "The plan file (JSON, or TOML when it ends in .toml)")->required();
    cmd->add_option("-j,--jobs", o->jobs, "Cells run at once (default: every core)");
    cmd->add_option("--shard", o->shard, "Run only shard I of N (0 <= I < N): cells I, I+N, I+2N, ...");
    cmd->add_flag("--json", o->json, "One JSON object: every cell with its status, run, best threshold and error");
    o->db.addTo(*cmd, false);
    cmd->callback([o, &status] { status = runBatch(*o); });
}

} // namespace layoutlab::cli
