// SPDX-License-Identifier: MIT
// The MONITOR importer's string commands: results computed from the values it follows (INCR,
// INCRBYFLOAT), conditions it decides (MSETNX, EXPIRE NX/XX/GT/LT), commands the server refused, and
// commands it does not model, each counted where `import --stats` shows it.

#include "monitor_capture_import.h"

#include "layoutlab/import/import_stats.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/memory_trace.h"

#include <fstream>
#include <gtest/gtest.h>

using namespace layoutlab;
using layoutlab::test::MonitorCommandsTest;

namespace {

// The requests but the placements of keys in databases other than 0 (an Op::Resize of kKeyDatabase before each
// one's first request), which go to `placements`.
std::vector<Request> unplaced(const std::vector<Request>& all, std::vector<Request>* placements = nullptr) {
    std::vector<Request> out;
    for (const Request& r : all) {
        const bool placement = r.op == Op::Resize && r.valueBytes == kKeyDatabase;
        if (!placement)
            out.push_back(r);
        else if (placements)
            placements->push_back(r);
    }
    return out;
}

TEST_F(MonitorCommandsTest, IncrementsCarryTheirResults) {
    const auto r = import({ { "SET", "n", "9998" }, { "INCR", "n" }, { "INCR", "n" }, { "DECRBY", "n", "20000" },
        { "INCRBYFLOAT", "n", "0.5" }, { "INCR", "fresh" }, { "INCRBYFLOAT", "f", "3.0e2" } });
    ASSERT_EQ(r.size(), 7u);
    EXPECT_EQ(r[1].valueBytes, 4u); // 9999: still shared
    EXPECT_EQ(r[1].kind, ValueKind::SmallInteger);
    EXPECT_EQ(r[2].valueBytes, 5u); // 10000: an INT object
    EXPECT_EQ(r[2].kind, ValueKind::Integer);
    EXPECT_EQ(r[3].valueBytes, 6u); // -10000
    EXPECT_EQ(r[4].valueBytes, 7u); // "-9999.5", a string
    EXPECT_EQ(r[4].kind, ValueKind::String);
    EXPECT_EQ(r[5].valueBytes, 1u); // INCR of a missing key: 1
    EXPECT_EQ(r[6].valueBytes, 3u); // "300": INCRBYFLOAT stores a string, even of an integer
    EXPECT_EQ(r[6].kind, ValueKind::String);
    EXPECT_EQ(m_rejects.unseenKeys.at("INCR"), 1u);
    EXPECT_EQ(m_rejects.unseenKeys.at("INCRBYFLOAT"), 1u);
}

// SETBIT is the SETRANGE of its offset's byte (bitops.c lookupStringForBitCommand), the value's text followed:
// a bit set in "12" makes "q2", which INCR then refuses.
TEST_F(MonitorCommandsTest, SetBitWritesTheByteOfItsOffset) {
    const auto r = import({ { "SETBIT", "b", "100", "1" }, { "SET", "n", "12" }, { "SETBIT", "n", "1", "1" },
        { "INCR", "n" }, { "SETBIT", "n", "-1", "1" }, { "SETBIT", "n", "1", "2" } });
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].op, Op::SetRange);
    EXPECT_EQ(r[0].valueBytes, 13u); // bit 100 is in byte 12
    EXPECT_EQ(r[2].op, Op::SetRange);
    EXPECT_EQ(r[2].valueBytes, 1u);
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u); // INCR of "q2"
    EXPECT_EQ(m_rejects.refused.at("bit offset is not an integer or out of range"), 1u);
    EXPECT_EQ(m_rejects.refused.at("bit is not an integer or out of range"), 1u);
    EXPECT_EQ(m_rejects.unseenKeys.at("SETBIT"), 1u); // "b", once
}

