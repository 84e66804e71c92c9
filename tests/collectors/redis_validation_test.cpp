// SPDX-License-Identifier: MIT
// The simulator against Debian's real redis-server: keys of several shapes (values on both sides of 44
// bytes, with and without TTL, shared and unshared integers) are loaded, and the simulator's usable bytes
// per key must match Δused_memory per key within 1%.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/memory_trace.h"
#include "server_fixture.h"

#include <gtest/gtest.h>

using namespace layoutlab;
using namespace layoutlab::test;

namespace {

constexpr std::uint32_t kKeys = 100000;

struct Shape {
    std::uint32_t valueBytes;
    bool ttl;
    ValueKind kind;
};

class RedisValidation : public ::testing::Test {
protected:
    void SetUp() override {
        const auto binary = findExecutable("redis-server");
        if (!binary)
            GTEST_SKIP() << "redis-server is not installed (scripts/install-deps installs it)";
        m_server = startServer(*binary,
            { "--port", "{port}", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes",
                "--daemonize", "no", "--dir", "." });
        ASSERT_TRUE(m_server);
        auto client = RespClient::connect("127.0.0.1", m_server->port);
        ASSERT_TRUE(client) << client.error().describe();
        m_client.emplace(std::move(*client));
    }

    std::uint64_t usedMemory() {
        auto info = m_client->info("memory");
        EXPECT_TRUE(info);
        return std::stoull(info->at("used_memory"));
    }

    // Loads kKeys keys of one shape into an empty server and returns Δused_memory per key.
    double measure(const Shape& shape) {
        EXPECT_TRUE(m_client->command({ "FLUSHALL", "SYNC" }));
        const auto before = usedMemory();
        std::vector<std::vector<std::string>> commands;
        commands.reserve(kKeys);
        for (std::uint32_t id = 0; id < kKeys; ++id) {
            std::vector<std::string> cmd { "SET", keyName(id, 16), valueOf(shape.valueBytes, shape.kind, id) };
            if (shape.ttl) {
                cmd.push_back("EX");
                cmd.push_back("100000");
            }
            commands.push_back(std::move(cmd));
        }
        EXPECT_TRUE(m_client->pipeline(commands));
        const auto after = usedMemory();
        return static_cast<double>(after - before) / kKeys;
    }

    static double predict(const Shape& shape, const AllocatorPtr& alloc) {
        std::vector<Request> requests;
        for (std::uint32_t id = 0; id < kKeys; ++id) {
            Request r;
            r.op = Op::Set;
            r.keyId = id;
            r.keyBytes = 16;
            r.valueBytes = shape.valueBytes;
            r.kind = shape.kind;
            r.ttlSeconds = shape.ttl ? 100000 : 0;
            requests.push_back(r);
        }
        MemoryTrace trace(std::move(requests));
        auto layout = parseLayout("redis-7.0");
        auto result = simulate({ *layout, alloc, {} }, trace);
        EXPECT_TRUE(result);
        return result->points.at(0).usableBytesPerKey;
    }

    std::unique_ptr<RunningServer> m_server;
    std::optional<RespClient> m_client;
};

TEST_F(RedisValidation, UsableBytesPerKeyWithinOnePercentOfUsedMemory) {
    // Debian's redis-server links the system libjemalloc (quantum 16); the allocator model follows the
    // server's build, which `MEMORY MALLOC-STATS` would tell; on Debian 12 it is jemalloc-5.3.0.
    auto info = m_client->info("memory");
    ASSERT_TRUE(info);
    ASSERT_EQ(info->at("mem_allocator").rfind("jemalloc", 0), 0u) << "expected a jemalloc build of redis";
    auto alloc = parseAllocator("jemalloc:quantum=16,page=4096");
    ASSERT_TRUE(alloc);
    const std::vector<Shape> shapes { { 16, false, ValueKind::String }, { 44, false, ValueKind::String },
        { 45, false, ValueKind::String }, { 100, false, ValueKind::String }, { 500, false, ValueKind::String },
        { 16, true, ValueKind::String }, { 100, true, ValueKind::String }, { 4, false, ValueKind::SmallInteger },
        { 12, false, ValueKind::Integer }, { 12, true, ValueKind::Integer } };
    for (const auto& shape : shapes) {
        const double measured = measure(shape);
        const double predicted = predict(shape, *alloc);
        const double error = (predicted - measured) / measured;
        EXPECT_LT(std::abs(error), 0.01) << "V=" << shape.valueBytes << " ttl=" << shape.ttl
                                         << " kind=" << static_cast<int>(shape.kind) << ": predicted " << predicted
                                         << " B/key, measured " << measured << " B/key";
        std::printf("redis V=%u ttl=%d kind=%d: predicted %.2f, measured %.2f B/key (%+.3f%%)\n", shape.valueBytes,
            shape.ttl, static_cast<int>(shape.kind), predicted, measured, 100 * error);
    }
}

TEST_F(RedisValidation, ObjectEncodingMatchesTheModel) {
    auto layout = parseLayout("redis-7.0");
    auto alloc = parseAllocator("jemalloc:quantum=16,page=4096");
    for (std::uint32_t v : { 1u, 44u, 45u, 300u }) {
        ASSERT_TRUE(m_client->command({ "SET", "probe", std::string(v, 'x') }));
        auto encoding = m_client->command({ "OBJECT", "ENCODING", "probe" });
        ASSERT_TRUE(encoding);
        const auto model = (*layout)->describe({ 5, v, false, ValueKind::String }, 44, **alloc);
        EXPECT_EQ(*encoding, std::string(encodingName(model.encoding))) << "V=" << v;
    }
}

} // namespace
