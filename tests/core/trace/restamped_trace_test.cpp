// SPDX-License-Identifier: MIT
// A trace restamped with the clock a drive sent it on (trace/restamped_trace.h): each request takes the
// time of the clock point its number falls in, whatever batches it is read in; everything else stays.
#include "layoutlab/trace/memory_trace.h"
#include "layoutlab/trace/restamped_trace.h"

#include <gtest/gtest.h>

using namespace layoutlab;

TEST(RestampedTrace, EachRequestTakesTheSecondItWasSentIn) {
    std::vector<Request> requests(10);
    for (std::uint32_t i = 0; i < requests.size(); ++i) {
        requests[i].keyId = i;
        requests[i].timeMs = 1000u * 3600 * i; // the trace's own clock: an hour apart
        requests[i].ttlSeconds = 3;
    }
    // Sent from second 1,700,000,000: requests 1-3 in it, 4-8 in the next, 9 and 10 two seconds later
    // (no request began the second in between).
    const std::vector<ClockPoint> clock { { 1, 1700000000000 }, { 4, 1700000001000 }, { 9, 1700000003000 } };
    for (const std::size_t batch : { std::size_t { 1 }, std::size_t { 3 }, std::size_t { 10 } }) {
        MemoryTrace inner(requests, "sent");
        RestampedTrace trace(inner, clock);
        EXPECT_EQ(trace.totalRequests(), 10u);
        EXPECT_EQ(trace.keyIdLimit(), 10u);
        EXPECT_EQ(trace.name(), "sent");
        std::vector<Request> read;
        std::vector<Request> buffer(batch);
        while (true) {
            auto n = trace.read(buffer);
            ASSERT_TRUE(n);
            if (*n == 0)
                break;
            read.insert(read.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(*n));
        }
        ASSERT_EQ(read.size(), 10u);
        for (std::uint32_t i = 0; i < 10; ++i) {
            const std::uint64_t second = i < 3 ? 1700000000 : i < 8 ? 1700000001 : 1700000003;
            EXPECT_EQ(read[i].timeMs, second * 1000) << "request " << i + 1 << ", batches of " << batch;
            EXPECT_EQ(read[i].keyId, i);
            EXPECT_EQ(read[i].ttlSeconds, 3u);
        }
    }
}

TEST(RestampedTrace, ABatchTakesTheMillisecondItWasSentAt) {
    std::vector<Request> requests(6);
    for (std::uint32_t i = 0; i < requests.size(); ++i)
        requests[i].timeMs = 5000 + i;
    // A load sent requests 1-2 at 0 ms, 3-5 at 13 ms, 6 at 27 ms.
    MemoryTrace inner(requests, "loaded");
    RestampedTrace trace(inner, { { 1, 0 }, { 3, 13 }, { 6, 27 } });
    std::vector<Request> read(6);
    ASSERT_EQ(*trace.read(read), 6u);
    const std::uint64_t expected[] { 0, 0, 13, 13, 13, 27 };
    for (std::size_t i = 0; i < 6; ++i)
        EXPECT_EQ(read[i].timeMs, expected[i]) << "request " << i + 1;
}