// BITOP replaces its destination with a RAW string as long as its longest source (bitops.c bitopCommand):
// the destination's old value deleted, then made as SETRANGE makes a key; the result's text followed where
// the sources' are known ("1" AND "3" is "1", which INCR takes); every source empty deletes it.
TEST_F(MonitorCommandsTest, BitopReplacesItsDestinationWithTheLongestSourcesLength) {
    const auto r = import({ { "SET", "a", "1" }, { "SET", "b", "3" }, { "SET", "long", std::string(70, 'x') },
        { "BITOP", "and", "d", "a", "b" }, { "INCR", "d" }, { "BITOP", "OR", "d", "a", "long", "gone" },
        { "BITOP", "XOR", "d", "gone" }, { "BITOP", "NOT", "d", "a", "b" }, { "BITOP", "NAND", "d", "a" },
        { "HSET", "h", "f", "v" }, { "BITOP", "OR", "d", "a", "h" }, { "BITOP", "NOT", "h", "a" } });
    ASSERT_EQ(r.size(), 12u);
    EXPECT_EQ(r[3].op, Op::SetRange); // d made: 1 byte, "1"
    EXPECT_EQ(r[3].valueBytes, 1u);
    EXPECT_EQ(r[4].op, Op::Incr); // "1" + 1
    EXPECT_EQ(r[4].valueBytes, 1u);
    EXPECT_EQ(r[5].op, Op::Delete); // d replaced...
    EXPECT_EQ(r[6].op, Op::SetRange); // ...by 70 bytes, "gone" read as empty
    EXPECT_EQ(r[6].valueBytes, 70u);
    EXPECT_EQ(r[7].op, Op::Delete); // every source empty: d deleted, nothing made
    EXPECT_EQ(r[8].op, Op::Element); // HSET h: its command's start and its field
    EXPECT_EQ(r[10].op, Op::Delete); // a hash destination replaced (setKey takes any type)
    EXPECT_EQ(r[11].op, Op::SetRange);
    EXPECT_EQ(r[11].valueBytes, 1u);
    EXPECT_EQ(m_rejects.refused.at("BITOP NOT must be called with a single source key."), 1u);
    EXPECT_EQ(m_rejects.refused.at("syntax error"), 1u);
    EXPECT_EQ(m_rejects.refused.at("WRONGTYPE Operation against a key holding the wrong kind of value"), 1u);
    EXPECT_EQ(m_rejects.unseenKeys.at("BITOP"), 2u); // "gone", twice
}

// FLUSHALL and FLUSHDB delete every key the capture showed the server holding (db.c emptyData), whatever its
// type: the importer's copy is empty after them, so an INCR starts a counter again.
TEST_F(MonitorCommandsTest, FlushDeletesEveryKeyHeld) {
    const auto r
        = import({ { "SET", "a", "41" }, { "SET", "b", "v", "EX", "100" }, { "HSET", "h", "f", "v" }, { "DEL", "b" },
            { "FLUSHALL" }, { "INCR", "a" }, { "FLUSHDB", "ASYNC" }, { "FLUSHALL", "LAZY" }, { "FLUSHDB" } });
    // SET a, SET b, HSET's two, DEL b; the flush's deletes of a and h and its tables; INCR a; FLUSHDB's delete
    // of a and its tables; the last FLUSHDB finds nothing.
    ASSERT_EQ(r.size(), 11u);
    std::vector<std::uint32_t> flushed;
    for (std::size_t i = 5; i < 7; ++i) {
        EXPECT_EQ(r[i].op, Op::Delete);
        flushed.push_back(r[i].keyBytes);
    }
    EXPECT_EQ(r[5].keyId == r[0].keyId || r[6].keyId == r[0].keyId, true); // a
    EXPECT_EQ(r[5].keyId == r[2].keyId || r[6].keyId == r[2].keyId, true); // h
    EXPECT_EQ(flushed, (std::vector<std::uint32_t> { 1, 1 }));
    EXPECT_EQ(r[7].op, Op::Resize); // the tables freed whole
    EXPECT_EQ(r[7].valueBytes, kEmptiedTables);
    EXPECT_EQ(r[8].op, Op::Incr);
    EXPECT_EQ(r[8].valueBytes, 1u); // a counter again: 1, not 42
    EXPECT_EQ(r[9].op, Op::Delete);
    EXPECT_EQ(r[9].keyId, r[0].keyId);
    EXPECT_EQ(r[10].op, Op::Resize);
    EXPECT_EQ(m_rejects.refused.at("syntax error"), 1u); // FLUSHALL LAZY
    EXPECT_EQ(m_rejects.notModelled.count("FLUSHALL"), 0u);
}

