// SPDX-License-Identifier: MIT
// leanestPoint (the GUI's "leanest threshold" marker) and pairByThreshold (its Compare view).

#include "layoutlab/report/advice.h"
#include "layoutlab/report/compare.h"
#include "layoutlab/report/svg_chart.h"
#include "layoutlab/sim/results.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <tuple>

namespace layoutlab {
namespace {

ThresholdPoint point(std::uint32_t threshold, std::uint64_t usableBytes, double lines = 0) {
    ThresholdPoint p;
    p.threshold = threshold;
    p.usableBytes = usableBytes;
    p.linesTouchedPerGet = lines;
    return p;
}

TEST(LeanestPoint, FewestUsableBytesWins) {
    EXPECT_EQ(leanestPoint({ point(64, 16540), point(128, 14140), point(192, 15000) }), 1u);
}

TEST(LeanestPoint, TiesGoToFewerLinesPerGetThenTheLowerThreshold) {
    EXPECT_EQ(leanestPoint({ point(64, 14000, 4), point(128, 14000, 3) }), 1u);
    EXPECT_EQ(leanestPoint({ point(64, 14000, 3), point(128, 14000, 3) }), 0u);
    EXPECT_EQ(leanestPoint({ point(128, 14000, 3), point(64, 14000, 3) }), 1u);
    EXPECT_EQ(leanestPoint({}), 0u);
}

TEST(PairByThreshold, TheUnionOfThresholdsInOrder) {
    const std::vector<ThresholdPoint> a { point(64, 1), point(128, 2) };
    const std::vector<ThresholdPoint> b { point(32, 3), point(128, 4) };
    const auto pairs = pairByThreshold(a, b);
    ASSERT_EQ(pairs.size(), 3u);
    EXPECT_EQ(pairs[0].threshold, 32u);
    EXPECT_EQ(pairs[0].a, nullptr);
    EXPECT_EQ(pairs[0].b, &b[0]);
    EXPECT_EQ(pairs[1].threshold, 64u);
    EXPECT_EQ(pairs[1].a, &a[0]);
    EXPECT_EQ(pairs[1].b, nullptr);
    EXPECT_EQ(pairs[2].a, &a[1]);
    EXPECT_EQ(pairs[2].b, &b[1]);
}

TEST(RelativeChange, IsUndefinedFromZero) {
    EXPECT_DOUBLE_EQ(*relativeChange(200, 150), -0.25);
    EXPECT_FALSE(relativeChange(0, 1).has_value());
}

} // namespace
} // namespace layoutlab

