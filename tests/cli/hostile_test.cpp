// SPDX-License-Identifier: MIT
// The layoutlab command used as a careless or hostile user would: outputs pointed at devices, symlinks
// and directories; Ctrl-C and SIGTERM mid-run; traces that claim billions of keys; inputs that are
// pipes, FIFOs or /dev/zero; damaged traces; databases that are shared, foreign or locked; hostile
// names and bytes. One test per defect found that way (each failed before it was mended).

#include "cli_runner.h"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

using layoutlab::test::slurp;
using layoutlab::test::spawnCli;
namespace fs = std::filesystem;

struct TimedRun {
    int exitCode = -1; // -1: killed after the timeout
    std::string out;
    std::string err;
    double seconds = 0;
};

class HostileTest : public layoutlab::test::CliTestBase {
protected:
    // Runs the CLI with stdin from `stdinPath` (or /dev/null) and kills it after `timeoutSeconds`.
    TimedRun runTimed(
        std::vector<std::string> args, double timeoutSeconds, const std::string& stdinPath = "/dev/null") {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath.c_str(), O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 1, path("stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&actions, 2, path("stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const auto start = std::chrono::steady_clock::now();
        const pid_t pid = spawnCli(std::move(args), &actions);
        posix_spawn_file_actions_destroy(&actions);
        TimedRun r;
        r.exitCode = waitFor(pid, timeoutSeconds);
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        r.out = slurp(path("stdout"));
        r.err = slurp(path("stderr"));
        return r;
    }
    // The exit code (128 + signal when a signal ended it), or -1 after killing it at the timeout.
    static int waitFor(pid_t pid, double timeoutSeconds) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
        int status = 0;
        while (::waitpid(pid, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                ::kill(pid, SIGKILL);
                ::waitpid(pid, &status, 0);
                return -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::string longTrace() {
        return gen("long.lltrace",
            { "--keys", "500000", "--ops", "6000000", "--key-size", "uniform:8:64", "--value-size",
                "lognormal:4:1:1:4000" },
            "4");
    }
    // Starts `args` and waits until the results database lists `runs` runs (the command is then at
    // work), or 20 s.
    pid_t startAndWaitForRuns(std::vector<std::string> args, std::size_t runs) {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, path("bg.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&actions, 2, path("bg.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const pid_t pid = spawnCli(std::move(args), &actions);
        posix_spawn_file_actions_destroy(&actions);
        for (int i = 0; i < 4000; ++i) {
            const auto listed = run({ "db", "list", "--json" });
            if (listed.exitCode == 0 && nlohmann::json::parse(listed.out).size() >= runs)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return pid;
    }
    static std::string fmt(const char* pattern, int n) {
        std::string out = pattern;
        out.replace(out.find("{}"), 2, std::to_string(n));
        return out;
    }
    nlohmann::json runs() const { return nlohmann::json::parse(run({ "db", "list", "--json" }).out); }

    // A twitter-format trace fed through a FIFO: the first part at once, the rest when release() is called.
    // A command reading it is at work (blocked on its input) for as long as the test wants.
    class FifoTrace {
    public:
        explicit FifoTrace(const std::string& fifo)
            : m_fifo(fifo) {
            EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
            const std::string text = slurp(LAYOUTLAB_DATASETS_DIR "/samples/mixed.twitter.csv");
            m_writer = std::thread([this, text] {
                std::ofstream out(m_fifo, std::ios::binary);
                out << text << std::flush;
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, [this] { return m_released; });
                out << text;
            });
        }
        ~FifoTrace() {
            release();
            // Open the FIFO without waiting for a writer (a writer that finished makes this read end at
            // once; one still writing, or waiting for a reader, is drained to its end).
            const int fd = ::open(m_fifo.c_str(), O_RDONLY | O_NONBLOCK);
            if (fd >= 0) {
                ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
                char buffer[65536];
                while (::read(fd, buffer, sizeof buffer) > 0) { }
                ::close(fd);
            }
            m_writer.join();
        }
        void release() {
            std::lock_guard lock(m_mutex);
            m_released = true;
            m_wake.notify_all();
        }

    private:
        std::string m_fifo;
        std::thread m_writer;
        std::mutex m_mutex;
        std::condition_variable m_wake;
        bool m_released = false;
    };
};

// 1. Outputs were replaced by rename whatever they were: /dev/full became a regular file, a symlink to
//    standard output was replaced.
TEST_F(HostileTest, OutputsReplaceOnlyRegularFiles) {
    const auto seed = seedTrace();
    // A device: written through, so /dev/full says it is full, and stays a device.
    auto r = run({ "import", seed, "-o", "/dev/full", "--no-db" });
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("No space left"), std::string::npos) << r.err;
    struct stat st { };
    ASSERT_EQ(::stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full is no longer a device";
    // A symlink to standard output: the output goes there, the link stays.
    fs::create_symlink("/proc/self/fd/1", path("to-stdout"));
    r = run({ "sim", seed, "--layout", "valkey-9.1", "--json", "-o", path("to-stdout"), "--no-db" });
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(path("to-stdout")));
    EXPECT_NE(r.out.find("\"points\""), std::string::npos);
    // A symlink to a regular file: the file is replaced, the link kept.
    { std::ofstream(path("target.json")) << "old"; }
    fs::create_symlink(path("target.json"), path("link.json"));
    r = run({ "sim", seed, "--layout", "valkey-9.1", "--json", "-o", path("link.json"), "--no-db" });
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(path("link.json")));
    EXPECT_NE(slurp(path("target.json")).find("\"points\""), std::string::npos);
    // A directory: refused, untouched.
    fs::create_directory(path("a-dir"));
    for (const auto& args : std::vector<std::vector<std::string>> { { "import", seed, "-o", path("a-dir"), "--no-db" },
             { "export", seed, "--to", "twitter", "-o", path("a-dir") },
             { "sim", seed, "--layout", "valkey-9.1", "-o", path("a-dir"), "--no-db" } }) {
        r = run(args);
        EXPECT_EQ(r.exitCode, 1) << args[0];
        EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
        EXPECT_TRUE(fs::is_directory(path("a-dir")));
    }
    // A FIFO: written through to its reader.
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
    std::string fromFifo;
    std::thread reader([&] { fromFifo = slurp(path("fifo")); });
    r = run({ "export", seed, "--to", "twitter", "-o", path("fifo") });
    reader.join();
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(std::count(fromFifo.begin(), fromFifo.end(), '\n'), 200000);
    // "-" is standard output.
    r = run({ "sim", seed, "--layout", "valkey-9.1", "--json", "-o", "-", "--no-db" });
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("\"points\""), std::string::npos);
    EXPECT_FALSE(fs::exists(path("-")));
    EXPECT_EQ(partialFileLeft(), "");
}

// 2. Ctrl-C and SIGTERM: every command died with 130 and no message, left FILE.partial, and its run stuck
//    at 'running'.
TEST_F(HostileTest, InterruptedCommandsCleanUpMarkTheirRunAndSayOneLine) {
    ::signal(SIGPIPE, SIG_IGN); // the FIFO's writer outlives its reader
    for (const int signal : { SIGINT, SIGTERM }) {
        const auto before = runs().size();
        FifoTrace input(path(fmt("trace-{}.fifo", signal)));
        const pid_t pid
            = startAndWaitForRuns({ "sweep", path(fmt("trace-{}.fifo", signal)), "--format", "twitter", "--layout",
                                      "valkey-9.1", "--thresholds", "16:512:8", "-o", path("sweep.txt") },
                before + 1);
        ASSERT_GT(pid, 0);
        ::kill(pid, signal); // while it waits for the rest of its input
        EXPECT_EQ(waitFor(pid, 20), 128 + signal);
        const auto err = slurp(path("bg.err"));
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_NE(err.find(signal == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"), std::string::npos)
            << err;
        EXPECT_NE(err.find("marked interrupted"), std::string::npos) << err;
        const auto all = runs();
        ASSERT_EQ(all.size(), before + 1);
        EXPECT_EQ(all.back()["status"], "interrupted");
        EXPECT_FALSE(fs::exists(path("sweep.txt")));
    }
    // A generator writing a large trace: its temporary file goes.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, path("gen.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const pid_t gen
        = spawnCli({ "gen", "-o", path("big.lltrace"), "--keys", "20000000", "--ops", "200000000" }, &actions);
    posix_spawn_file_actions_destroy(&actions);
    bool writing = false;
    for (int i = 0; i < 2000 && !writing; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        for (const auto& entry : fs::directory_iterator(m_dir))
            writing = writing || entry.path().filename().string().find("big.lltrace.partial") != std::string::npos;
    }
    ASSERT_TRUE(writing);
    ::kill(gen, SIGINT);
    EXPECT_EQ(waitFor(gen, 20), 130);
    EXPECT_FALSE(fs::exists(path("big.lltrace")));
    EXPECT_EQ(partialFileLeft(), "");
    // The interrupted runs are what `batch` would run again; `db delete --incomplete` removes them.
    const auto deleted = run({ "db", "delete", "--incomplete" });
    EXPECT_NE(deleted.out.find("deleted 2 runs"), std::string::npos) << deleted.out;
}

// 2. An interrupted batch resumes: its interrupted cells run again, its complete ones do not.
TEST_F(HostileTest, AnInterruptedBatchResumes) {
    const auto trace = longTrace();
    {
        std::ofstream(path("plan.json")) << R"({"traces": [")" << trace
                                         << R"("], "layouts": ["valkey-9.1", "redis-7.0"],
        "thresholds": "16:512:8"})";
    }
    const pid_t pid = startAndWaitForRuns({ "batch", path("plan.json"), "-j", "1" }, 1);
    ::kill(pid, SIGINT);
    EXPECT_EQ(waitFor(pid, 30), 130);
    EXPECT_NE(slurp(path("bg.err")).find("run the same batch again to resume"), std::string::npos)
        << slurp(path("bg.err"));
    auto all = runs();
    ASSERT_GE(all.size(), 1u);
    EXPECT_EQ(all.back()["status"], "interrupted");
    const auto resumed = run({ "batch", path("plan.json"), "--json" });
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    const auto summary = nlohmann::json::parse(resumed.out);
    for (const auto& cell : summary["cells"])
        EXPECT_TRUE(cell["status"] == "complete" || cell["status"] == "skipped") << cell.dump();
}

