// SPDX-License-Identifier: MIT
// Layout files: the built-in models shipped as files give exactly their C++ models' results, key shape by
// key shape and trace by trace; the example files load and differ from their base where they should.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_file.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/reporter.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/trace_file.h"

#include <algorithm>
#include <cctype>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace layoutlab;

namespace {

const std::string kLayouts = std::string(LAYOUTLAB_DATASETS_DIR) + "/layouts/";

LayoutPtr fileLayout(const std::string& name) {
    auto layout = loadLayoutFile(kLayouts + name);
    EXPECT_TRUE(layout) << layout.error().describe();
    return layout ? *layout : nullptr;
}

struct BuiltIn {
    const char* file;
    const char* spec;
    std::vector<const char*> allocators;
};

const BuiltIn kBuiltIns[] = {
    { "valkey-8.0.toml", "valkey-8.0", { "jemalloc:quantum=8,page=4096", "jemalloc:quantum=16,page=4096", "glibc" } },
    { "valkey-8.1.toml", "valkey-8.1", { "jemalloc:quantum=8,page=4096", "jemalloc:quantum=16,page=4096", "glibc" } },
    { "valkey-9.0.toml", "valkey-9.0", { "jemalloc:quantum=8,page=4096", "jemalloc:quantum=16,page=16384", "glibc" } },
    { "valkey-9.1.toml", "valkey-9.1", { "jemalloc:quantum=8,page=4096", "jemalloc:quantum=16,page=4096", "glibc" } },
    { "redis-7.0.toml", "redis-7.0", { "jemalloc:quantum=8,page=4096", "glibc" } },
    { "memcached-1.6.toml", "memcached-1.6",
        { "memcached:min=48,factor=1.25", "memcached:min=96,factor=1.08", "memcached:item-max=2097152" } },
};

// Lengths around every boundary the models have: sds types, the embed thresholds, CAS and chunk sizes.
std::vector<std::uint32_t> keyLengths() {
    std::vector<std::uint32_t> out;
    for (std::uint32_t k = 1; k <= 34; ++k)
        out.push_back(k);
    for (std::uint32_t k : { 40u, 44u, 48u, 56u, 60u, 63u, 64u, 65u, 80u, 100u, 120u, 125u, 126u, 127u, 128u, 129u,
             130u, 140u, 250u, 251u, 252u, 253u, 255u, 256u, 300u, 1000u, 65530u, 65531u, 65536u, 70000u })
        out.push_back(k);
    return out;
}

std::vector<std::uint32_t> valueLengths() {
    std::vector<std::uint32_t> out;
    for (std::uint32_t v = 0; v <= 300; ++v)
        out.push_back(v);
    for (std::uint32_t v : { 400u, 1000u, 4096u, 16000u, 65530u, 65536u, 70000u, 300000u, 524200u, 524288u, 600000u,
             1048000u, 1048576u, 1100000u, 2200000u })
        out.push_back(v);
    return out;
}

TEST(LayoutFile, BuiltInFilesMatchTheirModels) {
    const auto keys = keyLengths();
    const auto values = valueLengths();
    for (const auto& b : kBuiltIns) {
        SCOPED_TRACE(b.file);
        auto fromFile = fileLayout(b.file);
        auto builtIn = parseLayout(b.spec);
        ASSERT_TRUE(fromFile && builtIn);
        const auto& model = **builtIn;
        EXPECT_EQ(fromFile->indexPolicy().kind, model.indexPolicy().kind);
        EXPECT_EQ(fromFile->indexPolicy().expiresTable, model.indexPolicy().expiresTable);
        EXPECT_EQ(fromFile->indexPolicy().params, model.indexPolicy().params);
        EXPECT_EQ(fromFile->defaultAllocator(), model.defaultAllocator());
        EXPECT_EQ(fromFile->tracksStaleExpire(), model.tracksStaleExpire());
        ASSERT_EQ(fromFile->threshold().has_value(), model.threshold().has_value());
        std::vector<std::uint32_t> thresholds { 0 };
        if (model.threshold()) {
            EXPECT_EQ(fromFile->threshold()->name, model.threshold()->name);
            EXPECT_EQ(fromFile->threshold()->value, model.threshold()->value);
            thresholds = { model.threshold()->min, 16, 44, 45, 63, 64, 65, 100, 128, 129, 256, 1024 };
        }
        std::size_t compared = 0;
        for (const auto* allocSpec : b.allocators) {
            auto alloc = parseAllocator(allocSpec);
            ASSERT_TRUE(alloc) << allocSpec;
            ASSERT_TRUE(fromFile->checkAllocator(**alloc));
            for (const auto threshold : thresholds)
                for (const auto k : keys)
                    for (const auto v : values)
                        for (const int ttl : { 0, 1, 2 }) // 2: no TTL, a stale expire field
                            for (const auto kind : { ValueKind::String, ValueKind::Integer, ValueKind::SmallInteger }) {
                                if ((kind != ValueKind::String && v > 24) || (ttl == 2 && !model.tracksStaleExpire()))
                                    continue;
                                const KeyShape shape { k, v, ttl == 1, kind, ttl == 2 };
                                const auto expected = model.describe(shape, threshold, **alloc);
                                const auto actual = fromFile->describe(shape, threshold, **alloc);
                                ++compared;
                                if (ttl == 2 && k % 8 == 1) // whether an overwrite keeps the field, by op
                                    for (const Op op : { Op::Set, Op::Append, Op::Incr })
                                        for (const auto next : { KeyShape { k, v / 2, false, ValueKind::String, true },
                                                 KeyShape { k, v + 50, false, ValueKind::String, true },
                                                 KeyShape { k, 3, false, ValueKind::SmallInteger, true },
                                                 KeyShape { k, 12, false, ValueKind::Integer, true } })
                                            ASSERT_EQ(threshold < model.staleExpireKeptBelow(shape, next, op, **alloc),
                                                threshold < fromFile->staleExpireKeptBelow(shape, next, op, **alloc))
                                                << allocSpec << " threshold " << threshold << " K=" << k << " V=" << v
                                                << " -> V=" << next.valueBytes << " op " << int(op);
                                if (!(expected == actual)) {
                                    ADD_FAILURE()
                                        << allocSpec << " threshold " << threshold << " K=" << k << " V=" << v
                                        << " ttl=" << ttl << " kind=" << int(kind) << ": encoding "
                                        << encodingName(expected.encoding) << " vs " << encodingName(actual.encoding)
                                        << ", allocations " << int(expected.allocationCount) << " vs "
                                        << int(actual.allocationCount) << ", first "
                                        << expected.allocations[0].requestedBytes << " vs "
                                        << actual.allocations[0].requestedBytes << ", loads "
                                        << int(expected.dependentLoads) << " vs " << int(actual.dependentLoads)
                                        << ", pointer bytes " << expected.pointerBytes << " vs " << actual.pointerBytes
                                        << ", compare loads to " << expected.allocations[0].memcmpEnd << " vs "
                                        << actual.allocations[0].memcmpEnd << ", transients "
                                        << int(expected.transientCount) << " vs " << int(actual.transientCount)
                                        << " (first " << expected.transients[0] << " vs " << actual.transients[0]
                                        << ", last "
                                        << expected
                                               .transients[expected.transientCount ? expected.transientCount - 1 : 0]
                                        << " vs "
                                        << actual.transients[actual.transientCount ? actual.transientCount - 1 : 0]
                                        << "), made in another order " << expected.madeInOtherOrder << " vs "
                                        << actual.madeInOtherOrder;
                                    return;
                                }
                            }
        }
        EXPECT_GT(compared, 100000u);
    }
}

// The whole simulation, sweep and cache model included, over real and synthetic traces (one test per
// layout, so that ctest runs them side by side).
class LayoutFileOnTraces : public testing::TestWithParam<std::size_t> { };

TEST_P(LayoutFileOnTraces, GivesTheSameSweepAsTheBuiltInModel) {
    auto mixed = makeGeneratorConfig(
        20000, 80000, "lognormal:3:0.6:4:300", "lognormal:4.5:1.2:0:700000", 0.3, 0.15, 0.6, 0.1, "zipf:0.9", 5);
    ASSERT_TRUE(mixed);
    const std::vector<std::string> traces { std::string(LAYOUTLAB_DATASETS_DIR) + "/traces/seed-k16-v96.lltrace",
        std::string(LAYOUTLAB_DATASETS_DIR) + "/traces/mixed-sizes.lltrace",
        std::string(LAYOUTLAB_DATASETS_DIR) + "/traces/dalli-large-values.lltrace", "" };
    {
        const auto& b = kBuiltIns[GetParam()];
        auto fromFile = fileLayout(b.file);
        auto builtIn = parseLayout(b.spec);
        ASSERT_TRUE(fromFile && builtIn);
        auto alloc = parseAllocator(b.allocators[0]);
        ASSERT_TRUE(alloc);
        const std::vector<std::uint32_t> thresholds = (*builtIn)->threshold()
            ? std::vector<std::uint32_t> { 16, 44, 64, 100, 128, 256 }
            : std::vector<std::uint32_t> {};
        for (const auto& path : traces) {
            SCOPED_TRACE(std::string(b.file) + " on " + (path.empty() ? "a synthetic trace" : path));
            auto run = [&](LayoutPtr layout) -> nlohmann::json {
                SimulationConfig config { layout, *alloc, thresholds };
                config.cache = CacheGeometry::parse("32K:8,256K:8,2M:16").value();
                config.cacheSampleGets = 20000;
                if (path.empty()) {
                    SyntheticTrace trace(*mixed);
                    auto result = simulate(config, trace);
                    EXPECT_TRUE(result) << result.error().describe();
                    return result ? toJson(*result)["points"] : nlohmann::json();
                }
                auto reader = TraceFileReader::open(path);
                EXPECT_TRUE(reader);
                auto result = simulate(config, **reader);
                EXPECT_TRUE(result) << result.error().describe();
                return result ? toJson(*result)["points"] : nlohmann::json();
            };
            const auto expected = run(*builtIn);
            ASSERT_FALSE(expected.empty());
            EXPECT_EQ(run(fromFile), expected);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(BuiltIns, LayoutFileOnTraces, testing::Range<std::size_t>(0, std::size(kBuiltIns)),
    [](const testing::TestParamInfo<std::size_t>& info) {
        std::string name = kBuiltIns[info.param].spec;
        std::replace_if(
            name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
        return name;
    });

TEST(LayoutFile, SpecNamesTheFileAndItsContent) {
    auto layout = fileLayout("valkey-9.1.toml");
    ASSERT_TRUE(layout);
    const auto spec = layout->spec();
    EXPECT_EQ(spec.rfind("file:" + kLayouts + "valkey-9.1.toml#", 0), 0u) << spec;
    EXPECT_EQ(layoutFilePath(spec), kLayouts + "valkey-9.1.toml");
    auto again = parseLayout(spec); // what a stored run's spec gives back
    ASSERT_TRUE(again) << again.error().describe();
    EXPECT_EQ((*again)->spec(), spec);
    EXPECT_EQ(layoutFilePath("valkey-9.1"), "");
    EXPECT_EQ(layoutFilePath("file:a#b.toml"), "a#b.toml");
}

} // namespace
