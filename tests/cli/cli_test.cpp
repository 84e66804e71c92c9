// SPDX-License-Identifier: MIT
// The layoutlab command as a user meets it: exit codes (0 ok, 1 data error, 2 usage error), one-line
// errors naming the argument or file, no partial output files, --help everywhere.

#include "cli_runner.h"
#include "layoutlab/trace/trace_file.h"

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using layoutlab::test::CliRun;
using layoutlab::test::slurp;
using layoutlab::test::spawnCli;
using CliTest = layoutlab::test::CliTestBase;

TEST_F(CliTest, HelpOnEveryCommand) {
    for (const char* cmd : { "gen", "sim", "sweep", "layouts", "allocators", "collectors", "metrics", "profile",
             "compare", "advise", "report", "batch", "latency" }) {
        const auto r = run({ cmd, "--help" });
        EXPECT_EQ(r.exitCode, 0) << cmd;
        EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << ": " << r.out;
    }
    const auto top = run({ "--help" });
    EXPECT_EQ(top.exitCode, 0);
    EXPECT_NE(top.out.find("Exit codes"), std::string::npos);
}

TEST_F(CliTest, SweepJsonHasOnePointPerThresholdWithEveryMetric) {
    const auto r = run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "32:512:16", "--json" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["points"].size(), 31u);
    for (const char* metric : { "threshold", "keys", "payload_bytes", "requested_bytes", "usable_bytes",
             "internal_fragmentation_bytes", "overhead_bytes_per_key", "allocations_per_key", "pointer_bytes_per_key",
             "embedded_fraction", "size_classes", "lines_touched_per_get", "dependent_loads_per_get" })
        EXPECT_TRUE(j["points"][0].contains(metric)) << metric;
    EXPECT_EQ(j["points"][6]["threshold"], 128);
    EXPECT_DOUBLE_EQ(j["points"][6]["embedded_fraction"].get<double>(), 1.0);
}

