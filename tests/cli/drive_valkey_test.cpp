// SPDX-License-Identifier: MIT
// `layoutlab drive --engine valkey` against real Valkey builds: every archive in ../shared/engines built
// from source (tests/engines/build-test-engines.sh, cached outside the clone), a what-if build with the
// threshold raised, and any valkey-server on PATH. On each, every trace must be predicted within 1% of
// the settled server's Δused_memory per key, with the layout drive chose by itself; where the build is
// known, the layout it chose must be the build's.

#include "child_process.h"
#include "cli_runner.h"
#include "drive_traces.h"
#include "engine_manifest.h"
#include "layoutlab/layout/layout_registry.h"

#include <algorithm>
#include <csignal>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <thread>

namespace {

using BuiltServer = layoutlab::test::EngineBuild;

// The manifest the engines.build test writes (tests/engines/build-test-engines.sh).
const std::vector<BuiltServer>& builtServers() {
    static const std::vector<BuiltServer> servers = layoutlab::test::readEngineManifest(LAYOUTLAB_ENGINE_MANIFEST);
    return servers;
}

std::string canonical(const std::string& layout) {
    auto parsed = layoutlab::parseLayout(layout);
    return parsed ? (*parsed)->spec() : "unparsable: " + layout;
}

// Every TTL change a capture can hold, on keys of 1 to 60 bytes and values on both sides of every embed
// limit (44, 64, 108, 128): set with and without a TTL, PERSIST, overwritten without one (twice, where
// the second overwrite decides whether the object keeps its expire field), KEEPTTL, EXPIRE, DEL.
std::string ttlMonitorLog(std::uint32_t keys) {
    std::string out = "OK\n";
    std::uint64_t micros = 0;
    auto line = [&](const std::vector<std::string>& args) {
        out += fmt::format("1700000000.{:06} [0 127.0.0.1:50000]", ++micros);
        for (const auto& a : args)
            out += " \"" + a + "\"";
        out += "\n";
    };
    auto key = [](std::uint32_t i) {
        const std::uint32_t bytes = 1 + (i * 7) % 60;
        std::string k = fmt::format("{}", i);
        return k.size() >= bytes ? k : std::string(bytes - k.size(), 'k') + k;
    };
    auto value = [](std::uint32_t i, std::uint32_t salt) {
        static const std::uint32_t sizes[]
            = { 1, 16, 30, 40, 44, 45, 48, 60, 64, 80, 96, 100, 108, 109, 120, 128, 200 };
        return std::string(sizes[(i * 5 + salt) % std::size(sizes)], 'v');
    };
    for (std::uint32_t i = 0; i < keys; ++i)
        if (i % 2 == 0)
            line({ "SET", key(i), value(i, 0), "EX", "100000" });
        else
            line({ "SET", key(i), value(i, 0) });
    for (std::uint32_t i = 0; i < keys; ++i)
        switch (i % 6) {
        case 0:
            line({ "PERSIST", key(i) });
            break;
        case 1:
            line({ "EXPIRE", key(i), "100000" });
            break;
        case 2:
            line({ "SET", key(i), value(i, 1) }); // a TTL key overwritten without one
            break;
        case 3:
            line({ "SET", key(i), value(i, 2), "KEEPTTL" });
            break;
        case 4:
            line({ "SET", key(i), value(i, 3), "EX", "100000" });
            break;
        default:
            line({ "DEL", key(i) });
        }
    for (std::uint32_t i = 0; i < keys; i += 3)
        if (i % 6 != 5)
            line({ "SET", key(i), value(i, 4) }); // overwritten again, without a TTL
    return out;
}

// Keys of 1, 2 and 3 bytes, as many as have names of their own when drive names them (the 1-byte keys
// first, so that their ids stay below the 94 one-byte names), with values of 0 to 140 bytes.
std::string shortKeysMonitorLog() {
    std::string out = "OK\n";
    std::uint32_t n = 0;
    auto set = [&](const std::string& key) {
        ++n;
        out += fmt::format(
            "1700000000.{:06} [0 127.0.0.1:50000] \"SET\" \"{}\" \"{}\"\n", n, key, std::string((n * 37) % 141, 'v'));
    };
    for (int c = 33; c < 127; ++c)
        if (c != '"' && c != '\\')
            set(std::string(1, static_cast<char>(c)));
    const std::string alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (std::uint32_t i = 0; i < 2000; ++i)
        set({ alphabet[i / alphabet.size()], alphabet[i % alphabet.size()] });
    for (std::uint32_t i = 0; i < 1000; ++i)
        set(fmt::format("{:03}", i));
    return out;
}

class DriveValkeyTest : public layoutlab::test::CliTestBase, public testing::WithParamInterface<std::size_t> {
protected:
    void SetUp() override {
        CliTestBase::SetUp();
        if (builtServers().empty())
            GTEST_SKIP() << "no Valkey server to test: ../shared/engines holds no source archives and no "
                            "valkey-server is on PATH (Debian 12 does not package Valkey)";
        if (GetParam() >= builtServers().size())
            GTEST_SKIP() << "only " << builtServers().size() << " Valkey builds";
    }
    const BuiltServer& server() const { return builtServers()[GetParam()]; }

