// SPDX-License-Identifier: MIT
#include "layoutlab/trace/decode_ahead_reader.h"
#include "layoutlab/trace/generator.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

std::vector<Request> drain(TraceReader& reader, std::size_t batch, std::optional<Error>* error = nullptr) {
    std::vector<Request> all;
    std::vector<Request> buffer(batch);
    for (;;) {
        auto n = reader.read(buffer);
        if (!n) {
            if (error)
                *error = n.error();
            return all;
        }
        if (*n == 0)
            return all;
        all.insert(all.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(*n));
    }
}

// The same, through borrow(): in place for a DecodeAheadReader, through the default buffer otherwise.
std::vector<Request> drainBorrowed(TraceReader& reader, std::size_t max, std::optional<Error>* error = nullptr) {
    std::vector<Request> all;
    for (;;) {
        auto requests = reader.borrow(max);
        if (!requests) {
            if (error)
                *error = requests.error();
            return all;
        }
        if (requests->empty())
            return all;
        EXPECT_LE(requests->size(), max);
        all.insert(all.end(), requests->begin(), requests->end());
    }
}

SyntheticTrace makeTrace() {
    auto cfg
        = makeGeneratorConfig(5000, 30000, "uniform:4:40", "lognormal:4:1:1:5000", 0.3, 0.1, 0.8, 0.05, "zipf:0.9", 3);
    return SyntheticTrace(*cfg);
}

// A reader that fails after handing out `failAfter` requests, a few at a time.
class FailingReader final : public TraceReader {
public:
    explicit FailingReader(std::uint64_t failAfter)
        : m_failAfter(failAfter) { }
    Expected<std::size_t> read(std::span<Request> out) override {
        if (m_done == m_failAfter)
            return dataError("damaged record", "t.lltrace", 1234, true);
        const std::size_t n = std::min<std::uint64_t>({ out.size(), 7, m_failAfter - m_done });
        for (std::size_t i = 0; i < n; ++i)
            out[i].keyId = static_cast<std::uint32_t>(m_done++);
        return n;
    }
    std::uint64_t totalRequests() const override { return 0; }
    std::uint64_t keyIdLimit() const override { return 0; }
    std::string name() const override { return "failing"; }

private:
    std::uint64_t m_failAfter;
    std::uint64_t m_done = 0;
};

TEST(DecodeAheadReader, HandsOutExactlyWhatTheWrappedReaderGives) {
    auto direct = makeTrace();
    const auto expected = drain(direct, 4096);
    for (std::size_t batch : { 1u, 100u, 8192u, 20000u }) {
        DecodeAheadReader ahead(std::make_unique<SyntheticTrace>(makeTrace()));
        EXPECT_EQ(ahead.totalRequests(), direct.totalRequests());
        EXPECT_EQ(ahead.keyIdLimit(), direct.keyIdLimit());
        EXPECT_EQ(drain(ahead, batch), expected) << "batch " << batch;
        std::vector<Request> more(10);
        auto after = ahead.read(more);
        ASSERT_TRUE(after);
        EXPECT_EQ(*after, 0u); // the end stays the end
    }
}

TEST(DecodeAheadReader, AnErrorComesAfterTheRequestsBeforeIt) {
    for (std::uint64_t failAfter : { 0u, 5u, 8192u, 20000u }) {
        DecodeAheadReader ahead(std::make_unique<FailingReader>(failAfter));
        std::optional<Error> error;
        const auto got = drain(ahead, 1000, &error);
        ASSERT_EQ(got.size(), failAfter);
        for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i].keyId, i);
        ASSERT_TRUE(error.has_value()) << "after " << failAfter;
        EXPECT_EQ(error->message, "damaged record");
        EXPECT_EQ(error->offset, 1234u);
    }
}

TEST(DecodeAheadReader, BorrowingGivesTheSameRequestsAndErrors) {
    auto direct = makeTrace();
    const auto expected = drain(direct, 4096);
    for (std::size_t max : { 1u, 100u, 8192u, 20000u }) {
        DecodeAheadReader ahead(std::make_unique<SyntheticTrace>(makeTrace()));
        EXPECT_EQ(drainBorrowed(ahead, max), expected) << "max " << max;
        auto plain = makeTrace(); // the default borrow(), through a buffer
        EXPECT_EQ(drainBorrowed(plain, max), expected) << "max " << max;
    }
    for (std::uint64_t failAfter : { 0u, 5u, 8192u, 20000u }) {
        DecodeAheadReader ahead(std::make_unique<FailingReader>(failAfter));
        std::optional<Error> error;
        const auto got = drainBorrowed(ahead, 1000, &error);
        ASSERT_EQ(got.size(), failAfter);
        ASSERT_TRUE(error.has_value()) << "after " << failAfter;
        EXPECT_EQ(error->offset, 1234u);
    }
}

TEST(DecodeAheadReader, CanBeDroppedHalfRead) {
    DecodeAheadReader ahead(std::make_unique<SyntheticTrace>(makeTrace()));
    std::vector<Request> some(10);
    ASSERT_TRUE(ahead.read(some));
    // The destructor stops the decoding thread, which may be waiting for a free batch.
}

} // namespace
