// SPDX-License-Identifier: MIT
// The server's active expiry beside the replay (sim/expire_cycle.h): when its cycles run, which keys each
// removes and in what order, and the replay's millisecond TTLs the cycles follow.
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/expire_cycle.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "set_request.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

using namespace layoutlab;

namespace {

// Key ids 0..n-1 in the table's order (their places ascending).
std::vector<std::uint32_t> inPlaceOrder(std::uint32_t n) {
    std::vector<std::uint32_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0u);
    std::sort(ids.begin(), ids.end(),
        [](std::uint32_t a, std::uint32_t b) { return ActiveExpireCycle::placeOf(a) < ActiveExpireCycle::placeOf(b); });
    return ids;
}

TEST(ActiveExpireCycle, CyclesRunAtEachMultipleOfThePeriod) {
    ActiveExpireCycle cycles;
    std::vector<std::uint32_t> removed;
    cycles.runUntil(250, 0, removed); // none held: idle cycles at 100 and 200
    cycles.expired(7);
    EXPECT_TRUE(cycles.holds(7));
    EXPECT_EQ(cycles.nextCycleMs(), 300u);
    cycles.runUntil(299, 0, removed);
    EXPECT_TRUE(removed.empty());
    cycles.runUntil(300, 0, removed); // a table of one expired key: the cycle's first loop takes it
    EXPECT_EQ(removed, std::vector<std::uint32_t> { 7 });
    EXPECT_FALSE(cycles.holds(7));
    EXPECT_EQ(cycles.nextCycleMs(), UINT64_MAX);
}

TEST(ActiveExpireCycle, ATableOfExpiredKeysGoesInOneCycleInTheTablesOrder) {
    // Every loop's sample is all expired: the cycle goes on to the table's end (db_done), removing each
    // key as its place comes.
    ActiveExpireCycle cycles;
    for (std::uint32_t id = 0; id < 1000; ++id)
        cycles.expired(id);
    std::vector<std::uint32_t> removed;
    cycles.runUntil(100, 0, removed);
    EXPECT_EQ(removed, inPlaceOrder(1000));
    EXPECT_TRUE(cycles.empty());
}

TEST(ActiveExpireCycle, AFewExpiredKeysAmongManyWaitForTheCursor) {
    // 10 expired keys among 100,000 with a TTL: a loop of 20 keys' share of the table finds none or one,
    // at most 10% stale, and the cycle stops; each cycle moves the cursor one loop on, so a key goes when
    // the cursor reaches its place, and the cycles hold the rest meanwhile.
    ActiveExpireCycle cycles;
    const std::uint64_t live = 100000;
    const auto order = inPlaceOrder(10);
    for (std::uint32_t id = 0; id < 10; ++id)
        cycles.expired(id);
    std::vector<std::uint32_t> removed;
    cycles.runUntil(100 * 10, live, removed); // 10 cycles: 200 of 100,010 keys' share sampled
    EXPECT_LT(removed.size(), 10u);
    // A pass over the table takes about 100,010 / 20 cycles; by then every key has gone, in the table's order.
    cycles.runUntil(100 * 6000, live, removed);
    EXPECT_EQ(removed, order);
    EXPECT_TRUE(cycles.empty());
}

TEST(ActiveExpireCycle, ACycleStopsAtALoopThatIsAcceptablyStale) {
    // Half of the table expired, in the first half of its order: the loops there are all stale, the first
    // one past it is not, and the cycle stops there with the second half untouched.
    ActiveExpireCycle cycles;
    const auto order = inPlaceOrder(4000);
    std::vector<std::uint32_t> expiredKeys(order.begin(), order.begin() + 2000);
    for (std::uint32_t id : expiredKeys)
        cycles.expired(id);
    std::vector<std::uint32_t> removed;
    cycles.runUntil(100, 2000, removed); // the other 2,000 keys, not expired, are the replay's
    EXPECT_EQ(removed, expiredKeys);
}

TEST(ActiveExpireCycle, ACommandTakesAHeldKeyAndDrainEmptiesTheRestFromTheCursor) {
    ActiveExpireCycle cycles;
    for (std::uint32_t id = 0; id < 50; ++id)
        cycles.expired(id);
    cycles.take(3); // db.c expireIfNeeded: a command reached it first
    EXPECT_FALSE(cycles.holds(3));
    EXPECT_EQ(cycles.heldKeys(), 49u);
    std::vector<std::uint32_t> removed;
    cycles.drain(removed);
    auto expected = inPlaceOrder(50);
    expected.erase(std::find(expected.begin(), expected.end(), 3u));
    EXPECT_EQ(removed, expected);
    EXPECT_TRUE(cycles.empty());
}

// A replay of `requests` whose observer records what it is told.
struct Told final : KeyspaceObserver {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> expiries;
    void stored(std::uint32_t, const KeyState&, Op) override { }
    void removed(std::uint32_t) override { }
    void expired(std::uint32_t keyId, std::uint64_t dueMs) override { expiries.emplace_back(keyId, dueMs); }
};

TEST(KeyspaceReplayTtls, ValkeyExpiresAKeyTheMillisecondAfterItsTimeMemcachedAtItsSecond) {
    for (const char* name : { "valkey-9.0", "memcached-1.6" }) {
        auto layout = parseLayout(name);
        ASSERT_TRUE(layout);
        KeyspaceReplay replay((*layout)->indexPolicy(), 4, 0, std::nullopt, std::nullopt);
        Told told;
        replay.setObserver(&told);
        const bool valkey = std::string(name) == "valkey-9.0";
        // Set at 500 ms for 2 seconds: Valkey's key is expired past 2,500 ms (db.c keyIsExpired), memcached's
        // from 2,000 (its second 2: items.c do_item_get).
        const std::vector<Request> requests { test::set(1, 100, 2, 500) };
        ASSERT_TRUE(replay.apply(requests, 1));
        replay.advanceClock(valkey ? 2500 : 1999);
        EXPECT_TRUE(told.expiries.empty()) << name;
        EXPECT_EQ(replay.summary().liveKeys, 1u) << name;
        replay.advanceClock(valkey ? 2501 : 2000);
        ASSERT_EQ(told.expiries.size(), 1u) << name;
        EXPECT_EQ(told.expiries[0], std::make_pair(std::uint32_t { 1 }, std::uint64_t { valkey ? 2501u : 2000u }));
        EXPECT_EQ(replay.summary().liveKeys, 0u) << name;
    }
}

TEST(KeyspaceReplayTtls, ATtlSetAgainGoesByItsNewTime) {
    auto layout = parseLayout("valkey-9.0");
    ASSERT_TRUE(layout);
    KeyspaceReplay replay((*layout)->indexPolicy(), 4, 0, std::nullopt, std::nullopt);
    Told told;
    replay.setObserver(&told);
    const std::vector<Request> requests { test::set(1, 100, 1, 0), test::set(1, 100, 5, 100) };
    ASSERT_TRUE(replay.apply(requests, 1));
    replay.advanceClock(3000);
    EXPECT_TRUE(told.expiries.empty()); // the first TTL's heap entry is skipped
    replay.advanceClock(5101);
    ASSERT_EQ(told.expiries.size(), 1u);
    EXPECT_EQ(told.expiries[0].second, 5101u);
}

} // namespace
