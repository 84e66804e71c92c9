// SPDX-License-Identifier: MIT
// `layoutlab batch PLAN`: the batch job (layoutlab/store/batch_job.h) from the command line: a plan of
// traces x layouts x allocators (docs/batch.md, datasets/plans/example.json), each cell a stored sweep,
// run in parallel (-j), resumable, and shardable (--shard I/N; `db merge` joins the shards' databases).

#include "commands.h"
#include "interrupts.h"
#include "run_store.h"

#include "layoutlab/store/batch_job.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
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

// Cell progress on stderr: a bar on a terminal, a line per cell otherwise.
auto cellProgress() {
    return [tty = ::isatty(STDERR_FILENO) == 1, start = std::chrono::steady_clock::now()](
               const BatchCellResult& r, std::size_t done, std::size_t total) {
        if (!tty) {
            fmt::print(stderr, "batch: cell {}/{} {} ({}, {}) {}\n", done, total, r.status,
                batchLayoutName(r.cell->layout), std::filesystem::path(r.cell->trace).filename().string(), r.error);
            return;
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
        const int filled = static_cast<int>(fraction * 30);
        const double eta = done ? seconds * static_cast<double>(total - done) / static_cast<double>(done) : 0.0;
        fmt::print(stderr, "\r\033[Kbatch [{}{}] {}/{} cells  {:.0f}s  ETA {:.0f}s", std::string(filled, '#'),
            std::string(30 - filled, '.'), done, total, seconds, eta);
        if (done == total)
            fmt::print(stderr, "\r\033[K");
        std::fflush(stderr);
    };
}

int runBatch(const BatchOptions& o) {
    auto plan = readBatchPlan(o.plan);
    if (!plan)
        return reportError(plan.error());
    BatchRequest request;
    request.plan = std::move(*plan);
    if (!o.shard.empty()) {
        auto shard = parseBatchShard(o.shard);
        if (!shard)
            return reportError(shard.error());
        request.shard = *shard;
    }
    request.jobs = o.jobs;
    request.dbPath = o.db.resolvedPath();
    request.toolVersion = LAYOUTLAB_VERSION;
    request.cellDone = cellProgress();
    auto outcome = runBatchJob(request, interruptToken());
    if (!outcome)
        return reportError(outcome.error());
    if (outcome->interrupted) {
        Error stopped = cancelledError();
        stopped.message = fmt::format("stopped; {} of {} cells not done (their runs are marked interrupted); run the "
                                      "same batch again to resume",
            outcome->interrupted, outcome->results.size());
        return reportError(stopped);
    }
    const std::string text = o.json ? toJson(*outcome, request).dump(2) + "\n" : renderBatchTable(*outcome, request);
    if (auto ok = writeOutput(text, ""); !ok)
        return reportError(ok.error());
    return outcome->failed ? kExitData : kExitOk;
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
