// SPDX-License-Identifier: MIT
// The one path from a front end's request to a simulation job: the rules every front end shares, and
// errors in the core's words (a field, never a flag).

#include "layoutlab/store/simulation_request.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace layoutlab {
namespace {

SimulationRequest valkey() {
    SimulationRequest r;
    r.tracePath = "t.lltrace";
    r.layout = "valkey-9.1";
    return r;
}

TEST(SimulationRequest, ThresholdsAsTypedBecomeTheJobsThresholds) {
    auto r = valkey();
    r.thresholds = "128,64,64";
    auto job = buildSimulationJob(r);
    ASSERT_TRUE(job) << job.error().describe();
    EXPECT_EQ(job->config.thresholds, (std::vector<std::uint32_t> { 64, 128 }));
    EXPECT_EQ(job->kind, "sweep");
    r.thresholds.clear();
    r.threshold = 96;
    r.kind = "sim";
    job = buildSimulationJob(r);
    ASSERT_TRUE(job);
    EXPECT_EQ(job->config.thresholds, (std::vector<std::uint32_t> { 96 }));
    r.threshold.reset();
    job = buildSimulationJob(r);
    ASSERT_TRUE(job);
    EXPECT_TRUE(job->config.thresholds.empty()); // the layout's own
}

TEST(SimulationRequest, ErrorsNameTheFieldNotAFlag) {
    struct Case {
        SimulationRequest request;
        const char* field;
    };
    auto bad = [](auto edit) {
        auto r = valkey();
        edit(r);
        return r;
    };
    const std::vector<Case> cases {
        { bad([](auto& r) { r.thresholds = "8:64:8"; }), field::kThresholds },
        { bad([](auto& r) { r.thresholds = "64,x"; }), field::kThresholds },
        { bad([](auto& r) { r.thresholds = "64:32:8"; }), field::kThresholds },
        { bad([](auto& r) { r.threshold = 8; }), field::kThreshold },
        { bad([](auto& r) { r.cacheGeometry = "32K:8"; }), field::kCacheGeometry },
        { bad([](auto& r) { r.layout = "valkyrie"; }), field::kLayout },
    };
    for (const auto& c : cases) {
        auto job = buildSimulationJob(c.request);
        ASSERT_FALSE(job);
        EXPECT_EQ(job.error().field, c.field) << job.error().describe();
        EXPECT_EQ(job.error().message.find("--"), std::string::npos) << job.error().message;
        EXPECT_EQ(job.error().code, ErrorCode::Usage);
    }
}

TEST(SimulationRequest, ALayoutWithoutThresholdIsRefusedOrRunOnceAsAsked) {
    SimulationRequest r;
    r.layout = "memcached-1.6";
    r.thresholds = "64,128";
    auto refused = buildSimulationJob(r);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().tag, kTagNoThreshold);
    EXPECT_EQ(refused.error().field, field::kThresholds);
    r.layoutWithoutThresholdRunsOnce = true;
    auto once = buildSimulationJob(r);
    ASSERT_TRUE(once) << once.error().describe();
    EXPECT_EQ(once->kind, "sim");
    EXPECT_TRUE(once->config.thresholds.empty());
}

TEST(SimulationRequest, AnRdbFileIsSimulatedWithKeysAsALoadingServerHoldsThem) {
    // "REDIS0011", SET key value, EOF, no checksum: a server that loads it embeds the key with sdsnewlen's
    // header (layoutSpecForLoadedKeys), where Valkey 8.0 embeds a client's key as sent.
    const auto dir = std::filesystem::temp_directory_path() / ("layoutlab-rdb-request-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string rdb = (dir / "dump.rdb").string();
    std::ofstream(rdb, std::ios::binary) << std::string("REDIS0011\x00\x03key\x05value\xff", 21)
                                         << std::string(8, '\0');
    SimulationRequest r;
    r.tracePath = rdb;
    r.layout = "valkey-8.0";
    auto job = buildSimulationJob(r);
    ASSERT_TRUE(job) << job.error().describe();
    EXPECT_EQ(job->config.layout->spec(), "valkey-8.0:embstr-limit=44,shared-integers=yes,key-header=smallest");
    r.layout = "valkey-9.1";
    job = buildSimulationJob(r);
    ASSERT_TRUE(job) << job.error().describe();
    EXPECT_EQ(job->config.layout->spec().find("as-sent"), std::string::npos);
    r.tracePath = "t.lltrace"; // not there: taken as no RDB file, as the other requests here
    r.layout = "valkey-8.0";
    job = buildSimulationJob(r);
    ASSERT_TRUE(job) << job.error().describe();
    EXPECT_EQ(job->config.layout->spec(), "valkey-8.0:embstr-limit=44,shared-integers=yes");
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace layoutlab
