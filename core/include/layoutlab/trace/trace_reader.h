// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/expected.h"
#include "layoutlab/trace/request.h"

#include <span>
#include <string>

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
};

} // namespace layoutlab
