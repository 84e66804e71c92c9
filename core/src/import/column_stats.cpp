// SPDX-License-Identifier: MIT
// The statistics of a binary trace, counted from its columns (countTraceColumns in import_stats.h).
#include "layoutlab/import/import_stats.h"
#include "layoutlab/progress.h"
#include "layoutlab/trace/batch_pipeline.h"
#include "layoutlab/trace/trace_file.h"

namespace layoutlab {

namespace {
// Blocks read ahead together: 16 blocks of 4096 requests, about 0.5 MB of columns, so that the threads
// meet once per 65,536 requests.
constexpr std::size_t kBlocksPerBatch = 16;
constexpr std::size_t kBatches = 3; // one being counted, one ready, one being read

struct ColumnBatch {
    std::vector<std::vector<unsigned char>> storage = std::vector<std::vector<unsigned char>>(kBlocksPerBatch);
    std::vector<RequestColumns> blocks;
    std::optional<Error> error; // reading failed after these blocks
};

// Counts blocks as `next` hands them out (nullopt at the end), checking `stop` and telling `progress`.
template <class Next>
Expected<TraceStats> countBlocks(
    TraceFileReader& trace, ProgressSink* progress, const std::stop_token& stop, Next&& next) {
    StatsCounter stats;
    const std::uint64_t total = trace.totalRequests();
    std::uint64_t done = 0;
    for (std::uint64_t blocks = 1;; ++blocks) {
        if (stop.stop_requested()) {
            Error e = cancelledError();
            e.file = trace.name();
            return e;
        }
        Expected<std::optional<RequestColumns>> columns = next();
        if (!columns)
            return columns.error();
        if (!*columns)
            break;
        stats.count(**columns);
        done += (*columns)->count;
        if (progress && blocks % 64 == 0)
            progress->progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
    }
    TraceStats counted = stats.stats();
    counted.format = "layoutlab";
    return counted;
}
} // namespace

Expected<TraceStats> countTraceColumns(
    TraceFileReader& trace, bool readAhead, ProgressSink* progress, std::stop_token stop) {
    if (!readAhead) {
        std::vector<unsigned char> storage;
        return countBlocks(trace, progress, stop, [&] { return trace.readColumns(storage); });
    }
    BatchPipeline<ColumnBatch> pipeline(kBatches, [&trace](ColumnBatch& batch) {
        batch.blocks.clear();
        batch.error.reset();
        for (auto& storage : batch.storage) {
            auto columns = trace.readColumns(storage);
            if (!columns)
                batch.error = columns.error();
            if (!columns || !*columns)
                return false;
            batch.blocks.push_back(**columns);
        }
        return true;
    });
    std::unique_ptr<ColumnBatch> batch;
    std::size_t next = 0;
    return countBlocks(trace, progress, stop, [&]() -> Expected<std::optional<RequestColumns>> {
        while (!batch || next == batch->blocks.size()) {
            if (batch && batch->error)
                return *batch->error;
            if (batch)
                pipeline.recycle(std::move(batch));
            batch = pipeline.next();
            next = 0;
            if (!batch)
                return std::optional<RequestColumns>();
        }
        return std::optional<RequestColumns>(batch->blocks[next++]);
    });
}

} // namespace layoutlab
