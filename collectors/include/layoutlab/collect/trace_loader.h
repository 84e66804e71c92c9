// SPDX-License-Identifier: MIT
#pragma once

// Loading a trace into a real server, batch by batch: the part the RESP and memcached loaders share.
// Each engine says how a request becomes its commands and how a batch is sent; this counts, keeps the
// run phase's keys, times the load and says how far it got when the server refuses a batch.

#include "layoutlab/collect/trace_keys.h"
#include "layoutlab/trace/restamped_trace.h"
#include "layoutlab/trace/trace_reader.h"

#include <chrono>
#include <fmt/format.h>
#include <functional>
#include <stop_token>
#include <unordered_map>

namespace layoutlab {

// What a load did.
struct LoadReport {
    std::uint64_t requests = 0; // read from the trace
    std::uint64_t commands = 0; // sent
    std::uint64_t reads = 0; // GETs and others the load phase does not send
    std::uint64_t batches = 0; // round trips of `pipeline` commands
    bool namesRepeat = false; // some key sizes were too small to name every key apart
    std::uint64_t elements = 0; // element requests (Op::Element) sent as collection commands
    std::uint64_t elementsApproximated = 0; // ... whose text could not match (ElementCommandWriter::approximated)
    std::uint64_t elementsUnmatched = 0; // ... removing or updating an element of a shape the key did not hold
    std::uint64_t snapshotBytes = 0; // an RDB file loaded by the server itself (loadSnapshotFile): its bytes
    std::int64_t snapshotLoadedAt = 0; // ... and when (Unix seconds): keys that had expired by then are dropped
    std::uint64_t refusedReplies = 0; // a capture sent as captured (loadCapturedCommands): the error replies
    // A HyperLogLog's sparse changes (Op::SetRange of kHyperLogLogKind) a trace's load could not send.
    std::uint64_t hyperLogLogStepsNotSent = 0;
    double seconds = 0;
    std::vector<RunKey> readKeys; // the trace's reads in order, up to the loader's keepReads
    // The load's clock: when it began, and each batch's first request with the milliseconds since then it
    // was sent at (RestampedTrace): the server's clock as its TTLs read it.
    std::chrono::steady_clock::time_point started;
    std::vector<ClockPoint> clock;
};

// Where a trace keeps its keys (Op::Resize of kKeyDatabase): database 0 unless placed in another; and the names
// they are sent by: each key id's own (traceKeyName), but for a key moved from another database (a rename pair
// across databases: MOVE), which keeps the name it had there.
class KeyDatabases {
public:
    std::string nameOf(const Request& r) const {
        if (!m_names.empty()) [[unlikely]]
            if (const auto it = m_names.find(r.keyId); it != m_names.end())
                return it->second;
        return traceKeyName(r.keyId, r.keyBytes);
    }
    // `keyId` is the value MOVE took to its database under `name`.
    void movedAs(std::uint32_t keyId, std::string name) { m_names[keyId] = std::move(name); }
    // Notes `r` if it places its key.
    void see(const Request& r) {
        if (r.op == Op::Resize && r.valueBytes == kKeyDatabase) [[unlikely]] {
            if (r.ttlSeconds == 0)
                m_databases.erase(r.keyId);
            else
                m_databases[r.keyId] = r.ttlSeconds;
        }
    }
    std::uint32_t of(std::uint32_t keyId) const {
        if (m_databases.empty()) [[likely]]
            return 0;
        const auto it = m_databases.find(keyId);
        return it == m_databases.end() ? 0 : it->second;
    }

private:
    std::unordered_map<std::uint32_t, std::uint32_t> m_databases; // the keys placed elsewhere than database 0
    std::unordered_map<std::uint32_t, std::string> m_names; // the keys a MOVE named
};

// Reads `trace` in batches. Each request is counted and its key size checked (KeyNameCheck):
// - a GET keeps its key name for the run phase (the first `keepReads` of them) and is not sent, nor is
//   any other read; with `databases` (an engine that has them), which follows the trace's placements, only
//   the GETs of database 0's keys are kept (the run phase reads database 0);
// - every other request becomes commands through `translate(request, keyName, commands)`, which may refuse it
//   (a Status).
// `send(commands)` sends one batch's commands, `pipeline` per round trip; an error it returns is
// annotated with how many requests the load had read. `progress` gets the requests read so far.
template <class Command, class Translate, class Send>
Expected<LoadReport> loadInBatches(TraceReader& trace, std::size_t pipeline, std::size_t keepReads,
    const std::function<void(std::uint64_t)>& progress, std::stop_token stop, Translate&& translate, Send&& send,
    KeyDatabases* databases = nullptr) {
    constexpr std::size_t kBatchRequests = 4096;
    LoadReport report;
    report.started = std::chrono::steady_clock::now();
    std::vector<Command> commands;
    commands.reserve(kBatchRequests);
    KeyNameCheck names(trace.keyIdLimit());
    auto loaded = forEachBatch(trace, kBatchRequests, stop, [&](std::span<const Request> batch) -> Status {
        const std::uint64_t first = report.requests + 1;
        for (const Request& r : batch) {
            ++report.requests;
            names.see(r.keyBytes);
            if (r.op == Op::Other) {
                ++report.reads;
                continue;
            }
            if (databases)
                databases->see(r);
            std::string key = databases ? databases->nameOf(r) : traceKeyName(r.keyId, r.keyBytes);
            if (r.op == Op::Get) {
                if (report.readKeys.size() < keepReads && (!databases || databases->of(r.keyId) == 0))
                    report.readKeys.push_back({ std::move(key), r.valueBytes });
                ++report.reads;
                continue;
            }
            if (auto ok = translate(r, std::move(key), commands); !ok) {
                Error e = ok.error();
                e.message += fmt::format(" (load phase: request {} of the trace)", report.requests);
                return e;
            }
        }
        report.clock.push_back({ first,
            static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - report.started)
                    .count()) });
        if (auto ok = send(commands); !ok) {
            Error e = ok.error();
            e.message += fmt::format(" (load phase: after {} of the trace's requests)", report.requests);
            return e;
        }
        report.commands += commands.size();
        report.batches += (commands.size() + pipeline - 1) / std::max<std::size_t>(pipeline, 1);
        commands.clear();
        if (progress)
            progress(report.requests);
        return Ok {};
    });
    if (!loaded)
        return loaded.error();
    report.namesRepeat = names.repeats();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - report.started).count();
    return report;
}

} // namespace layoutlab
