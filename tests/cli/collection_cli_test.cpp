// SPDX-License-Identifier: MIT
// Collection workloads through the command line: `gen --set-members` and `--hash-fields`, `sim` with its
// collection lines and JSON, the results database keeping the rows, `db show` and `report` reading them back.

#include "cli_runner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>

namespace {

using CliTest = layoutlab::test::CliTestBase;

TEST_F(CliTest, ACollectionRunIsStoredAndReportedByTypeAndEncoding) {
    const auto gen = run({ "gen", "-o", path("sets.lltrace"), "--keys", "3000", "--set-members", "uniform:1:700",
        "--member-size", "uniform:2:12", "--int-values", "0.4", "--ops", "20000", "--delete-fraction", "0.05" });
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    EXPECT_NE(gen.err.find("set keys"), std::string::npos) << gen.err;
    const auto sim = run({ "sim", path("sets.lltrace"), "--layout", "redis-7.2", "--json", "--db", path("runs.db") });
    ASSERT_EQ(sim.exitCode, 0) << sim.err;
    const auto j = nlohmann::json::parse(sim.out);
    ASSERT_TRUE(j.contains("collections")) << sim.out;
    std::set<std::string> encodings;
    std::uint64_t keys = 0;
    for (const auto& row : j["collections"]) {
        EXPECT_EQ(row["type"], "set");
        encodings.insert(row["encoding"].get<std::string>());
        keys += row["keys"].get<std::uint64_t>();
    }
    EXPECT_EQ(encodings, (std::set<std::string> { "hashtable", "intset", "listpack" }));
    EXPECT_EQ(keys, j["points"][0]["keys"].get<std::uint64_t>()); // every live key is a set
    // Stored, and read back as the run gave them.
    const auto shown = run({ "db", "show", "1", "--json", "--db", path("runs.db") });
    ASSERT_EQ(shown.exitCode, 0) << shown.err;
    EXPECT_EQ(nlohmann::json::parse(shown.out)["result"]["collections"], j["collections"]);
    const auto report = run({ "report", "1", "-o", path("report"), "--db", path("runs.db") });
    ASSERT_EQ(report.exitCode, 0) << report.err;
    const auto html = layoutlab::test::slurp(path("report") + "/index.html");
    EXPECT_NE(html.find("<h3>Collection keys</h3>"), std::string::npos);
    EXPECT_NE(html.find("<td>intset</td>"), std::string::npos);
    // A hash and a set at once is refused with one line; memcached has no collections.
    const auto both
        = run({ "gen", "-o", path("x.lltrace"), "--keys", "10", "--set-members", "3", "--hash-fields", "3" });
    EXPECT_EQ(both.exitCode, 2);
    EXPECT_NE(both.err.find("--set-members"), std::string::npos) << both.err;
    const auto memcached = run({ "sim", path("sets.lltrace"), "--layout", "memcached-1.6", "--no-db" });
    EXPECT_NE(memcached.exitCode, 0);
    EXPECT_NE(memcached.err.find("no collection model"), std::string::npos) << memcached.err;
}

// A limit as a run's setting (sim --hash-max-listpack-entries) and swept (sweep --param), in the table and the
// JSON; the run's parameters keep both; a bad sweep names --param.
TEST_F(CliTest, ACollectionLimitIsSetOrSweptInOnePass) {
    const auto gen = run({ "gen", "-o", path("hashes.lltrace"), "--keys", "2000", "--hash-fields", "uniform:1:400",
        "--value-size", "uniform:1:40", "--ops", "5000" });
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const auto swept = run({ "sweep", path("hashes.lltrace"), "--layout", "valkey-9.1", "--param",
        "hash-max-listpack-entries=128,512,1024", "--json", "--db", path("runs.db") });
    ASSERT_EQ(swept.exitCode, 0) << swept.err;
    const auto j = nlohmann::json::parse(swept.out);
    ASSERT_TRUE(j.contains("limit_sweep")) << swept.out;
    EXPECT_EQ(j["limit_sweep"]["name"], "hash-max-listpack-entries");
    EXPECT_EQ(j["limit_sweep"]["run_value"], 512);
    ASSERT_EQ(j["limit_sweep"]["points"].size(), 3u);
    // Each value as a run of its own gives: the value's bytes per key.
    for (const auto& point : j["limit_sweep"]["points"]) {
        const auto value = std::to_string(point["value"].get<std::int64_t>());
        const auto alone = run({ "sim", path("hashes.lltrace"), "--layout", "valkey-9.1", "--hash-max-listpack-entries",
            value, "--json", "--no-db" });
        ASSERT_EQ(alone.exitCode, 0) << alone.err;
        EXPECT_DOUBLE_EQ(point["usable_bytes_per_key"].get<double>(),
            nlohmann::json::parse(alone.out)["points"][0]["usable_bytes_per_key"].get<double>())
            << value;
    }
    EXPECT_NE(
        j["limit_sweep"]["points"][0]["usable_bytes_per_key"], j["limit_sweep"]["points"][1]["usable_bytes_per_key"])
        << "128 entries and 512 hold these hashes alike: the sweep shows nothing";
    const auto table = run({ "sweep", path("hashes.lltrace"), "--layout", "valkey-9.1", "--param",
        "hash-max-listpack-entries=128:1024:128", "--no-db" });
    ASSERT_EQ(table.exitCode, 0) << table.err;
    EXPECT_NE(table.out.find("hash-max-listpack-entries swept in the same pass"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("fewest bytes per key: hash-max-listpack-entries ="), std::string::npos) << table.out;
    const auto shown = run({ "db", "show", "1", "--json", "--db", path("runs.db") });
    ASSERT_EQ(shown.exitCode, 0) << shown.err;
    // Stored: the run read back gives the same values, bytes and collections.
    EXPECT_EQ(nlohmann::json::parse(shown.out)["result"]["limit_sweep"], j["limit_sweep"]) << shown.out;
    // The report charts it and tables each value with its lines per HGET.
    const auto report = run({ "report", "1", "-o", path("report"), "--db", path("runs.db") });
    ASSERT_EQ(report.exitCode, 0) << report.err;
    const auto html = layoutlab::test::slurp(path("report") + "/index.html");
    EXPECT_NE(html.find("<h3>hash-max-listpack-entries swept</h3>"), std::string::npos);
    EXPECT_NE(html.find("<th>lines/HGET</th>"), std::string::npos);
    EXPECT_NE(layoutlab::test::slurp(path("report") + "/run-1-limit.svg").find("<svg"), std::string::npos);
    const auto bad = run({ "sweep", path("hashes.lltrace"), "--layout", "valkey-9.1", "--param",
        "list-max-listpack-size=0", "--no-db" });
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("--param"), std::string::npos) << bad.err;
    const auto neither = run({ "sweep", path("hashes.lltrace"), "--layout", "valkey-9.1", "--no-db" });
    EXPECT_EQ(neither.exitCode, 2);
    EXPECT_NE(neither.err.find("--thresholds, --param"), std::string::npos) << neither.err;
}

// advise --param weighs a limit's values: bytes per key against the lines each lookup reads. Weighing only
// memory advises the leanest value, only lookups the fewest lines; values that hold the keys alike tie, and the
// engine's default among them is advised.
TEST_F(CliTest, AdviseWeighsACollectionLimitsValues) {
    const auto gen = run({ "gen", "-o", path("hashes.lltrace"), "--keys", "3000", "--hash-fields",
        "lognormal:3.5:1:1:2000", "--value-size", "uniform:4:40", "--ops", "3000" });
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    auto advise = [&](std::vector<std::string> extra) {
        std::vector<std::string> args { "advise", path("hashes.lltrace"), "--layout", "valkey-9.1", "--param",
            "hash-max-listpack-entries=16,64,256,512,2048", "--json", "--no-db" };
        args.insert(args.end(), extra.begin(), extra.end());
        const auto out = run(args);
        EXPECT_EQ(out.exitCode, 0) << out.err;
        return out.exitCode == 0 ? nlohmann::json::parse(out.out) : nlohmann::json {};
    };
    const auto both = advise({});
    ASSERT_EQ(both["points"].size(), 5u);
    EXPECT_EQ(both["lookup"], "HGET");
    EXPECT_EQ(both["default_value"], 512);
    // Listpacks hold these hashes in fewer bytes and read more lines the more fields they take.
    for (std::size_t i = 1; i < 5; ++i) {
        EXPECT_LT(
            both["points"][i]["bytes_per_key"].get<double>(), both["points"][i - 1]["bytes_per_key"].get<double>());
        EXPECT_GT(both["points"][i]["lookup_lines_per_element"].get<double>(),
            both["points"][i - 1]["lookup_lines_per_element"].get<double>());
    }
    EXPECT_EQ(advise({ "--weight-misses", "0" })["advised"]["value"], 2048);
    EXPECT_EQ(advise({ "--weight-memory", "0" })["advised"]["value"], 16);
    // Values above every hash's fields change nothing: they tie (the engine's default among such values would
    // be advised: LimitAdvice's unit test).
    const auto alike = run({ "advise", path("hashes.lltrace"), "--layout", "valkey-9.1", "--param",
        "hash-max-listpack-entries=30000,40000,50000", "--no-db" });
    ASSERT_EQ(alike.exitCode, 0) << alike.err;
    EXPECT_NE(alike.out.find("advised hash-max-listpack-entries: 30000"), std::string::npos) << alike.out;
    EXPECT_NE(alike.out.find("~ ties"), std::string::npos) << alike.out;
    EXPECT_NE(alike.out.find("the default, 512, is not among the values"), std::string::npos) << alike.out;
    // Refused in one line each: a limit of a type the trace lacks, thresholds beside --param, memcached.
    const auto noSets = run({ "advise", path("hashes.lltrace"), "--layout", "valkey-9.1", "--param",
        "set-max-intset-entries=64,512", "--no-db" });
    EXPECT_EQ(noSets.exitCode, 2);
    EXPECT_NE(noSets.err.find("holds no set keys"), std::string::npos) << noSets.err;
    const auto thresholds = run({ "advise", path("hashes.lltrace"), "--param", "hash-max-listpack-entries=64,512",
        "--thresholds", "64,128", "--no-db" });
    EXPECT_EQ(thresholds.exitCode, 2);
    EXPECT_NE(thresholds.err.find("--thresholds"), std::string::npos) << thresholds.err;
    const auto memcached = run({ "advise", path("hashes.lltrace"), "--layout", "memcached", "--param",
        "hash-max-listpack-entries=64,512", "--no-db" });
    EXPECT_EQ(memcached.exitCode, 2) << memcached.out;
    // The embed threshold's advice on a trace of hashes says why its thresholds tie, and which limit moves them.
    const auto byThreshold = run({ "advise", path("hashes.lltrace"), "--layout", "valkey-9.1", "--no-db" });
    ASSERT_EQ(byThreshold.exitCode, 0) << byThreshold.err;
    EXPECT_NE(byThreshold.out.find("every key of this trace is a collection"), std::string::npos) << byThreshold.out;
    EXPECT_NE(byThreshold.out.find("advise --param hash-max-listpack-entries="), std::string::npos) << byThreshold.out;
}

} // namespace
