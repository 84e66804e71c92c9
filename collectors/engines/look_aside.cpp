// SPDX-License-Identifier: MIT
#include "layoutlab/collect/look_aside.h"

#include "layoutlab/collect/trace_keys.h"

#include <charconv>
#include <chrono>
#include <fmt/format.h>
#include <thread>

namespace layoutlab {

namespace {

// The server's clock now, in milliseconds: the wall clock's Unix time, its seconds begun `phase` later.
std::uint64_t serverMillisecondNow(std::chrono::nanoseconds phase) {
    const auto now = std::chrono::system_clock::now().time_since_epoch() - phase;
    return static_cast<std::uint64_t>(std::chrono::floor<std::chrono::milliseconds>(now).count());
}

// The server's clock as the simulator takes it: when each batch went out.
class ClockRecord {
public:
    ClockRecord(LookAsideReport& report, std::chrono::nanoseconds phase)
        : m_report(report)
        , m_phase(phase) { }
    void sendingFrom(std::uint64_t requestNumber) {
        const std::uint64_t now = serverMillisecondNow(m_phase);
        if (m_report.clock.empty() || m_report.clock.back().timeMs != now)
            m_report.clock.push_back({ requestNumber, now });
    }

private:
    LookAsideReport& m_report;
    std::chrono::nanoseconds m_phase;
};

} // namespace

Expected<LookAsideReport> driveLookAside(LookAsideConnection& client, TraceReader& trace, std::size_t batch,
    const std::function<void(std::uint64_t)>& progress, std::stop_token stop, std::chrono::nanoseconds secondPhase) {
    if (batch == 0)
        return usageError("a look-aside drive needs batches of at least one request");
    LookAsideReport report;
    ClockRecord clock(report, secondPhase);
    std::vector<std::uint32_t> lastSize; // by key id: the value size last written (0: never)
    // A batch's key names, which its requests and fills view: reserved once, so that they never move.
    std::vector<std::string> names;
    names.reserve(batch);
    std::vector<KeyRequest> requests;
    std::vector<KeyRequest> fills;
    const auto started = std::chrono::steady_clock::now();
    std::vector<Request> chunk(batch);
    while (true) {
        if (stop.stop_requested())
            return cancelledError();
        // A whole batch, whatever pieces the reader hands out: the simulator fills after every `batch` requests.
        std::size_t got = 0;
        while (got < batch) {
            auto part = trace.read(std::span<Request>(chunk).subspan(got));
            if (!part)
                return part.error();
            if (*part == 0)
                break;
            got += *part;
        }
        const std::size_t n = got;
        if (got == 0)
            break;
        names.clear();
        requests.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const Request& r = chunk[i];
            const std::uint64_t number = report.requests + i + 1;
            if (r.op == Op::Element)
                return dataError(fmt::format(
                    "request {}: a look-aside drive sends GETs, SETs and DELs; this trace holds collection keys "
                    "(hashes, sets, sorted sets, lists): start the server with --maxmemory yourself and drive the "
                    "trace into it with --connect, beside `sim --maxmemory` (docs/validation.md, \"Collection keys "
                    "under a budget\")",
                    number));
            if (r.op != Op::Get && r.op != Op::Set && r.op != Op::Delete)
                return dataError(fmt::format(
                    "request {}: a look-aside drive sends GETs, SETs and DELs, not {}", number, opName(r.op)));
            if (r.op == Op::Set && (r.ttlSeconds == kKeepTtl || r.kind != ValueKind::String))
                return dataError(fmt::format(
                    "request {}: a look-aside drive sends string SETs (with or without a TTL), not KEEPTTL or integers",
                    number));
            if (r.keyId >= lastSize.size())
                lastSize.resize(std::max<std::size_t>(std::size_t { r.keyId } + 1, lastSize.size() * 2));
            if (r.op == Op::Set || (r.op == Op::Get && r.valueBytes != 0))
                lastSize[r.keyId] = r.valueBytes;
            names.push_back(traceKeyName(r.keyId, r.keyBytes));
            requests.push_back({ names.back(), r.valueBytes, r.op == Op::Set, r.op == Op::Delete,
                r.op == Op::Set ? r.ttlSeconds : 0 });
            report.gets += r.op == Op::Get ? 1 : 0;
            report.sets += r.op == Op::Set ? 1 : 0;
            report.deletes += r.op == Op::Delete ? 1 : 0;
        }
        clock.sendingFrom(report.requests + 1);
        if (auto ok = client.send(requests); !ok)
            return ok.error();
        auto outcomes = client.receive(requests);
        if (!outcomes)
            return outcomes.error();
        fills.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const auto outcome = (*outcomes)[i];
            if (outcome == RequestOutcome::OutOfMemory)
                ++report.refusedWrites;
            if (!requests[i].set && !requests[i].del) {
                if (outcome == RequestOutcome::Done) {
                    ++report.hits;
                } else if (lastSize[chunk[i].keyId] == 0 && chunk[i].valueBytes == 0) {
                    ++report.unfillableMisses;
                } else {
                    fills.push_back({ names[i], chunk[i].valueBytes ? chunk[i].valueBytes : lastSize[chunk[i].keyId],
                        true, false });
                }
            }
        }
        report.requests += n;
        if (!fills.empty()) {
            if (auto ok = client.send(fills); !ok)
                return ok.error();
            auto filled = client.receive(fills);
            if (!filled)
                return filled.error();
            for (const auto outcome : *filled)
                report.refusedWrites += outcome == RequestOutcome::OutOfMemory ? 1 : 0;
            report.fills += fills.size();
        }
        if (progress)
            progress(report.requests);
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

Expected<MemcachedClock> memcachedSecondPhase(MemcachedClient& client) {
    // memcached.c server_stats: "uptime" is current_time less a constant, so it changes when the timer does.
    auto uptime = [&]() -> Expected<std::string> {
        auto stats = client.stats();
        if (!stats)
            return stats.error();
        const auto it = stats->find("uptime");
        if (it == stats->end())
            return dataError("memcached's stats have no uptime");
        return it->second;
    };
    auto first = uptime();
    if (!first)
        return first.error();
    constexpr auto kPoll = std::chrono::milliseconds(2);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(kPoll);
        auto now = uptime();
        if (!now)
            return now.error();
        if (*now != *first) { // the tick came within the last poll: its phase in the wall clock's second
            MemcachedClock clock;
            const auto since = std::chrono::system_clock::now().time_since_epoch();
            clock.phase = since % std::chrono::seconds(1);
            clock.second = static_cast<std::uint64_t>(std::chrono::floor<std::chrono::seconds>(since).count());
            std::from_chars(now->data(), now->data() + now->size(), clock.uptime); // 0 if it is not a number
            return clock;
        }
    }
    return dataError("memcached's clock (stats uptime) did not move in 2.5 seconds");
}

} // namespace layoutlab