// The user guide's metric list is the metric table, as `layoutlab metrics --format markdown` prints it.
TEST_F(CliTest, TheUserGuidesMetricListIsTheMetricTable) {
    const auto r = run({ "metrics", "--format", "markdown" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string guide = slurp(std::filesystem::path(LAYOUTLAB_DATASETS_DIR) / ".." / "docs" / "user-guide.md");
    const auto begin = guide.find("<!-- metrics:begin");
    const auto end = guide.find("<!-- metrics:end -->");
    ASSERT_NE(begin, std::string::npos);
    ASSERT_NE(end, std::string::npos);
    const auto first = guide.find('\n', begin) + 1;
    EXPECT_EQ(guide.substr(first, end - first), r.out)
        << "regenerate the block with `layoutlab metrics --format markdown`";
    const auto json = nlohmann::json::parse(run({ "metrics", "--format", "json" }).out);
    EXPECT_GE(json.size(), 17u);
}

TEST_F(CliTest, CsvHasAHeaderAndOneRowPerThreshold) {
    const auto r = run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,128", "--csv" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::istringstream lines(r.out);
    std::string header, row;
    std::getline(lines, header);
    EXPECT_EQ(header.rfind("threshold,keys,payload_bytes,requested_bytes,usable_bytes", 0), 0u) << header;
    int rows = 0;
    while (std::getline(lines, row))
        ++rows;
    EXPECT_EQ(rows, 2);
}

TEST_F(CliTest, UsageErrorsExitTwoWithOneLineNamingTheArgument) {
    struct Case {
        std::vector<std::string> args;
        const char* mentions;
    };
    const std::vector<Case> cases {
        { { "sim", seedTrace(), "--layout", "valkey:threshold=9999" }, "threshold" },
        { { "sim", seedTrace(), "--layout", "valkey-9.1", "--alloc", "jemalloc:quantum=12" }, "quantum" },
        { { "sim", seedTrace(), "--layout", "valkey-9.1", "--alloc", "memcached" }, "alloc" },
        { { "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64:32:8" }, "--thresholds" },
        { { "gen", "-o", path("x.lltrace"), "--keys", "10", "--key-size", "uniform:3" }, "--key-size" },
        { { "gen", "-o", path("x.lltrace"), "--keys", "10", "--popularity", "zipf" }, "--popularity" },
        { { "gen", "-o", path("x.lltrace"), "--keys", "10", "--ttl-fraction", "2" }, "--ttl-fraction" },
        { { "sim" }, "trace" },
        { { "frobnicate" }, "frobnicate" },
        // Collection keys no engine could hold, or a layout without them.
        { { "layouts", "valkey-9.1", "--type", "set", "--entries", "0" }, "at least one entry" },
        { { "layouts", "memcached-1.6", "--type", "list" }, "no list model" },
        { { "layouts", "redis-7.0", "--type", "hash" }, "--value-bytes" },
        { { "layouts", "valkey-9.1", "--type", "list", "--element-bytes", "1073741824" }, "1 GiB" },
        { { "layouts", "valkey-9.1", "--type", "list", "--list-max-listpack-size", "0" }, "list-max-listpack-size" },
        { { "layouts", "valkey-9.1", "--type", "set", "--int-elements", "--element-bytes", "20" }, "1 to 19 digits" },
        { { "layouts", "valkey-9.1", "--type", "stream" }, "--type" },
    };
    for (const auto& c : cases) {
        const auto r = run(c.args);
        EXPECT_EQ(r.exitCode, 2) << c.args[0] << " " << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << r.err;
        EXPECT_EQ(r.err.rfind("layoutlab: error: ", 0), 0u) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    EXPECT_FALSE(std::filesystem::exists(path("x.lltrace")));
    EXPECT_EQ(partialFileLeft(), "");
}

// A collection key explained as JSON: its encoding, its parts (expected counts where the engine draws at
// random) and the limits that chose it.
TEST_F(CliTest, LayoutsExplainsACollectionKeyInJson) {
    const auto r = run({ "layouts", "valkey-9.1", "--type", "zset", "--entries", "300", "--member-bytes", "16",
        "--score-bytes", "10", "--int", "--zset-max-listpack-entries", "512", "--json" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["encoding"], "listpack"); // 300 members under a limit of 512
    EXPECT_EQ(j["limits"]["zset-max-listpack-entries"], 512);
    const auto skiplist = nlohmann::json::parse(
        run({ "layouts", "valkey-9.1", "--type", "zset", "--entries", "300", "--member-bytes", "16", "--json" }).out);
    EXPECT_EQ(skiplist["encoding"], "skiplist");
    double nodes = 0, usable = 0;
    for (const auto& part : skiplist["parts"]) {
        if (part["what"].get<std::string>().starts_with("skiplist nodes"))
            nodes += part["count"].get<double>();
        usable += part["count"].get<double>() * part["usable_bytes"].get<double>();
    }
    EXPECT_NEAR(nodes, 300, 1e-6);
    // The other encoding, and the limit that would give it: a listpack at zset-max-listpack-entries 300.
    EXPECT_EQ(skiplist["alternative"]["encoding"], "listpack");
    EXPECT_EQ(skiplist["alternative"]["limits"]["zset-max-listpack-entries"], 300);
    EXPECT_LT(skiplist["alternative"]["usable_bytes"].get<double>(), skiplist["usable_bytes"].get<double>());
    EXPECT_EQ(j["alternative"]["encoding"], "skiplist"); // and back: one limit below its members
    EXPECT_NEAR(usable, skiplist["usable_bytes"].get<double>(), 1e-6);
    EXPECT_GT(skiplist["usable_bytes"].get<double>(), j["usable_bytes"].get<double>());
}

// The core names fields; each command shows its own flag for them.
TEST_F(CliTest, ErrorsNameTheFlagOfTheCommandThatWasRun) {
    auto r = run({ "sim", seedTrace(), "--layout", "valkey-9.1", "--threshold", "8", "--no-db" });
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_EQ(r.err.rfind("layoutlab: error: --threshold: threshold 8 is out of range", 0), 0u) << r.err;
    r = run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,x", "--no-db" });
    EXPECT_EQ(r.err, "layoutlab: error: --thresholds: 'x' is not a whole number\n");
    r = run({ "export", seedTrace(), "--to", "parquet", "-o", path("x.csv") });
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--to:"), std::string::npos) << r.err;
    r = run({ "gen", "-o", path("g.lltrace"), "--keys", "0" });
    EXPECT_EQ(r.err, "layoutlab: error: --keys: must be between 1 and 4294967295\n");
}

TEST_F(CliTest, DataErrorsExitOneAndNameTheFile) {
    // A truncated trace: the error names the file and the offset; no output file is written.
    std::filesystem::copy_file(seedTrace(), path("cut.lltrace"));
    std::filesystem::resize_file(path("cut.lltrace"), 5000);
    auto r = run({ "sim", path("cut.lltrace"), "--layout", "valkey-9.1", "-o", path("out.txt") });
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("cut.lltrace"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("out.txt")));
    EXPECT_EQ(partialFileLeft(), "");
    r = run({ "sim", path("missing.lltrace"), "--layout", "valkey-9.1" });
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("missing.lltrace"), std::string::npos);
}

TEST_F(CliTest, GenThenSimRoundTrip) {
    auto r = run({ "gen", "-o", path("t.lltrace"), "--keys", "5000", "--ops", "20000", "--key-size", "uniform:10:30",
        "--value-size", "lognormal:4:1:1:2000", "--ttl-fraction", "0.3", "--int-values", "0.1", "--get-fraction", "0.7",
        "--delete-fraction", "0.1", "--popularity", "zipf:1.2", "--seed", "42" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto reader = layoutlab::TraceFileReader::open(path("t.lltrace"));
    ASSERT_TRUE(reader);
    EXPECT_EQ((*reader)->totalRequests(), 25000u);
    r = run({ "sim", path("t.lltrace"), "--layout", "redis-7.0", "--json", "-o", path("result.json") });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(path("result.json")));
    EXPECT_EQ(j["replay"]["requests"], 25000);
    EXPECT_GT(j["points"][0]["keys"].get<int>(), 3000);
}

TEST_F(CliTest, OneTraceInThreeFormatsGivesIdenticalSweeps) {
    // datasets/samples/regenerate.sh stores one trace as layoutlab binary, Twitter CSV and CacheLib CSV
    // (and the Twitter CSV zstd-compressed): importing any of them must give the same keyspace.
    std::vector<nlohmann::json> points;
    for (const char* file : { "mixed.lltrace", "mixed.twitter.csv", "mixed.cachelib.csv", "mixed.twitter.csv.zst" }) {
        const auto r = run({ "sweep", std::string(LAYOUTLAB_DATASETS_DIR "/samples/") + file, "--layout", "valkey-9.1",
            "--thresholds", "32:256:16", "--json" });
        ASSERT_EQ(r.exitCode, 0) << file << ": " << r.err;
        points.push_back(nlohmann::json::parse(r.out)["points"]);
    }
    ASSERT_EQ(points[0].size(), 15u);
    for (std::size_t i = 1; i < points.size(); ++i)
        EXPECT_EQ(points[i], points[0]) << "format " << i;
}

TEST_F(CliTest, ImportWritesATraceThatRereadsIdentically) {
    auto r = run({ "import", LAYOUTLAB_DATASETS_DIR "/samples/mixed.twitter.csv", "-o", path("imported.lltrace") });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("imported 2000 requests over 400 keys"), std::string::npos) << r.err;
    const auto a
        = run({ "sweep", path("imported.lltrace"), "--layout", "redis-7.0", "--thresholds", "0:64:16", "--json" });
    const auto b = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/samples/mixed.twitter.csv", "--layout", "redis-7.0",
        "--thresholds", "0:64:16", "--json" });
    ASSERT_EQ(a.exitCode, 0);
    ASSERT_EQ(b.exitCode, 0);
    EXPECT_EQ(nlohmann::json::parse(a.out)["points"], nlohmann::json::parse(b.out)["points"]);
}