// A name in two databases is two keys ("[<db> <client>]"), placed in its database's tables before its first
// request; FLUSHDB deletes its database's keys only, then frees that database's tables; a client blocked in one
// database is served by a push in its own only.
TEST_F(MonitorCommandsTest, EachDatabaseHasKeysOfItsOwn) {
    const auto r = importText("OK\n"
                              "1700000000.000001 [0 127.0.0.1:5] \"SET\" \"k\" \"41\"\n"
                              "1700000000.000002 [1 127.0.0.1:6] \"SET\" \"k\" \"v\"\n"
                              "1700000000.000003 [1 127.0.0.1:6] \"INCR\" \"k\"\n"
                              "1700000000.000004 [0 127.0.0.1:5] \"INCR\" \"k\"\n"
                              "1700000000.000005 [2 127.0.0.1:7] \"BLPOP\" \"q\" \"0\"\n"
                              "1700000000.000006 [0 127.0.0.1:5] \"RPUSH\" \"q\" \"x\"\n"
                              "1700000000.000007 [2 127.0.0.1:8] \"RPUSH\" \"q\" \"y\"\n"
                              "1700000000.000008 [1 127.0.0.1:6] \"FLUSHDB\"\n"
                              "1700000000.000009 [0 127.0.0.1:5] \"GET\" \"k\"\n"
                              "1700000000.000010 [12 lua] \"SET\" \"k\" \"z\"\n");
    ASSERT_TRUE(r) << r.error().describe();
    std::vector<Request> placements;
    const auto q = unplaced(*r, &placements);
    // SET k (db 0), SET k (db 1), INCR k in db 1 refused (not an integer), INCR k in db 0 (42); RPUSH q in db 0
    // (a command and an add) does not serve the client of db 2; RPUSH q in db 2 does: its push, then the pop.
    ASSERT_EQ(q.size(), 12u);
    // Database 1's k, database 2's q, database 12's k: each placed once, before its first request.
    ASSERT_EQ(placements.size(), 3u);
    EXPECT_EQ(placements[0].keyId, q[1].keyId);
    EXPECT_EQ(placements[0].ttlSeconds, 1u);
    EXPECT_EQ(placements[1].keyId, q[5].keyId);
    EXPECT_EQ(placements[1].ttlSeconds, 2u);
    EXPECT_EQ(placements[2].keyId, q[11].keyId);
    EXPECT_EQ(placements[2].ttlSeconds, 12u);
    EXPECT_EQ((*r)[1].op, Op::Resize); // before db 1's SET k
    EXPECT_EQ((*r)[2].keyId, placements[0].keyId);
    EXPECT_NE(q[0].keyId, q[1].keyId);
    EXPECT_EQ(q[2].op, Op::Incr);
    EXPECT_EQ(q[2].keyId, q[0].keyId);
    EXPECT_EQ(q[2].valueBytes, 2u); // 42
    EXPECT_NE(q[3].keyId, q[5].keyId); // db 0's q, then db 2's
    EXPECT_EQ(q[7].elementOp().action, ElementAction::Remove); // the waiting client's pop, in db 2
    EXPECT_EQ(q[7].keyId, q[5].keyId);
    // FLUSHDB in db 1: its k deleted, then db 1's tables freed (named by that k); GET k finds db 0's; db 12's k
    // is new.
    EXPECT_EQ(q[8].op, Op::Delete);
    EXPECT_EQ(q[8].keyId, q[1].keyId);
    EXPECT_EQ(q[9].op, Op::Resize);
    EXPECT_EQ(q[9].valueBytes, kEmptiedTables);
    EXPECT_EQ(q[9].keyId, q[1].keyId);
    EXPECT_EQ(q[10].op, Op::Get);
    EXPECT_EQ(q[10].keyId, q[0].keyId);
    EXPECT_EQ(q[11].op, Op::Set);
    EXPECT_NE(q[11].keyId, q[0].keyId);
    EXPECT_NE(q[11].keyId, q[1].keyId);
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u);
}

TEST_F(MonitorCommandsTest, WhatTheServerRefusedIsCountedAndLeftOut) {
    const auto r = import(
        { { "SET", "s", "text" }, { "INCR", "s" }, { "INCRBY", "n", "x" }, { "SET", "big", "9223372036854775807" },
            { "INCR", "big" }, { "INCRBYFLOAT", "s", "1" }, { "SET", "k" }, { "SETEX", "k", "0", "v" },
            { "SETRANGE", "k", "-1", "v" }, { "SET", "k", "v", "NX", "XX" }, { "EXPIRE", "s", "10", "NX", "XX" } });
    ASSERT_EQ(r.size(), 2u); // the two SETs that worked
    EXPECT_EQ(m_rejects.refusedTotal, 9u);
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 2u);
    EXPECT_EQ(m_rejects.refused.at("increment or decrement would overflow"), 1u);
    EXPECT_EQ(m_rejects.refused.at("wrong number of arguments"), 1u);
    EXPECT_EQ(m_rejects.total, 0u); // not an error of the capture
    ASSERT_FALSE(m_rejects.refusedExamples.empty());
    EXPECT_NE(m_rejects.refusedExamples[0].find("line 3"), std::string::npos) << m_rejects.refusedExamples[0];
}