    // Drives `trace` into a fresh server of this build; checks the error and the layout chosen.
    void expectWithinOnePercent(const std::string& name, const std::string& trace) {
        const auto r = run({ "drive", trace, "--engine", server().engine, "--server-binary", server().binary, "--json",
            "--no-db", "--run-requests", "0" });
        ASSERT_EQ(r.exitCode, 0) << server().label << ", " << name << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        const double error = j["relative_error"];
        EXPECT_LT(std::abs(error), 0.01) << server().label << ", " << name << ": measured "
                                         << j["measured_bytes_per_key"] << ", predicted "
                                         << j["predicted_bytes_per_key"] << " with " << j["layout"];
        EXPECT_EQ(j["server_keys"], j["predicted_keys"]) << server().label << ", " << name;
        EXPECT_TRUE(j["settled"]["settled"].get<bool>()) << server().label << ", " << name;
        if (!server().layout.empty()) {
            const auto& choice = j["layout_choice"];
            std::vector<std::string> matching;
            if (choice["calibration"].is_object())
                for (const auto& m : choice["calibration"]["matching"])
                    matching.push_back(canonical(m.get<std::string>()));
            else
                matching.push_back(canonical(choice["layout"].get<std::string>()));
            EXPECT_NE(std::find(matching.begin(), matching.end(), canonical(server().layout)), matching.end())
                << server().label << ": the build is " << server().layout << "; drive chose " << choice["layout"]
                << " (" << choice["reason"] << ")";
        }
        std::printf("drive %-48s %-14s measured %8.2f predicted %8.2f B/key (%+.3f%%) with %s\n",
            server().label.c_str(), name.c_str(), j["measured_bytes_per_key"].get<double>(),
            j["predicted_bytes_per_key"].get<double>(), 100 * error, j["layout"].get<std::string>().c_str());
    }
};

TEST_P(DriveValkeyTest, EveryTraceWithinOnePercentWithTheLayoutDriveChose) {
    auto cases = layoutlab::test::respDriveTraces();
    cases.insert(cases.end(),
        {
            // Just past the hashtable's doubling (7 x 16,384 entries).
            { "k16v96-114689", { "--keys", "114689", "--ops", "0", "--key-size", "16", "--value-size", "96" } },
            // Exactly at a table's limit (7 x 1,024 entries): no insert grows it, the cron does (8.1 and later:
            // hashtableExpandIfNeeded asks room for one more; 8.0 a dict exactly full).
            { "k16v40-7168", { "--keys", "7168", "--ops", "0", "--key-size", "16", "--value-size", "40" } },
            { "integers",
                { "--keys", "60000", "--ops", "0", "--key-size", "uniform:6:30", "--value-size", "uniform:1:19",
                    "--int-values", "1" } },
            { "mixed-deletes",
                { "--keys", "40000", "--ops", "80000", "--key-size", "lognormal:3.3:0.45:6:200", "--value-size",
                    "lognormal:4.3:1.2:1:20000", "--ttl-fraction", "0.2", "--get-fraction", "0.3", "--delete-fraction",
                    "0.1", "--popularity", "zipf:0.9" } },
        });
    for (const auto& c : cases)
        expectWithinOnePercent(c.name, gen(std::string(c.name) + ".lltrace", c.genArgs, "9"));
    const auto monitor = path("ttl-commands.monitor");
    std::ofstream(monitor) << ttlMonitorLog(30000);
    expectWithinOnePercent("ttl-commands", monitor);
    const auto shortKeys = path("short-keys.monitor");
    std::ofstream(shortKeys) << shortKeysMonitorLog();
    expectWithinOnePercent("short-keys", shortKeys);
}

// A development build (it reports 255.255.255, so drive calibrates) killed while drive calibrates: one
// error naming the calibration and the server's exit, and nothing stored.
TEST_P(DriveValkeyTest, AServerKilledDuringCalibrationFailsWithNothingStored) {
    // One development build shows it (each reports 255.255.255): the first plain one the manifest has.
    auto plainDevelopment = [](const BuiltServer& b) {
        return !b.layout.empty() && b.label.find("unstable") != std::string::npos
            && b.label.find('+') == std::string::npos;
    };
    const auto& all = builtServers();
    const auto first = std::find_if(all.begin(), all.end(), plainDevelopment);
    if (first == all.end() || static_cast<std::size_t>(first - all.begin()) != GetParam())
        GTEST_SKIP() << server().label << " is not the first plain development build";
    const auto trace = gen("small.lltrace", { "--keys", "1000", "--ops", "0" });
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, path("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, path("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const pid_t drive = layoutlab::test::spawnCli(
        { "drive", trace, "--engine", server().engine, "--server-binary", server().binary }, &actions);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_GT(drive, 0);
    pid_t child = 0;
    for (int i = 0; i < 1000; ++i) { // until drive says it calibrates
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (layoutlab::test::slurp(path("err")).find("calibrating") != std::string::npos) {
            child = layoutlab::test::childOf(drive);
            break;
        }
    }
    ASSERT_GT(child, 0) << "drive did not calibrate: " << layoutlab::test::slurp(path("err"));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(drive, &status, 0), drive);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const auto err = layoutlab::test::slurp(path("err"));
    EXPECT_NE(err.find("layoutlab: error: calibration"), std::string::npos) << err;
    EXPECT_NE(err.find("the server exited"), std::string::npos) << err;
    const auto runs = run({ "db", "list", "--json" });
    EXPECT_EQ(nlohmann::json::parse(runs.out.empty() ? "[]" : runs.out).size(), 0u) << runs.out << runs.err;
}

INSTANTIATE_TEST_SUITE_P(Builds, DriveValkeyTest, testing::Range<std::size_t>(0, 11),
    [](const testing::TestParamInfo<std::size_t>& info) { return "build" + std::to_string(info.param); });

} // namespace
