// SPDX-License-Identifier: MIT
// `layoutlab drive` against Debian's real redis-server, started by layoutlab itself on 127.0.0.1 and a
// free port: measured bytes per key within 1% of the prediction on several key/value shapes (values on
// both sides of the 44-byte EMBSTR limit, with and without TTL, integers, a mixed trace with deletes),
// the runs stored, and clear errors for what cannot be measured.

#include "child_process.h"
#include "cli_runner.h"
#include "drive_traces.h"
#include "layoutlab/collect/server_process.h"

#include <arpa/inet.h>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

// The same lookup `drive` makes: PATH, then /usr/sbin and /usr/bin.
bool installed(const std::string& binary) {
    return layoutlab::findExecutable(binary).has_value();
}

// The server's port, from its command line: "--port N" as started, or "redis-server HOST:PORT" once
// redis has rewritten its process title.
int portOf(pid_t server) {
    std::ifstream cmdline("/proc/" + std::to_string(server) + "/cmdline");
    std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    std::istringstream split(all);
    for (std::string a; std::getline(split, a, '\0');)
        args.push_back(a);
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--port")
            return std::stoi(args[i + 1]);
    std::istringstream words(all.substr(0, all.find('\0')));
    for (std::string word; words >> word;)
        if (const auto colon = word.rfind(':'); colon != std::string::npos && colon + 1 < word.size()
            && word.find_first_not_of("0123456789", colon + 1) == std::string::npos)
            return std::stoi(word.substr(colon + 1));
    return 0;
}

// DBSIZE over a plain socket; -1 when the server does not answer.
long dbsize(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long n = -1;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        const char request[] = "*1\r\n$6\r\nDBSIZE\r\n";
        char reply[64] = {};
        if (::send(fd, request, sizeof request - 1, 0) > 0 && ::recv(fd, reply, sizeof reply - 1, 0) > 1
            && reply[0] == ':')
            n = std::atol(reply + 1);
    }
    ::close(fd);
    return n;
}

class DriveTest : public layoutlab::test::CliTestBase {
protected:
    void SetUp() override {
        CliTestBase::SetUp();
        if (!installed("redis-server"))
            GTEST_SKIP() << "redis-server is not installed (scripts/install-deps installs it)";
    }
};

TEST_F(DriveTest, MeasuredBytesPerKeyWithinOnePercentOfThePrediction) {
    auto shapes = layoutlab::test::respDriveTraces();
    shapes.insert(shapes.end(),
        {
            { "v16", { "--keys", "60000", "--ops", "0", "--key-size", "16", "--value-size", "16" } },
            { "v44-ttl",
                { "--keys", "60000", "--ops", "0", "--key-size", "16", "--value-size", "44", "--ttl-fraction", "1" } },
            { "v45", { "--keys", "60000", "--ops", "0", "--key-size", "16", "--value-size", "45" } },
            { "v300-ttl",
                { "--keys", "40000", "--ops", "0", "--key-size", "24", "--value-size", "300", "--ttl-fraction",
                    "0.5" } },
            { "ints",
                { "--keys", "60000", "--ops", "0", "--key-size", "16", "--value-size", "8", "--int-values", "1" } },
            { "mixed",
                { "--keys", "30000", "--ops", "60000", "--key-size", "lognormal:3.3:0.45:6:200", "--value-size",
                    "lognormal:4.3:1.2:1:20000", "--ttl-fraction", "0.2", "--get-fraction", "0.5", "--delete-fraction",
                    "0.1", "--popularity", "zipf:0.9" } },
        });
    for (const auto& shape : shapes) {
        const auto trace = gen(std::string(shape.name) + ".lltrace", shape.genArgs);
        const auto r = run({ "drive", trace, "--engine", "redis", "--json", "--no-db" });
        ASSERT_EQ(r.exitCode, 0) << shape.name << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        for (const char* field : { "measured_bytes_per_key", "predicted_bytes_per_key", "relative_error", "load",
                 "samples", "used_memory_before", "used_memory_after", "server_keys", "predicted_keys" })
            EXPECT_TRUE(j.contains(field)) << field;
        EXPECT_EQ(j["engine"], "redis");
        EXPECT_EQ(j["allocator"], "jemalloc:quantum=16,page=4096") << "Debian's redis links Debian's jemalloc";
        EXPECT_EQ(j["server_keys"], j["predicted_keys"]) << shape.name;
        EXPECT_TRUE(j["settled"]["settled"].get<bool>()) << shape.name;
        EXPECT_TRUE(j["settled"]["rehash_known"].get<bool>())
            << shape.name << ": DEBUG HTSTATS tells Redis's rehashing";
        const double error = j["relative_error"];
        EXPECT_LT(std::abs(error), 0.01) << shape.name << ": measured " << j["measured_bytes_per_key"] << ", predicted "
                                         << j["predicted_bytes_per_key"];
        std::printf("drive redis %-9s measured %7.2f predicted %7.2f B/key (%+.3f%%)\n", shape.name,
            j["measured_bytes_per_key"].get<double>(), j["predicted_bytes_per_key"].get<double>(), 100 * error);
    }
}