TEST_F(MonitorCommandsTest, MsetnxIsAllOrNothing) {
    const auto r = import({ { "SET", "a", "1" }, { "MSETNX", "a", "2", "b", "3" }, { "MSETNX", "c", "4", "d", "5" } });
    ASSERT_EQ(r.size(), 3u); // SET a, then c and d
    EXPECT_EQ(r[1].op, Op::Add);
    EXPECT_EQ(r[2].op, Op::Add);
    EXPECT_EQ(m_rejects.skipped.at("command MSETNX with a key that exists (no effect)"), 1u);
}

TEST_F(MonitorCommandsTest, ExpireConditionsAndPastTimes) {
    const auto r = import({ { "SET", "a", "v" }, { "EXPIRE", "a", "100", "XX" }, { "EXPIRE", "a", "100", "NX" },
        { "EXPIRE", "a", "100", "NX" }, { "EXPIRE", "a", "50", "GT" }, { "EXPIRE", "a", "500", "GT" },
        { "EXPIRE", "a", "-1" }, { "GETEX", "b", "PERSIST" } });
    // SET; NX applied; GT to 500 applied; -1 deletes; GETEX gives a GET and a PERSIST.
    ASSERT_EQ(r.size(), 6u);
    EXPECT_EQ(r[1].op, Op::Expire);
    EXPECT_EQ(r[1].ttlSeconds, 100u);
    EXPECT_EQ(r[2].op, Op::Expire);
    EXPECT_EQ(r[2].ttlSeconds, 500u);
    EXPECT_EQ(r[3].op, Op::Delete);
    EXPECT_EQ(r[4].op, Op::Get);
    EXPECT_EQ(r[5].op, Op::Persist);
}

TEST_F(MonitorCommandsTest, AppendAndSetrangeCarryWhatTheReplayNeeds) {
    const auto r = import({ { "APPEND", "a", "12" }, { "APPEND", "a", "3" }, { "INCR", "a" },
        { "SETRANGE", "b", "10", "xyz" }, { "SETRANGE", "b", "0", "" } });
    ASSERT_EQ(r.size(), 4u); // SETRANGE of nothing changes nothing
    EXPECT_EQ(r[0].op, Op::Append);
    EXPECT_EQ(r[0].kind, ValueKind::SmallInteger); // a created key holds the argument, as SET would
    EXPECT_EQ(r[2].valueBytes, 3u); // "123" + 1
    EXPECT_EQ(r[3].op, Op::SetRange);
    EXPECT_EQ(r[3].valueBytes, 13u); // offset + length
}

