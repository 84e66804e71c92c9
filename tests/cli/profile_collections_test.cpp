// SPDX-License-Identifier: MIT
// `layoutlab profile` on traces that hold collections: the reference engine makes and frees each collection
// change's allocations in its private jemalloc arena, and the arena's stats.allocated and stats.active must
// equal the slab model's prediction (the target: within 0.1%) on every collection workload the real-server
// tests run (every type's commands across its limits, renames, SPOP, moves between keys, the algebra's STOREs),
// each on one engine line (Valkey 9.1's at two thresholds), with limits changed, and on generated churn of each
// type.

#include "cli_runner.h"
#include "collection_workloads.h"
#include "drive_traces.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace {

using layoutlab::test::Workload;

class ProfileCollectionsTest : public layoutlab::test::CliTestBase {
protected:
    // The workload's commands as a MONITOR capture would show them.
    std::string writeCapture(const Workload& workload) const {
        const auto file = path(workload.name + ".monitor");
        std::ofstream out(file);
        out << "OK\n";
        std::uint64_t n = 0;
        for (const auto& command : workload.commands)
            out << layoutlab::test::monitorLine(++n, command);
        return file;
    }
    // `profile` of the trace without counters: each point's arena figures against the prediction's.
    void expectArenaMatches(const std::string& trace, const std::string& layout, std::vector<std::string> extra) {
        std::vector<std::string> args { "profile", trace, "--layout", layout, "--counters", "none", "--json", "--no-db",
            "--cache-geometry", "32K:8,256K:8" };
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run(args);
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        ASSERT_FALSE(j["points"].empty());
        for (const auto& p : j["points"]) {
            SCOPED_TRACE(p["threshold"].dump());
            ASSERT_TRUE(p["predicted_allocated_bytes"].is_number());
            const auto predictedActive = p["predicted_active_bytes"].get<double>();
            EXPECT_EQ(p["measured_allocated_bytes"], p["predicted_allocated_bytes"]);
            EXPECT_NEAR(p["measured_active_bytes"].get<double>(), predictedActive, 0.001 * predictedActive);
            EXPECT_GT(p["measured_allocated_bytes"].get<double>(), 0);
        }
    }
};

// Each line's layout at its own threshold, and Valkey 9.1's at another too: its client EMBSTR limit follows the
// threshold, so the argument objects' classes change with it (CollectionArguments).
const std::vector<std::pair<const char*, const char*>> kLayouts { { "valkey-9.1", "32,128" }, { "valkey-8.1", "64" },
    { "valkey-8.0", "44" }, { "redis-7.0", "44" }, { "redis-7.2", "44" } };

TEST_F(ProfileCollectionsTest, EveryCollectionWorkloadsArenaEqualsTheSlabModel) {
    // Each workload on one engine line in turn: every line meets three or four of the sixteen.
    const auto workloads = layoutlab::test::collectionWorkloads();
    for (std::size_t w = 0; w < workloads.size(); ++w) {
        const auto& [layout, thresholds] = kLayouts[w % kLayouts.size()];
        SCOPED_TRACE(workloads[w].name + " " + layout);
        expectArenaMatches(writeCapture(workloads[w]), layout, { "--thresholds", thresholds });
    }
}

TEST_F(ProfileCollectionsTest, ChangedLimitsReachTheReferenceEngine) {
    // Small limits convert most keys to their full encodings: tables, skiplists, quicklists of many nodes.
    const Workload workload = layoutlab::test::hashesGrown(300);
    const std::string trace = writeCapture(workload);
    for (const char* layout : { "valkey-9.1", "redis-7.0" }) {
        SCOPED_TRACE(layout);
        expectArenaMatches(trace, layout,
            { "--hash-max-listpack-entries", "8", "--set-max-intset-entries", "4", "--zset-max-listpack-entries", "4",
                "--list-max-listpack-size", "2" });
    }
    // The limits are part of the prediction too: with them the arena holds more than with the defaults.
    const auto small = run({ "profile", trace, "--layout", "valkey-9.1", "--counters", "none", "--json", "--no-db",
        "--hash-max-listpack-entries", "8" });
    const auto defaults
        = run({ "profile", trace, "--layout", "valkey-9.1", "--counters", "none", "--json", "--no-db" });
    ASSERT_EQ(small.exitCode, 0) << small.err;
    ASSERT_EQ(defaults.exitCode, 0) << defaults.err;
    EXPECT_GT(nlohmann::json::parse(small.out)["points"][0]["measured_allocated_bytes"].get<double>(),
        nlohmann::json::parse(defaults.out)["points"][0]["measured_allocated_bytes"].get<double>());
    const auto bad = run({ "profile", trace, "--layout", "valkey-9.1", "--counters", "none", "--no-db",
        "--list-max-listpack-size", "0" });
    EXPECT_NE(bad.exitCode, 0);
    EXPECT_NE(bad.err.find("list-max-listpack-size"), std::string::npos) << bad.err;
}

TEST_F(ProfileCollectionsTest, GeneratedChurnOfEveryTypeEqualsTheSlabModel) {
    // Keys of every type loaded, then their elements read, removed and added at random, with TTLs.
    const std::vector<std::vector<std::string>> types { { "--hash-fields", "uniform:1:300", "--value-size",
                                                            "lognormal:3:1:1:200" },
        { "--set-members", "uniform:1:600", "--int-values", "0.5" }, { "--zset-members", "uniform:1:200" },
        { "--list-elements", "uniform:1:400", "--element-size", "uniform:1:100" } };
    for (std::size_t i = 0; i < types.size(); ++i) {
        std::vector<std::string> args { "--keys", "2048", "--ops", "30000", "--get-fraction", "0.2",
            "--delete-fraction", "0.4", "--ttl-fraction", "0.2", "--popularity", "zipf:0.9" };
        args.insert(args.end(), types[i].begin(), types[i].end());
        const std::string trace = gen("churn-" + std::to_string(i) + ".lltrace", args);
        for (std::size_t k : { i % kLayouts.size(), (i + 3) % kLayouts.size() }) {
            const auto& [layout, thresholds] = kLayouts[k];
            SCOPED_TRACE(types[i].front() + " " + layout);
            expectArenaMatches(trace, layout, { "--thresholds", thresholds });
        }
    }
}

} // namespace
