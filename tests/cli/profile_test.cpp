// SPDX-License-Identifier: MIT
// `layoutlab profile`: the simulator beside the reference engine. The cache model must agree with
// valgrind's cache simulator (same D1/LL geometry, same warm keys, same GETs) within 10% on traces whose
// values straddle the threshold and on 100k to 5M keys, and the seed case must show what the Valkey
// change claimed.

#include "cli_runner.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace {

class ProfileTest : public layoutlab::test::CliTestBase {
protected:
    // The seed case (16-byte keys, 96-byte values) at a size valgrind replays in seconds.
    std::string smallSeedTrace() const {
        const auto trace = path("seed-small.lltrace");
        const auto gen = run({ "gen", "-o", trace, "--keys", "10000", "--ops", "20000", "--key-size", "16",
            "--value-size", "96", "--get-fraction", "1", "--popularity", "zipf:0.8" });
        EXPECT_EQ(gen.exitCode, 0) << gen.err;
        return trace;
    }
};

bool valgrindPresent() {
    for (const char* dir : { "/usr/bin", "/usr/local/bin", "/bin" })
        if (::access((std::string(dir) + "/valgrind").c_str(), X_OK) == 0)
            return true;
    return false;
}

// Small enough for valgrind, larger than the simulated LL (256 KiB), so both levels miss.
constexpr const char* kGeometry = "32K:8,256K:8";

TEST_F(ProfileTest, JsonHasEveryFieldPerThresholdAndMeasuredBytesMatch) {
    const auto r = run({ "profile", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,128", "--counters",
        "none", "--json", "--cache-geometry", kGeometry });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["counter_source"], "none");
    ASSERT_EQ(j["points"].size(), 2u);
    for (const auto& p : j["points"]) {
        for (const char* field : { "threshold", "predicted_bytes_per_key", "measured_bytes_per_key",
                 "predicted_misses_per_get", "measured_misses_per_get", "counter_source", "ns_per_get" })
            EXPECT_TRUE(p.contains(field)) << field;
        EXPECT_TRUE(p["measured_misses_per_get"].is_null());
        EXPECT_GT(p["ns_per_get"].get<double>(), 0);
        // Valkey's child buckets are estimated by the simulator and counted by the engine: within 0.1%.
        EXPECT_NEAR(p["measured_bytes_per_key"].get<double>(), p["predicted_bytes_per_key"].get<double>(),
            0.001 * p["predicted_bytes_per_key"].get<double>());
    }
    // Both sides were stored: the prediction as a profile run, the measurement as a reference run.
    const auto runs = run({ "db", "list", "--json" });
    ASSERT_EQ(runs.exitCode, 0) << runs.err;
    const auto list = nlohmann::json::parse(runs.out);
    ASSERT_EQ(list.size(), 2u);
    std::set<std::string> kinds;
    for (const auto& row : list) {
        kinds.insert(row["kind"].get<std::string>());
        EXPECT_EQ(row["status"], "complete");
    }
    EXPECT_EQ(kinds, (std::set<std::string> { "profile", "reference" }));
    // The measured run keeps every threshold's figures, as printed.
    const std::string measuredRun = std::to_string(j["runs"]["measured"].get<int>());
    const auto shown = run({ "db", "show", measuredRun, "--json" });
    ASSERT_EQ(shown.exitCode, 0) << shown.err;
    const auto stored = nlohmann::json::parse(shown.out);
    std::map<int, double> bytesPerKey;
    for (const auto& m : stored["measurements"])
        if (m["metric"] == "bytes_per_key")
            bytesPerKey[m["threshold"].get<int>()] = m["value"].get<double>();
    ASSERT_EQ(bytesPerKey.size(), 2u);
    for (const auto& p : j["points"])
        EXPECT_DOUBLE_EQ(bytesPerKey[p["threshold"].get<int>()], p["measured_bytes_per_key"].get<double>());
    const auto table = run({ "db", "show", measuredRun });
    EXPECT_NE(table.out.find("ns_per_get"), std::string::npos) << table.out;
}

