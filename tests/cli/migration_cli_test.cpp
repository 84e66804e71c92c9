// SPDX-License-Identifier: MIT
// Engines and versions side by side from the command line: sim and sweep of several layouts (each at the
// setting its engine ships with), the report's section of them, and compare of runs of different layouts.

#include "cli_runner.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using layoutlab::test::slurp;
using CliTest = layoutlab::test::CliTestBase;

// Several layouts side by side: each row is the layout's own `sim` at its shipped setting, the totals
// scale with the keys asked, the saving is against the first row, and each run is stored on its own.
TEST_F(CliTest, SeveralLayoutsSideBySideAreEachLayoutsOwnSim) {
    const std::string trace = LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace";
    const std::vector<std::string> layouts { "redis-7.0", "valkey-8.1", "valkey-9.1", "memcached-1.6:framing=rails-7.1",
        "valkey-9.1:threshold=96" };
    std::vector<std::string> args { "sim", trace, "--keys-at", "20M", "--json" };
    for (const auto& l : layouts)
        args.insert(args.end(), { "--layout", l });
    const auto r = run(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto table = nlohmann::json::parse(r.out);
    ASSERT_EQ(table["rows"].size(), layouts.size());
    EXPECT_EQ(table["keys_at"], 20000000);
    const double first = table["rows"][0]["scaled_bytes"];
    for (std::size_t i = 0; i < layouts.size(); ++i) {
        const auto& row = table["rows"][i];
        EXPECT_EQ(row["layout"], layouts[i]);
        const auto alone = run({ "sim", trace, "--layout", layouts[i], "--json", "--no-db" });
        ASSERT_EQ(alone.exitCode, 0) << alone.err;
        const auto point = nlohmann::json::parse(alone.out)["points"][0];
        EXPECT_NEAR(row["bytes_per_key"].get<double>(), point["usable_bytes_per_key"].get<double>(), 1e-3)
            << layouts[i];
        EXPECT_NEAR(row["scaled_bytes"].get<double>(), row["bytes_per_key"].get<double>() * 20e6, 1.0);
        EXPECT_NEAR(row["saving_bytes"].get<double>(), first - row["scaled_bytes"].get<double>(), 1.0);
    }
    EXPECT_TRUE(table["rows"][0]["measured"].get<bool>()); // redis-7.0 was driven on Debian's build
    EXPECT_TRUE(table["rows"][2]["measured"].get<bool>()); // 9.1.0 built from source
    EXPECT_FALSE(table["rows"][4]["measured"].get<bool>()); // no build at 96 was measured
    const auto list = run({ "db", "list", "--json" });
    EXPECT_EQ(nlohmann::json::parse(list.out).size(), layouts.size()); // one sim run per layout
    // Refusals: a key count that is not one, --keys-at for one layout, a threshold out of one layout's range
    // (named).
    const auto outOfRange
        = run({ "sweep", trace, "--layout", "valkey-8.1", "--layout", "redis-7.0", "--thresholds", "8,64" });
    EXPECT_EQ(outOfRange.exitCode, 2);
    EXPECT_NE(outOfRange.err.find("valkey-8.1: "), std::string::npos) << outOfRange.err;
    const auto keys = run({ "sim", trace, "--layout", "valkey-8.1", "--layout", "valkey-9.1", "--keys-at", "20X" });
    EXPECT_EQ(keys.exitCode, 2);
    EXPECT_NE(keys.err.find("--keys-at: '20X' is not a key count"), std::string::npos) << keys.err;
    const auto one = run({ "sim", trace, "--layout", "valkey-8.1", "--keys-at", "20M" });
    EXPECT_EQ(one.exitCode, 2);
}

// A sweep of several layouts: the same rows as `sim` of them (each at its shipped setting, evaluated whether
// or not the thresholds hold it), and each layout's leanest is its own sweep's.
TEST_F(CliTest, SweepOfSeveralLayoutsAddsEachOnesLeanest) {
    const std::string trace = LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace";
    const std::vector<std::string> layouts { "redis-7.0", "valkey-8.1", "valkey-9.1", "memcached-1.6" };
    std::vector<std::string> sweepArgs { "sweep", trace, "--thresholds", "16:256:32", "--json" };
    std::vector<std::string> simArgs { "sim", trace, "--json", "--no-db" };
    for (const auto& l : layouts) {
        sweepArgs.insert(sweepArgs.end(), { "--layout", l });
        simArgs.insert(simArgs.end(), { "--layout", l });
    }
    const auto r = run(sweepArgs);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto swept = nlohmann::json::parse(r.out);
    const auto simmed = nlohmann::json::parse(run(simArgs).out);
    EXPECT_EQ(swept["swept_thresholds"], "16:256:32");
    ASSERT_EQ(swept["rows"].size(), layouts.size());
    for (std::size_t i = 0; i < layouts.size(); ++i) {
        const auto& row = swept["rows"][i];
        EXPECT_DOUBLE_EQ(row["bytes_per_key"].get<double>(), simmed["rows"][i]["bytes_per_key"].get<double>())
            << layouts[i]; // 44 (Redis) and 64 (Valkey 8.1) are not in 16:256:32, yet are the rows
        EXPECT_EQ(row["threshold"], simmed["rows"][i]["threshold"]) << layouts[i];
        if (layouts[i].starts_with("memcached")) {
            EXPECT_TRUE(row["leanest_threshold"].is_null());
            continue;
        }
        const auto alone
            = run({ "sweep", trace, "--layout", layouts[i], "--thresholds", "16:256:32", "--json", "--no-db" });
        const auto points = nlohmann::json::parse(alone.out)["points"];
        double leanest = 1e300;
        for (const auto& p : points)
            leanest = std::min(leanest, p["usable_bytes_per_key"].get<double>());
        // The leanest of the thresholds given or the shipped one, never above the shipped.
        EXPECT_LE(row["leanest_bytes_per_key"].get<double>(), leanest + 1e-3) << layouts[i];
        EXPECT_LE(row["leanest_bytes_per_key"].get<double>(), row["bytes_per_key"].get<double>()) << layouts[i];
    }
    // Every layout's run is stored: sweeps, and memcached's one point.
    const auto list = nlohmann::json::parse(run({ "db", "list", "--json" }).out);
    ASSERT_EQ(list.size(), layouts.size());
    for (std::size_t i = 0; i < layouts.size(); ++i) {
        EXPECT_EQ(list[i]["layout_name"], layouts[i]);
        EXPECT_EQ(list[i]["kind"], layouts[i].starts_with("memcached") ? "sim" : "sweep");
    }
    // The report of those runs has the migration section: a bar per layout at its shipped setting, and the
    // table's figures.
    ASSERT_EQ(run({ "report", "1", "2", "3", "4", "-o", path("report") }).exitCode, 0);
    const std::string html = slurp(path("report") + "/index.html");
    const auto section = html.find("<section id=\"migration\">");
    ASSERT_NE(section, std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(path("report") + "/migration.svg"));
    for (std::size_t i = 0; i < layouts.size(); ++i) {
        EXPECT_NE(html.find(layouts[i], section), std::string::npos) << layouts[i];
        EXPECT_NE(html.find(fmt::format("<td>{:.2f}</td>", swept["rows"][i]["bytes_per_key"].get<double>()), section),
            std::string::npos)
            << layouts[i];
    }
    // One layout's runs alone: no migration section.
    ASSERT_EQ(run({ "report", "2", "-o", path("one") }).exitCode, 0);
    EXPECT_EQ(slurp(path("one") + "/index.html").find("id=\"migration\""), std::string::npos);
}

// Runs of different layouts meet at the settings their engines ship with; thresholds one run lacks are
// said, not counted as differences (a Valkey sweep against a Redis sim compared nothing before).
TEST_F(CliTest, CompareOfTwoLayoutsMeetsAtTheirShippedSettings) {
    const std::string trace = LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace";
    ASSERT_EQ(run({ "sweep", trace, "--layout", "valkey-9.1", "--thresholds", "32:256:32" }).exitCode, 0);
    ASSERT_EQ(run({ "sim", trace, "--layout", "redis-7.0" }).exitCode, 0);
    const auto r = run({ "compare", "1", "2", "--json" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("shipped")) << r.out;
    EXPECT_EQ(j["shipped"]["a_threshold"], 128);
    EXPECT_EQ(j["shipped"]["b_threshold"], 44);
    const auto valkey = nlohmann::json::parse(
        run({ "sim", trace, "--layout", "valkey-9.1", "--json", "--no-db" }).out)["points"][0]["usable_bytes_per_key"];
    const auto redis = nlohmann::json::parse(
        run({ "sim", trace, "--layout", "redis-7.0", "--json", "--no-db" }).out)["points"][0]["usable_bytes_per_key"];
    bool found = false;
    for (const auto& m : j["shipped"]["metrics"])
        if (m["name"] == "usable_bytes_per_key") {
            found = true;
            EXPECT_NEAR(m["a"].get<double>(), valkey.get<double>(), 1e-4); // --json rounds to 4 decimals
            EXPECT_NEAR(m["b"].get<double>(), redis.get<double>(), 1e-4);
        }
    EXPECT_TRUE(found);
    EXPECT_GT(j["values_compared"].get<int>(), 0);
    EXPECT_EQ(j["points_in_one_run_only"], 9); // 32..256 and 44: no threshold in common
    const auto text = run({ "compare", "1", "2" });
    EXPECT_NE(text.out.find("at the settings their engines ship with (A at 128, B at 44)"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("A  run 1  sweep  valkey-9.1"), std::string::npos) << text.out; // by preset name
    EXPECT_NE(text.out.find("9 thresholds are in one run only (not differences)"), std::string::npos) << text.out;
}

} // namespace
