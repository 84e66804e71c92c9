// SPDX-License-Identifier: MIT
#pragma once

// Decodes a trace on a second thread while the caller works on the batch before: reading a binary trace
// and replaying it (or counting its statistics) then overlap instead of taking turns. Requests, their
// order and any error come out exactly as the wrapped reader gives them.

#include "layoutlab/trace/trace_reader.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace layoutlab {

class DecodeAheadReader final : public TraceReader {
public:
    explicit DecodeAheadReader(std::unique_ptr<TraceReader> inner);
    ~DecodeAheadReader() override;
    DecodeAheadReader(const DecodeAheadReader&) = delete;
    DecodeAheadReader& operator=(const DecodeAheadReader&) = delete;

    Expected<std::size_t> read(std::span<Request> out) override;
    std::uint64_t totalRequests() const override { return m_totalRequests; }
    std::uint64_t keyIdLimit() const override { return m_keyIdLimit; }
    std::string name() const override { return m_name; }

private:
    struct Batch {
        std::vector<Request> requests;
        std::size_t count = 0;
        std::optional<Error> error; // the wrapped reader failed after `count` requests
        bool last = false; // nothing follows this batch
    };
    void decode(std::stop_token stop);

    std::unique_ptr<TraceReader> m_inner;
    std::uint64_t m_totalRequests = 0;
    std::uint64_t m_keyIdLimit = 0;
    std::string m_name;

    std::mutex m_mutex;
    std::condition_variable_any m_changed;
    std::vector<std::unique_ptr<Batch>> m_free; // batches the decoder may fill
    std::vector<std::unique_ptr<Batch>> m_ready; // filled, in trace order (front first)
    std::size_t m_readyFront = 0;
    // The batch being handed out, and how far.
    std::unique_ptr<Batch> m_current;
    std::size_t m_offset = 0;
    bool m_finished = false; // the last batch was handed out
    std::jthread m_thread; // last: started once everything above exists
};

} // namespace layoutlab
