// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/trace/trace_reader.h"

#include <algorithm>
#include <string>
#include <vector>

namespace layoutlab {

// A trace held in memory: for tests, benchmarks and small hand-built workloads.
class MemoryTrace final : public TraceReader {
public:
    explicit MemoryTrace(std::vector<Request> requests, std::string name = "memory")
        : m_requests(std::move(requests))
        , m_name(std::move(name)) {
        for (const auto& r : m_requests)
            m_keyIdLimit = std::max<std::uint64_t>(m_keyIdLimit, std::uint64_t { r.keyId } + 1);
    }

    Expected<std::size_t> read(std::span<Request> out) override {
        const std::size_t n = std::min(out.size(), m_requests.size() - m_at);
        std::copy_n(m_requests.begin() + static_cast<std::ptrdiff_t>(m_at), n, out.begin());
        m_at += n;
        return n;
    }
    std::uint64_t totalRequests() const override { return m_requests.size(); }
    std::uint64_t keyIdLimit() const override { return m_keyIdLimit; }
    std::string name() const override { return m_name; }
    void rewind() { m_at = 0; }

private:
    std::vector<Request> m_requests;
    std::string m_name;
    std::size_t m_at = 0;
    std::uint64_t m_keyIdLimit = 0;
};

} // namespace layoutlab
