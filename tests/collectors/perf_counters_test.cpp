// SPDX-License-Identifier: MIT
// The perf collector counts what this machine has: software events everywhere perf_event_open works,
// hardware events where there is a PMU (these tests skip, with the reason, where there is none).

#include "layoutlab/collect/perf_counters.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

using namespace layoutlab;

namespace {

double busyWork() {
    std::vector<double> v(1 << 20);
    double sum = 0;
    for (int round = 0; round < 20; ++round)
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] += std::sqrt(static_cast<double>(i + round));
            sum += v[i];
        }
    return sum;
}

TEST(PerfCounters, SoftwareEventsCountTheWorkBetweenStartAndStop) {
    auto counters = PerfCounters::open({ "task-clock", "page-faults" });
    ASSERT_TRUE(counters) << counters.error().describe();
    const auto values = (*counters)->read();
    if (!values[0].available)
        GTEST_SKIP() << "perf_event_open refuses even software events here: " << values[0].unavailableReason;
    (*counters)->start();
    volatile double sink = busyWork();
    (void)sink;
    (*counters)->stop();
    const auto after = (*counters)->read();
    EXPECT_GT(after[0].value, 1'000'000u); // task-clock, in ns: the loop takes milliseconds
    EXPECT_GT(after[1].value, 100u); // touching 8 MiB of fresh memory faults pages in
}

TEST(PerfCounters, HardwareEventsOrTheReasonWhyNot) {
    auto counters = PerfCounters::open({ "cycles", "instructions", "l1d-read-misses", "llc-read-misses" });
    ASSERT_TRUE(counters) << counters.error().describe();
    if (!(*counters)->hardwareAvailable()) {
        EXPECT_FALSE((*counters)->hardwareReason().empty());
        for (const auto& v : (*counters)->read())
            EXPECT_FALSE(v.unavailableReason.empty()) << v.name;
        GTEST_SKIP() << "no hardware counters: " << (*counters)->hardwareReason();
    }
    (*counters)->start();
    volatile double sink = busyWork();
    (void)sink;
    (*counters)->stop();
    const auto values = (*counters)->read();
    EXPECT_GT(values[0].value, 0u);
    EXPECT_GT(values[1].value, values[0].value / 10); // instructions
}

TEST(PerfCounters, UnknownEventsAreUsageErrors) {
    auto counters = PerfCounters::open({ "cycles", "coffee-breaks" });
    ASSERT_FALSE(counters);
    EXPECT_EQ(counters.error().code, ErrorCode::Usage);
    EXPECT_NE(counters.error().describe().find("coffee-breaks"), std::string::npos);
    EXPECT_EQ(PerfCounters::defaultEvents().size(), PerfCounters::knownEvents().size());
}

TEST(PerfCounters, AvailabilityLineSaysWhy) {
    const auto line = perfAvailability();
    EXPECT_FALSE(line.empty());
    EXPECT_TRUE(line.find("hardware") != std::string::npos) << line;
}

} // namespace