// db.c moveCommand: MOVE is a rename onto the same name in the other database (the two requests of an
// Op::Rename, the destination's key that database's), nothing where the destination exists; swapdbCommand:
// the databases' keys exchanged, so a name in database 0 is the key database 1 held, and a client waiting in
// one of them is served by what the other held.
TEST_F(MonitorCommandsTest, MoveAndSwapdbFollowTheKeysBetweenDatabases) {
    const auto r = importText("OK\n"
                              "1700000000.000001 [0 127.0.0.1:5] \"SET\" \"k\" \"41\" \"EX\" \"100\"\n"
                              "1700000000.000002 [0 127.0.0.1:5] \"MOVE\" \"k\" \"1\"\n"
                              "1700000000.000003 [1 127.0.0.1:6] \"INCR\" \"k\"\n"
                              "1700000000.000004 [0 127.0.0.1:5] \"GET\" \"k\"\n"
                              "1700000000.000005 [0 127.0.0.1:5] \"SET\" \"k\" \"v\"\n"
                              "1700000000.000006 [0 127.0.0.1:5] \"MOVE\" \"k\" \"1\"\n"
                              "1700000000.000007 [0 127.0.0.1:5] \"MOVE\" \"k\" \"0\"\n"
                              "1700000000.000008 [0 127.0.0.1:5] \"MOVE\" \"k\" \"16\"\n"
                              "1700000000.000009 [0 127.0.0.1:5] \"MOVE\" \"k\" \"x\"\n"
                              "1700000000.000010 [0 127.0.0.1:5] \"MOVE\" \"gone\" \"1\"\n"
                              "1700000000.000011 [0 127.0.0.1:5] \"SWAPDB\" \"0\" \"1\"\n"
                              "1700000000.000012 [0 127.0.0.1:5] \"INCR\" \"k\"\n"
                              "1700000000.000013 [1 127.0.0.1:6] \"GET\" \"k\"\n"
                              "1700000000.000014 [2 127.0.0.1:7] \"BLPOP\" \"q\" \"0\"\n"
                              "1700000000.000015 [3 127.0.0.1:8] \"RPUSH\" \"q\" \"x\"\n"
                              "1700000000.000016 [3 127.0.0.1:8] \"SWAPDB\" \"2\" \"3\"\n"
                              "1700000000.000017 [0 127.0.0.1:5] \"SWAPDB\" \"0\" \"99\"\n");
    ASSERT_TRUE(r) << r.error().describe();
    std::vector<Request> placements;
    const auto q = unplaced(*r, &placements);
    ASSERT_EQ(q.size(), 11u);
    // Database 1's k (MOVE's destination), database 3's q: a SWAPDB moves no key, nor places one again.
    ASSERT_EQ(placements.size(), 2u);
    EXPECT_EQ(placements[0].keyId, q[2].keyId);
    EXPECT_EQ(placements[0].ttlSeconds, 1u);
    EXPECT_EQ(placements[1].keyId, q[9].keyId);
    EXPECT_EQ(placements[1].ttlSeconds, 3u);
    EXPECT_EQ(q[1].op, Op::Rename); // the source, in database 0
    EXPECT_EQ(q[1].keyId, q[0].keyId);
    EXPECT_EQ(q[1].valueBytes, kRenameSource);
    EXPECT_EQ(q[2].op, Op::Rename); // the destination, database 1's k
    EXPECT_EQ(q[2].valueBytes, kRenameDestination);
    EXPECT_NE(q[2].keyId, q[0].keyId);
    EXPECT_EQ(q[3].op, Op::Incr); // database 1's k holds the 41 moved
    EXPECT_EQ(q[3].keyId, q[2].keyId);
    EXPECT_EQ(q[3].valueBytes, 2u);
    EXPECT_EQ(q[4].op, Op::Get);
    EXPECT_EQ(q[4].keyId, q[0].keyId);
    EXPECT_EQ(q[5].op, Op::Set); // then MOVE onto database 1's k: nothing
    // After SWAPDB 0 1: database 0's k is the one database 1 held (42, now 43), database 1's is the "v".
    EXPECT_EQ(q[6].op, Op::Incr);
    EXPECT_EQ(q[6].keyId, q[2].keyId);
    EXPECT_EQ(q[6].valueBytes, 2u);
    EXPECT_EQ(q[7].op, Op::Get);
    EXPECT_EQ(q[7].keyId, q[0].keyId);
    // RPUSH q in database 3 (a command and an add); SWAPDB 2 3 gives it to the client waiting in database 2.
    EXPECT_EQ(q[8].elementOp().action, ElementAction::Command);
    EXPECT_EQ(q[9].elementOp().action, ElementAction::Add);
    EXPECT_EQ(q[10].elementOp().action, ElementAction::Remove);
    EXPECT_EQ(q[10].keyId, q[9].keyId);
    EXPECT_EQ(m_rejects.refused.at("source and destination objects are the same"), 1u);
    EXPECT_EQ(m_rejects.refused.at("DB index is out of range"), 2u); // MOVE to 16, SWAPDB 0 99
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u);
    EXPECT_EQ(m_rejects.unseenKeys.at("MOVE"), 1u);
}

// db.c copyCommand with object.c dupStringObject: a string's copy is a Set of its length (an integer an object of
// its own, never a shared one), with the source's TTL; a RAW value (grown by APPEND) is copied RAW at its length,
// as SETRANGE makes a key, then its TTL; nothing onto a key that exists unless REPLACE (a delete first); another
// database's key with DB; a collection's copy is not modelled.
TEST_F(MonitorCommandsTest, CopyDuplicatesAStringAsTheServerDoes) {
    const auto all = import({ { "SET", "a", "7", "EX", "100" }, { "COPY", "a", "b" }, { "SET", "s", "text" },
        { "APPEND", "s", "more" }, { "EXPIRE", "s", "50" }, { "COPY", "s", "b" }, { "COPY", "s", "b", "REPLACE" },
        { "COPY", "a", "c", "DB", "1" }, { "COPY", "a", "a" }, { "COPY", "a", "d", "DB", "16" },
        { "COPY", "a", "d", "LAZY" }, { "COPY", "gone", "d" } });
    std::vector<Request> placements;
    const auto r = unplaced(all, &placements);
    ASSERT_EQ(placements.size(), 1u); // c, in database 1
    ASSERT_EQ(r.size(), 9u);
    EXPECT_EQ(r[1].op, Op::Set); // b: "7", an INT object of its own, with a's TTL
    EXPECT_NE(r[1].keyId, r[0].keyId);
    EXPECT_EQ(r[1].valueBytes, 1u);
    EXPECT_EQ(r[1].kind, ValueKind::Integer);
    EXPECT_EQ(r[1].ttlSeconds, 99u); // the seconds a's TTL has left (the helper's lines are a second apart)
    // SET s, APPEND s, EXPIRE s; COPY s b: b exists, nothing; with REPLACE: b deleted, then s's RAW copy.
    EXPECT_EQ(r[5].op, Op::Delete);
    EXPECT_EQ(r[5].keyId, r[1].keyId);
    EXPECT_EQ(r[6].op, Op::SetRange);
    EXPECT_EQ(r[6].valueBytes, 8u); // "textmore"
    EXPECT_EQ(r[7].op, Op::Expire);
    EXPECT_EQ(r[7].ttlSeconds, 48u);
    EXPECT_EQ(r[8].op, Op::Set); // c in database 1: a key of its own
    EXPECT_NE(r[8].keyId, r[1].keyId);
    EXPECT_EQ(r[8].kind, ValueKind::Integer);
    EXPECT_EQ(placements[0].keyId, r[8].keyId);
    EXPECT_EQ(m_rejects.refused.at("source and destination objects are the same"), 1u);
    EXPECT_EQ(m_rejects.refused.at("DB index is out of range"), 1u);
    EXPECT_EQ(m_rejects.refused.at("syntax error"), 1u);
    EXPECT_EQ(m_rejects.unseenKeys.at("COPY"), 1u);
}

