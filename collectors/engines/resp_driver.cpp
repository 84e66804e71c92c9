// SPDX-License-Identifier: MIT
#include "layoutlab/collect/resp_driver.h"

#include "layoutlab/collect/element_commands.h"

#include "layoutlab/import/input_stream.h"
#include "layoutlab/resources.h"
#include "layoutlab/sim/limit_sweep.h"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <sstream>

namespace layoutlab {

namespace {
// Calls `row(words)` for each row of the first `bins:` table of jemalloc's malloc_stats_print output, after
// `header(words)` with the table's header less its "bins:" (so that the header's column i is a row's
// word i); a row starts with its bin's size, "---" marks a run of unused bins, and the first line that is
// not a row ends the table. `header` returning false passes over the table.
template <class Header, class Row> void forEachBinRow(const std::string& mallocStats, Header&& header, Row&& row) {
    std::istringstream lines(mallocStats);
    bool inBins = false;
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::vector<std::string> words;
        for (std::string w; fields >> w;)
            words.push_back(w);
        if (!inBins) {
            if (words.empty() || words.front() != "bins:")
                continue;
            words.erase(words.begin());
            if (!header(words))
                return;
            inBins = true;
            continue;
        }
        if (!words.empty() && words.front() == "---")
            continue;
        if (words.empty() || words.front().find_first_not_of("0123456789") != std::string::npos)
            return;
        row(words);
    }
}
} // namespace

std::vector<std::uint64_t> parseJemallocBins(const std::string& mallocStats) {
    std::vector<std::uint64_t> sizes;
    forEachBinRow(
        mallocStats, [](const std::vector<std::string>&) { return true; },
        [&](const std::vector<std::string>& words) { sizes.push_back(std::stoull(words.front())); });
    return sizes;
}

std::vector<JemallocArenaModel::StartBin> parseJemallocStartBins(const std::string& mallocStats) {
    std::vector<JemallocArenaModel::StartBin> out;
    // The curregs, curslabs, nfills and nflushes columns (the thread caches' counters: 0 where a build
    // prints none).
    std::size_t regs = 0, slabs = 0, fills = 0, flushes = 0;
    auto header = [&](const std::vector<std::string>& columns) {
        for (std::size_t i = 0; i < columns.size(); ++i) {
            if (columns[i] == "curregs")
                regs = i;
            if (columns[i] == "curslabs")
                slabs = i;
            if (columns[i] == "nfills")
                fills = i;
            if (columns[i] == "nflushes")
                flushes = i;
        }
        return regs != 0 && slabs != 0; // else not the table this build prints
    };
    forEachBinRow(mallocStats, header, [&](const std::vector<std::string>& words) {
        if (words.size() <= std::max({ regs, slabs, fills, flushes }))
            return;
        auto counter = [&](std::size_t column) { return column != 0 ? std::stoull(words[column]) : 0ull; };
        const JemallocArenaModel::StartBin bin { std::stoull(words.front()), std::stoull(words[regs]),
            std::stoull(words[slabs]), counter(fills), counter(flushes) };
        if (bin.slabs > 0)
            out.push_back(bin);
    });
    return out;
}

std::string layoutForEngine(const std::string& engine, const std::string& version) {
    unsigned major = 0, minor = 0;
    if (std::sscanf(version.c_str(), "%u.%u", &major, &minor) != 2)
        return {};
    if (engine == "redis")
        return major != 7 ? std::string() : minor < 2 ? "redis-7.0" : "redis-7.2";
    if (engine == "valkey") {
        // server.h VALKEY_VERSION: development trees report 255.255.255 whatever their age, and two of
        // them ten days apart store keys differently: only what the build does can tell.
        if (major == 255)
            return {};
        if (major == 8 && minor == 0)
            return "valkey-8.0";
        if (major == 8)
            return "valkey-8.1";
        if (major == 9 && minor == 0)
            return "valkey-9.0";
        if (major == 9)
            return "valkey-9.1";
    }
    return {};
}

