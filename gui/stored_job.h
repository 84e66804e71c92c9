// SPDX-License-Identifier: MIT
#pragma once

// Glue between the task runner and the stored jobs of the core (layoutlab/store/jobs.h).

#include "task_runner.h"

#include "layoutlab/store/results_db.h"

#include <memory>

namespace layoutlab::gui {

// An error in the GUI's words: its field named by the form's label for it (thresholds → "Thresholds").
inline QString errorText(Error error) {
    static const std::pair<const char*, const char*> kLabels[] = {
        { field::kThreshold, "Threshold" },
        { field::kThresholds, "Thresholds" },
        { field::kCacheGeometry, "Cache geometry" },
        { field::kLayout, "Layout" },
        { field::kFormat, "Format" },
        { field::kKeys, "Keys" },
        { field::kOps, "Operations" },
        { field::kKeySize, "Key size" },
        { field::kValueSize, "Value size" },
        { field::kTtlFraction, "TTL fraction" },
        { field::kIntValues, "Integer values" },
        { field::kGetFraction, "GET fraction" },
        { field::kDeleteFraction, "DELETE fraction" },
        { field::kPopularity, "Popularity" },
        { field::kEngine, "Engine" },
        { field::kAllocator, "Allocator" },
        { field::kCounters, "Counters" },
        { field::kConnect, "Attach to" },
        { field::kFraming, "Framing" },
        { field::kPipeline, "Load pipeline" },
        { field::kConnections, "Connections" },
        { field::kRunPipeline, "Pipeline" },
        { field::kRunSeconds, "Run seconds" },
        { field::kEngineSource, "Valkey source" },
        { field::kBuildThresholds, "Thresholds to build" },
        { field::kEngineBuilds, "Builds" },
        { field::kServerSettings, "Slab settings" },
        { field::kMaxmemory, "Budgets" },
        { field::kMemoryLimit, "Budgets" },
        { field::kEvictionPolicy, "Policy" },
        { field::kSampleRate, "Sample rate" },
    };
    for (const auto& [name, label] : kLabels)
        if (error.field == name)
            error.field = label;
    if (error.tag == kTagSkippableInput && error.message.ends_with(" input)"))
        error.message.insert(error.message.size() - 1,
            "; fix or remove the line, or skip bad lines with the command "
            "line's layoutlab import --on-error=skip");
    if (const auto at = error.message.find("; name it ("); error.tag == kTagFormatUnknown && at != std::string::npos)
        error.message.insert(at + 9, " with the command line's layoutlab import --format, then open what it writes");
    if (error.tag == kTagRemoteHost)
        error.message += " (the command line's layoutlab drive --allow-remote can; the Engine view attaches to "
                         "this host only)";
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
