// SPDX-License-Identifier: MIT
// `layoutlab drive` at several settings (the engine sweep) against real servers: memcached at several slab
// settings (Debian's memcached), and Valkey built from the 8.1-layout source archive at chosen
// thresholds (scripts/build-engine --quick, cached outside the clone). Every setting's measured
// bytes per key must be within 1% of the prediction for that setting, on traces with keys and values
// across every limit; and the settings must really differ (a server started without them would measure
// the same at each). A stop during a build stops the build script and every compiler it started.

#include "child_process.h"
#include "cli_runner.h"
#include "drive_traces.h"
#include "engine_manifest.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

namespace {

using layoutlab::test::CliTestBase;

// The source archive of the plain Valkey build whose layout is `layout`, from the engines.build manifest,
// and that build's binary; empty when the suite has none.
struct SourceBuild {
    std::string archive;
    std::string binary;
};
SourceBuild sourceFor(const std::string& layout) {
    for (const auto& b : layoutlab::test::readEngineManifest(LAYOUTLAB_ENGINE_MANIFEST))
        if (b.layout == layout && b.label.find('+') == std::string::npos)
            for (const char* ext : { ".tar.xz", ".tar.gz" }) {
                const auto archive = std::filesystem::path(LAYOUTLAB_ENGINE_ARCHIVES) / (b.label + ext);
                if (std::filesystem::exists(archive))
                    return { archive.string(), b.binary };
            }
    return {};
}

// The processes of process group `group` (from /proc/*/stat); with `named`, only those of that name.
int processesInGroup(pid_t group, const std::string& named = {}) {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line))
            continue;
        const auto close = line.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        pid_t ppid = 0, pgrp = 0;
        rest >> state >> ppid >> pgrp;
        const std::string name = line.substr(line.find('(') + 1, close - line.find('(') - 1);
        if (pgrp == group && state != 'Z' && (named.empty() || name == named))
            ++count;
    }
    return count;
}

class EngineSweepTest : public CliTestBase {
protected:
    nlohmann::json sweep(std::vector<std::string> args) {
        args.insert(args.begin(), "drive");
        for (const char* a : { "--run-requests", "0", "--json" })
            args.emplace_back(a);
        const auto r = run(args);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        if (r.exitCode != 0)
            return {};
        return nlohmann::json::parse(r.out);
    }

    static void expectEachWithinOnePercent(const std::string& what, const nlohmann::json& report, std::size_t n) {
        ASSERT_EQ(report["points"].size(), n) << what << "\n" << report.dump(2);
        for (const auto& p : report["points"]) {
            const double measured = p["measured_bytes_per_key"], predicted = p["predicted_bytes_per_key"];
            EXPECT_GT(measured, 0) << what;
            EXPECT_LE(std::abs(predicted - measured), 0.01 * measured)
                << what << " at " << p["setting"] << ": measured " << measured << ", predicted " << predicted;
            // The allocator's active bytes beside them: memcached's pages exactly; jemalloc's within 2% (the
            // slab model starts from the bins each server held before the load, its thread cache drained).
            ASSERT_TRUE(p.contains("active_error")) << what << " at " << p["setting"];
            const double keys = p["keys"].get<double>();
            const double activeMeasured = p["measured_active_bytes_per_key"].get<double>() * keys;
            const double activePredicted = p["predicted_active_bytes_per_key"].get<double>() * keys;
            if (p["engine"] == "memcached")
                EXPECT_NEAR(activePredicted, activeMeasured, 1.0) << what << " at " << p["setting"];
            else
                EXPECT_LE(std::abs(activePredicted - activeMeasured), 0.02 * activeMeasured)
                    << what << " at " << p["setting"] << ": active measured " << activeMeasured << ", predicted "
                    << activePredicted;
        }
    }
};

