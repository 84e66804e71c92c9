// SPDX-License-Identifier: MIT
#pragma once

// A trace read with each request's time replaced by the wall clock it was sent to a server on. A drive
// sends a trace far faster than it was recorded, and the server reads its own clock: keys set with a TTL
// expire, and the LRU and LFU clocks advance, by the seconds the drive took, not by the trace's. The drive
// records the second its first request went out and the request numbers at which each following second
// began (LookAsideReport), and its prediction replays the trace through this reader, so that the replay's
// expiries and the budget's clocks read the seconds the server read.

#include "layoutlab/trace/trace_reader.h"

#include <vector>

namespace layoutlab {

class RestampedTrace final : public TraceReader {
public:
    // `secondStarts`: the request numbers (from 1), ascending, at which each second after `startSecond`
    // began; a request before the first is in `startSecond`.
    RestampedTrace(TraceReader& inner, std::uint64_t startSecond, std::vector<std::uint64_t> secondStarts)
        : m_inner(inner)
        , m_startSecond(startSecond)
        , m_secondStarts(std::move(secondStarts)) { }

    Expected<std::size_t> read(std::span<Request> out) override {
        auto n = m_inner.read(out);
        if (!n)
            return n;
        for (std::size_t i = 0; i < *n; ++i) {
            ++m_done;
            while (m_next < m_secondStarts.size() && m_secondStarts[m_next] <= m_done)
                ++m_next;
            out[i].timeMs = (m_startSecond + m_next) * 1000;
        }
        return n;
    }
    std::uint64_t totalRequests() const override { return m_inner.totalRequests(); }
    std::uint64_t keyIdLimit() const override { return m_inner.keyIdLimit(); }
    std::string name() const override { return m_inner.name(); }

private:
    TraceReader& m_inner;
    std::uint64_t m_startSecond;
    std::vector<std::uint64_t> m_secondStarts;
    std::uint64_t m_done = 0; // requests read
    std::size_t m_next = 0; // into m_secondStarts: the seconds begun so far
};

} // namespace layoutlab
