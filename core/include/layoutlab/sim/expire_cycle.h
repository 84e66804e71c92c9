// SPDX-License-Identifier: MIT
#pragma once

// The server's active expiry beside the replay (expire.c activeExpireCycle, as Redis 7.0 to Valkey 9.1 run
// it): a key whose TTL has passed stays in the server until a cycle of its cron finds it, and the cycles go
// through the expires table in the order of its buckets, not in the order of the keys' times. The replay
// drops a key at its TTL; the allocator's model (slab_replay.h) frees it when a cycle here would, in the
// cycle's order, which decides the regions the thread cache holds when the cycles end and so the slabs they
// keep active.
//
// The rules, from expire.c activeExpireCycle (the slow cycle, server.c serverCron -> databasesCron, hz 10):
// - a cycle every 1000 / hz milliseconds (server.h CONFIG_DEFAULT_HZ 10);
// - a key is expired when the cycle's time is past its own (activeExpireCycleTryExpire: `now > t`);
// - each loop samples ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP (20) keys of the table from a cursor the database
//   keeps between cycles, removing the expired ones it meets, and the cycle goes on while a loop's sample
//   held more than ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE (10%) of expired keys, and stops when the cursor
//   comes back to the table's start (db_done).
// The table's order is its buckets' in the scan's reverse-binary order: a key's place is the bit reversal of
// its hash (SlabIndex::hashOf, the hash the index model places it by), the same whatever the table's size.
// A loop covers the share of that order that holds 20 of the table's keys (the server's whole buckets hold a
// few more).
//
// Not modelled: the cycle's time limit (25 ms a slow cycle: how many keys fit depends on the build's
// speed), the fast cycles beforeSleep runs (while the stale share stays above 10%, or after a cycle hit
// its limit), and reads that find an expired key before a cycle does (db.c expireIfNeeded on a GET).

#include <cstdint>
#include <map>
#include <vector>

namespace layoutlab {

class ActiveExpireCycle {
public:
    static constexpr std::uint64_t kPeriodMs = 100; // 1000 / server.hz (server.h CONFIG_DEFAULT_HZ)
    static constexpr std::uint64_t kKeysPerLoop = 20; // server.h ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP, at effort 1
    static constexpr std::uint64_t kAcceptableStalePercent = 10; // server.h ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE

    // `keyId`'s TTL ran out: the replay has dropped it; the server's expires table holds it until a cycle
    // removes it. Told after the cycles before its time ran and before the first at or past it
    // (runUntil), so that every key held is expired at every cycle still to run.
    void expired(std::uint32_t keyId);
    // Whether a cycle has still to remove `keyId`.
    bool holds(std::uint32_t keyId) const { return keyId < m_held.size() && m_held[keyId]; }
    // A command reaches `keyId` before a cycle did: the server removes it then (db.c expireIfNeeded).
    void take(std::uint32_t keyId);
    bool empty() const { return m_byPlace.empty(); }
    std::uint64_t heldKeys() const { return m_byPlace.size(); }

    // Runs the cycles due by `nowMs` (one at each multiple of the period, from the first after the last
    // run), appending the keys they remove to `removed` in their order. `tableKeys`: the keys with a TTL
    // the replay holds, which the server's table holds besides these.
    void runUntil(std::uint64_t nowMs, std::uint64_t tableKeys, std::vector<std::uint32_t>& removed);
    // Removes every key still held, in the table's order (what cycles after the trace would do: the
    // replay has dropped them all).
    void drain(std::vector<std::uint32_t>& removed);
    // When the next cycle runs (UINT64_MAX when no key is held: cycles then remove nothing).
    std::uint64_t nextCycleMs() const;

    // The key's place in the scan's order.
    static std::uint64_t placeOf(std::uint32_t keyId);

private:
    // One cycle over the table (every held key is expired by then).
    void cycle(std::uint64_t tableKeys, std::vector<std::uint32_t>& removed);
    // `cycles` cycles while no key is held: each moves the cursor by one loop.
    void idleCycles(std::uint64_t cycles, std::uint64_t tableKeys);
    // The share of the table's order (of 2^64) one loop samples; kWholeTable when it samples all of it.
    std::uint64_t loopShare(std::uint64_t tableKeys) const;
    static constexpr std::uint64_t kWholeTable = 0;
    void forget(std::map<std::uint64_t, std::uint32_t>::iterator at, std::vector<std::uint32_t>& removed);

    std::map<std::uint64_t, std::uint32_t> m_byPlace; // the keys a cycle has still to remove, by place
    std::vector<bool> m_held; // by key id
    std::uint64_t m_cursor = 0; // the table's place the next loop starts at (expires_cursor)
    std::uint64_t m_lastCycleMs = 0; // the last cycle run (cycles run at multiples of the period)
};

} // namespace layoutlab