namespace layoutlab {
namespace {

SimulationResult sweepOf(std::vector<std::tuple<std::uint32_t, double, double>> points) {
    SimulationResult r;
    for (const auto& [threshold, bytesPerKey, llc] : points) {
        ThresholdPoint p;
        p.threshold = threshold;
        p.keys = 1000; // the totals agree with the per-key figures, as in a real sweep
        p.usableBytes = static_cast<std::uint64_t>(bytesPerKey * 1000);
        p.usableBytesPerKey = bytesPerKey;
        p.linesTouchedPerGet = 2 * llc;
        p.missesPerGet = { 3 * llc, llc };
        r.points.push_back(p);
    }
    return r;
}

TEST(Advise, WeighsTheExcessOverTheBestOfEachAxis) {
    // 64 is 10% fatter and 100% slower than the best of each; 128 is 0% and 50%; 256 is 20% and 0%.
    const auto r = sweepOf({ { 64, 110, 2.0 }, { 128, 100, 1.5 }, { 256, 120, 1.0 } });
    auto balanced = advise(r, {});
    ASSERT_TRUE(balanced);
    EXPECT_EQ(balanced->accessMetric, "llc_misses_per_get");
    EXPECT_EQ(balanced->chosen, 2u); // costs 1.1, 0.5, 0.2
    EXPECT_NEAR(balanced->points[0].cost, 1.1, 1e-12);
    EXPECT_NEAR(balanced->points[1].missCost, 0.5, 1e-12);
    EXPECT_EQ(advise(r, { 1.0, 0.1 })->chosen, 1u); // memory first: costs 0.2, 0.05, 0.2
    EXPECT_EQ(advise(r, { 1.0, 1.0, 0 })->accessMetric, "l1_misses_per_get");
    EXPECT_FALSE(advise(r, { 1.0, 1.0, 2 }));
    EXPECT_FALSE(advise(r, { 0.0, 0.0 }));
    EXPECT_FALSE(advise(r, { -1.0, 1.0 }));
    EXPECT_FALSE(advise(SimulationResult {}, {}));
}

TEST(Advise, TiesGoToFewerBytesThenTheLowerThreshold) {
    EXPECT_EQ(advise(sweepOf({ { 64, 100, 1.0 }, { 128, 100, 1.0 } }), {})->chosen, 0u);
    EXPECT_EQ(advise(sweepOf({ { 64, 100, 1.0 }, { 128, 90, 1.0 } }), { 0.0, 1.0 })->chosen, 1u);
}

// Differences smaller than the model's uncertainty are ties; the layout's own threshold among them is
// advised, and a difference the model can resolve still decides.
TEST(Advise, DifferencesWithinTheModelsUncertaintyAreTies) {
    // 96 is 0.1% leaner than 128 with 2% fewer misses: within 0.2% and 3%. 64 is 5% fatter.
    auto r = sweepOf({ { 64, 105, 1.2 }, { 96, 99.9, 0.98 }, { 128, 100, 1.0 } });
    r.thresholdName = "threshold";
    r.configuredThreshold = 128;
    auto a = advise(r, {});
    ASSERT_TRUE(a);
    EXPECT_EQ(a->points[a->cheapest].threshold, 96u);
    EXPECT_EQ(a->points[a->chosen].threshold, 128u); // the shipped one: nothing the model can show repays a change
    EXPECT_EQ(a->ties(), 2u);
    EXPECT_FALSE(a->points[0].tiesWithAdvised);
    EXPECT_EQ(a->shippedThreshold, 128u);
    // Outside the uncertainty, the cheapest is advised whatever ships.
    auto clear = sweepOf({ { 64, 105, 1.2 }, { 96, 99.0, 0.9 }, { 128, 100, 1.0 } });
    clear.thresholdName = "threshold";
    clear.configuredThreshold = 128;
    auto b = advise(clear, {});
    EXPECT_EQ(b->points[b->chosen].threshold, 96u);
    EXPECT_EQ(b->ties(), 1u);
    // A stated uncertainty of zero: only equal points tie.
    auto c = advise(r, {}, ModelUncertainty { 0, 0, 0, 0 });
    EXPECT_EQ(c->points[c->chosen].threshold, 96u);
    // Counts of almost no misses tie whatever their ratio: 0.004 against 0.001 per GET.
    auto fits = sweepOf({ { 64, 100, 0.004 }, { 128, 100.1, 0.001 } });
    fits.thresholdName = "threshold";
    fits.configuredThreshold = 64;
    auto e = advise(fits, {});
    EXPECT_EQ(e->ties(), 2u);
    EXPECT_EQ(e->points[e->chosen].threshold, 64u);
    // Without the cache model, lines per GET are exact: any difference in them counts.
    for (auto& p : r.points)
        p.missesPerGet.clear();
    auto d = advise(r, {});
    EXPECT_EQ(d->accessMetric, "lines_touched_per_get");
    EXPECT_EQ(d->points[d->chosen].threshold, 96u); // 1.96 lines against 2.0
}

TEST(Advise, WithoutTheCacheModelLinesTouchedStandIn) {
    auto r = sweepOf({ { 64, 100, 2.0 }, { 128, 100, 1.0 } });
    for (auto& p : r.points)
        p.missesPerGet.clear();
    auto a = advise(r, {});
    ASSERT_TRUE(a);
    EXPECT_EQ(a->accessMetric, "lines_touched_per_get");
    EXPECT_EQ(a->chosen, 1u);
    EXPECT_FALSE(advise(r, { 1.0, 1.0, 0 })); // no cache levels to pick from
}

} // namespace
} // namespace layoutlab

namespace layoutlab {
namespace {

TEST(SvgChart, IsAStandaloneDeterministicDrawing) {
    SvgChart chart { "Bytes <per> key", "threshold (bytes)", "bytes per key",
        { { "run \"1\"", { { 64, 165.37 }, { 128, 141.37 } } }, { "run 2", { { 64, 165.37 }, { 128, 165.37 } } } },
        { { 64, "64" }, { 512, "off the axis" } } };
    const std::string svg = renderSvg(chart);
    EXPECT_EQ(svg, renderSvg(chart));
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.find("Bytes &lt;per&gt; key"), std::string::npos);
    EXPECT_NE(svg.find("run &quot;1&quot;"), std::string::npos);
    EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
    EXPECT_EQ(svg.find("<polyline") != std::string::npos, true);
    EXPECT_EQ(svg.find("off the axis"), std::string::npos); // markers outside the data are left out
    EXPECT_EQ(svg.find("href"), std::string::npos); // nothing fetched
    EXPECT_NE(renderSvg({ "empty", "x", "y", {}, {} }).find("no data"), std::string::npos);
}

TEST(SvgChart, MeasuredPointsAreRingsWithTheirLabelsAndNoLine) {
    SvgChart chart { "measured", "threshold (bytes)", "bytes per key",
        { { "predicted", { { 32, 241.79 }, { 64, 241.66 } } },
            { "measured", { { 32, 241.88 }, { 64, 241.77 } }, true, { "-0.04%", "<-0.05%>" } } },
        {} };
    const std::string svg = renderSvg(chart);
    std::size_t polylines = 0, rings = 0;
    for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1))
        ++polylines;
    const std::string ring = "r=\"5\" fill=\"none\"";
    for (auto at = svg.find(ring); at != std::string::npos; at = svg.find(ring, at + 1))
        ++rings;
    EXPECT_EQ(polylines, 1u); // the predicted line only
    EXPECT_EQ(rings, 2u); // one open ring per measured point
    EXPECT_NE(svg.find(">-0.04%</text>"), std::string::npos);
    EXPECT_NE(svg.find("&lt;-0.05%&gt;"), std::string::npos); // labels are escaped
}