// 3. Memory and disk were asked for without a check, and counts wrapped.
TEST_F(HostileTest, MemoryAndDiskAreCheckedAndCountsDoNotWrap) {
    // A 167-byte trace whose key ids reach four billion: 64 GB of per-key state. Under a 4 GB address-space
    // limit, refused at once with the figures.
    const auto sparse = gen("sparse.lltrace", { "--keys", "4294967295", "--no-load", "--ops", "9" });
    ASSERT_LT(fs::file_size(sparse), 1000u);
    const pid_t pid = [&] {
        std::vector<std::string> args { "/bin/sh", "-c",
            "ulimit -v 4000000; exec \"$0\" sweep \"$1\" --layout valkey-9.1 --thresholds 64,128 2>" + path("mem.err"),
            LAYOUTLAB_CLI, sparse };
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t p = -1;
        posix_spawn(&p, "/bin/sh", nullptr, nullptr, argv.data(), environ);
        return p;
    }();
    EXPECT_EQ(waitFor(pid, 30), 1);
    const auto err = slurp(path("mem.err"));
    EXPECT_NE(err.find("of memory, more than the"), std::string::npos) << err;
    // A cache level of 512 GB is no cache.
    auto geometry = run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64", "--cache-geometry",
        "32K:8,512G:64", "--no-db" });
    EXPECT_EQ(geometry.exitCode, 2);
    EXPECT_NE(geometry.err.find("larger than any cache"), std::string::npos) << geometry.err;
    // --ops near 2^64 wrapped to "wrote 9 requests".
    auto wrapped = run({ "gen", "-o", path("w.lltrace"), "--keys", "10", "--ops", "18446744073709551615" });
    EXPECT_EQ(wrapped.exitCode, 2);
    EXPECT_NE(wrapped.err.find("beyond 2^64"), std::string::npos) << wrapped.err;
    // A trace larger than its file system: refused before anything is written (a tmpfs is far smaller
    // than the 30 GB four billion keys take).
    if (fs::is_directory("/dev/shm")) {
        const std::string target = "/dev/shm/layoutlab-hostile-" + std::to_string(::getpid()) + ".lltrace";
        auto full = run({ "gen", "-o", target, "--keys", "4294967295" });
        EXPECT_EQ(full.exitCode, 1);
        EXPECT_NE(full.err.find("free"), std::string::npos) << full.err;
        EXPECT_FALSE(fs::exists(target));
    }
}