TEST_F(EngineSweepTest, MemcachedAtEverySlabSettingWithinOnePercent) {
    if (!std::filesystem::exists("/usr/bin/memcached"))
        GTEST_SKIP() << "memcached is not installed (scripts/install-deps installs it)";
    // Finer and coarser classes, larger and smaller minimum chunks: items move between classes.
    const std::string settings = "1.25:48,1.08:48,1.25:96,2:32";
    std::vector<std::pair<std::string, std::string>> traces { { "mixed-sizes",
        LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace" } };
    for (const auto& c : layoutlab::test::respDriveTraces())
        traces.emplace_back(c.name, gen(std::string(c.name) + ".lltrace", c.genArgs, "11"));
    for (const auto& [name, trace] : traces) {
        for (const char* framing : { "raw", "marshal-utf8" }) {
            const auto report
                = sweep({ trace, "--engine", "memcached", "--framing", framing, "--slab-settings", settings });
            if (report.is_null())
                continue;
            expectEachWithinOnePercent(name + " " + framing, report, 4);
            // Each server was started with its setting: it says so in its slab model, and the measured
            // figures differ (items land in other chunks).
            const auto& points = report["points"];
            EXPECT_NE(points[0]["model"].get<std::string>().find("factor=1.25"), std::string::npos) << points[0];
            EXPECT_NE(points[1]["model"].get<std::string>().find("factor=1.08"), std::string::npos) << points[1];
            EXPECT_NE(points[2]["model"].get<std::string>().find("min=96"), std::string::npos) << points[2];
            std::set<double> distinct;
            for (const auto& p : points)
                distinct.insert(p["measured_bytes_per_key"].get<double>());
            EXPECT_GE(distinct.size(), 2u) << name; // one size of item may fit one chunk under two settings
            if (name != "k16v16-131073")
                EXPECT_NE(points[0]["measured_bytes_per_key"], points[1]["measured_bytes_per_key"]) << name;
            EXPECT_FALSE(report.contains("prediction_run")); // the measured run holds its predictions
            EXPECT_GT(report["measured_run"].get<int>(), 0);
        }
    }
}

TEST_F(EngineSweepTest, ValkeyBuiltAtEachThresholdWithinOnePercent) {
    const auto source = sourceFor("valkey-8.1");
    if (source.archive.empty())
        GTEST_SKIP() << "no source archive of the 8.1 layout among the engines.build builds (../shared/engines)";
    // Values on both sides of every limit: the threshold moves keys in and out of the embedded layout.
    const auto sizes = gen("sizes.lltrace",
        { "--keys", "60000", "--ops", "0", "--key-size", "uniform:3:60", "--value-size", "uniform:0:300" }, "13");
    const auto churn = gen("churn.lltrace",
        { "--keys", "20000", "--ops", "60000", "--key-size", "uniform:4:40", "--value-size", "uniform:1:140",
            "--ttl-fraction", "0.5", "--get-fraction", "0" },
        "17");
    for (const auto& trace : { sizes, churn }) {
        const auto report = sweep({ trace, "--engine", "valkey", "--source", source.archive, "--at-thresholds",
            "16,48,64,100,128", "--quick-build" });
        if (report.is_null())
            continue;
        expectEachWithinOnePercent(trace, report, 5);
        const auto& points = report["points"];
        for (std::size_t i = 0; i < points.size(); ++i) {
            EXPECT_EQ(points[i]["build"], fmt::format("embed-threshold={}", points[i]["threshold"].get<int>()));
            EXPECT_NE(points[i]["server"].get<std::string>().find(
                          fmt::format("embed-threshold-{}", points[i]["threshold"].get<int>())),
                std::string::npos);
        }
        // The builds differ as predicted: where the prediction moves by more than the tolerance, the
        // measurement moves the same way.
        for (std::size_t i = 1; i < points.size(); ++i) {
            const double predicted = points[i]["predicted_bytes_per_key"].get<double>()
                - points[i - 1]["predicted_bytes_per_key"].get<double>();
            const double measured = points[i]["measured_bytes_per_key"].get<double>()
                - points[i - 1]["measured_bytes_per_key"].get<double>();
            if (std::abs(predicted) > 0.5)
                EXPECT_GT(predicted * measured, 0)
                    << trace << " between " << points[i - 1]["threshold"] << " and " << points[i]["threshold"];
        }
        // Stored: the predicted sweep at the thresholds measured, and the measured run; both in the report.
        const auto prediction = report["prediction_run"].get<int>(), measured = report["measured_run"].get<int>();
        const auto show = run({ "db", "show", std::to_string(prediction) });
        EXPECT_EQ(show.exitCode, 0) << show.err;
        EXPECT_NE(show.out.find("100"), std::string::npos) << show.out;
        const auto dir = path("report");
        const auto html = run({ "report", std::to_string(prediction), std::to_string(measured), "-o", dir });
        ASSERT_EQ(html.exitCode, 0) << html.err;
        const auto index = layoutlab::test::slurp(std::filesystem::path(dir) / "index.html");
        EXPECT_NE(index.find("Measured against predicted"), std::string::npos);
        EXPECT_NE(index.find("embed-threshold=100"), std::string::npos);
        EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / fmt::format("run-{}-measured.svg", measured)));
    }
}