Expected<RespServerInfo> describeRespServer(RespClient& client) {
    RespServerInfo out;
    auto server = client.info("server");
    if (!server)
        return server.error();
    if (auto v = server->find("valkey_version"); v != server->end()) {
        out.engine = "valkey";
        out.version = v->second;
    } else if (auto r = server->find("redis_version"); r != server->end()) {
        out.engine = "redis";
        out.version = r->second;
    } else {
        return dataError("INFO server names neither valkey_version nor redis_version: not a Valkey or Redis server");
    }
    auto memory = client.info("memory");
    if (!memory)
        return memory.error();
    if (auto a = memory->find("mem_allocator"); a != memory->end())
        out.memAllocator = a->second;
    out.layout = layoutForEngine(out.engine, out.version);
    if (out.memAllocator.rfind("jemalloc", 0) == 0) {
        auto stats = client.command({ "MEMORY", "MALLOC-STATS" });
        if (!stats)
            return stats.error();
        out.binSizes = parseJemallocBins(*stats);
        if (out.binSizes.empty())
            return dataError("MEMORY MALLOC-STATS has no jemalloc bins table: cannot tell the build's size classes");
        // jemalloc's classes are spaced by the quantum up to 4 quanta (sc.c): a 24-byte class exists only
        // with an 8-byte quantum (Valkey's and Redis's bundled jemalloc); Debian's libjemalloc has 16.
        const bool has24 = std::find(out.binSizes.begin(), out.binSizes.end(), 24u) != out.binSizes.end();
        out.jemallocQuantum = has24 ? 8u : 16u;
        out.allocator = fmt::format("jemalloc:quantum={},page=4096", *out.jemallocQuantum);
    } else if (out.memAllocator.rfind("libc", 0) == 0) {
        out.allocator = "glibc";
    }
    return out;
}

Status warmUpCommands(RespClient& client) {
    const std::string key = "layoutlab:warm-up";
    const std::vector<std::vector<std::string>> commands { { "SET", key, "1", "EX", "1000" },
        { "SET", key, "2", "KEEPTTL" }, { "SET", key, "3", "NX" }, { "SET", key, "4", "XX" }, { "APPEND", key, "5" },
        { "EXPIRE", key, "1000" }, { "PERSIST", key }, { "DEL", key } };
    return client.pipeline(commands);
}

Status drainThreadCache(RespClient& client) {
    constexpr int kRounds = 600;
    constexpr std::size_t kValueBytes = 65536; // tcache.c opt_tcache_gc_incr_bytes
    const std::string key = "layoutlab:drain";
    const std::string value(kValueBytes, 'd');
    std::vector<std::vector<std::string>> commands;
    for (int i = 0; i < kRounds; ++i) {
        commands.push_back({ "SET", key, value });
        commands.push_back({ "DEL", key });
    }
    return client.pipeline(commands);
}

Expected<std::vector<JemallocArenaModel::StartBin>> readStartBins(RespClient& client) {
    auto stats = client.command({ "MEMORY", "MALLOC-STATS" });
    if (!stats)
        return stats.error();
    return parseJemallocStartBins(*stats);
}

Expected<MemoryFigures> memoryFigures(RespClient& client) {
    auto memory = client.info("memory");
    if (!memory)
        return memory.error();
    auto number = [&memory](const char* name) -> std::optional<std::uint64_t> {
        const auto it = memory->find(name);
        if (it == memory->end() || it->second.empty()
            || it->second.find_first_not_of("0123456789") != std::string::npos)
            return std::nullopt;
        return std::stoull(it->second);
    };
    const auto used = number("used_memory");
    if (!used)
        return dataError("INFO memory has no used_memory");
    return MemoryFigures { *used, number("allocator_allocated"), number("allocator_active"),
        number("mem_clients_normal") };
}

Expected<std::uint64_t> usedMemory(RespClient& client) {
    auto figures = memoryFigures(client);
    if (!figures)
        return figures.error();
    return figures->usedMemory;
}

Expected<std::uint64_t> keyCount(RespClient& client) {
    auto n = client.command({ "DBSIZE" });
    if (!n)
        return n.error();
    return std::stoull(*n);
}