// 4. Inputs that are not regular files: /dev/zero never returned, a FIFO hung detection, a pipe could not
//    be detected, a batch plan of /dev/zero grew without bound.
TEST_F(HostileTest, NonRegularInputsStreamWithBoundedReads) {
    auto zero = runTimed({ "import", "/dev/zero", "--format", "twitter", "--stats", "--no-db" }, 20);
    EXPECT_EQ(zero.exitCode, 1) << zero.err;
    EXPECT_NE(zero.err.find("line longer than 1 MiB"), std::string::npos) << zero.err;
    zero = runTimed({ "import", "/dev/zero", "--format", "twitter", "--stats", "--on-error", "skip", "--no-db" }, 20);
    EXPECT_EQ(zero.exitCode, 1);
    EXPECT_NE(zero.err.find("no line break"), std::string::npos) << zero.err;
    auto plan = runTimed({ "batch", "/dev/zero" }, 20);
    EXPECT_EQ(plan.exitCode, 1);
    EXPECT_NE(plan.err.find("larger than"), std::string::npos) << plan.err;

    const std::string sample = LAYOUTLAB_DATASETS_DIR "/samples/mixed.twitter.csv";
    const auto expected = run({ "import", sample, "--stats", "--json", "--no-db" });
    ASSERT_EQ(expected.exitCode, 0) << expected.err;
    // A FIFO, its format detected from what was read first.
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
    std::thread writer([&] {
        std::ofstream out(path("fifo"), std::ios::binary);
        out << slurp(sample);
    });
    const auto fromFifo = runTimed({ "import", path("fifo"), "--stats", "--json", "--no-db" }, 30);
    writer.join();
    ASSERT_EQ(fromFifo.exitCode, 0) << fromFifo.err;
    EXPECT_EQ(nlohmann::json::parse(fromFifo.out)["ops"], nlohmann::json::parse(expected.out)["ops"]);
    // Standard input, as "-", simulated straight away (recorded in the database as a stream).
    const auto fromStdin = runTimed({ "sim", "-", "--layout", "valkey-9.1", "--json" }, 30, sample);
    ASSERT_EQ(fromStdin.exitCode, 0) << fromStdin.err;
    const auto fromFile = run({ "sim", sample, "--layout", "valkey-9.1", "--json", "--no-db" });
    EXPECT_EQ(nlohmann::json::parse(fromStdin.out)["points"], nlohmann::json::parse(fromFile.out)["points"]);
    // A layoutlab trace on a pipe cannot be read from its end: said so.
    const auto binary = runTimed({ "sim", "-", "--layout", "valkey-9.1", "--no-db" }, 30, seedTrace());
    EXPECT_EQ(binary.exitCode, 1);
    EXPECT_NE(binary.err.find("read from its end"), std::string::npos) << binary.err;
}

