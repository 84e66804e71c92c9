// SPDX-License-Identifier: MIT
// exact-lru over raw sizes from one pass of stack distances (sim/stack_distance_curve.h): every budget's
// figures equal its own replay's, on generated traces and random ones; a trace that breaks the conditions
// is replayed, and says why.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/memory_trace.h"
#include "layoutlab/trace/random.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

SimulationConfig exactLruConfig(std::vector<std::uint64_t> budgets, std::vector<std::uint32_t> thresholds = { 64 }) {
    SimulationConfig config { *parseLayout("valkey-9.1"), *parseAllocator("jemalloc:quantum=8,page=4096"),
        std::move(thresholds) };
    config.eviction = *makeEvictionOptions(std::to_string(budgets.front()), "exact-lru", 5, 10, 1);
    config.eviction->rawSizes = true;
    config.budgets = std::move(budgets);
    config.fillOnMiss = 1;
    return config;
}

// The run by stack distances (the trace can be read again) and by a replay per budget (it cannot).
std::pair<SimulationResult, SimulationResult> bothWays(
    SimulationConfig config, const std::function<std::unique_ptr<TraceReader>()>& open) {
    config.reopenTrace = [&open]() -> Expected<std::unique_ptr<TraceReader>> { return open(); };
    auto first = open();
    auto byStack = simulate(config, *first);
    EXPECT_TRUE(byStack) << byStack.error().describe();
    config.reopenTrace = nullptr;
    auto second = open();
    auto byReplay = simulate(config, *second);
    EXPECT_TRUE(byReplay) << byReplay.error().describe();
    if (!byStack || !byReplay)
        return {};
    return { std::move(*byStack), std::move(*byReplay) };
}

void expectSameCurve(const SimulationResult& byStack, const SimulationResult& byReplay, const std::string& what) {
    ASSERT_EQ(byStack.points.size(), byReplay.points.size()) << what;
    for (std::size_t i = 0; i < byStack.points.size(); ++i) {
        const ThresholdPoint& s = byStack.points[i];
        const ThresholdPoint& r = byReplay.points[i];
        ASSERT_TRUE(s.budget && r.budget);
        const std::string at = what + fmt::format(", point {} (maxmemory {})", i, r.budget->maxmemoryBytes);
        EXPECT_EQ(*s.budget, *r.budget) << at << ": hits " << s.budget->getHits << " and " << r.budget->getHits
                                        << ", evictions " << s.budget->evictedKeys << " and " << r.budget->evictedKeys;
        EXPECT_EQ(s.threshold, r.threshold) << at;
        EXPECT_EQ(s.keys, r.keys) << at;
        EXPECT_EQ(s.payloadBytes, r.payloadBytes) << at;
        EXPECT_EQ(s.usableBytes - s.indexBytes, r.usableBytes - r.indexBytes) << at << ": the keys' own bytes";
        EXPECT_DOUBLE_EQ(s.linesTouchedPerGet, r.linesTouchedPerGet) << at;
        // The index tables are the held keys' inserted afresh: never larger than the replay's, which grew
        // with the keys a budget held before it filled.
        EXPECT_LE(s.indexBytes, r.indexBytes) << at;
    }
}

} // namespace

TEST(StackDistances, EveryBudgetEqualsItsOwnReplayOnGeneratedTraces) {
    // Key counts on both sides of powers of two, one value size and many, budgets from a few keys to all.
    struct Case {
        std::uint64_t keys;
        const char* values;
    };
    for (const Case c :
        { Case { 1023, "96" }, Case { 4096, "lognormal:5:0.6:1:4000" }, Case { 65537, "lognormal:4:0.3:20:900" } }) {
        auto generated = makeGeneratorConfig(c.keys, 8 * c.keys, "uniform:8:40", c.values, 0, 0, 1.0, 0, "zipf:0.9", 5);
        ASSERT_TRUE(generated) << generated.error().describe();
        const std::uint64_t all = c.keys * 200; // more than every key's bytes
        const auto config = exactLruConfig({ 2000, all / 64, all / 16, all / 4, all }, { 48, 128 });
        auto [byStack, byReplay] = bothWays(
            config, [&] { return std::unique_ptr<TraceReader>(std::make_unique<SyntheticTrace>(*generated)); });
        const std::string what = fmt::format("{} keys, values {}", c.keys, c.values);
        EXPECT_EQ(byStack.budgetMethod, "stack distances") << what;
        EXPECT_EQ(byReplay.budgetMethod, "a replay per budget") << what;
        expectSameCurve(byStack, byReplay, what);
        EXPECT_EQ(byStack.trace, byReplay.trace) << what;
    }
}