Expected<CollectionLimits> applyCollectionLimits(RespClient& client, const CollectionLimits& limits) {
    const CollectionLimits defaults;
    CollectionLimits held;
    for (std::string_view name : allCollectionLimitNames()) {
        const std::string limit(name);
        if (const auto v = collectionLimit(limits, name); v != collectionLimit(defaults, name))
            if (auto set = client.command({ "CONFIG", "SET", limit, std::to_string(v) }); !set) {
                Error e = set.error();
                e.message = fmt::format("the server did not take {} {}: {}", limit, v, e.message);
                return e;
            }
        auto got = client.command({ "CONFIG", "GET", limit }); // "name\nvalue", or nothing when it has none
        if (!got)
            return got.error();
        if (const auto newline = got->find('\n'); newline != std::string::npos)
            setCollectionLimit(held, name, std::strtoll(got->c_str() + newline + 1, nullptr, 10));
    }
    return held;
}

Expected<std::uint64_t> keyCountAllDatabases(RespClient& client) {
    auto keyspace = client.info("keyspace");
    if (!keyspace)
        return keyspace.error();
    std::uint64_t keys = 0;
    for (const auto& [name, value] : *keyspace) // db0:keys=3,expires=0,avg_ttl=0 (server.c, INFO keyspace)
        if (name.rfind("db", 0) == 0 && value.rfind("keys=", 0) == 0)
            keys += std::strtoull(value.c_str() + 5, nullptr, 10);
    return keys;
}

namespace {
// Copies `from` (through InputStream: zstd decompressed) to `to` in 1 MiB pieces, checking the disk's room
// for each next 64 MiB before writing it.
Expected<std::uint64_t> copyDecompressed(const std::string& from, const std::string& to, std::stop_token stop) {
    constexpr std::uint64_t kCheckEvery = std::uint64_t { 64 } << 20;
    auto input = InputStream::open(from);
    if (!input)
        return input.error();
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(to.c_str(), "wb"), &std::fclose);
    if (!out)
        return ioError(fmt::format("cannot write the server's snapshot file {}", to));
    std::vector<char> piece(std::size_t { 1 } << 20);
    std::uint64_t written = 0, room = 0;
    while (true) {
        if (stop.stop_requested())
            return cancelledError();
        auto n = (*input)->read(piece.data(), piece.size());
        if (!n)
            return n.error();
        if (*n == 0)
            break;
        if (written + *n > room) {
            if (auto ok = checkFreeSpace(to, kCheckEvery, "the snapshot copied for the server"); !ok)
                return ok.error();
            room = written + kCheckEvery;
        }
        if (std::fwrite(piece.data(), 1, *n, out.get()) != *n)
            return ioError(fmt::format("cannot write the server's snapshot file {}", to));
        written += *n;
    }
    if (std::fflush(out.get()) != 0)
        return ioError(fmt::format("cannot write the server's snapshot file {}", to));
    return written;
}
// " (its header: REDIS0011)": the magic and RDB version the file starts with (rdb.c rdbSaveRio), which says
// which servers read it; empty when the file does not start so.
std::string rdbHeaderNote(const std::string& path) {
    char header[9] = {};
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "rb"), &std::fclose);
    const std::size_t n = in ? std::fread(header, 1, sizeof header, in.get()) : 0;
    const std::string_view text(header, n);
    if (text.size() != sizeof header || text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != text.npos)
        return {};
    return fmt::format(" (its header: {})", text);
}
} // namespace