// A collection's COPY is the two requests of an Op::Rename, the destination's marked kCopyDestination (the
// replay makes the type's dup); the importer's keyspace holds the copy's elements, apart from the source's,
// so the commands after it see each key's own.
TEST_F(MonitorCommandsTest, CopyOfACollectionHoldsTheSourcesElements) {
    const auto r = import({ { "HSET", "h", "f", "v", "g", "long value" }, { "EXPIRE", "h", "100" },
        { "COPY", "h", "h2" }, { "HDEL", "h2", "g" }, { "HDEL", "h2", "g" }, { "HDEL", "h", "g" }, { "SET", "s", "x" },
        { "COPY", "h", "s" }, { "COPY", "h", "s", "REPLACE" }, { "HSET", "s", "f", "w" }, { "RPUSH", "l", "a", "bb" },
        { "COPY", "l", "l2" }, { "LREM", "l2", "1", "bb" } });
    auto at = [&](std::size_t i) -> const Request& { return r.at(i); };
    // HSET h: its command and two fields; EXPIRE; COPY h h2: the pair.
    ASSERT_GE(r.size(), 6u);
    EXPECT_EQ(at(4).op, Op::Rename);
    EXPECT_EQ(at(4).valueBytes, kRenameSource);
    EXPECT_EQ(at(4).keyId, at(0).keyId);
    EXPECT_EQ(at(5).op, Op::Rename);
    EXPECT_EQ(at(5).valueBytes, kCopyDestination);
    EXPECT_EQ(at(5).keyBytes, 2u);
    // HDEL h2 g: the copy's field, with its value's length; again: a lookup of it; HDEL h g: the source's own.
    EXPECT_EQ(at(6).keyId, at(5).keyId);
    EXPECT_EQ(at(6).elementOp().action, ElementAction::Remove);
    EXPECT_EQ(at(6).priorBytes(), 10u); // "long value"
    EXPECT_EQ(at(7).elementOp().action, ElementAction::Read);
    EXPECT_EQ(at(8).keyId, at(0).keyId);
    EXPECT_EQ(at(8).elementOp().action, ElementAction::Remove);
    // SET s; COPY h s: s exists, nothing; with REPLACE: the pair; HSET s f (its command, then an update of the
    // copy's field).
    EXPECT_EQ(at(9).op, Op::Set);
    EXPECT_EQ(at(10).op, Op::Rename);
    EXPECT_EQ(at(11).op, Op::Rename);
    EXPECT_EQ(at(11).valueBytes, kCopyDestination);
    EXPECT_EQ(at(11).keyId, at(9).keyId);
    EXPECT_EQ(at(13).elementOp().action, ElementAction::Update);
    EXPECT_EQ(at(13).keyId, at(9).keyId);
    // RPUSH l (its command, two elements), COPY l l2, LREM l2: the copy's "bb" found and removed.
    ASSERT_EQ(r.size(), 20u);
    const std::size_t lrem = 19;
    EXPECT_EQ(r[lrem].elementOp().action, ElementAction::Remove);
    EXPECT_EQ(r[lrem].keyId, r[lrem - 1].keyId);
    EXPECT_EQ(r[lrem - 1].valueBytes, kCopyDestination);
    EXPECT_EQ(m_rejects.notModelled.count("COPY of a hash"), 0u);
    EXPECT_TRUE(m_rejects.refused.empty());
}

