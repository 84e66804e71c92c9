// SPDX-License-Identifier: MIT
#pragma once

// RESP client for Valkey and Redis over hiredis: commands as argument vectors, pipelined batches.

#include "layoutlab/collect/trace_keys.h"
#include "layoutlab/expected.h"

#include <chrono>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;

namespace layoutlab {

class RespClient {
public:
    static Expected<RespClient> connect(const std::string& host, std::uint16_t port);
    RespClient(RespClient&& other) noexcept;
    ~RespClient();

    // One command; the reply as text (status, string, integer as decimal, nil as empty, an array's
    // elements one per line).
    Expected<std::string> command(const std::vector<std::string>& argv);
    // Many commands pipelined, `batch` per round trip; fails on the first error reply, unless `errorReplies`
    // is given: error replies are then counted there (a workload that means to run commands the server
    // refuses), and every reply is read.
    Status pipeline(std::span<const std::vector<std::string>> commands, std::size_t batch = 512,
        std::uint64_t* errorReplies = nullptr);
    // The requests (GETs, and SETs of their value size), written pipelined; receiveRequests() then reads
    // their replies and returns how many GETs were hits.
    Status sendRequests(std::span<const KeyRequest> requests);
    Expected<std::uint64_t> receiveRequests(std::span<const KeyRequest> requests);
    // What each request got (any error but OOM fails).
    using Outcome = RequestOutcome;
    Expected<std::vector<Outcome>> receiveOutcomes(std::span<const KeyRequest> requests);
    // How long a reply may take before the call fails (10 s from connect); a server loading a large snapshot
    // answers only once it is done.
    void setReplyTimeout(std::chrono::seconds timeout);
    // INFO [section] parsed into field -> value.
    Expected<std::map<std::string, std::string>> info(const std::string& section);

private:
    // The next reply's type (hiredis REDIS_REPLY_*), an error reply's text in `errorText`.
    Expected<int> nextReplyType(std::string& errorText);
    explicit RespClient(redisContext* context)
        : m_context(context) { }
    redisContext* m_context = nullptr;
    std::string m_getBuffer; // getMany's formatted commands, reused
};

} // namespace layoutlab