// A capture with FLUSHALL: its keys deleted and the tables freed whole (db.c emptyData), which the drive sends
// as the deletes and a FLUSHDB; the keys written after it grow new tables, as the prediction has them.
TEST_F(DriveTest, AFlushInACaptureFreesTheTablesOnTheServerAndInThePrediction) {
    const std::string capture = path("flush.monitor");
    {
        std::ofstream out(capture);
        std::uint64_t second = 1700000000;
        auto line = [&](const std::string& args) { out << second++ << ".000000 [0 127.0.0.1:5555] " << args << "\n"; };
        for (int i = 0; i < 20000; ++i)
            line(fmt::format("\"SET\" \"key:{}\" \"{}\"", i, std::string(10 + i % 60, 'v')));
        line("\"FLUSHALL\"");
        for (int i = 0; i < 4500; ++i) // above a tenth of the old table: no cron shrinks it (htNeedsResize)
            line(fmt::format("\"SET\" \"after:{}\" \"{}\" \"EX\" \"100000\"", i, std::string(5 + i % 90, 'w')));
    }
    const auto r = run({ "drive", capture, "--engine", "redis", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["server_keys"], 4500);
    EXPECT_EQ(j["server_keys"], j["predicted_keys"]);
    // The table sized for the 20,000 keys before the flush (32,768 buckets) would be a third of the whole.
    EXPECT_LT(std::abs(j["relative_error"].get<double>()), 0.01)
        << "measured " << j["measured_bytes_per_key"] << ", predicted " << j["predicted_bytes_per_key"];
}

// A capture of several databases, driven as its trace: each key sent to its own database (SELECT), a MOVE as
// MOVE, a FLUSHDB of one database freeing its tables only. The server's tables are one per database, sized
// apart, and so are the prediction's (one table of all the keys would take 32,768 buckets where the server's
// take 16,384 + 1,024 + 4,096).
TEST_F(DriveTest, EachDatabaseIsDrivenIntoItsOwnTables) {
    const std::string capture = path("databases.monitor");
    {
        std::ofstream out(capture);
        std::uint64_t second = 1700000000;
        auto line = [&](int db, const std::string& args) {
            out << second++ << ".000000 [" << db << " 127.0.0.1:5555] " << args << "\n";
        };
        for (int i = 0; i < 9000; ++i)
            line(0, fmt::format("\"SET\" \"key:{}\" \"{}\"", i, std::string(10 + i % 60, 'v')));
        for (int i = 0; i < 5000; ++i)
            line(1,
                fmt::format(
                    "\"SET\" \"key:{}\" \"{}\"{}", i, std::string(5 + i % 40, 'w'), i % 2 ? " \"EX\" \"100000\"" : ""));
        for (int i = 0; i < 3000; ++i)
            line(3, fmt::format("\"HSET\" \"h:{}\" \"f1\" \"{}\" \"f2\" \"x\"", i, i));
        for (int i = 0; i < 2000; i += 2)
            line(0, fmt::format("\"MOVE\" \"key:{}\" \"3\"", i));
        line(1, "\"FLUSHDB\"");
        for (int i = 0; i < 700; ++i)
            line(1, fmt::format("\"SET\" \"again:{}\" \"{}\"", i, i * 7919));
    }
    const auto r = run({ "drive", capture, "--engine", "redis", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["server_keys"], 8000 + 700 + 4000);
    EXPECT_EQ(j["server_keys"], j["predicted_keys"]);
    EXPECT_LT(std::abs(j["relative_error"].get<double>()), 0.01)
        << "measured " << j["measured_bytes_per_key"] << ", predicted " << j["predicted_bytes_per_key"];
}

// A capture sent as it was captured (--as-captured): HyperLogLogs, whose growth a trace cannot carry, in two
// databases; the connection's own commands, a blocking pop and a script's call left out and counted; the
// server's refusal counted. The prediction is the import's.
TEST_F(DriveTest, ACaptureSentAsCapturedGrowsHyperLogLogsAsItDid) {
    const std::string capture = path("hll.monitor");
    {
        std::ofstream out(capture);
        std::uint64_t second = 1700000000;
        auto line = [&](int db, const std::string& args) {
            out << second++ << ".000000 [" << db << " 127.0.0.1:5555] " << args << "\n";
        };
        out << "OK\n";
        for (int i = 0; i < 3000; ++i) {
            std::string add = fmt::format("\"PFADD\" \"hll:{}\"", i);
            for (int e = 0; e < (i % 9) * (i % 7) * 4; ++e)
                add += fmt::format(" \"e{}-{}\"", i % 50, e);
            line(i % 5 == 0 ? 1 : 0, add);
        }
        line(0, "\"PFMERGE\" \"m\" \"hll:1\" \"hll:2\"");
        line(0, "\"SELECT\" \"1\"");
        line(0, "\"BLPOP\" \"queue\" \"0\"");
        line(0, "\"EVAL\" \"return 1\" \"0\"");
        line(0, "\"SET\" \"n\" \"12\"");
        line(0, "\"PFADD\" \"n\" \"x\""); // refused: not a HyperLogLog
    }
    const auto r = run({ "drive", capture, "--engine", "redis", "--as-captured", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["server_keys"], 3002);
    EXPECT_EQ(j["server_keys"], j["predicted_keys"]);
    EXPECT_LT(std::abs(j["relative_error"].get<double>()), 0.01)
        << "measured " << j["measured_bytes_per_key"] << ", predicted " << j["predicted_bytes_per_key"];
    EXPECT_EQ(j["load"]["refused_replies"], 1);
    EXPECT_EQ(j["load"]["captured_commands_not_sent"].size(), 3u) << j["load"].dump();
    // The same capture's trace: its sparse forms' growth cannot be sent, and says so.
    const auto asTrace = run({ "drive", capture, "--engine", "redis", "--json", "--no-db" });
    ASSERT_EQ(asTrace.exitCode, 0) << asTrace.err;
    EXPECT_GT(nlohmann::json::parse(asTrace.out)["load"]["hyperloglog_changes_not_sent"].get<long>(), 0);
    // Only a MONITOR capture can be sent as captured.
    const auto generated = gen("g.lltrace", { "--keys", "10", "--ops", "0" });
    const auto refused = run({ "drive", generated, "--engine", "redis", "--as-captured", "--no-db" });
    EXPECT_EQ(refused.exitCode, 2) << refused.err;
    EXPECT_NE(refused.err.find("--as-captured"), std::string::npos) << refused.err;
}

TEST_F(DriveTest, StoresThePredictionAndTheMeasuredRun) {
    const auto trace = gen("small.lltrace", { "--keys", "5000", "--ops", "0", "--value-size", "100" });
    const auto r = run({ "drive", trace, "--engine", "redis" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("bytes per key"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("raw"), std::string::npos) << "100-byte values are raw in Redis: " << r.out;
    const auto runs = nlohmann::json::parse(run({ "db", "list", "--json" }).out);
    ASSERT_EQ(runs.size(), 2u);
    std::set<std::string> kinds;
    for (const auto& run : runs) {
        kinds.insert(run["kind"].get<std::string>());
        EXPECT_EQ(run["status"], "complete");
    }
    EXPECT_EQ(kinds, (std::set<std::string> { "sim", "drive" }));
    const auto shown = run({ "db", "show", "2" });
    EXPECT_NE(shown.out.find("bytes_per_key"), std::string::npos) << shown.out;
}

TEST_F(DriveTest, RunPhaseReportsThroughputLatencyAndClientCpu) {
    for (const char* engine : { "redis", "memcached" }) {
        if (!installed(std::string(engine) == "redis" ? "redis-server" : "memcached"))
            continue;
        // The seed trace reads keys it has set: every GET hits.
        const auto r = run({ "drive", seedTrace(), "--engine", engine, "--json", "--no-db", "--run-requests", "20000",
            "--connections", "2", "--run-pipeline", "8" });
        ASSERT_EQ(r.exitCode, 0) << engine << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        ASSERT_TRUE(j["run"].is_object()) << engine;
        const auto& phase = j["run"];
        EXPECT_EQ(phase["requests"], 20000) << engine;
        EXPECT_EQ(phase["hits"], 20000) << engine;
        EXPECT_EQ(phase["connections"], 2);
        EXPECT_EQ(phase["pipeline"], 8);
        EXPECT_GT(j["ops_per_sec"].get<double>(), 0) << engine;
        const auto& latency = phase["latency_us"];
        EXPECT_GT(latency["p50"].get<double>(), 0);
        EXPECT_LE(latency["p50"].get<double>(), latency["p99"].get<double>());
        EXPECT_LE(latency["p99"].get<double>(), latency["p99.9"].get<double>());
        EXPECT_GT(phase["client_cpu_seconds"].get<double>(), 0);
        // A quarter SETs: every GET still hits, and the SETs are counted apart.
        const auto mixed = run({ "drive", seedTrace(), "--engine", engine, "--json", "--no-db", "--run-requests",
            "20000", "--run-set-fraction", "0.25" });
        ASSERT_EQ(mixed.exitCode, 0) << mixed.err;
        const auto m = nlohmann::json::parse(mixed.out)["run"];
        const auto sets = m["sets"].get<std::uint64_t>();
        EXPECT_GT(sets, 4000u) << engine;
        EXPECT_LT(sets, 6000u) << engine;
        EXPECT_EQ(m["hits"].get<std::uint64_t>(), 20000 - sets) << engine;
        const auto none = run({ "drive", seedTrace(), "--engine", engine, "--json", "--no-db", "--run-requests", "0" });
        ASSERT_EQ(none.exitCode, 0) << none.err;
        EXPECT_TRUE(nlohmann::json::parse(none.out)["ops_per_sec"].is_null());
    }
}

TEST_F(DriveTest, AServerKilledMidLoadFailsTheRunsAndKeepsWhatWasStored) {
    ASSERT_EQ(run({ "sim", seedTrace(), "--layout", "redis-7.0" }).exitCode, 0); // stored before
    // Large enough that the load takes seconds.
    const auto trace = gen("big.lltrace", { "--keys", "1500000", "--ops", "0", "--value-size", "100" });
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, path("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, path("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const pid_t drive = layoutlab::test::spawnCli({ "drive", trace, "--engine", "redis" }, &actions);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_GT(drive, 0);
    pid_t server = 0;
    for (int i = 0; i < 500 && server == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        server = layoutlab::test::childOf(drive);
    }
    ASSERT_GT(server, 0) << "drive started no server";
    // Into the load phase: keys are arriving.
    int port = 0;
    for (int i = 0; i < 500 && port == 0; ++i) { // the server may be restarted if it lost its port
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        server = layoutlab::test::childOf(drive);
        port = server ? portOf(server) : 0;
    }
    ASSERT_GT(port, 0) << "child " << server << ": " << [&] {
        std::ifstream c("/proc/" + std::to_string(server) + "/cmdline");
        std::string all((std::istreambuf_iterator<char>(c)), std::istreambuf_iterator<char>());
        for (auto& ch : all)
            ch = ch == '\0' ? ' ' : ch;
        return all;
    }();
    long keys = 0;
    for (int i = 0; i < 1000 && keys < 1000; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        keys = dbsize(port);
    }
    ASSERT_GE(keys, 1000) << "the load did not start";
    ::kill(server, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(drive, &status, 0), drive);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    std::ifstream errFile(path("err"));
    const std::string err((std::istreambuf_iterator<char>(errFile)), std::istreambuf_iterator<char>());
    EXPECT_NE(err.find("layoutlab: error:"), std::string::npos) << err;
    EXPECT_NE(err.find("the server exited"), std::string::npos) << err;
    const auto runs = nlohmann::json::parse(run({ "db", "list", "--json" }).out);
    ASSERT_EQ(runs.size(), 3u);
    std::map<std::string, std::string> statusByKind;
    for (const auto& r : runs)
        statusByKind[r["kind"].get<std::string>() + (r["id"] == 1 ? "-before" : "")] = r["status"];
    EXPECT_EQ(statusByKind["sim-before"], "complete");
    EXPECT_EQ(statusByKind["sim"], "failed");
    EXPECT_EQ(statusByKind["drive"], "failed");
    const auto check = run({ "db", "list" });
    EXPECT_EQ(check.exitCode, 0);
}

TEST_F(DriveTest, WhatCannotBeMeasuredGetsAClearError) {
    const auto trace = gen("tiny.lltrace", { "--keys", "100", "--ops", "0" });
    // Nothing listens on a port we just closed.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    const int port = ntohs(addr.sin_port);
    ::close(fd);
    struct Case {
        std::vector<std::string> args;
        int exitCode;
        const char* mentions;
    };
    const std::vector<Case> cases {
        { { "--connect", "127.0.0.1:" + std::to_string(port) }, 1, "cannot connect" },
        { { "--connect", "192.0.2.1:6379" }, 2, "--allow-remote" },
        { { "--server-binary", path("no-such-server") }, 1, "no-such-server" },
        { { "--server-binary", "/bin/true" }, 1, "did not start listening" },
    };
    for (const auto& c : cases) {
        std::vector<std::string> args { "drive", trace, "--engine", "redis", "--no-db" };
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto r = run(args);
        EXPECT_EQ(r.exitCode, c.exitCode) << c.args.front() << ": " << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << r.err;
    }
    const auto bad = run({ "drive", trace, "--engine", "mongodb", "--no-db" });
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("--engine"), std::string::npos) << bad.err;
}

TEST_F(DriveTest, MemcachedChunksPerClassEqualThePredictionForEveryFraming) {
    if (!installed("memcached"))
        GTEST_SKIP() << "memcached is not installed (scripts/install-deps installs it)";
    // Sizes from 1 byte to 300 kB (chunked items above slab_chunk_max), TTLs, deletes.
    const auto trace = gen("mc.lltrace",
        { "--keys", "15000", "--ops", "30000", "--key-size", "lognormal:3.3:0.45:6:200", "--value-size",
            "lognormal:5:1.5:1:300000", "--ttl-fraction", "0.2", "--get-fraction", "0.5", "--delete-fraction", "0.1" });
    for (const char* framing : { "raw", "marshal-utf8", "rails-7.1" }) {
        const auto r = run({ "drive", trace, "--engine", "memcached", "--framing", framing, "--json", "--no-db" });
        ASSERT_EQ(r.exitCode, 0) << framing << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["server_keys"], j["predicted_keys"]) << framing;
        ASSERT_GT(j["classes"].size(), 10u) << framing;
        for (const auto& c : j["classes"])
            EXPECT_EQ(c["measured_chunks"], c["predicted_chunks"])
                << framing << ", " << c["chunk_bytes"] << "-byte class";
        EXPECT_LT(std::abs(j["relative_error"].get<double>()), 1e-9) << framing;
    }
}

TEST_F(DriveTest, MarshalFramingMovesSmallValuesUpAClassOnTheRealServer) {
    if (!installed("memcached"))
        GTEST_SKIP() << "memcached is not installed (scripts/install-deps installs it)";
    // The Dalli case: 16-byte keys with 64-byte values sit in the 152-byte class raw, one class up framed.
    const auto trace = gen("v64.lltrace", { "--keys", "5000", "--ops", "0", "--key-size", "16", "--value-size", "64" });
    double bytes[2] = {};
    int i = 0;
    for (const char* framing : { "raw", "marshal-utf8" }) {
        const auto r = run({ "drive", trace, "--engine", "memcached", "--framing", framing, "--json", "--no-db" });
        ASSERT_EQ(r.exitCode, 0) << r.err;
        bytes[i++] = nlohmann::json::parse(r.out)["measured_bytes_per_key"].get<double>();
    }
    EXPECT_EQ(bytes[0], 152.0);
    EXPECT_EQ(bytes[1], 192.0);
    const auto wrong = run({ "drive", trace, "--engine", "redis", "--framing", "marshal-utf8", "--no-db" });
    EXPECT_EQ(wrong.exitCode, 2);
    EXPECT_NE(wrong.err.find("--framing"), std::string::npos) << wrong.err;
}

} // namespace

namespace {
// Whether `pid` is gone (or a zombie nobody reaped yet).
bool processGone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return true;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Waits up to five seconds for `done`.
template <class F> bool within5s(F done) {
    for (int i = 0; i < 500; ++i) {
        if (done())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
}
} // namespace

// SIGINT stops drive and marks its runs interrupted; SIGKILL, which drive cannot see, still takes its
// server (PR_SET_PDEATHSIG) and its temporary directory (the janitor) with it.
TEST_F(DriveTest, ServersAndDirectoriesGoWithDriveHoweverItEnds) {
    const auto trace = gen("big.lltrace", { "--keys", "1500000", "--ops", "0", "--value-size", "100" });
    for (const int signal : { SIGINT, SIGKILL }) {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 2, path("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const pid_t drive = layoutlab::test::spawnCli({ "drive", trace, "--engine", "redis" }, &actions);
        posix_spawn_file_actions_destroy(&actions);
        ASSERT_GT(drive, 0);
        pid_t server = 0;
        int port = 0;
        for (int i = 0; i < 1000 && port == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            server = layoutlab::test::childOf(drive);
            port = server ? portOf(server) : 0;
        }
        ASSERT_GT(port, 0) << "drive started no server";
        std::error_code ec;
        const auto workDir = std::filesystem::read_symlink("/proc/" + std::to_string(server) + "/cwd", ec);
        ASSERT_FALSE(ec) << ec.message();
        ASSERT_TRUE(std::filesystem::is_directory(workDir));
        long keys = 0;
        for (int i = 0; i < 1000 && keys < 1000; ++i) { // into the load
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            keys = dbsize(port);
        }
        ::kill(drive, signal);
        int status = 0;
        ASSERT_EQ(::waitpid(drive, &status, 0), drive);
        if (signal == SIGINT) {
            ASSERT_TRUE(WIFEXITED(status));
            EXPECT_EQ(WEXITSTATUS(status), 130);
            const auto err = layoutlab::test::slurp(path("err"));
            EXPECT_NE(err.find("interrupted by SIGINT"), std::string::npos) << err;
            EXPECT_NE(err.find("marked interrupted"), std::string::npos) << err;
        }
        EXPECT_TRUE(within5s([&] { return processGone(server); }))
            << "the server outlived drive (signal " << signal << ")";
        EXPECT_TRUE(within5s([&] { return !std::filesystem::exists(workDir); }))
            << workDir << " outlived drive (signal " << signal << ")";
    }
    const auto runs = nlohmann::json::parse(run({ "db", "list", "--json" }).out);
    ASSERT_EQ(runs.size(), 4u);
    EXPECT_EQ(runs[0]["status"], "interrupted");
    EXPECT_EQ(runs[1]["status"], "interrupted");
    EXPECT_EQ(runs[2]["status"], "running"); // killed outright: nobody could mark it
    EXPECT_EQ(runs[2]["live"], false); // but its owner is known to be gone
}
