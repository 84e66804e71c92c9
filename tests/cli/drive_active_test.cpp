// SPDX-License-Identifier: MIT
// What the allocator keeps after deletes and overwrites, measured on real servers beside the slab model:
// `drive` reads Δallocator_active (Valkey, Redis: jemalloc's stats.active) and memcached's pages per slab
// class, on traces that leave slabs partly empty (drive_traces.h churnDriveTraces, the refill, drift and
// expire logs). Debian's redis-server and memcached, and every Valkey build the engines.build fixture made.

#include "cli_runner.h"
#include "drive_traces.h"
#include "engine_manifest.h"
#include "layoutlab/collect/server_process.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

using layoutlab::test::EngineBuild;

// Debian's redis-server first, then the Valkey builds.
std::vector<EngineBuild> servers() {
    std::vector<EngineBuild> out;
    if (layoutlab::findExecutable("redis-server"))
        out.push_back({ "", "", "redis-server (Debian)" });
    for (const auto& b : layoutlab::test::readEngineManifest(LAYOUTLAB_ENGINE_MANIFEST))
        out.push_back(b);
    return out;
}

class DriveActiveTest : public layoutlab::test::CliTestBase, public testing::WithParamInterface<std::size_t> {
protected:
    // Every churn trace, by name and path.
    std::vector<std::pair<std::string, std::string>> traces() {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& c : layoutlab::test::churnDriveTraces())
            out.emplace_back(c.name, gen(std::string(c.name) + ".lltrace", c.genArgs, "5"));
        std::ofstream(path("refill.monitor")) << layoutlab::test::refillMonitorLog();
        std::ofstream(path("drift.monitor")) << layoutlab::test::driftMonitorLog();
        std::ofstream(path("expire.monitor")) << layoutlab::test::expireMonitorLog();
        out.emplace_back("refill", path("refill.monitor"));
        out.emplace_back("drift", path("drift.monitor"));
        out.emplace_back("expire", path("expire.monitor"));
        return out;
    }
};

TEST_P(DriveActiveTest, ActiveBytesWithinTwoPercentOfTheSlabModel) {
    const auto all = servers();
    if (GetParam() >= all.size())
        GTEST_SKIP() << "only " << all.size() << " servers (Debian's redis-server and the Valkey builds)";
    const EngineBuild& server = all[GetParam()];
    for (const auto& [name, trace] : traces()) {
        std::vector<std::string> args { "drive", trace, "--json", "--no-db", "--run-requests", "0" };
        if (name == "expire") // the server's clock must pass the TTLs the trace's did
            args.insert(args.end(), { "--expire-wait", "4" });
        if (server.binary.empty())
            args.insert(args.end(), { "--engine", "redis" });
        else
            args.insert(args.end(), { "--engine", server.engine, "--server-binary", server.binary });
        // The server expires keys as its expire cycles find them, in its expires table's order (its hash
        // seed's draw) and on its own clock, which the prediction follows (sim/expire_cycle.h, on the load's
        // clock): which slabs the expire trace leaves still differs from drive to drive, so the median of
        // three there, one drive of each other trace.
        const int drives = name == "expire" ? 3 : 1;
        std::vector<nlohmann::json> runs;
        for (int d = 0; d < drives; ++d) {
            const auto r = run(args);
            ASSERT_EQ(r.exitCode, 0) << server.label << ", " << name << ": " << r.err;
            runs.push_back(nlohmann::json::parse(r.out));
            ASSERT_TRUE(runs.back()["active_relative_error"].is_number())
                << server.label << ", " << name << ": " << r.out;
            EXPECT_LT(std::abs(runs.back()["relative_error"].get<double>()), 0.01) << server.label << ", " << name;
        }
        std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
            return a["active_relative_error"].template get<double>()
                < b["active_relative_error"].template get<double>();
        });
        const nlohmann::json& j = runs[runs.size() / 2]; // the median drive
        const double error = j["active_relative_error"];
        EXPECT_LT(std::abs(error), 0.02) << server.label << ", " << name << ": measured " << j["measured_active_bytes"]
                                         << ", predicted " << j["predicted_active_bytes"] << " with " << j["layout"];
        std::printf("active %-40s %-13s measured %11lld predicted %11llu (%+.2f%%%s); allocated %11lld / %11llu\n",
            server.label.c_str(), name.c_str(), j["measured_active_bytes"].get<long long>(),
            j["predicted_active_bytes"].get<unsigned long long>(), 100 * error, drives > 1 ? ", median" : "",
            j["measured_allocated_bytes"].get<long long>(), j["predicted_allocated_bytes"].get<unsigned long long>());
    }
}

INSTANTIATE_TEST_SUITE_P(Servers, DriveActiveTest, testing::Range<std::size_t>(0, 12),
    [](const testing::TestParamInfo<std::size_t>& info) { return "server" + std::to_string(info.param); });

class DriveMemcachedPagesTest : public DriveActiveTest { };

TEST_F(DriveMemcachedPagesTest, PagesPerClassEqualThePredictionForEveryFraming) {
    if (!layoutlab::findExecutable("memcached"))
        GTEST_SKIP() << "memcached is not installed (scripts/install-deps installs it)";
    for (const auto& [name, trace] : traces())
        for (const char* framing : { "raw", "marshal-utf8" }) {
            const auto r = run({ "drive", trace, "--engine", "memcached", "--framing", framing, "--json", "--no-db",
                "--run-requests", "0" });
            ASSERT_EQ(r.exitCode, 0) << name << ", " << framing << ": " << r.err;
            const auto j = nlohmann::json::parse(r.out);
            std::uint64_t pages = 0;
            for (const auto& c : j["classes"]) {
                EXPECT_EQ(c["measured_pages"], c["predicted_pages"])
                    << name << ", " << framing << ", " << c["chunk_bytes"] << "-byte class";
                // memcached keeps an expired item's chunk until a GET or its LRU crawler finds it, where the
                // replay drops it at its TTL: the expire trace's chunks in use differ, its pages (never given
                // back, taken while every item was live) do not.
                if (name != "expire")
                    EXPECT_EQ(c["measured_chunks"], c["predicted_chunks"]) << name << ", " << framing;
                pages += c["measured_pages"].get<std::uint64_t>();
            }
            EXPECT_EQ(j["measured_active_bytes"], j["predicted_active_bytes"]) << name << ", " << framing;
            EXPECT_EQ(j["measured_active_bytes"].get<std::uint64_t>(), pages << 20) << name << ", " << framing;
            EXPECT_EQ(j["active_relative_error"], 0.0) << name << ", " << framing;
        }
}

} // namespace