// 5. Trace files had no integrity check: most random byte flips were read without error.
TEST_F(HostileTest, EveryDamagedTraceIsRefusedWithAnOffset) {
    const auto trace = gen(
        "t.lltrace", { "--keys", "3000", "--ops", "20000", "--value-size", "uniform:1:500", "--ttl-fraction", "0.3" });
    const std::string original = slurp(trace);
    std::mt19937_64 random(7);
    for (int i = 0; i < 60; ++i) {
        std::string damaged = original;
        const std::size_t at = random() % damaged.size();
        damaged[at] = static_cast<char>(damaged[at] ^ (1u << (random() % 8)));
        { std::ofstream(path("d.lltrace"), std::ios::binary) << damaged; }
        const auto r = run({ "import", path("d.lltrace"), "--stats", "--no-db" });
        EXPECT_EQ(r.exitCode, 1) << "a flip at byte " << at << " was read: " << r.out;
        EXPECT_NE(r.err.find("offset"), std::string::npos) << r.err;
    }
}

// 6. The database: `db delete --incomplete` deleted a run another process was computing.
TEST_F(HostileTest, LiveRunsAreLeftAloneAndTheirResultsKept) {
    ::signal(SIGPIPE, SIG_IGN);
    FifoTrace input(path("trace.fifo"));
    const pid_t pid = startAndWaitForRuns(
        { "sweep", path("trace.fifo"), "--format", "twitter", "--layout", "valkey-9.1", "--thresholds", "16:512:16" },
        1);
    const auto listed = run({ "db", "list", "--json" });
    EXPECT_EQ(nlohmann::json::parse(listed.out)[0]["live"], true);
    const auto deleted = run({ "db", "delete", "--incomplete" });
    EXPECT_EQ(deleted.exitCode, 0);
    EXPECT_NE(deleted.out.find("left 1 running run alone"), std::string::npos) << deleted.out;
    input.release();
    EXPECT_EQ(waitFor(pid, 120), 0) << slurp(path("bg.err"));
    const auto all = runs();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0]["status"], "complete");
    EXPECT_EQ(all[0]["points"], 32);
}