TEST_F(EngineSweepTest, BuildsPickedBesideBuildsMadeHere) {
    const auto source = sourceFor("valkey-8.1");
    if (source.archive.empty())
        GTEST_SKIP() << "no source archive of the 8.1 layout among the engines.build builds (../shared/engines)";
    const auto report = sweep({ LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace", "--engine", "valkey", "--source",
        source.archive, "--at-thresholds", "128", "--quick-build", "--builds", "64=" + source.binary });
    if (report.is_null())
        return;
    expectEachWithinOnePercent("mixed-sizes", report, 2);
    EXPECT_EQ(report["points"][0]["threshold"], 64);
    EXPECT_EQ(report["points"][0]["server"], source.binary);
    EXPECT_FALSE(report["points"][0].contains("build")); // picked, not built here
    EXPECT_EQ(report["points"][1]["build"], "embed-threshold=128");
}

TEST_F(EngineSweepTest, RequestsThatCannotBeSweptSayWhichFlag) {
    const std::string trace = LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace";
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const Case cases[] {
        { { "--engine", "valkey", "--at-thresholds", "64,128" }, "--source" },
        { { "--engine", "valkey", "--source", trace }, "--at-thresholds" },
        { { "--engine", "valkey", "--builds", "64" }, "--builds" },
        { { "--engine", "valkey", "--builds", "64=/nonexistent/valkey-server,128=/nonexistent/v" }, "--builds" },
        { { "--engine", "memcached", "--slab-settings", "1.25:48" }, "--slab-settings" },
        { { "--engine", "memcached", "--slab-settings", "0.9:48,1.25:48" }, "--slab-settings" },
        { { "--engine", "memcached", "--slab-settings", "1.25:48,1.08:48", "--connect", "127.0.0.1:1" }, "--connect" },
        { { "--engine", "valkey", "--slab-settings", "1.25:48,1.08:48" }, "--slab-settings" },
        { { "--engine", "valkey", "--layout", "redis-7.0:shared-integers=no", "--source", trace, "--at-thresholds",
              "32,64" },
            "layout: layout parameter shared-integers" },
    };
    for (const auto& c : cases) {
        auto args = c.args;
        args.insert(args.begin(), { "drive", trace });
        const auto r = run(args);
        EXPECT_EQ(r.exitCode, 2) << fmt::format("{}", fmt::join(c.args, " ")) << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << fmt::format("{}", fmt::join(c.args, " ")) << "\n" << r.err;
    }
}

TEST_F(EngineSweepTest, AStopDuringABuildStopsTheScriptAndItsCompilers) {
    const auto source = sourceFor("valkey-8.1");
    if (source.archive.empty())
        GTEST_SKIP() << "no source archive of the 8.1 layout among the engines.build builds (../shared/engines)";
    // A what-if build nothing else makes; removed first, so that this run has to compile it.
    const auto plainEntry = std::filesystem::path(source.binary).parent_path().parent_path();
    const auto entry = plainEntry.string() + "-embed-threshold-250";
    std::filesystem::remove_all(entry);
    const pid_t cli = layoutlab::test::spawnCli({ "drive", LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace",
        "--engine", "valkey", "--source", source.archive, "--at-thresholds", "250,251", "--quick-build" });
    ASSERT_GT(cli, 0);
    // The build script leads a process group of its own: wait until it is compiling.
    pid_t script = 0;
    for (int i = 0; i < 1200 && (script == 0 || processesInGroup(script, "make") == 0); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        script = layoutlab::test::childOf(cli);
    }
    ASSERT_GT(script, 0) << "the build script did not start";
    ASSERT_GT(processesInGroup(script, "make"), 0) << "the build did not start compiling within a minute";
    ::kill(cli, SIGINT);
    int status = 0;
    ASSERT_EQ(::waitpid(cli, &status, 0), cli);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    for (int i = 0; i < 100 && processesInGroup(script) > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(processesInGroup(script), 0) << "the build script or a compiler outlived the stop";
    EXPECT_FALSE(std::filesystem::exists(entry)) << "an interrupted build left a cache entry";
}

} // namespace

