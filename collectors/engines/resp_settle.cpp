// SPDX-License-Identifier: MIT
// Waiting for a Valkey or Redis server to settle before its memory is read. A keyspace that has just
// crossed a power of two holds two tables while it rehashes incrementally (dict.c / hashtable.c): the
// server's cron finishes the work within a few hundred milliseconds of the load, and only then does
// used_memory show what the keyspace will keep. The allocator's figures (allocator_allocated and
// allocator_active) must hold still too: they move for a while after used_memory stops (the thread cache
// and the client's buffers, which used_memory does not count the same way).

#include "layoutlab/collect/resp_driver.h"

#include <fmt/format.h>
#include <sstream>
#include <thread>
#include <vector>

namespace layoutlab {

namespace {

// The value after `name` in MEMORY STATS (a flat list of names and values, one per line).
std::optional<std::uint64_t> statsField(const std::string& stats, std::string_view name) {
    std::istringstream lines(stats);
    std::string line;
    while (std::getline(lines, line))
        if (line == name && std::getline(lines, line) && !line.empty()
            && line.find_first_not_of("0123456789") == std::string::npos)
            return std::stoull(line);
    return std::nullopt;
}

enum class Rehash { No, Yes, Unknown };

// MEMORY STATS db.dict.rehashing.count (Valkey 8.0 and later counts the keyspace and expires tables
// that rehash, in every database); Redis 7.x has no such field, but DEBUG HTSTATS names a table
// "rehashing target" while it rehashes (dict.c dictGetStatsMsg, hashtable.c hashtableGetStatsMsg), asked of
// each database INFO keyspace lists (server.c databasesCron rehashes each in turn). DEBUG may be disabled
// (enable-debug-command): then the server cannot tell.
Rehash rehashState(RespClient& client, bool& debugRefused) {
    if (auto stats = client.command({ "MEMORY", "STATS" }); stats)
        if (const auto count = statsField(*stats, "db.dict.rehashing.count"))
            return *count == 0 ? Rehash::No : Rehash::Yes;
    if (debugRefused)
        return Rehash::Unknown;
    std::vector<std::string> databases { "0" };
    if (auto keyspace = client.info("keyspace"); keyspace)
        for (const auto& [name, value] : *keyspace) // db0:keys=3,expires=0,avg_ttl=0
            if (name.rfind("db", 0) == 0 && name != "db0")
                databases.push_back(name.substr(2));
    for (const std::string& db : databases) {
        auto htstats = client.command({ "DEBUG", "HTSTATS", db });
        if (!htstats) {
            debugRefused = true;
            return Rehash::Unknown;
        }
        if (htstats->find("rehashing target") != std::string::npos)
            return Rehash::Yes;
    }
    return Rehash::No;
}

} // namespace

Expected<std::optional<std::uint64_t>> memoryStatsField(RespClient& client, std::string_view name) {
    auto stats = client.command({ "MEMORY", "STATS" });
    if (!stats)
        return stats.error();
    return statsField(*stats, name);
}

std::string SettleReport::describe() const {
    if (settled)
        return fmt::format("settled after {:.1f} s ({}; used_memory{} steady)", seconds,
            rehashKnown ? "no table rehashing" : "the server does not tell whether it rehashes",
            memory.allocatorActive ? " and the allocator's figures" : "");
    return fmt::format("gave up waiting after {:.1f} s: {}; measured as it stood", seconds,
        stillRehashing ? "a table was still rehashing" : "its memory figures kept changing");
}

Expected<SettleReport> waitUntilSettled(RespClient& client, const SettleOptions& options) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    SettleReport report;
    bool debugRefused = false;
    std::uint32_t steady = 0;
    std::optional<MemoryFigures> last;
    while (true) {
        const Rehash rehash = rehashState(client, debugRefused);
        report.rehashKnown = rehash != Rehash::Unknown;
        report.stillRehashing = rehash == Rehash::Yes;
        auto figures = memoryFigures(client);
        if (!figures)
            return figures.error();
        steady = (last && *last == *figures) ? steady + 1 : 0;
        last = *figures;
        report.memory = *figures;
        report.usedMemory = figures->usedMemory;
        report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (rehash != Rehash::Yes && steady + 1 >= options.stablePolls) {
            report.settled = true;
            return report;
        }
        if (Clock::now() - start >= options.limit)
            return report;
        if (options.stop.stop_requested())
            return cancelledError();
        std::this_thread::sleep_for(options.pollInterval);
    }
}

} // namespace layoutlab