// 6. Two batches of one plan on one database computed every cell twice.
TEST_F(HostileTest, ConcurrentBatchesShareTheCells) {
    const auto trace = longTrace();
    {
        std::ofstream(path("plan.json")) << R"({"traces": [")" << trace
                                         << R"("], "layouts": ["valkey-9.1", "valkey-8.1", "redis-7.0", "valkey-9.0"],
        "thresholds": "32:256:32"})";
    }
    std::vector<pid_t> batches;
    for (int i = 0; i < 2; ++i)
        batches.push_back(spawnCli({ "batch", path("plan.json"), "-j", "1" }));
    for (const pid_t pid : batches)
        EXPECT_EQ(waitFor(pid, 300), 0);
    const auto all = runs();
    std::map<std::string, int> perCell;
    for (const auto& r : all)
        ++perCell[r["parameters"]["batch_cell"].get<std::string>()];
    EXPECT_EQ(perCell.size(), 4u);
    for (const auto& [cell, count] : perCell)
        EXPECT_EQ(count, 1) << cell << " was computed " << count << " times";
}

// 6. A foreign SQLite file got our tables added; a read-only database could not even be listed; a locked
//    database discarded computed results and left the run at 'running'.
TEST_F(HostileTest, TheDatabaseIsOursReadOnlyWhenReadAndNeverLosesResults) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path("foreign.db").c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE users (name TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    const auto foreign = run({ "sim", seedTrace(), "--layout", "valkey-9.1", "--db", path("foreign.db") });
    EXPECT_EQ(foreign.exitCode, 1);
    EXPECT_NE(foreign.err.find("not a layoutlab results database"), std::string::npos) << foreign.err;
    EXPECT_NE(foreign.err.find("users"), std::string::npos) << foreign.err;
    EXPECT_EQ(run({ "db", "list", "--db", path("foreign.db") }).exitCode, 1);
    ASSERT_EQ(sqlite3_open(path("foreign.db").c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* count = nullptr;
    sqlite3_prepare_v2(raw, "SELECT COUNT(*) FROM sqlite_master", -1, &count, nullptr);
    ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(count, 0), 1) << "tables were added to a foreign file";
    sqlite3_finalize(count);
    sqlite3_close(raw);

    // Reading commands open the database read-only: nothing is written in or beside it.
    ASSERT_EQ(run({ "sim", seedTrace(), "--layout", "valkey-9.1", "--db", path("r.db") }).exitCode, 0);
    ASSERT_FALSE(fs::exists(path("r.db-wal")));
    const std::string bytes = slurp(path("r.db"));
    for (const auto& args : std::vector<std::vector<std::string>> {
             { "db", "list" }, { "db", "show", "1" }, { "db", "export", "1" }, { "db", "check" } }) {
        auto withDb = args;
        withDb.insert(withDb.end(), { "--db", path("r.db") });
        EXPECT_EQ(run(withDb).exitCode, 0) << args[1];
    }
    EXPECT_EQ(slurp(path("r.db")), bytes) << "a reading command changed the database";
    EXPECT_EQ(run({ "db", "list", "--db", path("missing.db") }).exitCode, 0);
    EXPECT_FALSE(fs::exists(path("missing.db"))) << "listing a missing database created it";

    // A database locked past the busy timeout while the run computes: the results go to a side file.
    ::signal(SIGPIPE, SIG_IGN);
    ::setenv("LAYOUTLAB_DB_BUSY_TIMEOUT_MS", "300", 1);
    {
        FifoTrace input(path("trace.fifo"));
        const pid_t pid = startAndWaitForRuns({ "sweep", path("trace.fifo"), "--format", "twitter", "--layout",
                                                  "valkey-9.1", "--thresholds", "16:512:16" },
            1);
        ASSERT_EQ(sqlite3_open((m_dir / "results.db").c_str(), &raw), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(raw, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
        input.release();
        const int code = waitFor(pid, 120);
        sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
        sqlite3_close(raw);
        EXPECT_EQ(code, 1);
    }
    ::unsetenv("LAYOUTLAB_DB_BUSY_TIMEOUT_MS");
    const auto err = slurp(path("bg.err"));
    EXPECT_NE(err.find("the results are kept in"), std::string::npos) << err;
    const auto side = path("results.db.run-1.json");
    ASSERT_TRUE(fs::exists(side)) << err;
    EXPECT_EQ(nlohmann::json::parse(slurp(side))["points"].size(), 32u);
    // The run could not be marked failed either (the lock held): its owner is gone, so it shows abandoned.
    const auto listed = run({ "db", "list" });
    EXPECT_TRUE(listed.out.find("abandoned") != std::string::npos || listed.out.find("failed") != std::string::npos)
        << listed.out;
}

// 6. A database on a read-only mount could not even be listed. Here: a directory its reader cannot write
//    (as root, the listing runs as nobody), so SQLite cannot make its WAL index beside the file.
TEST_F(HostileTest, ADatabaseThatCannotBeWrittenIsStillRead) {
    ASSERT_EQ(run({ "sim", seedTrace(), "--layout", "valkey-9.1", "--db", path("r.db") }).exitCode, 0);
    ASSERT_FALSE(fs::exists(path("r.db-shm")));
    fs::permissions(m_dir,
        fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec
            | fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(path("r.db"), fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    TimedRun listed;
    if (::geteuid() == 0) {
        if (::access("/usr/bin/setpriv", X_OK) != 0)
            GTEST_SKIP() << "running as root without setpriv: cannot read the database as another user";
        const std::string command = "exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " LAYOUTLAB_CLI
                                    " db list --json --db "
            + path("r.db") + " >" + path("ro.out") + " 2>" + path("ro.err");
        const int rc = std::system(command.c_str());
        listed.exitCode = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
        listed.out = slurp(path("ro.out"));
        listed.err = slurp(path("ro.err"));
        if (listed.err.find("Permission denied") != std::string::npos && listed.out.empty())
            GTEST_SKIP() << "the other user cannot reach the CLI binary here: " << listed.err;
    } else {
        listed = runTimed({ "db", "list", "--json", "--db", path("r.db") }, 10);
    }
    fs::permissions(m_dir, fs::perms::owner_all, fs::perm_options::add);
    ASSERT_EQ(listed.exitCode, 0) << listed.err;
    EXPECT_EQ(nlohmann::json::parse(listed.out).size(), 1u);
    EXPECT_FALSE(fs::exists(path("r.db-shm")));
}

// 7. Smaller: a loopback check by name; control characters echoed; quadratic layout files; a key size
//    accepted by import and refused by sweep.
TEST_F(HostileTest, NamesBytesAndLimitsAreCheckedAlike) {
    const auto remote = run({ "drive", seedTrace(), "--engine", "redis", "--connect", "127.attacker.example:6379" });
    EXPECT_EQ(remote.exitCode, 2) << remote.err;
    EXPECT_NE(remote.err.find("--connect"), std::string::npos) << remote.err;

    { std::ofstream(path("escape.csv")) << "1,key\x1b[2J\x07,8,10,1,frob\x1b[31m,0\n2,key:a,5,10,1,set,0\n"; }
    const auto stats = run({ "import", path("escape.csv"), "--format", "twitter", "--stats", "--on-error", "skip" });
    EXPECT_EQ(stats.exitCode, 0) << stats.err;
    for (const auto& text : { stats.out, stats.err }) {
        EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
        EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
    }
    EXPECT_NE(stats.out.find("\\x1b"), std::string::npos) << stats.out;

    std::string fields;
    for (int i = 0; i < 100000; ++i)
        fields += "  { name = \"pad" + std::to_string(i) + "\", bytes = 1 },\n";
    auto layout = slurp(LAYOUTLAB_DATASETS_DIR "/layouts/memcached-1.6.toml");
    layout.replace(layout.find("  { name = \"cas\", bytes = 8 },"), 0, fields);
    { std::ofstream(path("huge.toml")) << layout; }
    const auto huge = runTimed({ "layouts", "--layout-file", path("huge.toml") }, 10);
    EXPECT_EQ(huge.exitCode, 1) << huge.err;
    EXPECT_LT(huge.seconds, 5);

    { std::ofstream(path("big-key.csv")) << "1,k,4294967295,10,1,set,0\n"; }
    const auto bigKey = run({ "import", path("big-key.csv"), "--format", "twitter", "-o", path("big-key.lltrace") });
    EXPECT_EQ(bigKey.exitCode, 1);
    EXPECT_NE(bigKey.err.find("limit on keys"), std::string::npos) << bigKey.err;
}

} // namespace
