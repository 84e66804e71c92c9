// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/progress.h"
#include "layoutlab/trace/trace_reader.h"

#include <functional>
#include <stop_token>

namespace layoutlab {

// Passes a trace through, telling a ProgressSink how far it is (`fraction` returns [0, 1], or < 0 when
// unknown) every 64 batches. A stop request ends the stream with ErrorCode::Cancelled.
class ProgressReader final : public TraceReader {
public:
    ProgressReader(TraceReader& inner, ProgressSink& sink, std::function<double(std::uint64_t done)> fraction,
        std::stop_token stop = {})
        : m_inner(inner)
        , m_sink(sink)
        , m_fraction(std::move(fraction))
        , m_stop(std::move(stop)) { }
    Expected<std::size_t> read(std::span<Request> out) override {
        if (m_stop.stop_requested())
            return cancelled();
        auto n = m_inner.read(out);
        if (n)
            advance(*n);
        return n;
    }
    Expected<std::span<const Request>> borrow(std::size_t max) override {
        if (m_stop.stop_requested())
            return cancelled();
        auto requests = m_inner.borrow(max);
        if (requests)
            advance(requests->size());
        return requests;
    }
    std::uint64_t totalRequests() const override { return m_inner.totalRequests(); }
    std::uint64_t keyIdLimit() const override { return m_inner.keyIdLimit(); }
    std::string name() const override { return m_inner.name(); }

private:
    void advance(std::size_t n) {
        if (n == 0)
            return;
        m_done += n;
        if (++m_calls % 64 == 0)
            m_sink.progress(m_fraction(m_done), m_done);
    }
    Error cancelled() const {
        Error e = cancelledError();
        e.file = m_inner.name();
        return e;
    }

    TraceReader& m_inner;
    ProgressSink& m_sink;
    std::function<double(std::uint64_t)> m_fraction;
    std::stop_token m_stop;
    std::uint64_t m_done = 0;
    std::uint64_t m_calls = 0;
};

} // namespace layoutlab
