// SPDX-License-Identifier: MIT
#pragma once

// Glue between the task runner and the stored jobs of the core (layoutlab/store/jobs.h).

#include "task_runner.h"

#include "layoutlab/store/results_db.h"

#include <memory>

namespace layoutlab::gui {

// An error as the CLI words it (the CLI prefixes "layoutlab: error: ").
inline QString errorText(const Error& error) {
    return QString::fromStdString(error.describe());
}

// Work for the task runner: opens the results database at `databasePath` (none when empty), runs
// `job(ResultsDb*, ProgressSink&, std::stop_token)`, which returns an Expected<T>, and keeps its value in
// `*out` for the finished() handler.
template <class T, class Job> TaskRunner::Work storedJob(std::string databasePath, std::shared_ptr<T> out, Job job) {
    return [databasePath = std::move(databasePath), out = std::move(out), job = std::move(job)](
               ProgressSink& progress, std::stop_token stop) -> QString {
        std::unique_ptr<ResultsDb> db;
        if (!databasePath.empty()) {
            auto opened = ResultsDb::open(databasePath);
            if (!opened)
                return errorText(opened.error());
            db = std::move(*opened);
        }
        auto result = job(db.get(), progress, stop);
        if (!result)
            return errorText(result.error());
        *out = std::move(*result);
        return {};
    };
}

} // namespace layoutlab::gui