TEST_F(CliTest, BadLinesFailByDefaultAndAreCountedWithSkip) {
    {
        std::ofstream f(path("bad.csv"));
        f << "0,key:a,16,100,1,set,0\n"
          << "1,key:b,16,-5,1,set,0\n" // negative size
          << "2,key:c,16,100,1,frobnicate,0\n" // unknown op
          << "3,key:d,16,99999999999,1,set,0\n" // over 4 GiB
          << "4,key:a,16,0,1,get,0\n"
          << "5,key,with,commas,16,10,1,set,0\n"; // commas inside the key
    }
    auto r = run({ "import", path("bad.csv"), "--format", "twitter", "-o", path("bad.lltrace") });
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find("bad.csv: line 2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("value_size"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("bad.lltrace")));
    EXPECT_EQ(partialFileLeft(), "");
    r = run({ "import", path("bad.csv"), "--format", "twitter", "--on-error", "skip", "--stats", "--json" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["ops"], 3);
    EXPECT_EQ(j["rejected"], 3);
    EXPECT_EQ(j["rejected_by_reason"]["negative number"], 1);
    EXPECT_EQ(j["rejected_by_reason"]["unknown op"], 1);
    EXPECT_EQ(j["rejected_by_reason"]["size over 4 GiB"], 1);
    EXPECT_EQ(j["rejected_examples"].size(), 3u);
    EXPECT_EQ(j["distinct_keys"], 2);
}

TEST_F(CliTest, EveryRunIsStoredAndCanBeExported) {
    ASSERT_EQ(run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,128" }).exitCode, 0);
    ASSERT_EQ(run({ "sim", seedTrace(), "--layout", "redis-7.0" }).exitCode, 0);
    ASSERT_EQ(run({ "sim", seedTrace(), "--layout", "redis-7.0", "--no-db" }).exitCode, 0);
    auto list = run({ "db", "list", "--json" });
    ASSERT_EQ(list.exitCode, 0) << list.err;
    const auto runs = nlohmann::json::parse(list.out);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0]["status"], "complete");
    EXPECT_EQ(runs[0]["points"], 2);
    EXPECT_EQ(runs[0]["parameters"]["thresholds"], nlohmann::json::array({ 64, 128 }));
    auto csv = run({ "db", "export", "1", "2", "--csv" });
    ASSERT_EQ(csv.exitCode, 0) << csv.err;
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 4); // header + 2 + 1 points
    auto shown = run({ "db", "show", "1", "--json" });
    ASSERT_EQ(shown.exitCode, 0);
    EXPECT_EQ(nlohmann::json::parse(shown.out)["result"]["points"][1]["threshold"], 128);
    EXPECT_EQ(run({ "db", "show", "99" }).exitCode, 2);
    EXPECT_EQ(run({ "db", "delete", "2" }).exitCode, 0);
    EXPECT_EQ(nlohmann::json::parse(run({ "db", "list", "--json" }).out).size(), 1u);
    EXPECT_EQ(run({ "db", "check" }).out, "ok\n");
}