// A collection's COPY replayed: the copy is the type's dup (collection_copy.cpp), a table expanded for its
// count whatever the source's grew to, so a hash that once held 2,000 fields, 1,400 of them removed, copies
// into what one HSET of its 600 fields makes (a table expanded for them at once: hashTypeTryConversion); a
// listpack into its bytes again. The source's TTL goes with it.
TEST_F(MonitorCommandsTest, ACopyIsReplayedAsTheTypesDupMakesIt) {
    std::vector<std::string> big { "HSET", "h" }, copied { "HSET", "h2" }, hdel { "HDEL", "h" };
    for (int i = 0; i < 2000; ++i) {
        const std::string field = fmt::format("field:{:04}", i);
        big.insert(big.end(), { field, "value" });
        (i < 600 ? copied : hdel).push_back(field);
        if (i < 600)
            copied.push_back("value");
    }
    const std::vector<std::string> small { "HSET", "s", "f", "v", "g", "w" },
        smallTwin { "HSET", "s2", "f", "v", "g", "w" };
    for (const char* spec : { "redis-7.0", "valkey-8.0", "valkey-9.1" }) {
        auto models = parseLayoutAndAllocator(spec, "");
        ASSERT_TRUE(models) << models.error().describe();
        const auto usage = [&](const std::vector<std::vector<std::string>>& commands) {
            MemoryTrace trace(import(commands));
            auto result = simulate({ models->layout, models->allocator, {} }, trace);
            EXPECT_TRUE(result) << result.error().describe();
            return result ? std::pair { result->points.at(0).usableBytes, result->trace }
                          : std::pair<std::uint64_t, TraceSummary> {};
        };
        const auto [copy, copyTrace]
            = usage({ big, hdel, small, { "EXPIRE", "s", "100" }, { "COPY", "h", "h2" }, { "COPY", "s", "s2" } });
        const auto [made, madeTrace]
            = usage({ big, hdel, small, { "EXPIRE", "s", "100" }, copied, smallTwin, { "EXPIRE", "s2", "100" } });
        EXPECT_EQ(copy, made) << spec;
        EXPECT_EQ(copyTrace.liveKeys, 4u) << spec;
        EXPECT_EQ(copyTrace.ttlKeys, 2u) << spec;
        EXPECT_EQ(copyTrace.unmatchedRenames, 0u) << spec;
        // Not the source's table: one that grew to 300 and kept its size is larger.
        const auto [grown, grownTrace] = usage({ big, hdel, small, { "EXPIRE", "s", "100" }, big, hdel,
            { "RENAME", "h", "h2" }, big, hdel, smallTwin, { "EXPIRE", "s2", "100" } });
        EXPECT_GT(grown, copy) << spec;
    }
}

TEST_F(MonitorCommandsTest, CommandsNotModelledAreNamed) {
    const std::vector<std::vector<std::string>> commands { { "XADD", "d", "*", "f", "1" },
        { "GEOADD", "g", "1", "2", "m" }, { "XADD", "d", "*", "f", "2" }, { "PING" }, { "STRLEN", "a" },
        { "HGETALL", "h" }, { "SMEMBERS", "s" }, { "ZRANGE", "z", "0", "-1" } };
    import(commands);
    EXPECT_EQ(m_rejects.notModelled.at("XADD"), 2u);
    EXPECT_EQ(m_rejects.notModelled.at("GEOADD"), 1u);
    EXPECT_EQ(m_rejects.skipped.at("command PING"), 1u);
    EXPECT_EQ(m_rejects.skipped.at("command HGETALL (reads the collection whole)"), 1u);
    EXPECT_EQ(m_rejects.skipped.at("command SMEMBERS (reads the collection whole)"), 1u);
    EXPECT_EQ(m_rejects.skipped.at("command ZRANGE (reads the collection whole)"), 1u);
    EXPECT_EQ(m_rejects.notModelled.count("STRLEN"), 0u);
}

