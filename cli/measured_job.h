// SPDX-License-Identifier: MIT
#pragma once

// The end of `drive` and `profile`: their job run against the command's database with a progress bar,
// where its two runs went, and its report as JSON or as a table.

#include "commands.h"
#include "interrupts.h"
#include "progress_bar.h"
#include "run_store.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab::cli {

// `job(request, db, progress, stop)` returns an Expected report with predictionRun, measuredRun and a
// toJson overload; `table(report)` renders it for people.
template <class Request, class Options, class Job, class Table>
int runMeasuredJob(const Request& request, const Options& o, const char* label, Job job, Table table) {
    auto db = o.db.open();
    if (!db)
        return reportError(db.error());
    ProgressBar bar(label);
    auto report = job(request, db->get(), &bar, interruptToken());
    if (!report)
        return reportError(report.error());
    if (report->measuredRun && report->predictionRun)
        fmt::print(stderr, "stored as runs {} (prediction) and {} (measured) in {}\n", report->predictionRun,
            report->measuredRun, o.db.resolvedPath());
    else if (report->measuredRun)
        fmt::print(stderr, "stored as run {} (measured, with its predictions) in {}\n", report->measuredRun,
            o.db.resolvedPath());
    return printOutput(o.json ? toJson(*report).dump(2) + "\n" : table(*report), o.output);
}

} // namespace layoutlab::cli