TEST_F(CliTest, CompareShowsTwoRunsPointByPoint) {
    // The seed case on Valkey 8.1 and 9.1: the same bytes at 64, 24 bytes per key apart at 128.
    ASSERT_EQ(run({ "sweep", seedTrace(), "--layout", "valkey-8.1", "--thresholds", "64,128" }).exitCode, 0);
    ASSERT_EQ(run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,128,192" }).exitCode, 0);
    const auto r = run({ "compare", "1", "2", "--json" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["a"]["id"], 1);
    EXPECT_EQ(j["b"]["id"], 2);
    EXPECT_NE(std::find(j["differing_parameters"].begin(), j["differing_parameters"].end(), "layout"),
        j["differing_parameters"].end());
    ASSERT_EQ(j["points"].size(), 3u);
    EXPECT_EQ(j["points"][2]["threshold"], 192);
    EXPECT_EQ(j["points"][2]["in_a"], false);
    auto metric = [&](int point, const std::string& name) {
        for (const auto& m : j["points"][point]["metrics"])
            if (m["name"] == name)
                return m;
        return nlohmann::json();
    };
    EXPECT_NEAR(metric(0, "usable_bytes_per_key")["difference"].get<double>(), 0.0, 1e-9);
    EXPECT_NEAR(metric(1, "usable_bytes_per_key")["difference"].get<double>(), -24.0, 1e-9);
    EXPECT_NEAR(metric(1, "dependent_loads_per_get")["difference"].get<double>(), -1.0, 1e-9);
    EXPECT_GT(j["values_differing"].get<int>(), 0);
    EXPECT_LT(j["values_differing"].get<int>(), j["values_compared"].get<int>());

    const auto text = run({ "compare", "1", "2" });
    ASSERT_EQ(text.exitCode, 0);
    EXPECT_NE(text.out.find("parameters that differ: layout"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("      192  only in run B"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("       64  usable_bytes_per_key"), std::string::npos) << "equal values are left out";
    EXPECT_NE(run({ "compare", "1", "2", "--all" }).out.find("       64  usable_bytes_per_key"), std::string::npos);
    const auto missing = run({ "compare", "1", "9" });
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("no run 9"), std::string::npos) << missing.err;
}

// --slabs: what the allocator keeps after deletes, per threshold, in the JSON, the CSV and the table; a
// random half of the keys deleted leaves nearly every slab in place.
TEST_F(CliTest, AdviseRecommendsAThresholdAndSaysWhy) {
    // The seed case: 128 has both the fewest bytes per key and the fewest misses per GET. The cache is given,
    // with a last level smaller than the keyspace: a host whose last level holds it misses at no threshold.
    const auto seed = run({ "advise", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "16:256:16",
        "--cache-geometry", "32K:8,1M:16", "--json" });
    ASSERT_EQ(seed.exitCode, 0) << seed.err;
    const auto j = nlohmann::json::parse(seed.out);
    EXPECT_EQ(j["advised"]["threshold"], 128);
    EXPECT_EQ(j["access_metric"], "llc_misses_per_get");
    EXPECT_NE(j["advised"]["why"].get<std::string>().find("both the fewest"), std::string::npos);
    EXPECT_NEAR(j["from_64"]["bytes_per_key_more"].get<double>(), 24.0, 1e-9);
    EXPECT_GT(j["from_64"]["misses_per_get_more"].get<double>(), 0.0);
    EXPECT_TRUE(j["from_128"]["bytes_per_key_more"] == 0.0);
    EXPECT_EQ(j["points"].size(), 16u);
    EXPECT_EQ(j["run"], 1); // stored, kind advise
    EXPECT_EQ(nlohmann::json::parse(run({ "db", "list", "--json" }).out)[0]["kind"], "advise");

    // Memory alone: the sweep's own best threshold. Misses alone: a threshold with the fewest misses.
    const std::string mixed = LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace";
    const auto sweep = nlohmann::json::parse(
        run({ "sweep", mixed, "--layout", "valkey-9.1", "--thresholds", "16:512:16", "--json", "--no-db" }).out);
    const auto memory = nlohmann::json::parse(
        run({ "advise", mixed, "--weight-misses", "0", "--no-cache", "--json", "--no-db" }).out);
    EXPECT_EQ(memory["advised"]["threshold"], sweep["best_threshold"]);
    EXPECT_EQ(memory["access_metric"], "lines_touched_per_get");
    const auto misses = nlohmann::json::parse(
        run({ "advise", mixed, "--weight-memory", "0", "--miss-level", "l1", "--json", "--no-db" }).out);
    EXPECT_EQ(misses["access_metric"], "l1_misses_per_get");
    EXPECT_EQ(misses["advised"]["threshold"], misses["fewest_misses"]);

    EXPECT_EQ(run({ "advise", seedTrace(), "--weight-memory", "0", "--weight-misses", "0" }).exitCode, 2);
    EXPECT_EQ(run({ "advise", seedTrace(), "--miss-level", "l4" }).exitCode, 2);
    EXPECT_EQ(run({ "advise", seedTrace(), "--layout", "memcached-1.6" }).exitCode, 2);

    // 8.1 code embeds the seed's 96-byte values at no threshold: every one ties, and the one Valkey 8.1
    // ships with is advised, saying so.
    const auto flat = run({ "advise", seedTrace(), "--layout", "valkey-8.1", "--thresholds", "16:128:16",
        "--cache-geometry", "32K:8,1M:16", "--json", "--no-db" });
    ASSERT_EQ(flat.exitCode, 0) << flat.err;
    const auto tie = nlohmann::json::parse(flat.out);
    EXPECT_EQ(tie["ties"].size(), 8u);
    EXPECT_EQ(tie["advised"]["threshold"], 64);
    EXPECT_EQ(tie["shipped_threshold"], 64);
    EXPECT_NE(tie["advised"]["why"].get<std::string>().find("ships with"), std::string::npos) << tie["advised"];
    const auto flatText = run({ "advise", seedTrace(), "--layout", "valkey-8.1", "--thresholds", "16:128:16",
        "--cache-geometry", "32K:8,1M:16", "--no-db" });
    EXPECT_NE(flatText.out.find("ties: 16, 32, 48, 64, 80, 96, 112, 128"), std::string::npos) << flatText.out;
}

TEST_F(CliTest, ReportWritesAStandaloneHtmlWithSvgCharts) {
    ASSERT_EQ(run({ "sweep", seedTrace(), "--layout", "valkey-8.1", "--thresholds", "64,128" }).exitCode, 0);
    ASSERT_EQ(run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,128", "--cache" }).exitCode, 0);
    const std::string dir = path("report");
    const auto r = run({ "report", "1", "2", "-o", dir });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string html = slurp(dir + "/index.html");
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<section id=\"run-1\">"), std::string::npos);
    EXPECT_NE(html.find("<section id=\"run-2\">"), std::string::npos);
    EXPECT_NE(html.find(LAYOUTLAB_VERSION), std::string::npos); // the tool version
    EXPECT_NE(html.find("valkey:threshold=128,header=8"), std::string::npos); // the exact parameters
    EXPECT_NE(html.find("Fewest bytes per key at threshold <b>128</b>"), std::string::npos);
    std::size_t charts = 0;
    for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
        ++charts;
    // Both runs together, the two layouts at their shipped settings (8.1 at 64, 9.1 at 128: migration), memory
    // and access of each, misses of the cache run.
    EXPECT_EQ(charts, 7u);
    EXPECT_NE(html.find("<section id=\"migration\">"), std::string::npos);
    for (const char* file : { "runs-bytes-per-key.svg", "run-1-memory.svg", "run-2-misses.svg" })
        EXPECT_EQ(slurp(dir + "/" + file).rfind("<svg", 0), 0u) << file;
    // Renders with no network: nothing is loaded from elsewhere.
    for (const char* fetch : { "src=", "<script", "<link", "@import", "url(" })
        EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
    EXPECT_EQ(html.find("href=\"http"), std::string::npos);

    const auto missing = run({ "report", "1", "7", "-o", path("none") });
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_FALSE(std::filesystem::exists(path("none"))); // nothing written when a run is missing
}

TEST_F(CliTest, BatchRunsAPlanInParallelAndResumes) {
    const std::string plan = path("plan.json");
    std::ofstream(plan) << R"({ "traces": [")" << seedTrace() << R"(", ")" LAYOUTLAB_DATASETS_DIR
                        << R"(/traces/mixed-sizes.lltrace", "missing.lltrace"],
        "layouts": ["valkey-8.1", "valkey-9.1"], "thresholds": "32:256:32" })";
    const auto first = run({ "batch", plan, "-j", "2", "--json" });
    EXPECT_EQ(first.exitCode, 1) << "a failed cell makes the batch fail"; // the missing trace's two cells
    const auto j = nlohmann::json::parse(first.out);
    ASSERT_EQ(j["cells"].size(), 6u);
    EXPECT_EQ(j["failed"], 2);
    EXPECT_EQ(j["workers"], 2);
    for (const auto& cell : j["cells"]) {
        if (cell["trace"].get<std::string>().ends_with("missing.lltrace")) {
            EXPECT_EQ(cell["status"], "failed");
            EXPECT_NE(cell["error"].get<std::string>().find("missing.lltrace"), std::string::npos) << cell;
        } else {
            EXPECT_EQ(cell["status"], "complete") << cell;
        }
    }
    EXPECT_EQ(j["cells"][1]["best_threshold"], 128); // seed on Valkey 9.1
    // Resumed: the complete cells are skipped, the failed ones tried again.
    const auto again = nlohmann::json::parse(run({ "batch", plan, "--json" }).out);
    EXPECT_EQ(again["skipped"], 4);
    EXPECT_EQ(again["ran"], 2);
    EXPECT_EQ(again["cells"][1]["best_threshold"], 128) << "a skipped cell is summarized from its run";
    EXPECT_EQ(again["cells"][1]["shipped_threshold"], 128);
    // The bundled example plan, as docs/batch.md runs it: each layout by its preset name, at the setting its
    // engine ships with (evaluated whatever the plan's thresholds) beside its leanest.
    const auto example
        = run({ "batch", LAYOUTLAB_DATASETS_DIR "/plans/example.json", "--json", "--db", path("ex.db") });
    ASSERT_EQ(example.exitCode, 0) << example.err;
    const auto cells = nlohmann::json::parse(example.out)["cells"];
    ASSERT_EQ(cells.size(), 8u);
    const std::map<std::string, nlohmann::json> shippedAt { { "valkey-8.1", 64 }, { "valkey-9.1", 128 },
        { "redis-7.0", 44 }, { "memcached-1.6", nullptr } };
    for (const auto& cell : cells) {
        const auto name = cell["layout_name"].get<std::string>();
        ASSERT_TRUE(shippedAt.contains(name)) << cell;
        EXPECT_EQ(cell["shipped_threshold"], shippedAt.at(name)) << cell;
        // The shipped figure is the layout's own sim, the leanest never above it.
        const auto sim = nlohmann::json::parse(
            run({ "sim", cell["trace"].get<std::string>(), "--layout", name, "--json", "--no-db" }).out);
        EXPECT_NEAR(cell["shipped_bytes_per_key"].get<double>(), sim["points"][0]["usable_bytes_per_key"].get<double>(),
            1e-3) // the sim's JSON has 4 decimals
            << cell;
        EXPECT_LE(cell["best_bytes_per_key"].get<double>(), cell["shipped_bytes_per_key"].get<double>()) << cell;
    }
    const auto table = run({ "batch", LAYOUTLAB_DATASETS_DIR "/plans/example.json", "--db", path("ex.db") }).out;
    EXPECT_NE(table.find("shipped  B/key  leanest  B/key"), std::string::npos) << table;
    // A bad plan is refused, naming the field.
    const std::string bad = path("bad.json");
    std::ofstream(bad) << R"({ "traces": ["a"], "layouts": ["valkey-9.1"], "threshold": "64" })";
    const auto refused = run({ "batch", bad });
    EXPECT_EQ(refused.exitCode, 2);
    EXPECT_NE(refused.err.find("unknown field 'threshold'"), std::string::npos) << refused.err;
}

