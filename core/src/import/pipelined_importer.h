// SPDX-License-Identifier: MIT
#pragma once

// A text importer on two threads: one parses lines (splitting fields), the caller's thread gives the
// parsed requests their key ids and value sizes and hands them out, while the next batch is parsed.
// The keys are hashed by whichever of the two has time to spare, batch by batch. Requests, ids, rejects
// and errors are those of the importer run on one thread.

#include "layoutlab/trace/batch_pipeline.h"
#include "line_importer.h"

#include <atomic>

namespace layoutlab {

class PipelinedImporter final : public Importer {
public:
    explicit PipelinedImporter(std::unique_ptr<LineImporter> inner);

    Expected<std::size_t> read(std::span<Request> out) override { return m_batches.read(out); }
    Expected<std::span<const Request>> borrow(std::size_t max) override { return m_batches.borrow(max); }
    std::uint64_t totalRequests() const override { return m_inner->totalRequests(); }
    std::uint64_t keyIdLimit() const override { return m_inner->keyIdLimit(); }
    std::string name() const override { return m_name; }
    std::string formatName() const override { return m_formatName; }
    // The parser's count; complete once read() has returned the end (or an error).
    const RejectReport& rejects() const override { return m_inner->rejects(); }
    double progress() const override { return m_progress.load(std::memory_order_relaxed); }

private:
    std::unique_ptr<LineImporter> m_inner;
    std::string m_name;
    std::string m_formatName;
    std::atomic<double> m_progress { 0 };
    BatchReader<LineImporter::ParsedBatch> m_batches; // last: its thread uses everything above
};

} // namespace layoutlab
