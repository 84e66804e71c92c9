// SPDX-License-Identifier: MIT
// Layout files from the command line: --layout-file wherever --layout is taken, batch plans in TOML with
// layout_files, the file's text stored with each run, and clear refusals.

#include "cli_runner.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using layoutlab::test::slurp;
using CliTest = layoutlab::test::CliTestBase;

const std::string kLayouts = LAYOUTLAB_DATASETS_DIR "/layouts/";

TEST_F(CliTest, LayoutFileGivesTheBuiltInSweepOnEveryCommand) {
    const auto byName
        = run({ "sweep", seedTrace(), "--layout", "redis-7.0", "--thresholds", "16:128:16", "--json", "--no-db" });
    const auto byFile = run({ "sweep", seedTrace(), "--layout-file", kLayouts + "redis-7.0.toml", "--thresholds",
        "16:128:16", "--json", "--no-db" });
    ASSERT_EQ(byName.exitCode, 0) << byName.err;
    ASSERT_EQ(byFile.exitCode, 0) << byFile.err;
    const auto a = nlohmann::json::parse(byName.out);
    const auto b = nlohmann::json::parse(byFile.out);
    EXPECT_EQ(a["points"], b["points"]);
    EXPECT_EQ(b["layout"].get<std::string>().rfind("file:" + kLayouts + "redis-7.0.toml#", 0), 0u) << b["layout"];

    const auto sim = run({ "sim", seedTrace(), "--layout-file", kLayouts + "memcached-1.6.toml", "--no-db" });
    EXPECT_EQ(sim.exitCode, 0) << sim.err;
    const auto advise = run(
        { "advise", seedTrace(), "--layout-file", kLayouts + "valkey-9.1.toml", "--no-cache", "--json", "--no-db" });
    ASSERT_EQ(advise.exitCode, 0) << advise.err;
    EXPECT_EQ(nlohmann::json::parse(advise.out)["advised"]["threshold"], 128);
    const auto check = run({ "layouts", "--layout-file", kLayouts + "valkey-wide-buckets.toml" });
    EXPECT_EQ(check.exitCode, 0) << check.err;
    EXPECT_NE(check.out.find("128-byte buckets of 14 entries (changed from the engine's)"), std::string::npos)
        << check.out;
}

TEST_F(CliTest, LayoutFileRefusalsAreClear) {
    // One layout: --layout or --layout-file, never both (`advise` weighs one layout's thresholds).
    EXPECT_EQ(run({ "advise", seedTrace(), "--layout", "valkey-9.1", "--layout-file", kLayouts + "valkey-9.1.toml" })
                  .exitCode,
        2);
    // `sim` puts both side by side: the file written from the built-in model gives the same figures.
    const auto both = run({ "sim", seedTrace(), "--layout", "valkey-9.1", "--layout-file", kLayouts + "valkey-9.1.toml",
        "--json", "--no-db" });
    ASSERT_EQ(both.exitCode, 0) << both.err;
    const auto rows = nlohmann::json::parse(both.out)["rows"];
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_DOUBLE_EQ(rows[0]["bytes_per_key"].get<double>(), rows[1]["bytes_per_key"].get<double>());
    EXPECT_NE(rows[1]["layout"].get<std::string>().find("valkey-9.1.toml"), std::string::npos);
    const auto none = run({ "sim", seedTrace(), "--no-db" });
    EXPECT_EQ(none.exitCode, 2);
    EXPECT_NE(none.err.find("--layout NAME"), std::string::npos) << none.err;
    // A malformed file: exit 1, one line with the file, line and field.
    const std::string bad = path("bad.toml");
    std::ofstream(bad) << "[layout]\nname = \"x\"\nsize = 3\n";
    const auto refused = run({ "sim", seedTrace(), "--layout-file", bad, "--no-db" });
    EXPECT_EQ(refused.exitCode, 1);
    EXPECT_EQ(refused.err,
        "layoutlab: error: " + bad
            + ": line 3: field layout.size: unknown field (known here: name, "
              "description, allocator, allocators)\n");
    // profile's reference engine builds only the engines' own hash tables.
    const auto profile = run({ "profile", seedTrace(), "--layout-file", kLayouts + "valkey-wide-buckets.toml",
        "--counters", "none", "--no-db" });
    EXPECT_EQ(profile.exitCode, 2);
    EXPECT_NE(profile.err.find("changes the [index] geometry"), std::string::npos) << profile.err;
}

TEST_F(CliTest, TomlPlanWithLayoutFilesRunsResumesAndRerunsAnEditedFile) {
    const std::string layout = path("what-if.toml");
    std::filesystem::copy_file(kLayouts + "valkey-no-value-pointer.toml", layout);
    const std::string plan = path("plan.toml");
    std::ofstream(plan) << "traces = [\"" << seedTrace() << "\"]\nlayouts = [\"valkey-8.1\"]\n"
                        << "layout_files = [\"what-if.toml\"]\nthresholds = \"32:128:32\"\n";
    const auto first = run({ "batch", plan, "--json" });
    ASSERT_EQ(first.exitCode, 0) << first.err;
    const auto j = nlohmann::json::parse(first.out);
    ASSERT_EQ(j["cells"].size(), 2u);
    EXPECT_EQ(j["cells"][1]["layout"], "file:" + layout);
    // The run keeps the file as it was.
    const auto shown = run({ "db", "show", std::to_string(j["cells"][1]["run"].get<int>()), "--json" });
    ASSERT_EQ(shown.exitCode, 0) << shown.err;
    EXPECT_EQ(nlohmann::json::parse(shown.out)["parameters"]["layout_file"]["text"], slurp(layout));
    // And its name: the file's own `name`, in the summary and wherever runs are listed.
    EXPECT_EQ(j["cells"][0]["layout_name"], "valkey-8.1");
    EXPECT_EQ(j["cells"][1]["layout_name"], "valkey-8.1-no-value-pointer");
    const auto listed = [&] {
        for (const auto& r : nlohmann::json::parse(run({ "db", "list", "--json" }).out))
            if (r["id"] == j["cells"][1]["run"])
                return r["layout_name"].get<std::string>();
        return std::string("(not listed)");
    };
    EXPECT_EQ(listed(), "valkey-8.1-no-value-pointer");
    std::filesystem::rename(layout, layout + ".moved"); // kept with the run, not read from the file
    EXPECT_EQ(listed(), "valkey-8.1-no-value-pointer");
    std::filesystem::rename(layout + ".moved", layout);
    // Resumed: nothing to do; the edited file's cell runs again.
    EXPECT_EQ(nlohmann::json::parse(run({ "batch", plan, "--json" }).out)["skipped"], 2);
    std::ofstream(layout, std::ios::app) << "# edited\n";
    const auto edited = nlohmann::json::parse(run({ "batch", plan, "--json" }).out);
    EXPECT_EQ(edited["skipped"], 1);
    EXPECT_EQ(edited["ran"], 1);
    // The bundled TOML plan, as docs/batch.md runs it.
    const auto example
        = run({ "batch", LAYOUTLAB_DATASETS_DIR "/plans/layout-files.toml", "--json", "--db", path("ex.db") });
    ASSERT_EQ(example.exitCode, 0) << example.err;
    EXPECT_EQ(nlohmann::json::parse(example.out)["cells"].size(), 8u);
    // TOML syntax errors name the line.
    std::ofstream(path("bad.toml")) << "traces = [\n";
    const auto bad = run({ "batch", path("bad.toml") });
    EXPECT_EQ(bad.exitCode, 1);
    EXPECT_NE(bad.err.find("bad.toml: line"), std::string::npos) << bad.err;
}

} // namespace