TEST_F(CliTest, ShardsMergeIntoOneDatabase) {
    const std::string plan = path("plan.json");
    std::ofstream(plan) << R"({ "traces": [")" << seedTrace() << R"(", ")" LAYOUTLAB_DATASETS_DIR
                        << R"(/traces/mixed-sizes.lltrace"], "layouts": ["valkey-9.1", "redis-7.0", "memcached-1.6"],
        "thresholds": "64,128" })";
    for (const char* shard : { "0/2", "1/2" }) {
        const auto r = run({ "batch", plan, "--shard", shard, "--db", path(std::string("shard") + shard[0] + ".db") });
        ASSERT_EQ(r.exitCode, 0) << r.err;
    }
    const auto merged = run({ "db", "merge", path("shard0.db"), path("shard1.db"), "-o", path("all.db") });
    ASSERT_EQ(merged.exitCode, 0) << merged.err;
    EXPECT_NE(merged.err.find("merged 3 runs"), std::string::npos) << merged.err;
    EXPECT_EQ(
        run({ "db", "merge", path("shard0.db"), "-o", path("all.db") }).err.find("merged 0 runs") != std::string::npos,
        true); // merging again adds nothing
    const auto list = nlohmann::json::parse(run({ "db", "list", "--json", "--db", path("all.db") }).out);
    ASSERT_EQ(list.size(), 6u);
    // The merged results are the shards' own, and a batch on the merged database has nothing left to do.
    const auto resumed = nlohmann::json::parse(run({ "batch", plan, "--json", "--db", path("all.db") }).out);
    EXPECT_EQ(resumed["skipped"], 6);
    const auto single = run({ "batch", plan, "--json", "--db", path("single.db") });
    ASSERT_EQ(single.exitCode, 0);
    for (const auto& cell : nlohmann::json::parse(single.out)["cells"]) {
        bool found = false;
        for (const auto& other : resumed["cells"])
            if (other["cell"] == cell["cell"]) {
                found = true;
                const auto a = nlohmann::json::parse(
                    run({ "db", "show", std::to_string(cell["run"].get<int>()), "--json", "--db", path("single.db") })
                        .out);
                const auto b = nlohmann::json::parse(
                    run({ "db", "show", std::to_string(other["run"].get<int>()), "--json", "--db", path("all.db") })
                        .out);
                EXPECT_EQ(a["result"]["points"], b["result"]["points"]) << cell;
            }
        EXPECT_TRUE(found);
    }
    EXPECT_EQ(run({ "db", "check", "--db", path("all.db") }).out, "ok\n");
    EXPECT_EQ(run({ "batch", plan, "--shard", "2/2" }).exitCode, 2);
    EXPECT_EQ(run({ "db", "merge", path("all.db"), "-o", path("all.db") }).exitCode, 2);
}