Expected<LoadReport> loadSnapshotFile(
    RespClient& client, const std::string& rdbPath, const std::string& serverDir, std::stop_token stop) {
    const auto started = std::chrono::steady_clock::now();
    const std::string copy = serverDir + "/dump.rdb";
    auto bytes = copyDecompressed(rdbPath, copy, stop);
    if (!bytes)
        return bytes.error();
    // The server answers once the file is loaded: no reply timeout short of an hour stops a large one.
    client.setReplyTimeout(std::chrono::hours(1));
    const std::int64_t loadedAt
        = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto reloaded = client.command({ "DEBUG", "RELOAD", "NOSAVE" });
    client.setReplyTimeout(std::chrono::seconds(10));
    if (!reloaded) {
        Error e = reloaded.error();
        e.message = fmt::format("the server did not load {}{}: {}", rdbPath, rdbHeaderNote(copy), e.message);
        return e;
    }
    LoadReport report;
    report.commands = 1;
    report.snapshotBytes = *bytes;
    report.snapshotLoadedAt = loadedAt;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

Expected<LoadReport> loadCapturedCommands(RespClient& client, const std::string& capturePath, std::size_t pipeline,
    CapturedCommandSkips& skips, std::stop_token stop) {
    LoadReport report;
    report.started = std::chrono::steady_clock::now();
    constexpr std::size_t kBatchCommands = 4096;
    std::vector<std::vector<std::string>> batch;
    std::optional<std::uint32_t> db; // the connection's: a fresh one's is 0, an attached one's not known
    auto sendBatch = [&]() -> Status {
        if (auto ok = client.pipeline(batch, pipeline, &report.refusedReplies); !ok)
            return ok;
        report.commands += batch.size();
        report.batches += (batch.size() + pipeline - 1) / std::max<std::size_t>(pipeline, 1);
        batch.clear();
        return Ok {};
    };
    auto sent = forEachCapturedCommand(capturePath, skips, [&](const CapturedCommand& command) -> Status {
        if (stop.stop_requested())
            return cancelledError();
        ++report.requests;
        if (db != command.db) {
            batch.push_back({ "SELECT", std::to_string(command.db) });
            db = command.db;
        }
        batch.push_back(command.args);
        return batch.size() >= kBatchCommands ? sendBatch() : Status(Ok {});
    });
    if (!sent)
        return sent.error();
    if (auto ok = sendBatch(); !ok)
        return ok.error();
    if (db.value_or(0) != 0) // the measurements after the load count every database; the run phase reads db 0
        if (auto back = client.command({ "SELECT", "0" }); !back)
            return back.error();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - report.started).count();
    return report;
}

