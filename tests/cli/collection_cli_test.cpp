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

} // namespace