TEST_F(CliTest, KilledSweepLeavesTheDatabaseConsistent) {
    // A trace long enough that the sweep is still replaying when it is killed.
    ASSERT_EQ(run({ "gen", "-o", path("long.lltrace"), "--keys", "500000", "--ops", "6000000", "--key-size",
                      "uniform:8:64", "--value-size", "lognormal:4:1:1:4000", "--seed", "4" })
                  .exitCode,
        0);
    ASSERT_EQ(run({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,128" }).exitCode, 0);
    const pid_t pid
        = spawnCli({ "sweep", path("long.lltrace"), "--layout", "valkey-9.1", "--thresholds", "16:512:16" });
    ASSERT_GT(pid, 0);
    // Kill it once its run row exists (it is then replaying), or after 100 ms at the latest.
    for (int i = 0; i < 100; ++i) {
        const auto listed = run({ "db", "list", "--json" });
        if (listed.exitCode == 0 && nlohmann::json::parse(listed.out).size() == 2)
            break;
        usleep(1000);
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));

    EXPECT_EQ(run({ "db", "check" }).out, "ok\n");
    const auto runs = nlohmann::json::parse(run({ "db", "list", "--json" }).out);
    ASSERT_GE(runs.size(), 1u);
    EXPECT_EQ(runs[0]["status"], "complete"); // the earlier run is intact
    EXPECT_EQ(runs[0]["points"], 2);
    for (std::size_t i = 1; i < runs.size(); ++i) {
        // The killed run never shows as complete, and has no half-written points.
        EXPECT_NE(runs[i]["status"], "complete");
        EXPECT_EQ(runs[i]["points"], 0);
    }
    EXPECT_EQ(run({ "db", "delete", "--incomplete" }).exitCode, 0);
}

TEST_F(CliTest, TwoProcessesWritingOneDatabaseBothSucceed) {
    std::vector<pid_t> pids;
    for (int i = 0; i < 2; ++i) {
        const pid_t pid = spawnCli({ "sweep", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "32:256:16", "-o",
            path("out" + std::to_string(i)) });
        ASSERT_GT(pid, 0);
        pids.push_back(pid);
    }
    for (const auto pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const auto runs = nlohmann::json::parse(run({ "db", "list", "--json" }).out);
    ASSERT_EQ(runs.size(), 2u);
    for (const auto& r : runs) {
        EXPECT_EQ(r["status"], "complete");
        EXPECT_EQ(r["points"], 15);
    }
}

TEST_F(CliTest, MemcachedUnderAMemoryLimitHoldsWhatItsPagesHold) {
    const auto trace = gen("mc.lltrace",
        { "--keys", "40000", "--ops", "100000", "--get-fraction", "1", "--popularity", "zipf:0.9", "--value-size",
            "96" });
    const auto r = run({ "sim", trace, "--layout", "memcached-1.6", "--memory-limit", "1mb,2mb,4mb", "--fill-on-miss",
        "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["points"].size(), 3u);
    EXPECT_EQ(j["budget"]["policy"], "memcached's segmented LRU per slab class");
    double lastHitRatio = 0;
    for (const auto& p : j["points"]) {
        const auto limit = p["maxmemory_bytes"].get<std::uint64_t>();
        // One class (16-byte keys, 96-byte values: 192-byte chunks, 5461 to a 1 MiB page): the limit's pages
        // full, each page's chunks holding a key.
        EXPECT_EQ(p["used_memory_bytes"].get<std::uint64_t>(), limit);
        EXPECT_EQ(p["keys"].get<std::uint64_t>(), limit / (1024 * 1024) * 5461);
        EXPECT_GT(p["evicted_keys"].get<std::uint64_t>(), 0u);
        EXPECT_GT(p["hit_ratio"].get<double>(), lastHitRatio) << "a larger cache hits more";
        lastHitRatio = p["hit_ratio"];
    }
    const auto table = run({ "sim", trace, "--layout", "memcached-1.6", "--memory-limit", "2mb", "--no-db" });
    ASSERT_EQ(table.exitCode, 0) << table.err;
    EXPECT_NE(table.out.find("budget     -m 2.0 MiB"), std::string::npos) << table.out;
}

TEST_F(CliTest, AMemoryBudgetGivesHitRatiosAndRefusesWhatItCannotModel) {
    const auto trace = gen(
        "zipf.lltrace", { "--keys", "5000", "--ops", "50000", "--get-fraction", "1", "--popularity", "zipf:0.9" });
    const auto r = run({ "sweep", trace, "--layout", "valkey-9.1", "--thresholds", "64,128", "--maxmemory",
        "300kb,600kb", "--base-memory", "100kb", "--policy", "allkeys-lfu", "--fill-on-miss", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["points"].size(), 4u);
    for (const auto& p : j["points"]) {
        for (const char* field : { "maxmemory_bytes", "hit_ratio", "get_hits", "get_misses", "fills", "evicted_keys",
                 "refused_writes", "used_memory_bytes" })
            EXPECT_TRUE(p.contains(field)) << field;
        EXPECT_GT(p["evicted_keys"].get<std::uint64_t>(), 0u);
        EXPECT_LE(p["used_memory_bytes"].get<std::uint64_t>(), p["maxmemory_bytes"].get<std::uint64_t>() + 256);
    }
    EXPECT_EQ(j["budget"]["policy"], "allkeys-lfu, 5 samples, lfu-log-factor 10, lfu-decay-time 1");
    EXPECT_EQ(j["budget"]["base_bytes"], 102400);
    const auto table
        = run({ "sim", trace, "--layout", "valkey-9.1", "--maxmemory", "400kb", "--policy", "allkeys-lru", "--no-db" });
    ASSERT_EQ(table.exitCode, 0) << table.err;
    EXPECT_NE(table.out.find("hit ratio"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("budget     maxmemory 400.0 KiB (allkeys-lru, 5 samples)"), std::string::npos)
        << table.out;

    // Bad input: one line naming what is wrong, nothing run.
    const auto unknown = run({ "sim", trace, "--layout", "valkey-9.1", "--maxmemory", "1mb", "--policy", "lru" });
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("known: volatile-lru"), std::string::npos) << unknown.err;
    const auto small = run({ "sim", trace, "--layout", "valkey-9.1", "--maxmemory", "1kb", "--base-memory", "1mb" });
    EXPECT_EQ(small.exitCode, 2);
    EXPECT_NE(small.err.find("leaves nothing for keys"), std::string::npos) << small.err;
    const auto memcached = run({ "sim", trace, "--layout", "memcached-1.6", "--maxmemory", "1mb" });
    EXPECT_EQ(memcached.exitCode, 2);
    EXPECT_NE(memcached.err.find("--memory-limit"), std::string::npos) << memcached.err;
    const auto limitOnValkey = run({ "sim", trace, "--layout", "valkey-9.1", "--memory-limit", "1mb" });
    EXPECT_EQ(limitOnValkey.exitCode, 2);
    EXPECT_NE(limitOnValkey.err.find("--maxmemory"), std::string::npos) << limitOnValkey.err;
    const auto memcachedPolicy
        = run({ "sim", trace, "--layout", "memcached-1.6", "--memory-limit", "1mb", "--policy", "allkeys-lru" });
    EXPECT_EQ(memcachedPolicy.exitCode, 2);
    EXPECT_NE(memcachedPolicy.err.find("segmented LRU"), std::string::npos) << memcachedPolicy.err;
    // memcached.c refuses a slab_automove_window under 3 ("must be > 2"); 0 is no page mover.
    const auto shortWindow = run(
        { "sim", trace, "--layout", "memcached-1.6", "--memory-limit", "1mb", "--automove-window", "2", "--no-db" });
    EXPECT_EQ(shortWindow.exitCode, 2);
    EXPECT_NE(shortWindow.err.find("--automove-window"), std::string::npos) << shortWindow.err;
    const auto windowOnValkey = run({ "drive", trace, "--engine", "valkey", "--automove-window", "3", "--no-db" });
    EXPECT_EQ(windowOnValkey.exitCode, 2);
    EXPECT_NE(windowOnValkey.err.find("--engine memcached"), std::string::npos) << windowOnValkey.err;
    for (const char* rate : { "0", "1.5", "-0.1" }) {
        const auto badRate
            = run({ "sim", trace, "--layout", "valkey-9.1", "--maxmemory", "1mb", "--sample-rate", rate, "--no-db" });
        EXPECT_EQ(badRate.exitCode, 2) << rate;
        EXPECT_NE(badRate.err.find("--sample-rate"), std::string::npos) << badRate.err;
    }
    const auto sampledMemcached = run(
        { "sim", trace, "--layout", "memcached-1.6", "--memory-limit", "4mb", "--sample-rate", "0.1", "--no-db" });
    EXPECT_EQ(sampledMemcached.exitCode, 2);
    EXPECT_NE(sampledMemcached.err.find("1 MiB pages"), std::string::npos) << sampledMemcached.err;
    const auto sampled = run({ "sim", trace, "--layout", "valkey-9.1", "--maxmemory", "300kb:600kb:4", "--base-memory",
        "100kb", "--policy", "allkeys-lru", "--sample-rate", "0.5", "--no-db", "--json" });
    ASSERT_EQ(sampled.exitCode, 0) << sampled.err;
    const auto sj = nlohmann::json::parse(sampled.out);
    EXPECT_EQ(sj["points"].size(), 4u);
    EXPECT_EQ(sj["budget"]["sample_rate"], 0.5);
    EXPECT_GT(sj["budget"]["sampled_keys"].get<std::uint64_t>(), 1000u);
    const auto withSlabs = run({ "sim", trace, "--layout", "valkey-9.1", "--maxmemory", "1mb", "--slabs" });
    EXPECT_EQ(withSlabs.exitCode, 2);
    const auto policyAlone = run({ "sim", trace, "--layout", "valkey-9.1", "--policy", "allkeys-lru" });
    EXPECT_NE(policyAlone.exitCode, 0);

    // A trace of reads only (oracleGeneral) is a cache's by default: its first reads miss and are filled.
    std::string oracle;
    auto record = [&oracle](std::uint32_t t, std::uint64_t id, std::uint32_t size) {
        for (int i = 0; i < 4; ++i)
            oracle.push_back(static_cast<char>(t >> (8 * i)));
        for (int i = 0; i < 8; ++i)
            oracle.push_back(static_cast<char>(id >> (8 * i)));
        for (int i = 0; i < 4; ++i)
            oracle.push_back(static_cast<char>(size >> (8 * i)));
        oracle.append(8, '\xff');
    };
    for (std::uint32_t i = 0; i < 30; ++i)
        record(i, i % 10, 116); // ten objects read three times each
    std::ofstream(path("reads.oracleGeneral.bin"), std::ios::binary) << oracle;
    const auto filled = run({ "sim", path("reads.oracleGeneral.bin"), "--format", "oracle", "--layout", "valkey-9.1",
        "--json", "--no-db" });
    ASSERT_EQ(filled.exitCode, 0) << filled.err;
    const auto fj = nlohmann::json::parse(filled.out);
    EXPECT_EQ(fj["replay"]["get_misses"], 10);
    EXPECT_EQ(fj["replay"]["fills"], 10);
    EXPECT_EQ(fj["replay"]["get_hits"], 20);
    const auto ahead = run({ "sim", path("reads.oracleGeneral.bin"), "--format", "oracle", "--layout", "valkey-9.1",
        "--no-fill-on-miss", "--json", "--no-db" });
    ASSERT_EQ(ahead.exitCode, 0) << ahead.err;
    EXPECT_EQ(nlohmann::json::parse(ahead.out)["replay"]["get_misses"], 0); // the importer's SETs came first

    // Stored, a curve comes back from the database with its budgets, and `report` charts it.
    const auto db = path("budget.db");
    const auto stored = run({ "sweep", trace, "--layout", "valkey-9.1", "--thresholds", "64,128", "--maxmemory",
        "300kb:1200kb:3", "--policy", "allkeys-lru", "--fill-on-miss", "--db", db });
    ASSERT_EQ(stored.exitCode, 0) << stored.err;
    const auto shown = run({ "db", "show", "1", "--db", db, "--json" });
    ASSERT_EQ(shown.exitCode, 0) << shown.err;
    const auto back = nlohmann::json::parse(shown.out);
    EXPECT_NE(back.dump().find("\"maxmemory_bytes\":307200"), std::string::npos) << shown.out.substr(0, 400);
    const auto report = run({ "report", "1", "--db", db, "-o", path("report") });
    ASSERT_EQ(report.exitCode, 0) << report.err;
    EXPECT_TRUE(std::filesystem::exists(path("report") + "/run-1-hit-ratio.svg"));
}

} // namespace