Expected<LoadReport> loadTrace(RespClient& client, TraceReader& trace, std::size_t pipeline, std::size_t keepReads,
    const CollectionLimits& limits, const std::function<void(std::uint64_t)>& progress, std::stop_token stop) {
    using Command = std::vector<std::string>;
    ElementCommandWriter elements(limits);
    std::uint64_t elementRequests = 0;
    std::uint64_t hyperLogLogStepsNotSent = 0;
    std::optional<std::pair<std::uint32_t, std::string>> renameSource; // a RENAME's first half
    // The databases the trace places keys in (loadInBatches follows its placements), and the connection's.
    KeyDatabases databases;
    std::uint32_t selected = 0;
    auto select = [&](std::uint32_t db, std::vector<Command>& commands) {
        if (db == selected)
            return;
        elements.flush(commands); // a collection command still held is its key's, in the database before
        commands.push_back({ "SELECT", std::to_string(db) });
        selected = db;
    };
    auto translate = [&](const Request& r, std::string key, std::vector<Command>& commands) -> Status {
        if (r.op == Op::Resize && r.valueBytes == kKeyDatabase)
            return Ok {}; // a key's database, which its requests are sent to
        // A rename's second half is sent in the source's database (MOVE's too).
        const bool renameDestination = r.op == Op::Rename && r.valueBytes != kRenameSource && renameSource;
        select(databases.of(renameDestination ? renameSource->first : r.keyId), commands);
        if (r.op == Op::Element) {
            ++elementRequests;
            return elements.write(r, key, commands);
        }
        elements.before(r, commands);
        auto withTtl = [&r](Command cmd) {
            if (r.ttlSeconds == kKeepTtl)
                cmd.push_back("KEEPTTL");
            else if (r.ttlSeconds != 0) {
                cmd.push_back("EX");
                cmd.push_back(std::to_string(r.ttlSeconds));
            }
            return cmd;
        };
        switch (r.op) {
        case Op::Set:
            commands.push_back(withTtl({ "SET", std::move(key), traceValue(r.valueBytes, r.kind, r.keyId) }));
            break;
        case Op::Add:
            commands.push_back(withTtl({ "SET", std::move(key), traceValue(r.valueBytes, r.kind, r.keyId), "NX" }));
            break;
        case Op::Replace:
            commands.push_back(withTtl({ "SET", std::move(key), traceValue(r.valueBytes, r.kind, r.keyId), "XX" }));
            break;
        case Op::Append:
        case Op::Prepend: // Redis has no PREPEND; the value grows the same
            commands.push_back({ "APPEND", std::move(key), traceValue(r.valueBytes, r.kind, r.keyId) });
            break;
        case Op::Incr:
        case Op::Decr:
            // The value becomes the result, valueBytes characters of `kind` (a string for INCRBYFLOAT); its
            // TTL stays. The trace holds the result, not the increment: a SET of it with KEEPTTL stores the
            // same object (shared, INT or a string) as INCR does (t_string.c incrDecrCommand).
            commands.push_back({ "SET", std::move(key), traceValue(r.valueBytes, r.kind, r.keyId), "KEEPTTL" });
            break;
        case Op::SetRange: // a range ending at valueBytes: the same unshare and growth as the original
            if (r.kind == kHyperLogLogKind) {
                // A HyperLogLog's change: its creation and its conversion to dense have commands of their own;
                // a sparse form's growth depends on the registers its elements hashed to, which a trace does
                // not hold (a capture sent --as-captured has them).
                if (r.valueBytes == kHyperLogLogDenseBytes)
                    commands.push_back({ "PFDEBUG", "TODENSE", std::move(key) });
                else if (r.valueBytes == kHyperLogLogCreatedBytes)
                    commands.push_back({ "PFADD", std::move(key) });
                else
                    ++hyperLogLogStepsNotSent;
                break;
            }
            commands.push_back(
                { "SETRANGE", std::move(key), std::to_string(std::max<std::uint32_t>(r.valueBytes, 1) - 1), "s" });
            break;
        case Op::Delete:
            commands.push_back({ "DEL", std::move(key) });
            break;
        case Op::Expire:
            commands.push_back({ "EXPIRE", std::move(key), std::to_string(std::max<std::uint32_t>(r.ttlSeconds, 1)) });
            break;
        case Op::Persist:
            commands.push_back({ "PERSIST", std::move(key) });
            break;
        case Op::Rename:
            if (r.valueBytes == kRenameSource) {
                renameSource.emplace(r.keyId, std::move(key));
            } else if (renameSource && r.valueBytes == kCopyDestination) {
                elements.copied(renameSource->first, r.keyId);
                commands.push_back({ "COPY", std::move(renameSource->second), std::move(key), "DB",
                    std::to_string(databases.of(r.keyId)), "REPLACE" });
                renameSource.reset();
            } else if (renameSource) {
                elements.renamed(renameSource->first, r.keyId);
                if (const std::uint32_t to = databases.of(r.keyId); to != selected) {
                    // Across databases: MOVE (db.c moveCommand), which keeps the source's name; the destination
                    // is known by it from now on. (A RENAME to the destination's name first would add a key
                    // to the source's table for a moment, which doubles a table just full on the lines that
                    // add before they delete.)
                    commands.push_back({ "MOVE", renameSource->second, std::to_string(to) });
                    databases.movedAs(r.keyId, std::move(renameSource->second));
                } else {
                    commands.push_back({ "RENAME", std::move(renameSource->second), std::move(key) });
                }
                renameSource.reset();
            }
            break;
        case Op::Resize:
            // A flush's tables, after its deletes: FLUSHDB frees them as FLUSHALL did (db.c emptyData). A
            // snapshot's tables are left for the server to size as keys arrive.
            if (r.valueBytes == kEmptiedTables)
                commands.push_back({ "FLUSHDB" });
            break;
        case Op::Get:
        case Op::Other: // reads: loadInBatches keeps them for the run phase
        case Op::Element: // above
            break;
        }
        return Ok {};
    };
    auto report = loadInBatches<Command>(
        trace, pipeline, keepReads, progress, stop, translate,
        [&](const std::vector<Command>& commands) { return client.pipeline(commands, pipeline); }, &databases);
    if (!report)
        return report;
    std::vector<Command> last;
    elements.flush(last); // a command the trace ended inside
    if (selected != 0) // the measurements count every database; the run phase reads database 0
        last.push_back({ "SELECT", "0" });
    if (auto ok = client.pipeline(last, pipeline); !ok)
        return ok.error();
    report->commands += last.size();
    report->elements = elementRequests;
    report->elementsApproximated = elements.approximated();
    report->elementsUnmatched = elements.unmatched();
    report->hyperLogLogStepsNotSent = hyperLogLogStepsNotSent;
    return report;
}

} // namespace layoutlab
