// SPDX-License-Identifier: MIT
// A trace restamped with the seconds a drive sent it in (trace/restamped_trace.h): each request takes the
// second its number falls in, whatever batches it is read in; everything else stays.
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
    const std::vector<std::uint64_t> starts { 4, 9, 9 };
    for (const std::size_t batch : { std::size_t { 1 }, std::size_t { 3 }, std::size_t { 10 } }) {
        MemoryTrace inner(requests, "sent");
        RestampedTrace trace(inner, 1700000000, starts);
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
