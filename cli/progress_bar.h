// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/sim/simulation.h"

#include <chrono>
#include <functional>

namespace layoutlab::cli {

// A one-line progress bar on stderr, shown only when stderr is a terminal.
class ProgressBar final : public ProgressSink {
public:
    explicit ProgressBar(std::string label);
    ~ProgressBar() override;
    void progress(double fraction, std::uint64_t done) override;
    bool enabled() const { return m_enabled; }

private:
    std::string m_label;
    bool m_enabled = false;
    bool m_drawn = false;
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastDraw;
};

// Passes a trace through, telling a ProgressSink how far it is (`fraction` returns [0, 1], or < 0 when
// unknown) every 64 batches.
class ProgressReader final : public TraceReader {
public:
    ProgressReader(TraceReader& inner, ProgressSink& sink, std::function<double(std::uint64_t done)> fraction)
        : m_inner(inner)
        , m_sink(sink)
        , m_fraction(std::move(fraction)) { }
    Expected<std::size_t> read(std::span<Request> out) override {
        auto n = m_inner.read(out);
        if (n)
            advance(*n);
        return n;
    }
    Expected<std::span<const Request>> borrow(std::size_t max) override {
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

    TraceReader& m_inner;
    ProgressSink& m_sink;
    std::function<double(std::uint64_t)> m_fraction;
    std::uint64_t m_done = 0;
    std::uint64_t m_calls = 0;
};

} // namespace layoutlab::cli