// db.c renameGenericCommand: a rename the server made is the two requests of an Op::Rename, the source's
// then the destination's; the importer's keyspace moves the value, so the commands after it see the key
// under its new name; what the server refused or left alone makes nothing.
TEST_F(MonitorCommandsTest, RenamesMoveTheValueWhateverItHolds) {
    const auto r = import({ { "SET", "a", "12", "EX", "100" }, { "RENAME", "a", "bb" }, { "INCR", "bb" },
        { "INCR", "a" }, { "HSET", "h", "f", "v" }, { "RENAMENX", "h", "bb" }, { "RENAMENX", "h", "hh" },
        { "HSET", "hh", "f", "longer" }, { "RENAME", "a", "c" }, { "RENAME", "hh", "hh" },
        { "RENAME", "never", "x" } });
    ASSERT_EQ(r.size(), 13u);
    EXPECT_EQ(r[1].op, Op::Rename);
    EXPECT_EQ(r[1].valueBytes, kRenameSource);
    EXPECT_EQ(r[2].op, Op::Rename);
    EXPECT_EQ(r[2].valueBytes, kRenameDestination);
    EXPECT_EQ(r[2].keyBytes, 2u);
    EXPECT_NE(r[1].keyId, r[2].keyId);
    EXPECT_EQ(r[3].op, Op::Incr); // INCR bb: 13, from the moved value
    EXPECT_EQ(r[3].keyId, r[2].keyId);
    EXPECT_EQ(r[3].valueBytes, 2u);
    EXPECT_EQ(r[4].op, Op::Incr); // INCR a: a new key, 1
    EXPECT_EQ(r[4].valueBytes, 1u);
    // HSET h (its command and its field), RENAMENX onto bb, which exists: nothing; onto hh: the hash moves,
    // and HSET there updates its field.
    EXPECT_EQ(r[7].op, Op::Rename);
    EXPECT_EQ(r[8].op, Op::Rename);
    EXPECT_EQ(r[10].op, Op::Element);
    EXPECT_EQ(r[10].keyId, r[8].keyId);
    EXPECT_EQ(r[10].elementOp().action, ElementAction::Update);
    EXPECT_EQ(r[10].priorBytes(), 1u); // "v"
    // RENAME a c: a holds 1 from its INCR; hh onto itself: nothing.
    EXPECT_EQ(r[11].op, Op::Rename);
    EXPECT_EQ(r[12].op, Op::Rename);
    EXPECT_EQ(m_rejects.unseenKeys.at("RENAME"), 1u); // "never": the server may have held it
    EXPECT_EQ(m_rejects.notModelled.count("RENAME"), 0u);
    const auto refused = import({ { "SET", "a", "1" }, { "DEL", "a" }, { "RENAME", "a", "b" }, { "RENAME", "a" } });
    EXPECT_EQ(refused.size(), 2u);
    EXPECT_EQ(m_rejects.refused.at("no such key"), 1u);
    EXPECT_EQ(m_rejects.refused.at("wrong number of arguments"), 1u);
}

TEST_F(MonitorCommandsTest, AWatchCaptureStartingWithOkIsDetected) {
    const auto path = (m_dir / "watch.log").string();
    std::ofstream(path) << "OK\nts=1700000000.000001 gid=1 type=item_get key=a status=not_found clsid=0 cfd=5 size=0\n";
    auto format = traceFormat(path, {});
    ASSERT_TRUE(format) << format.error().describe();
    EXPECT_EQ(*format, "mc-watch");
}

} // namespace

// `redis-cli monitor > file` stopped with Ctrl-C, or a killed capture, leaves its last line cut wherever
// the write stopped: a record cut short, counted and said once, never an error; the same line in the
// middle of a capture is still a bad line.
TEST_F(MonitorCommandsTest, ACaptureCutShortKeepsEveryWholeLine) {
    const std::string whole = "OK\n1700000000.000000 [0 127.0.0.1:5000] \"SET\" \"a\" \"xyz\"\n"
                              "1700000001.000000 [0 127.0.0.1:5000] \"GET\" \"a\"\n";
    const std::string cut = "1700000002.000000 [0 127.0.0.1:5000] \"SET\" \"b\" \"a long val";
    for (const std::string& tail : { cut, cut.substr(0, 30), std::string("1700000002.0") }) {
        auto r = importText(whole + tail);
        ASSERT_TRUE(r) << r.error().describe();
        EXPECT_EQ(r->size(), 2u) << tail;
        EXPECT_EQ(m_rejects.truncatedRecords, 1u) << tail;
        EXPECT_EQ(m_rejects.total, 0u) << tail;
        EXPECT_NE(m_rejects.truncatedExample.find("line 4"), std::string::npos) << m_rejects.truncatedExample;
        EXPECT_NE(renderCaptureNotes(m_rejects).find("cut short"), std::string::npos);
    }

    // A whole last line without its line break is a line like any other.
    auto r = importText(whole + "1700000002.000000 [0 127.0.0.1:5000] \"SET\" \"b\" \"v\"");
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(r->size(), 3u);
    EXPECT_EQ(m_rejects.truncatedRecords, 0u);

    // Cut in the middle: a bad line, which --on-error fail stops at.
    auto bad = importText(whole + cut + "\n" + "1700000003.000000 [0 127.0.0.1:5000] \"GET\" \"a\"\n");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().describe().find("line 4"), std::string::npos) << bad.error().describe();
}
