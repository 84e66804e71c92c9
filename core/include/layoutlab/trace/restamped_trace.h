// SPDX-License-Identifier: MIT
#pragma once

// A trace read with each request's time replaced by the clock it was sent to a server on. A drive sends a
// trace far faster than it was recorded, and the server reads its own clock: keys set with a TTL expire,
// and the LRU and LFU clocks advance, by the time the drive took, not by the trace's. The drive records
// when each batch of requests went out, as clock points (LookAsideReport::clock, LoadReport::clock); its
// prediction replays the trace through this reader, so that the replay's expiries and the budget's clocks
// read the times the server read.

#include "layoutlab/trace/trace_reader.h"

#include <vector>

namespace layoutlab {

// From request `request` (counted from 1) on, the clock read `timeMs`.
struct ClockPoint {
    std::uint64_t request = 1;
    std::uint64_t timeMs = 0;
    bool operator==(const ClockPoint&) const = default;
};

class RestampedTrace final : public TraceReader {
public:
    // `points`: ascending by request; a request before the first takes the first's time.
    RestampedTrace(TraceReader& inner, std::vector<ClockPoint> points)
        : m_inner(inner)
        , m_points(std::move(points)) { }

    Expected<std::size_t> read(std::span<Request> out) override {
        auto n = m_inner.read(out);
        if (!n)
            return n;
        for (std::size_t i = 0; i < *n; ++i) {
            ++m_done;
            while (m_next + 1 < m_points.size() && m_points[m_next + 1].request <= m_done)
                ++m_next;
            out[i].timeMs = m_points.empty() ? 0 : m_points[m_next].timeMs;
        }
        return n;
    }
    std::uint64_t totalRequests() const override { return m_inner.totalRequests(); }
    std::uint64_t keyIdLimit() const override { return m_inner.keyIdLimit(); }
    std::string name() const override { return m_inner.name(); }

private:
    TraceReader& m_inner;
    std::vector<ClockPoint> m_points;
    std::uint64_t m_done = 0; // requests read
    std::size_t m_next = 0; // into m_points: the last one begun
};

} // namespace layoutlab