TEST(StackDistances, EveryBudgetEqualsItsOwnReplayOnRandomTraces) {
    // GETs with and without sizes, SETs, commands the keyspace does not see, keys read before they are
    // written; each key keeps one size. Budgets on every side of the keys' sizes.
    Random random(2026);
    for (int round = 0; round < 400; ++round) {
        const auto keys = static_cast<std::uint32_t>(2 + random.below(40));
        std::vector<std::uint32_t> valueOf(keys);
        for (auto& v : valueOf)
            v = static_cast<std::uint32_t>(1 + random.below(300));
        std::vector<Request> requests;
        const auto count = 1 + random.below(400);
        for (std::uint64_t i = 0; i < count; ++i) {
            Request r;
            r.keyId = static_cast<std::uint32_t>(random.below(keys));
            r.keyBytes = 10;
            r.timeMs = i;
            const auto pick = random.below(10);
            r.op = pick < 6 ? Op::Get : pick < 9 ? Op::Set : Op::Other;
            r.valueBytes = r.op == Op::Set || (r.op == Op::Get && random.below(2)) ? valueOf[r.keyId] : 0;
            requests.push_back(r);
        }
        std::vector<std::uint64_t> budgets;
        for (int b = 0; b < 6; ++b)
            budgets.push_back(1 + random.below(keys * 200));
        std::sort(budgets.begin(), budgets.end());
        budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
        auto [byStack, byReplay] = bothWays(exactLruConfig(budgets),
            [&] { return std::unique_ptr<TraceReader>(std::make_unique<MemoryTrace>(requests)); });
        const std::string what = fmt::format("round {}", round);
        EXPECT_EQ(byStack.budgetMethod, "stack distances") << what;
        expectSameCurve(byStack, byReplay, what);
        if (::testing::Test::HasFailure())
            break;
    }
}

TEST(StackDistances, ATraceThatBreaksTheConditionsIsReplayedAndSaysWhy) {
    auto generated = makeGeneratorConfig(5000, 40000, "16", "lognormal:5:0.5:1:2000", 0, 0, 0.8, 0.05, "zipf:0.9", 9);
    ASSERT_TRUE(generated);
    const auto config = exactLruConfig({ 100000, 400000 });
    auto [again, byReplay]
        = bothWays(config, [&] { return std::unique_ptr<TraceReader>(std::make_unique<SyntheticTrace>(*generated)); });
    EXPECT_TRUE(again.budgetMethod.starts_with("a replay per budget (not stack distances: request "))
        << again.budgetMethod;
    ASSERT_EQ(again.points.size(), byReplay.points.size());
    for (std::size_t i = 0; i < again.points.size(); ++i) {
        EXPECT_EQ(*again.points[i].budget, *byReplay.points[i].budget) << "the same replays, from a second reading";
        EXPECT_EQ(again.points[i].usableBytes, byReplay.points[i].usableBytes);
    }
    // A policy that samples, sizes by the layout, or batched fills: no stack distances tried.
    for (auto change : { +[](SimulationConfig& c) { c.eviction->policy = EvictionPolicy::AllKeysLru; },
             +[](SimulationConfig& c) { c.eviction->rawSizes = false; }, +[](SimulationConfig& c) { c.fillOnMiss = 8; },
             +[](SimulationConfig& c) { c.budgetSampleRate = 0.5; } }) {
        SimulationConfig other = exactLruConfig({ 100000, 400000 });
        change(other);
        other.reopenTrace = [&]() -> Expected<std::unique_ptr<TraceReader>> {
            ADD_FAILURE() << "read again";
            return std::unique_ptr<TraceReader>(std::make_unique<SyntheticTrace>(*generated));
        };
        SyntheticTrace trace(*generated);
        auto result = simulate(other, trace);
        ASSERT_TRUE(result) << result.error().describe();
        EXPECT_EQ(result->budgetMethod, "a replay per budget");
    }
}
