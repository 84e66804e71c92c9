// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/expected.h"
#include "layoutlab/trace/request.h"

#include <span>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

// A stream of requests, read in batches. Nothing holds a whole trace in memory.
class TraceReader {
public:
    virtual ~TraceReader() = default;

    // Fills `out` from the front; returns how many were read, 0 at the end of the trace.
    virtual Expected<std::size_t> read(std::span<Request> out) = 0;
    // Total requests in the trace, 0 if unknown (progress uses it).
    virtual std::uint64_t totalRequests() const = 0;
    // One more than the largest key id, 0 if unknown (lets the simulator size its key array once).
    virtual std::uint64_t keyIdLimit() const = 0;
    virtual std::string name() const = 0;

    // The next requests, at most `max`, without copying them where the reader already holds them
    // decoded (a batch decoded ahead on another thread). Valid until the next call; empty at the end.
    // The default reads into a buffer of the reader's own.
    virtual Expected<std::span<const Request>> borrow(std::size_t max) {
        m_borrowed.resize(max);
        auto n = read(m_borrowed);
        if (!n)
            return n.error();
        return std::span<const Request>(m_borrowed.data(), *n);
    }

private:
    std::vector<Request> m_borrowed;
};

// Calls `apply(batch)` (returning Status) for each batch of at most `max` requests, borrowed, until the
// trace ends. Stops at the first error: the reader's, apply's, or Cancelled when `stop` is requested.
template <class Apply> Status forEachBatch(TraceReader& trace, std::size_t max, std::stop_token stop, Apply&& apply) {
    while (true) {
        if (stop.stop_requested())
            return cancelledError();
        auto batch = trace.borrow(max);
        if (!batch)
            return batch.error();
        if (batch->empty())
            return Ok {};
        if (auto ok = apply(*batch); !ok)
            return ok;
    }
}

} // namespace layoutlab