TEST_F(ProfileTest, CacheModelAgreesWithCachegrindWithinTenPercent) {
    if (!valgrindPresent())
        GTEST_SKIP() << "no valgrind on this machine (Debian package valgrind)";
    struct Case {
        const char* name;
        const char* layout;
        const char* valueSize;
        const char* thresholds;
        const char* ttlFraction;
    };
    // Value sizes on both sides of each layout's switch point at these thresholds.
    const Case cases[] = {
        { "valkey-8.1 values 20..80 around 44", "valkey-8.1", "uniform:20:80", "64,128", "0" },
        { "valkey-9.1 values 60..140 around 9.1's 128-byte embed limit", "valkey-9.1", "uniform:60:140", "64,128",
            "0" },
        { "valkey-9.1 lognormal values around 64", "valkey-9.1", "lognormal:3.8:0.5:1:400", "48,96", "0" },
        // Redis walks dictEntry chains, and db->expires for every GET while keys have TTLs.
        { "redis-7.0 values 20..80 around 44, 30% with a TTL", "redis-7.0", "uniform:20:80", "32,64", "0.3" },
        // Valkey 8.0 walks dict chains too, but its entries hold their keys (createEmbeddedEntry).
        { "valkey-8.0 values 20..80 around 44, 30% with a TTL", "valkey-8.0", "uniform:20:80", "32,64", "0.3" },
    };
    int seed = 1;
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const auto trace = path(std::string("trace-") + std::to_string(seed) + ".lltrace");
        const auto gen = run({ "gen", "-o", trace, "--keys", "12000", "--ops", "30000", "--key-size", "uniform:8:32",
            "--value-size", c.valueSize, "--ttl-fraction", c.ttlFraction, "--get-fraction", "0.95", "--delete-fraction",
            "0.01", "--popularity", "zipf:0.8", "--seed", std::to_string(seed++) });
        ASSERT_EQ(gen.exitCode, 0) << gen.err;
        const auto r = run({ "profile", trace, "--layout", c.layout, "--thresholds", c.thresholds, "--counters",
            "cachegrind", "--cache-geometry", kGeometry, "--gets", "8000", "--json", "--no-db" });
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["counter_source"], "cachegrind");
        EXPECT_EQ(j["cache_geometry"], kGeometry);
        for (const auto& p : j["points"]) {
            SCOPED_TRACE(::testing::Message() << "threshold " << p["threshold"]);
            ASSERT_TRUE(p["measured_misses_per_get"].is_number()) << p.dump();
            const double l1Model = p["predicted_misses_per_get"], l1Measured = p["measured_misses_per_get"];
            const double llModel = p["predicted_llc_misses_per_get"], llMeasured = p["measured_llc_misses_per_get"];
            EXPECT_GT(l1Measured, 1.0);
            EXPECT_NEAR(l1Model, l1Measured, 0.10 * l1Measured);
            EXPECT_NEAR(llModel, llMeasured, 0.10 * llMeasured);
        }
    }
}

// At scale: the model's misses per GET beside valgrind's cache simulator for 100k, 1M and 5M keys, on a
// last level far smaller than the keyspace, and on one that holds it (a 300 MiB 20-way LLC, which valgrind
// can simulate only with 75 ways: the profile says so, and the model runs with the same geometry).
struct ScaleCase {
    const char* name;
    std::uint32_t keys;
    const char* layout;
    const char* thresholds;
    const char* geometry;
    const char* ttlFraction;
};
void PrintTo(const ScaleCase& c, std::ostream* os) {
    *os << c.name;
}
class ProfileAtScale : public ProfileTest, public ::testing::WithParamInterface<ScaleCase> { };