TEST(SvgChart, EscapesEveryMarkupCharacter) {
    EXPECT_EQ(escapeXml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

} // namespace
} // namespace layoutlab

#include "layoutlab/report/get_time.h"

#include <nlohmann/json.hpp>

namespace layoutlab {
namespace {

// A GET that misses L1 three times, L2 twice, the LLC once, over 5 lines in 3 steps of its pointer chase.
TEST(PredictStall, CountsEachMissAtTheLatencyOfWhereItHits) {
    ThresholdPoint p;
    p.missesPerGet = { 3, 2, 1 };
    p.linesTouchedPerGet = 5;
    p.dependentLoadsPerGet = 2;
    const LoadLatencies l { { 1, 5, 40 }, 100, { 0, 0.5, 2 }, 10 };
    const auto e = predictStall(p, l);
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(e->serializedNs, 1 * 5 + 1 * 40 + 1 * 100.0); // L2 hit, LLC hit, memory
    EXPECT_DOUBLE_EQ(e->overlappedNs, 145 * 3.0 / 5); // the misses that start one of the 3 steps
    EXPECT_DOUBLE_EQ(e->ns, (145 + 87) / 2.0);
    EXPECT_NEAR(e->uncertaintyNs, (145 - 87) / 2.0 + (0.5 + 2 + 10) + 0.03 * 116, 1e-9);
    // One line and one dependent load fewer, one miss fewer at every level: less stall.
    ThresholdPoint q = p;
    q.missesPerGet = { 2, 1, 0 };
    q.linesTouchedPerGet = 4;
    q.dependentLoadsPerGet = 1;
    const auto d = predictStallChange(p, q, l);
    ASSERT_TRUE(d);
    EXPECT_LT(d->ns, 0);
    EXPECT_DOUBLE_EQ(d->serializedNs, (5 + 40 + 0.0) - 145);
    // Without the cache model, or with latencies for other levels: nothing.
    ThresholdPoint none = p;
    none.missesPerGet.clear();
    EXPECT_FALSE(predictStall(none, l));
    EXPECT_FALSE(predictStall(p, LoadLatencies { { 1, 5 }, 100, { 0, 0 }, 0 }));
}

// Ten pipelined GETs looked up together (Valkey 9's command-queue prefetch): the misses that start a step
// cost a tenth each, the other lines of a step as before.
TEST(PredictStall, ABatchSharesTheMissesThatStartAStep) {
    ThresholdPoint p;
    p.missesPerGet = { 3, 2, 1 };
    p.linesTouchedPerGet = 5;
    p.dependentLoadsPerGet = 2;
    LoadLatencies l { { 1, 5, 40 }, 100, { 0, 0, 0 }, 0 };
    l.overlappedLookups = 10;
    const auto e = predictStall(p, l);
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(e->overlappedNs, 145 * 3.0 / 5 / 10);
    EXPECT_DOUBLE_EQ(e->serializedNs, 145 * 3.0 / 5 / 10 + 145 * 2.0 / 5);
    // A layout with one dependent step fewer and the same lines gains a tenth of what it gains alone.
    ThresholdPoint q = p;
    q.dependentLoadsPerGet = 1;
    q.missesPerGet = { 2, 1, 0 };
    l.overlappedLookups = 1;
    const auto alone = predictStallChange(p, q, l);
    l.overlappedLookups = 10;
    const auto batched = predictStallChange(p, q, l);
    ASSERT_TRUE(alone && batched);
    EXPECT_LT(std::abs(batched->overlappedNs), std::abs(alone->overlappedNs) / 5);
    // Kept with the latencies, and read back.
    EXPECT_EQ(loadLatenciesFromJson(toJson(l))->overlappedLookups, 10u);
    // The batch: the smaller of the pipeline and the server's prefetch batch, none below two.
    EXPECT_EQ(overlappedLookups(10, 16), 10u);
    EXPECT_EQ(overlappedLookups(32, 16), 16u);
    EXPECT_EQ(overlappedLookups(10, 0), 1u);
    EXPECT_EQ(overlappedLookups(1, 16), 1u);
}

} // namespace
} // namespace layoutlab
