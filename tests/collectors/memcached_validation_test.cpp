// SPDX-License-Identifier: MIT
// The memcached models against Debian's real memcached: the slab class list printed by `memcached -vv`
// for several -n/-f settings, and the slab class and used chunks of every class after a load (`stats
// slabs`), exactly, for raw and Dalli-framed values.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/collect/memcached_client.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/layout/value_framing.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/memory_trace.h"
#include "server_fixture.h"

#include <gtest/gtest.h>
#include <regex>
#include <sstream>
#include <thread>

using namespace layoutlab;
using namespace layoutlab::test;

namespace {

std::optional<std::string> memcachedBinary() {
    return findExecutable("memcached");
}

struct VvCase {
    const char* minChunk;
    const char* factor;
    const char* itemMax; // nullptr: default
};

class MemcachedClassList : public ::testing::TestWithParam<VvCase> { };

TEST_P(MemcachedClassList, VvOutputEqualsTheModel) {
    const auto binary = memcachedBinary();
    if (!binary)
        GTEST_SKIP() << "memcached is not installed (scripts/install-deps installs it)";
    const auto c = GetParam();
    std::vector<std::string> args { "-vv", "-U", "0", "-l", "127.0.0.1", "-p", "{port}", "-n", c.minChunk, "-f",
        c.factor };
    std::string spec = std::string("memcached:min=") + c.minChunk + ",factor=" + c.factor;
    if (c.itemMax) {
        args.insert(args.end(), { "-I", c.itemMax });
        spec += std::string(",item-max=") + (std::string(c.itemMax) == "2m" ? "2097152" : c.itemMax);
    }
    auto server = startServer(*binary, args);
    ASSERT_TRUE(server);
    std::string log;
    for (int i = 0; i < 100 && log.find("perslab") == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        log = server->process->log();
    }
    const std::regex line(R"(slab class\s+(\d+): chunk size\s+(\d+) perslab\s+(\d+))");
    std::vector<MemcachedSlabClass> real;
    for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it)
        real.push_back({ static_cast<std::uint32_t>(std::stoul((*it)[1])),
            static_cast<std::uint32_t>(std::stoul((*it)[2])), static_cast<std::uint32_t>(std::stoul((*it)[3])) });
    auto alloc = parseAllocator(spec);
    ASSERT_TRUE(alloc) << alloc.error().describe();
    const auto& model = dynamic_cast<const MemcachedSlabModel&>(**alloc).slabClasses();
    ASSERT_EQ(real.size(), model.size()) << log;
    for (std::size_t i = 0; i < real.size(); ++i) {
        EXPECT_EQ(real[i].id, model[i].id);
        EXPECT_EQ(real[i].chunkBytes, model[i].chunkBytes) << "class " << real[i].id;
        EXPECT_EQ(real[i].perSlab, model[i].perSlab) << "class " << real[i].id;
    }
}

INSTANTIATE_TEST_SUITE_P(Settings, MemcachedClassList,
    ::testing::Values(VvCase { "48", "1.25", nullptr }, VvCase { "32", "1.1", nullptr }, VvCase { "100", "2", nullptr },
        VvCase { "48", "1.07", nullptr }, VvCase { "64", "1.5", "2m" }),
    [](const auto& info) {
        std::string name = std::string("n") + info.param.minChunk + "_f" + info.param.factor
            + (info.param.itemMax ? std::string("_I") + info.param.itemMax : std::string());
        for (auto& ch : name)
            if (ch == '.')
                ch = 'p';
        return name;
    });

struct Group {
    std::uint32_t keys;
    std::uint32_t keyBytes;
    std::uint32_t valueBytes;
};

// Loads the groups through the framing and compares `stats slabs` with the simulator, class by class.
void loadAndCompare(const std::string& framingName, const std::vector<Group>& groups) {
    const auto binary = memcachedBinary();
    if (!binary)
        GTEST_SKIP() << "memcached is not installed (scripts/install-deps installs it)";
    auto server = startServer(*binary, { "-U", "0", "-m", "1024", "-l", "127.0.0.1", "-p", "{port}" });
    ASSERT_TRUE(server);
    auto client = MemcachedClient::connect("127.0.0.1", server->port);
    ASSERT_TRUE(client) << client.error().describe();
    const auto framing = parseFraming(framingName);
    ASSERT_TRUE(framing);

    std::vector<Request> requests;
    std::uint32_t nextId = 0;
    for (const auto& g : groups) {
        std::vector<MemcachedSet> sets;
        const auto framed = frameValue(*framing, g.valueBytes);
        for (std::uint32_t i = 0; i < g.keys; ++i, ++nextId) {
            // The server sees the framed bytes and the framing's flags, as Dalli would send them.
            sets.push_back({ keyName(nextId, g.keyBytes), framed.nonZeroFlags ? 1u : 0u, 0,
                std::string(framed.storedBytes, 'v') });
            Request r;
            r.op = Op::Set;
            r.keyId = nextId;
            r.keyBytes = g.keyBytes;
            r.valueBytes = g.valueBytes;
            requests.push_back(r);
        }
        ASSERT_TRUE(client->setMany(sets));
    }
    auto stats = client->stats("slabs");
    ASSERT_TRUE(stats) << stats.error().describe();
    std::map<std::uint64_t, std::uint64_t> realUsedChunks; // chunk size -> used chunks
    for (const auto& [name, value] : *stats) {
        const auto colon = name.find(':');
        if (colon == std::string::npos || name.substr(colon + 1) != "used_chunks")
            continue;
        const auto id = name.substr(0, colon);
        const auto chunk = std::stoull(stats->at(id + ":chunk_size"));
        if (std::stoull(value) > 0)
            realUsedChunks[chunk] += std::stoull(value);
    }

    MemoryTrace trace(std::move(requests));
    auto layout = parseLayout("memcached-1.6:framing=" + framingName);
    auto alloc = parseAllocator("memcached");
    ASSERT_TRUE(layout && alloc);
    auto result = simulate({ *layout, *alloc, {} }, trace);
    ASSERT_TRUE(result) << result.error().describe();
    std::map<std::uint64_t, std::uint64_t> predicted;
    for (const auto& c : result->points.at(0).sizeClasses)
        predicted[c.classBytes] += c.allocations;
    EXPECT_EQ(predicted, realUsedChunks) << "framing " << framingName;
}

TEST(MemcachedValidation, UsedChunksPerClassMatchStatsSlabsRaw) {
    loadAndCompare("raw",
        { { 3000, 16, 16 }, { 3000, 16, 100 }, { 2000, 40, 1000 }, { 500, 16, 10000 }, { 40, 16, 250000 },
            { 30, 16, 600000 }, { 20, 16, 1000000 } });
}

TEST(MemcachedValidation, UsedChunksPerClassMatchStatsSlabsDalliMarshal) {
    // The Dalli case: Marshal framing moves V = 16, 32, 64 up one class for K = 16.
    loadAndCompare("marshal-utf8", { { 3000, 16, 16 }, { 3000, 16, 32 }, { 3000, 16, 64 }, { 1000, 40, 500 } });
}

TEST(MemcachedValidation, UsedChunksPerClassMatchStatsSlabsRails71) {
    loadAndCompare("rails-7.1", { { 3000, 16, 96 }, { 2000, 40, 32 }, { 100, 16, 150000 } });
}

} // namespace