namespace {

// The side-by-side table against the real servers the suite can start: each row's bytes per key beside
// the measured bytes per key of a drive of that engine's build, within 1% (issue 24).
TEST_F(EngineSweepTest, SideBySideRowsMatchTheRealServers) {
    struct Server {
        std::string layout, alloc, engine, binary;
    };
    std::vector<Server> servers;
    if (std::filesystem::exists("/usr/bin/redis-server"))
        servers.push_back({ "redis-7.0", "jemalloc:quantum=16,page=4096", "redis", "/usr/bin/redis-server" });
    for (const auto& b : layoutlab::test::readEngineManifest(LAYOUTLAB_ENGINE_MANIFEST))
        if ((b.layout == "valkey-8.0" || b.layout == "valkey-8.1") && b.label.find('+') == std::string::npos)
            servers.push_back({ b.layout, "jemalloc:quantum=8,page=4096", "valkey", b.binary });
    if (servers.size() < 2)
        GTEST_SKIP() << "fewer than two engines to compare (redis-server and the Valkey builds of ../shared/engines)";
    const auto trace = gen("sizes.lltrace",
        { "--keys", "40000", "--ops", "40000", "--key-size", "uniform:3:60", "--value-size", "uniform:0:300",
            "--ttl-fraction", "0.3", "--get-fraction", "0.2" },
        "23");
    std::vector<std::string> args { "sim", trace, "--json", "--no-db" };
    for (const auto& s : servers)
        args.insert(args.end(), { "--layout", s.layout, "--alloc", s.alloc });
    const auto table = run(args);
    ASSERT_EQ(table.exitCode, 0) << table.err;
    const auto rows = nlohmann::json::parse(table.out)["rows"];
    ASSERT_EQ(rows.size(), servers.size());
    for (std::size_t i = 0; i < servers.size(); ++i) {
        const auto drive = run({ "drive", trace, "--engine", servers[i].engine, "--server-binary", servers[i].binary,
            "--run-requests", "0", "--json", "--no-db" });
        ASSERT_EQ(drive.exitCode, 0) << drive.err;
        const double measured = nlohmann::json::parse(drive.out)["measured_bytes_per_key"];
        const double row = rows[i]["bytes_per_key"];
        EXPECT_LE(std::abs(row - measured), 0.01 * measured)
            << servers[i].layout << ": the table says " << row << ", the server measured " << measured;
        EXPECT_TRUE(rows[i]["measured"].get<bool>()) << servers[i].layout;
    }
}

} // namespace

// drive --latency: two real builds' run phases, and beside the measured GET throughput ratio the one the
// cache model's stall change predicts on the first build's measured time per GET (docs/validation.md).
TEST_F(EngineSweepTest, LatencyPutsThePredictedThroughputChangeBesideTheMeasured) {
    std::string plain, embedded;
    for (const auto& b : layoutlab::test::readEngineManifest(LAYOUTLAB_ENGINE_MANIFEST)) {
        if (b.layout == "valkey-8.1" && b.label == "valkey-unstable-2025-02-06")
            plain = b.binary;
        if (b.layout == "valkey-8.1:threshold=128,embstr-limit=108")
            embedded = b.binary;
    }
    if (plain.empty() || embedded.empty())
        GTEST_SKIP() << "no 2025-02-06 builds at 64 and 128/108 among the engines.build builds (../shared/engines)";
    const auto trace = path("k20k-v80.lltrace");
    ASSERT_EQ(run({ "gen", "-o", trace, "--keys", "20000", "--ops", "20000", "--key-size", "16", "--value-size", "80",
                      "--get-fraction", "1", "--seed", "25" })
                  .exitCode,
        0);
    const std::vector<std::string> args { "drive", trace, "--engine", "valkey", "--layout",
        "valkey-8.1:embstr-limit=108", "--builds", "64=" + plain + ",128=" + embedded, "--run-requests", "100000",
        "--latency", "--cache-geometry", "32K:8,1M:16", "--no-db" };
    auto withJson = args;
    withJson.push_back("--json");
    const auto r = run(withJson);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto report = nlohmann::json::parse(r.out);
    ASSERT_TRUE(report.contains("throughput_against_first")) << report.dump(2);
    const auto& row = report["throughput_against_first"].at(0);
    EXPECT_EQ(row["setting"], report["points"][1]["setting"]);
    const double measured = row["measured_ratio"];
    EXPECT_NEAR(measured,
        report["points"][1]["gets_per_sec"].get<double>() / report["points"][0]["gets_per_sec"].get<double>(), 1e-9);
    EXPECT_LT(row["stall_change_ns"].get<double>(), 0) << "embedding 80-byte values saves a line per GET";
    EXPECT_GT(row["predicted_ratio"].get<double>(), 1.0);
    EXPECT_LE(row["predicted_low"].get<double>(), row["predicted_ratio"].get<double>());
    EXPECT_GE(row["predicted_high"].get<double>(), row["predicted_ratio"].get<double>());
    EXPECT_TRUE(report.contains("load_latencies"));

    // Without an engine sweep there is nothing to compare: the flag says so.
    const auto single = run({ "drive", trace, "--engine", "valkey", "--server-binary", plain, "--latency", "--no-db" });
    EXPECT_EQ(single.exitCode, 2);
    EXPECT_NE(single.err.find("--latency"), std::string::npos) << single.err;
}
