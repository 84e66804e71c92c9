// SPDX-License-Identifier: MIT
#pragma once

// Decodes a trace on a second thread while the caller works on the batch before: reading a binary trace
// and replaying it (or counting its statistics) then overlap instead of taking turns. Requests, their
// order and any error come out exactly as the wrapped reader gives them.

#include "layoutlab/trace/batch_pipeline.h"
#include "layoutlab/trace/trace_reader.h"

#include <optional>

namespace layoutlab {

class DecodeAheadReader final : public TraceReader {
public:
    explicit DecodeAheadReader(std::unique_ptr<TraceReader> inner);

    Expected<std::size_t> read(std::span<Request> out) override;
    Expected<std::span<const Request>> borrow(std::size_t max) override { return m_batches.borrow(max); }
    std::uint64_t totalRequests() const override { return m_totalRequests; }
    std::uint64_t keyIdLimit() const override { return m_keyIdLimit; }
    std::string name() const override { return m_name; }

private:
    struct Batch {
        std::vector<Request> requests;
        std::optional<Error> error; // the wrapped reader failed after these requests
        bool last = false; // nothing follows this batch
    };
    bool decode(Batch& batch);

    std::unique_ptr<TraceReader> m_inner;
    std::uint64_t m_totalRequests = 0;
    std::uint64_t m_keyIdLimit = 0;
    std::string m_name;
    BatchReader<Batch> m_batches; // last: its thread uses everything above
};

} // namespace layoutlab