TEST_P(ProfileAtScale, CacheModelAgreesWithCachegrindWithinTenPercent) {
    if (!valgrindPresent())
        GTEST_SKIP() << "no valgrind on this machine (Debian package valgrind)";
    const ScaleCase& c = GetParam();
    const auto trace = path("scale.lltrace");
    const auto gen = run({ "gen", "-o", trace, "--keys", std::to_string(c.keys), "--ops", std::to_string(c.keys / 4),
        "--key-size", "uniform:8:40", "--value-size", "uniform:20:120", "--ttl-fraction", c.ttlFraction, "--seed",
        std::to_string(c.keys) });
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    const auto r = run({ "profile", trace, "--layout", c.layout, "--thresholds", c.thresholds, "--counters",
        "cachegrind", "--cache-geometry", c.geometry, "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["live_keys"], c.keys);
    const std::string geometry = j["cache_geometry"];
    const std::string note = j["counter_note"];
    if (std::string(c.geometry).find("300M:20") != std::string::npos) {
        EXPECT_EQ(geometry, "48K:12,300M:75");
        EXPECT_NE(note.find("adjusted to 48K:12,300M:75"), std::string::npos) << note;
    }
    EXPECT_NE(note.find("from the end of the load"), std::string::npos) << note;
    for (const auto& p : j["points"]) {
        SCOPED_TRACE(::testing::Message() << "threshold " << p["threshold"]);
        const double l1Model = p["predicted_misses_per_get"], l1Measured = p["measured_misses_per_get"];
        const double llModel = p["predicted_llc_misses_per_get"], llMeasured = p["measured_llc_misses_per_get"];
        EXPECT_GT(l1Measured, 2.0); // every GET misses L1 on its way through a large keyspace
        EXPECT_NEAR(l1Model, l1Measured, 0.10 * l1Measured);
        // A last level that holds the keyspace misses almost never: within 0.02 misses per GET there.
        EXPECT_NEAR(llModel, llMeasured, std::max(0.10 * llMeasured, 0.02));
    }
}

INSTANTIATE_TEST_SUITE_P(Keys, ProfileAtScale,
    ::testing::Values(ScaleCase { "valkey_100k", 100000, "valkey-9.1", "64,128", "32K:8,1M:16", "0" },
        ScaleCase { "valkey_1M", 1000000, "valkey-9.1", "64,128", "32K:8,1M:16", "0" },
        ScaleCase { "redis_1M_ttl", 1000000, "redis-7.0", "32", "32K:8,1M:16", "0.3" },
        ScaleCase { "valkey_1M_300M_llc", 1000000, "valkey-9.1", "128", "48K:12,2M:16,300M:20", "0" },
        ScaleCase { "valkey_5M", 5000000, "valkey-9.1", "128", "32K:8,1M:16", "0" }),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(ProfileTest, SeedCaseShowsOneDependentLoadFewerAt128) {
    // 16-byte keys, 96-byte values on Valkey 9.1: at 128 the value is embedded, at 64 it is not.
    const bool cachegrind = valgrindPresent();
    const auto r = run({ "profile", smallSeedTrace(), "--layout", "valkey-9.1", "--thresholds", "64,128", "--counters",
        cachegrind ? "cachegrind" : "none", "--cache-geometry", kGeometry, "--gets", "8000", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& at64 = j["points"][0];
    const auto& at128 = j["points"][1];
    ASSERT_EQ(at64["threshold"], 64);
    ASSERT_EQ(at128["threshold"], 128);
    EXPECT_DOUBLE_EQ(
        at64["dependent_loads_per_get"].get<double>() - at128["dependent_loads_per_get"].get<double>(), 1.0);
    EXPECT_LT(at128["lines_touched_per_get"].get<double>(), at64["lines_touched_per_get"].get<double>());
    EXPECT_LT(at128["predicted_misses_per_get"].get<double>(), at64["predicted_misses_per_get"].get<double>());
    EXPECT_LT(at128["predicted_bytes_per_key"].get<double>(), at64["predicted_bytes_per_key"].get<double>());
    EXPECT_LT(at128["measured_bytes_per_key"].get<double>(), at64["measured_bytes_per_key"].get<double>());
    if (cachegrind)
        EXPECT_LT(at128["measured_misses_per_get"].get<double>(), at64["measured_misses_per_get"].get<double>());
}

TEST_F(ProfileTest, LayoutFileProfilesAsItsBuiltInModel) {
    // A relative path, as users type it: the cachegrind replay runs elsewhere and must still find it.
    const auto file = std::filesystem::relative(LAYOUTLAB_DATASETS_DIR "/layouts/valkey-9.1.toml").string();
    const bool cachegrind = valgrindPresent();
    const auto trace = smallSeedTrace();
    auto profile = [&](const std::vector<std::string>& layout) {
        std::vector<std::string> args { "profile", trace, "--thresholds", "64,128", "--counters",
            cachegrind ? "cachegrind" : "none", "--cache-geometry", kGeometry, "--gets", "4000", "--json", "--no-db" };
        args.insert(args.end(), layout.begin(), layout.end());
        const auto r = run(args);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        return r.exitCode == 0 ? nlohmann::json::parse(r.out)["points"] : nlohmann::json();
    };
    const auto byFile = profile({ "--layout-file", file });
    const auto builtIn = profile({ "--layout", "valkey-9.1" });
    ASSERT_EQ(byFile.size(), 2u);
    ASSERT_EQ(builtIn.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        for (const char* exact : { "predicted_bytes_per_key", "measured_bytes_per_key", "predicted_misses_per_get" })
            EXPECT_EQ(byFile[i][exact], builtIn[i][exact]) << exact;
        // The replay found the file from cachegrind's private directory and was measured. cachegrind's counts
        // of the same replay move from run to run with the heap's addresses: two runs of the built-in model
        // gave 4.07 and 4.10 misses per GET, and under a loaded test run one pair differed by 5.5%. So
        // this only asks for the same ballpark; the model's agreement with cachegrind has its own test.
        if (cachegrind) {
            ASSERT_TRUE(byFile[i]["measured_misses_per_get"].is_number()) << byFile[i];
            EXPECT_NEAR(byFile[i]["measured_misses_per_get"].get<double>(),
                builtIn[i]["measured_misses_per_get"].get<double>(),
                0.2 * builtIn[i]["measured_misses_per_get"].get<double>());
        }
    }
}

TEST_F(ProfileTest, PerfGivesItsReasonWhenTheMachineHasNoCounters) {
    const auto r = run({ "profile", seedTrace(), "--layout", "valkey-9.1", "--thresholds", "128", "--counters", "perf",
        "--gets", "2000", "--json", "--no-db" });
    if (r.exitCode == 0) {
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["counter_source"], "perf");
        EXPECT_TRUE(j["points"][0]["measured_misses_per_get"].is_number());
        GTEST_SKIP() << "this machine has hardware counters: perf measured them";
    }
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("perf"), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.find("no hardware counters") != std::string::npos
        || r.err.find("perf_event_paranoid") != std::string::npos || r.err.find("libpfm4") != std::string::npos)
        << r.err;
}

TEST_F(ProfileTest, AutoSaysWhyItChoseItsCounterSource) {
    const auto r = run({ "profile", smallSeedTrace(), "--layout", "valkey-9.1", "--thresholds", "128", "--gets", "2000",
        "--cache-geometry", kGeometry, "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const std::string source = j["counter_source"];
    EXPECT_TRUE(source == "perf" || source == "cachegrind" || source == "none") << source;
    if (source != "perf")
        EXPECT_NE(j["counter_note"].get<std::string>().find("perf:"), std::string::npos) << j.dump();
}

TEST_F(ProfileTest, RefusesWhatTheReferenceEngineCannotBuild) {
    const auto memcached
        = run({ "profile", seedTrace(), "--layout", "memcached-1.6", "--counters", "none", "--no-db" });
    EXPECT_EQ(memcached.exitCode, 2);
    EXPECT_NE(memcached.err.find("drive"), std::string::npos) << memcached.err;
    const auto emulated = run({ "profile", seedTrace(), "--layout", "valkey-9.1", "--alloc",
        "jemalloc:quantum=8,page=4096", "--counters", "none", "--no-db" });
    EXPECT_EQ(emulated.exitCode, 2);
    EXPECT_NE(emulated.err.find("linked"), std::string::npos) << emulated.err;
}

} // namespace
