// SPDX-License-Identifier: MIT
// The MONITOR importer's string commands: results computed from the values it follows (INCR,
// INCRBYFLOAT), conditions it decides (MSETNX, EXPIRE NX/XX/GT/LT), commands the server refused, and
// commands it does not model, each counted where `import --stats` shows it.

#include "layoutlab/import/import_stats.h"
#include "layoutlab/import/importer.h"
#include "scratch_dir.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <set>

using namespace layoutlab;

namespace {

class MonitorCommandsTest : public ScratchDirTest {
protected:
    // Imports a capture of these commands (one argument vector per line, one second apart).
    std::vector<Request> import(const std::vector<std::vector<std::string>>& commands) {
        std::string text = "OK\n";
        std::uint32_t second = 0;
        for (const auto& args : commands) {
            text += fmt::format("{}.000000 [0 127.0.0.1:5000]", 1700000000 + second++);
            for (const auto& a : args)
                text += " \"" + a + "\"";
            text += "\n";
        }
        auto all = importText(text);
        EXPECT_TRUE(all) << all.error().describe();
        return all ? *all : std::vector<Request> {};
    }
    // Imports a capture's text as it is (under --on-error fail).
    Expected<std::vector<Request>> importText(const std::string& text) {
        const auto path = (m_dir / "capture.monitor").string();
        std::ofstream(path, std::ios::binary) << text;
        auto importer = openImporter(path, { "monitor", OnError::Fail, 16 });
        if (!importer)
            return importer.error();
        std::vector<Request> all, batch(64);
        for (;;) {
            auto n = (*importer)->read(batch);
            if (!n)
                return n.error();
            if (*n == 0)
                break;
            all.insert(all.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
        }
        m_rejects = (*importer)->rejects();
        return all;
    }
    RejectReport m_rejects;
};

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

TEST_F(MonitorCommandsTest, CommandsNotModelledAreNamed) {
    const std::vector<std::vector<std::string>> commands { { "SUNIONSTORE", "d", "a", "b" },
        { "LINSERT", "l", "BEFORE", "a", "x" }, { "SUNIONSTORE", "d", "a" }, { "PING" }, { "STRLEN", "a" },
        { "HGETALL", "h" }, { "SMEMBERS", "s" }, { "ZRANGE", "z", "0", "-1" } };
    import(commands);
    EXPECT_EQ(m_rejects.notModelled.at("SUNIONSTORE"), 2u);
    EXPECT_EQ(m_rejects.notModelled.at("LINSERT"), 1u);
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

// Hash commands become element requests, in the order t_hash.c applies them, with the lengths of the values
// they replace or remove, which only the importer's copy of each hash knows.
TEST_F(MonitorCommandsTest, HashCommandsBecomeElementRequests) {
    const auto r = import(
        { { "HSET", "h", "name", "alice", "n", "100" }, { "HSET", "h", "name", "bob" }, { "HINCRBY", "h", "n", "-200" },
            { "HDEL", "h", "name", "missing" }, { "HGET", "h", "n" }, { "HDEL", "h", "n" } });
    auto op = [&](std::size_t i) { return r.at(i).elementOp(); };
    ASSERT_EQ(r.size(), 11u);
    for (const Request& q : r) {
        EXPECT_EQ(q.op, Op::Element);
        EXPECT_EQ(q.keyBytes, 1u);
    }
    // HSET h name alice n 100: hashTypeTryConversion over 2 pairs, the longest argument 5 bytes; two adds.
    EXPECT_EQ(op(0).action, ElementAction::Command);
    EXPECT_EQ(r[0].valueBytes, 2u);
    EXPECT_EQ(r[0].elementBytes, 5u);
    EXPECT_EQ(op(1).action, ElementAction::Add);
    EXPECT_EQ(r[1].elementBytes, 4u);
    EXPECT_EQ(r[1].valueBytes, 5u);
    EXPECT_EQ(op(2).value, IntegerClass::Uint7); // "100"
    // HSET h name bob: the value of 5 bytes replaced by one of 3.
    EXPECT_EQ(op(4).action, ElementAction::Update);
    EXPECT_EQ(r[4].valueBytes, 3u);
    EXPECT_EQ(r[4].priorBytes(), 5u);
    // HINCRBY h n -200: a lookup, then 100 becomes -100 (4 bytes, a 13-bit integer).
    EXPECT_EQ(op(5).action, ElementAction::Read);
    EXPECT_EQ(op(6).action, ElementAction::Update);
    EXPECT_EQ(r[6].valueBytes, 4u);
    EXPECT_EQ(op(6).value, IntegerClass::Int13);
    EXPECT_EQ(op(6).prior, IntegerClass::Uint7);
    // HDEL h name missing: the field that is there removed, the other looked up (a table's delete takes a
    // rehash step whether it finds the field or not); HGET: a lookup; the last HDEL leaves it empty.
    EXPECT_EQ(op(7).action, ElementAction::Remove);
    EXPECT_EQ(r[7].priorBytes(), 3u);
    EXPECT_EQ(op(8).action, ElementAction::Read);
    EXPECT_EQ(op(9).action, ElementAction::Read);
    EXPECT_EQ(op(10).action, ElementAction::Remove);
    EXPECT_EQ(r[10].priorBytes(), 4u);
}

// A removal command's removals are one command's: all but its last carry atHead (request.h), which Valkey
// 9.1's tables follow (t_hash.c hdelCommand, t_set.c sremCommand, t_zset.c zremCommand shrink once, at the
// end); a command of one removal, or one whose other fields are not there, marks none.
TEST_F(MonitorCommandsTest, ARemovalCommandsRemovalsButTheLastSayMoreFollow) {
    const auto r
        = import({ { "HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4" }, { "HDEL", "h", "a", "x", "b", "c" },
            { "HDEL", "h", "d", "y" }, { "SADD", "s", "m", "n", "o" }, { "SREM", "s", "m", "n" }, { "SREM", "s", "o" },
            { "ZADD", "z", "1", "p", "2", "q" }, { "ZREM", "z", "p", "q" } });
    std::vector<std::pair<CollectionKind, bool>> removals;
    for (const Request& q : r)
        if (q.elementOp().action == ElementAction::Remove)
            removals.emplace_back(q.elementOp().collection, q.elementOp().atHead);
    const std::vector<std::pair<CollectionKind, bool>> expected { { CollectionKind::Hash, true },
        { CollectionKind::Hash, true }, { CollectionKind::Hash, false }, { CollectionKind::Hash, false },
        { CollectionKind::Set, true }, { CollectionKind::Set, false }, { CollectionKind::Set, false },
        { CollectionKind::SortedSet, true }, { CollectionKind::SortedSet, false } };
    EXPECT_EQ(removals, expected);
}

TEST_F(MonitorCommandsTest, TheServersRefusalsOfHashCommandsChangeNothing) {
    const auto r = import(
        { { "SET", "s", "x" }, { "HSET", "s", "f", "v" }, { "HSET", "h", "f", "text" }, { "HINCRBY", "h", "f", "1" },
            { "APPEND", "h", "more" }, { "GETDEL", "h" }, { "HSET", "h", "odd" }, { "HINCRBY", "h", "n", "x" } });
    EXPECT_EQ(m_rejects.refused.at("WRONGTYPE Operation against a key holding the wrong kind of value"), 3u);
    EXPECT_EQ(m_rejects.refused.at("hash value is not an integer"), 1u);
    EXPECT_EQ(m_rejects.refused.at("wrong number of arguments"), 1u);
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u);
    // SET, then HSET h (a command and an add), HINCRBY's lookup: nothing of the refused ones.
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(r[3].elementOp().action, ElementAction::Read);
}

// Set commands likewise, in t_set.c's order: SADD's start carries its member count and its first member's
// integer class (setTypeCreate), a member already held is looked up, SREM stops at the set's last member.
TEST_F(MonitorCommandsTest, SetCommandsBecomeElementRequests) {
    const auto r = import({ { "SADD", "s", "12", "abc", "12" }, { "SISMEMBER", "s", "abc" }, { "SREM", "s", "x", "12" },
        { "SMISMEMBER", "s", "a", "b" }, { "SREM", "s", "abc", "later" }, { "SREM", "s", "abc" } });
    auto op = [&](std::size_t i) { return r.at(i).elementOp(); };
    ASSERT_EQ(r.size(), 10u);
    for (std::size_t i = 0; i < r.size(); ++i)
        EXPECT_EQ(op(i).collection, CollectionKind::Set) << i;
    EXPECT_EQ(op(0).action, ElementAction::Command);
    EXPECT_EQ(r[0].valueBytes, 3u);
    EXPECT_EQ(op(0).element, IntegerClass::Uint7); // "12"
    EXPECT_EQ(op(1).action, ElementAction::Add);
    EXPECT_EQ(op(2).action, ElementAction::Add);
    EXPECT_EQ(op(2).element, IntegerClass::None);
    EXPECT_EQ(op(3).action, ElementAction::Read); // "12" again
    EXPECT_EQ(op(4).action, ElementAction::Read); // SISMEMBER
    EXPECT_EQ(op(5).action, ElementAction::Read); // SREM of a member not there
    EXPECT_EQ(op(6).action, ElementAction::Remove);
    EXPECT_EQ(r[6].elementBytes, 2u);
    EXPECT_EQ(op(7).action, ElementAction::Read);
    EXPECT_EQ(op(8).action, ElementAction::Read);
    EXPECT_EQ(op(9).action, ElementAction::Remove); // the last member: "later" is not looked at, the key is gone
}

// SPOP removes members drawn at random (the server's draw is not in the capture): one, or as many as its count,
// the key with its last; the same draws on every import, and a member once popped is not there for SREM.
TEST_F(MonitorCommandsTest, SpopRemovesMembersItDraws) {
    const std::vector<std::vector<std::string>> commands { { "SADD", "s", "a1", "b22", "c333", "d4444", "e55555" },
        { "SPOP", "s" }, { "SPOP", "s", "2" }, { "SPOP", "s", "0" }, { "SPOP", "absent", "3" }, { "SPOP", "s", "-1" },
        { "SPOP", "s", "x" }, { "SPOP", "s", "1", "2" }, { "SET", "str", "v" }, { "SPOP", "str" },
        { "SPOP", "s", "10" }, { "SREM", "s", "a1" } };
    const auto r = import(commands);
    // SADD's command and five adds; one, two; SET str; the two left (the key deleted with its last); SREM finds
    // nothing (the key is gone: nothing at all). Each pop is its member's random draw, then its removal.
    ASSERT_EQ(r.size(), 17u);
    EXPECT_EQ(r[12].op, Op::Set);
    std::set<std::uint32_t> popped;
    for (const std::size_t i : { 6, 8, 10, 13, 15 }) {
        ASSERT_EQ(r[i].elementOp().action, ElementAction::Read) << i;
        EXPECT_EQ(r[i].valueBytes, kRandomDraw) << i;
        ASSERT_EQ(r[i + 1].elementOp().action, ElementAction::Remove) << i;
        EXPECT_EQ(r[i + 1].elementBytes, r[i].elementBytes) << i;
        EXPECT_FALSE(r[i + 1].elementOp().atHead) << "SPOP's table may shrink after each removal";
        popped.insert(r[i + 1].elementBytes);
    }
    EXPECT_EQ(popped, (std::set<std::uint32_t> { 2, 3, 4, 5, 6 })); // every member once
    EXPECT_EQ(m_rejects.refused.at("value is out of range, must be positive"), 1u);
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u);
    EXPECT_EQ(m_rejects.refused.at("syntax error"), 1u);
    EXPECT_EQ(m_rejects.refused.at("WRONGTYPE Operation against a key holding the wrong kind of value"), 1u);
    EXPECT_EQ(m_rejects.notModelled.count("SPOP"), 0u);
    // The same members drawn again.
    m_rejects = {};
    const auto again = import(commands);
    ASSERT_EQ(again.size(), r.size());
    for (std::size_t i = 0; i < r.size(); ++i)
        EXPECT_EQ(again[i].elementBytes, r[i].elementBytes) << i;
}

TEST_F(MonitorCommandsTest, SetAndHashCommandsOnTheOtherTypeAreRefused) {
    const auto r = import({ { "SADD", "s", "m" }, { "HSET", "s", "f", "v" }, { "HSET", "h", "f", "v" },
        { "SREM", "h", "f" }, { "GET", "s" }, { "SADD", "s" }, { "SISMEMBER", "s", "a", "b" } });
    EXPECT_EQ(m_rejects.refused.at("WRONGTYPE Operation against a key holding the wrong kind of value"), 2u);
    EXPECT_EQ(m_rejects.refused.at("wrong number of arguments"), 2u);
    // The two commands and adds that were applied, and the GET, which the replay counts as WRONGTYPE (a read
    // changes nothing, so the importer leaves it to the replay).
    ASSERT_EQ(r.size(), 5u);
    EXPECT_EQ(r[4].op, Op::Get);
}

// Sorted-set commands likewise, in t_zset.c's order: ZADD's options and scores checked first, its start with
// its count, longest member and first member's length, each score as d2string writes it.
TEST_F(MonitorCommandsTest, SortedSetCommandsBecomeElementRequests) {
    const auto r = import({ { "ZADD", "z", "1", "alpha", "2.5", "b" }, { "ZADD", "z", "NX", "9", "alpha" },
        { "ZINCRBY", "z", "0.5", "b" }, { "ZADD", "z", "GT", "0", "b" }, { "ZADD", "z", "XX", "CH", "5", "new" },
        { "ZSCORE", "z", "alpha" }, { "ZREM", "z", "b", "missing" }, { "ZADD", "z", "NX", "XX", "1", "x" },
        { "ZADD", "z", "one", "x" }, { "ZREM", "z", "alpha", "later" } });
    auto op = [&](std::size_t i) { return r.at(i).elementOp(); };
    ASSERT_EQ(r.size(), 15u);
    EXPECT_EQ(op(0).action, ElementAction::Command);
    EXPECT_EQ(r[0].valueBytes, 2u);
    EXPECT_EQ(r[0].elementBytes, 5u); // the longest member
    EXPECT_EQ(r[0].priorBytes(), 5u); // the first member's length
    EXPECT_EQ(op(1).action, ElementAction::Add);
    EXPECT_EQ(r[1].valueBytes, 1u); // "1"
    EXPECT_EQ(op(1).value, IntegerClass::Uint7);
    EXPECT_EQ(r[2].valueBytes, 3u); // "2.5"
    EXPECT_EQ(op(2).value, IntegerClass::None);
    EXPECT_EQ(op(4).action, ElementAction::Read); // NX of a member held
    EXPECT_EQ(op(6).action, ElementAction::Update); // 2.5 + 0.5 = "3"
    EXPECT_EQ(r[6].valueBytes, 1u);
    EXPECT_EQ(r[6].priorBytes(), 3u);
    EXPECT_EQ(op(8).action, ElementAction::Read); // GT 0 < 3: left
    EXPECT_EQ(op(10).action, ElementAction::Read); // XX of a member not held
    EXPECT_EQ(op(11).action, ElementAction::Read); // ZSCORE
    EXPECT_EQ(op(12).action, ElementAction::Remove);
    EXPECT_EQ(r[12].priorBytes(), 1u);
    EXPECT_EQ(op(13).action, ElementAction::Read); // "missing"
    EXPECT_EQ(op(14).action, ElementAction::Remove); // the last member: "later" is not looked at
    EXPECT_EQ(m_rejects.refused.at("XX and NX options at the same time are not compatible"), 1u);
    EXPECT_EQ(m_rejects.refused.at("value is not a valid float"), 1u);
}

// A score's request carries its text's length as Redis 7.2 and Valkey write it (the shortest that reads
// back) and, where longer, as Redis 7.0 does ("%.17g"), for its add, its change and its removal.
TEST_F(MonitorCommandsTest, AScoreCarriesTheLengthRedis70WritesItIn) {
    const auto r = import({ { "ZADD", "z", "0.1", "a", "2.5", "b", "7", "c", "1e300", "d" },
        { "ZADD", "z", "12.3", "a" }, { "ZREM", "z", "a" } });
    ASSERT_EQ(r.size(), 8u); // a start and four adds, a start and a change, a removal
    EXPECT_EQ(r[1].valueBytes, packScoreBytes(3, 19)); // "0.1", "0.10000000000000001"
    EXPECT_EQ(r[2].valueBytes, 3u); // "2.5" both ways
    EXPECT_EQ(r[3].valueBytes, 1u); // "7"
    EXPECT_EQ(r[4].valueBytes, packScoreBytes(6, 23)); // "1e+300", "1.0000000000000001e+300"
    EXPECT_EQ(r[6].elementOp().action, ElementAction::Update);
    EXPECT_EQ(r[6].valueBytes, packScoreBytes(4, 18)); // "12.3", "12.300000000000001"
    EXPECT_EQ(r[6].priorBytes(), packScoreBytes(3, 19));
    EXPECT_EQ(r[7].priorBytes(), packScoreBytes(4, 18));
    EXPECT_EQ(shortestScoreBytes(r[7].priorBytes()), 4u);
    EXPECT_EQ(seventeenDigitScoreBytes(r[7].priorBytes()), 18u);
}

// ZREMRANGEBYSCORE, ...BYRANK and ...BYLEX (t_zset.c zremrangeGenericCommand): the range parsed before the key
// is looked at, the members in it removed lowest first (by score, then member), each marked as a range's
// (kRemovedByRange) and all but the last saying more follow; the key goes with its last member.
TEST_F(MonitorCommandsTest, RangeRemovalsTakeTheMembersInTheirRangeLowestFirst) {
    const auto r = import({ { "ZADD", "z", "1", "a", "2", "c", "2", "b", "3.5", "d", "-inf", "e", "7", "f" },
        { "ZREMRANGEBYSCORE", "z", "(1", "3.5" }, { "ZREMRANGEBYRANK", "z", "-2", "-1" },
        { "ZADD", "w", "0", "kiwi", "0", "apple", "0", "fig", "0", "plum" }, { "ZREMRANGEBYLEX", "w", "[b", "(kiwi" },
        { "ZREMRANGEBYLEX", "w", "-", "+" }, { "ZREMRANGEBYRANK", "w", "0", "0" }, { "SET", "s", "v" },
        { "ZREMRANGEBYSCORE", "s", "x", "1" }, { "ZREMRANGEBYRANK", "s", "0", "1" },
        { "ZREMRANGEBYLEX", "z", "a", "b" }, { "ZREMRANGEBYRANK", "z", "0", "1.5" },
        { "ZREMRANGEBYSCORE", "z", "5", "(5" } });
    struct Removal {
        std::uint32_t member, score;
        bool moreFollow;
        auto operator<=>(const Removal&) const = default;
    };
    std::vector<Removal> removals;
    for (const Request& q : r)
        if (q.elementOp().action == ElementAction::Remove) {
            EXPECT_EQ(q.valueBytes, kRemovedByRange);
            removals.push_back({ q.elementBytes, q.priorBytes(), q.elementOp().atHead });
        }
    // (1 3.5: b, c (2, by member), d ("3.5"); ranks -2..-1 of e a f: a, f; [b (kiwi of apple fig kiwi plum: fig;
    // - +: the rest, and w is gone.
    const std::vector<Removal> expected { { 1, 1, true }, { 1, 1, true }, { 1, 3, false }, { 1, 1, true },
        { 1, 1, false }, { 3, 1, false }, { 5, 1, true }, { 4, 1, true }, { 4, 1, false } };
    EXPECT_EQ(removals, expected);
    EXPECT_EQ(m_rejects.refused.at("min or max is not a float"), 1u);
    EXPECT_EQ(m_rejects.refused.at("WRONGTYPE Operation against a key holding the wrong kind of value"), 1u);
    EXPECT_EQ(m_rejects.refused.at("min or max not valid string range item"), 1u);
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u);
}

// ZREMRANGEBYLEX as a listpack walks it (zzlDeleteRangeByLex) where scores differ: nothing when the highest
// member is below the range or the lowest above it; else from the first member not below it, while not above.
TEST_F(MonitorCommandsTest, ALexRangeOverDifferentScoresStopsAtTheFirstMemberAboveIt) {
    const auto r
        = import({ { "ZADD", "z", "1", "b", "2", "a", "3", "c", "4", "bb" }, { "ZREMRANGEBYLEX", "z", "[a", "[a" },
            { "ZREMRANGEBYLEX", "z", "[b", "[bz" }, { "ZREMRANGEBYLEX", "z", "(c", "+" } });
    std::vector<std::uint32_t> removed;
    for (const Request& q : r)
        if (q.elementOp().action == ElementAction::Remove)
            removed.push_back(q.elementBytes);
    // [a [a: the first, "b", is above the range; [b [bz: "b", then "a" too (below [b, but the walk only looks
    // for the first member above the range, "c"); (c +: the last, "bb", is below it.
    EXPECT_EQ(removed, std::vector<std::uint32_t>({ 1, 1 }));
}

// List commands: a push's start with its count and the lengths summed, then each element at its end; pops
// and LTRIM take elements off the ends with the lengths the importer's copy knows.
TEST_F(MonitorCommandsTest, ListCommandsBecomePushesAndPops) {
    const auto r = import({ { "RPUSH", "l", "abc", "12" }, { "LPUSH", "l", "head" }, { "RPUSHX", "none", "x" },
        { "LPOP", "l" }, { "RPOP", "l", "5" }, { "RPUSH", "m", "a", "bb", "ccc", "dddd" }, { "LTRIM", "m", "1", "-2" },
        { "LPOP", "m", "-1" } });
    auto op = [&](std::size_t i) { return r.at(i).elementOp(); };
    ASSERT_EQ(r.size(), 15u);
    EXPECT_EQ(op(0).action, ElementAction::Command);
    EXPECT_EQ(r[0].valueBytes, 2u);
    EXPECT_EQ(r[0].elementBytes, 5u); // "abc" + "12"
    EXPECT_EQ(op(1).action, ElementAction::Add);
    EXPECT_FALSE(op(1).atHead);
    EXPECT_EQ(op(2).element, IntegerClass::Uint7); // "12"
    EXPECT_TRUE(op(4).atHead); // LPUSH head
    EXPECT_EQ(op(5).action, ElementAction::Remove); // LPOP: "head"
    EXPECT_TRUE(op(5).atHead);
    EXPECT_EQ(r[5].elementBytes, 4u);
    EXPECT_EQ(r[6].elementBytes, 2u); // RPOP 5: "12", then "abc", and the list is gone
    EXPECT_EQ(op(6).element, IntegerClass::Uint7);
    EXPECT_EQ(r[7].elementBytes, 3u);
    // RPUSH m (a command, four pushes), LTRIM 1 -2: "a" off the head, "dddd" off the tail.
    EXPECT_EQ(r[13].elementBytes, 1u);
    EXPECT_TRUE(op(13).atHead);
    EXPECT_EQ(r[14].elementBytes, 4u);
    EXPECT_FALSE(op(14).atHead);
    EXPECT_EQ(m_rejects.refused.at("value is out of range, must be positive"), 1u);
}

// LSET: the element at its place from the head (a negative index from the tail) replaced, with the one it
// replaces from the importer's copy; a missing key and an index out of range refused as the server does.
TEST_F(MonitorCommandsTest, LsetReplacesAnElementAtItsPlace) {
    const auto r = import({ { "RPUSH", "l", "a", "bb", "ccc" }, { "LSET", "l", "-1", "12345" },
        { "LSET", "l", "1", "x" }, { "LSET", "l", "3", "y" }, { "LSET", "none", "0", "z" },
        { "LSET", "l", "0", "z", "extra" }, { "RPOP", "l" } });
    auto op = [&](std::size_t i) { return r.at(i).elementOp(); };
    ASSERT_EQ(r.size(), 7u);
    EXPECT_EQ(op(4).action, ElementAction::Update);
    EXPECT_EQ(r[4].valueBytes, 2u); // -1: the third from the head
    EXPECT_EQ(r[4].elementBytes, 5u);
    EXPECT_EQ(op(4).element, IntegerClass::Int16); // 12345
    EXPECT_EQ(r[4].priorBytes(), 3u); // "ccc"
    EXPECT_EQ(r[5].valueBytes, 1u);
    EXPECT_EQ(r[5].priorBytes(), 2u); // "bb"
    EXPECT_EQ(r[6].elementBytes, 5u); // RPOP: the "12345" LSET put there
    EXPECT_EQ(op(6).element, IntegerClass::Int16);
    EXPECT_EQ(m_rejects.refused.at("index out of range"), 1u);
    EXPECT_EQ(m_rejects.refused.at("no such key"), 1u);
    EXPECT_EQ(m_rejects.refused.at("wrong number of arguments"), 1u);
}

TEST_F(MonitorCommandsTest, ASetOverAHashMakesItAStringAgain) {
    const auto r = import(
        { { "HSET", "h", "f", "v" }, { "SET", "h", "plain" }, { "APPEND", "h", "-more" }, { "HSET", "h", "f", "v" } });
    ASSERT_EQ(r.size(), 4u); // HSET's command and add, SET, APPEND; the last HSET is refused (WRONGTYPE)
    EXPECT_EQ(r[2].op, Op::Set);
    EXPECT_EQ(r[3].op, Op::Append);
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

namespace {

// Commands that move elements between keys or pop from the first of several become the requests of the
// single-key commands whose effect they have, each on its key (keys told apart here by their lengths): LMOVE a
// pop off the source and a push of that element onto the destination; a list of one moved onto itself nothing;
// BLPOP and LMPOP the first key holding a list (a key of another type before it: refused, nothing popped);
// SMOVE a removal and an add, a lookup onto the same set; ZPOPMIN and ZMPOP the lowest scores, ties by member.
class MonitorMovesTest : public MonitorCommandsTest { };

TEST_F(MonitorMovesTest, EachKeyGetsTheRequestsOfItsPart) {
    const auto r = import({ { "RPUSH", "a", "x", "12", "zzz" }, { "LMOVE", "a", "bb", "LEFT", "RIGHT" },
        { "RPOPLPUSH", "bb", "bb" }, { "BLPOP", "ggggggg", "a", "0" }, { "SET", "ffffff", "v" },
        { "LMPOP", "2", "ffffff", "a", "LEFT" }, { "SADD", "ccc", "m1", "m2" }, { "SMOVE", "ccc", "dddd", "m1" },
        { "SMOVE", "ccc", "ccc", "m2" }, { "ZADD", "eeeee", "2", "b", "1", "z", "1", "y", "3", "a" },
        { "ZPOPMIN", "eeeee", "2" }, { "ZMPOP", "1", "eeeee", "MAX" } });
    std::vector<Request> elements;
    for (const Request& q : r)
        if (q.op == Op::Element)
            elements.push_back(q);
    auto op = [&](std::size_t i) { return elements.at(i).elementOp(); };
    // RPUSH a: a command and three adds.
    ASSERT_GE(elements.size(), 4u);
    // LMOVE a bb LEFT RIGHT: "x" off a's head, then bb made by a push's start and "x" added at its tail.
    EXPECT_EQ(elements[4].keyBytes, 1u);
    EXPECT_EQ(op(4).action, ElementAction::Remove);
    EXPECT_TRUE(op(4).atHead);
    EXPECT_EQ(elements[4].elementBytes, 1u);
    EXPECT_EQ(elements[5].keyBytes, 2u);
    EXPECT_EQ(op(5).action, ElementAction::Command);
    EXPECT_EQ(elements[6].keyBytes, 2u);
    EXPECT_EQ(op(6).action, ElementAction::Add);
    EXPECT_FALSE(op(6).atHead);
    EXPECT_EQ(elements[6].elementBytes, 1u);
    // RPOPLPUSH bb bb with one element: nothing. BLPOP ggggggg a: "12" off a (the first key holding a list).
    EXPECT_EQ(elements[7].keyBytes, 1u);
    EXPECT_EQ(op(7).action, ElementAction::Remove);
    EXPECT_EQ(elements[7].elementBytes, 2u);
    EXPECT_EQ(op(7).element, IntegerClass::Uint7);
    // LMPOP 2 ffffff a: ffffff holds a string: WRONGTYPE, nothing popped. SADD ccc: a command and two adds.
    EXPECT_EQ(elements[8].keyBytes, 3u);
    EXPECT_EQ(op(8).action, ElementAction::Command);
    // SMOVE ccc dddd m1: m1 removed from ccc, then dddd made for it and m1 added.
    EXPECT_EQ(elements[11].keyBytes, 3u);
    EXPECT_EQ(op(11).action, ElementAction::Remove);
    EXPECT_EQ(elements[12].keyBytes, 4u);
    EXPECT_EQ(op(12).action, ElementAction::Command);
    EXPECT_EQ(elements[13].keyBytes, 4u);
    EXPECT_EQ(op(13).action, ElementAction::Add);
    // SMOVE ccc ccc m2: a lookup.
    EXPECT_EQ(elements[14].keyBytes, 3u);
    EXPECT_EQ(op(14).action, ElementAction::Read);
    // ZADD eeeee: a command and four adds; ZPOPMIN 2: y and z (score 1, by member), ZMPOP MAX: a (score 3).
    ASSERT_EQ(elements.size(), 23u);
    for (const std::size_t i : { 20u, 21u, 22u }) {
        EXPECT_EQ(elements[i].keyBytes, 5u);
        EXPECT_EQ(op(i).action, ElementAction::Remove);
        EXPECT_EQ(elements[i].elementBytes, 1u);
    }
    EXPECT_EQ(
        m_rejects.refused.at(std::string("WRONGTYPE Operation against a key holding the wrong kind of value")), 1u);
    EXPECT_EQ(m_rejects.notModelled.count("LMOVE"), 0u);
}

} // namespace

namespace {

// A blocking pop that finds nothing leaves its client waiting; the capture does not show the pop when a later
// push serves it (blocked.c), so the importer serves it there: the clients waiting on the key in the order they
// blocked, before their timeout; a client seen sending anything else has stopped waiting.
TEST_F(MonitorMovesTest, AWaitingClientIsServedByTheNextPush) {
    const std::string capture
        = "OK\n"
          "1700000000.000000 [0 127.0.0.1:1001] \"BLPOP\" \"q\" \"0\"\n"
          "1700000000.100000 [0 127.0.0.1:1002] \"BRPOP\" \"q\" \"other\" \"5\"\n"
          "1700000000.200000 [0 127.0.0.1:1003] \"BLPOP\" \"q\" \"0.5\"\n"
          "1700000000.300000 [0 127.0.0.1:1004] \"BLMOVE\" \"q\" \"dst\" \"LEFT\" \"RIGHT\" \"0\"\n"
          "1700000000.400000 [0 127.0.0.1:1004] \"PING\"\n"
          "1700000001.000000 [0 127.0.0.1:2000] \"RPUSH\" \"q\" \"a\" \"bb\" \"ccc\"\n";
    auto r = importText(capture);
    ASSERT_TRUE(r) << r.error().describe();
    std::vector<Request> elements;
    for (const Request& q : *r)
        if (q.op == Op::Element)
            elements.push_back(q);
    // RPUSH q: a command and three adds; then the first waiting client's BLPOP takes "a", the second's BRPOP
    // "ccc"; the third's timeout (0.5 s) passed before the push, and the fourth sent PING: "bb" stays.
    ASSERT_EQ(elements.size(), 6u);
    EXPECT_EQ(elements[4].elementOp().action, ElementAction::Remove);
    EXPECT_TRUE(elements[4].elementOp().atHead);
    EXPECT_EQ(elements[4].elementBytes, 1u);
    EXPECT_EQ(elements[5].elementOp().action, ElementAction::Remove);
    EXPECT_FALSE(elements[5].elementOp().atHead);
    EXPECT_EQ(elements[5].elementBytes, 3u);
    // A push that fills a list a BLMOVE waits on serves the move, and its push serves a waiter on the
    // destination.
    const std::string chain
        = "OK\n"
          "1700000000.000000 [0 127.0.0.1:1001] \"BLMOVE\" \"src\" \"dst\" \"LEFT\" \"LEFT\" \"0\"\n"
          "1700000000.100000 [0 127.0.0.1:1002] \"BLPOP\" \"dst\" \"0\"\n"
          "1700000001.000000 [0 127.0.0.1:2000] \"LPUSH\" \"src\" \"x\"\n";
    auto c = importText(chain);
    ASSERT_TRUE(c) << c.error().describe();
    std::vector<ElementAction> actions;
    for (const Request& q : *c)
        if (q.op == Op::Element)
            actions.push_back(q.elementOp().action);
    // LPUSH src (command, add); BLMOVE: src's pop, dst's push (command, add); BLPOP dst: its pop.
    EXPECT_EQ(actions,
        (std::vector<ElementAction> { ElementAction::Command, ElementAction::Add, ElementAction::Remove,
            ElementAction::Command, ElementAction::Add, ElementAction::Remove }));
    // A list renamed onto the key a client waits on serves it (db.c dbAdd -> signalKeyAsReady).
    const std::string renamed = "OK\n"
                                "1700000000.000000 [0 127.0.0.1:1001] \"BLPOP\" \"q\" \"0\"\n"
                                "1700000000.100000 [0 127.0.0.1:2000] \"RPUSH\" \"l\" \"x\" \"yy\"\n"
                                "1700000000.200000 [0 127.0.0.1:2000] \"RENAME\" \"l\" \"q\"\n";
    auto n = importText(renamed);
    ASSERT_TRUE(n) << n.error().describe();
    ASSERT_EQ(n->size(), 6u); // RPUSH l (command, two adds), the rename's two halves, the BLPOP's pop of q
    EXPECT_EQ((*n)[3].op, Op::Rename);
    EXPECT_EQ((*n)[4].op, Op::Rename);
    EXPECT_EQ((*n)[5].keyId, (*n)[4].keyId);
    EXPECT_EQ((*n)[5].elementOp().action, ElementAction::Remove);
    EXPECT_EQ((*n)[5].elementBytes, 1u);
    EXPECT_EQ(m_rejects.skipped.count("a blocking pop still waiting when the capture ends (nothing popped)"), 0u);
    // A client still waiting when the capture ends is said; one whose timeout has passed is not.
    const std::string waiting = "OK\n"
                                "1700000000.000000 [0 127.0.0.1:1001] \"BLPOP\" \"q\" \"0\"\n"
                                "1700000000.000000 [0 127.0.0.1:1002] \"BRPOP\" \"q\" \"0.1\"\n"
                                "1700000001.000000 [0 127.0.0.1:2000] \"SET\" \"k\" \"v\"\n";
    ASSERT_TRUE(importText(waiting));
    EXPECT_EQ(m_rejects.skipped.at("a blocking pop still waiting when the capture ends (nothing popped)"), 1u);
}

} // namespace

namespace {

// LREM: each element equal to the argument removed where it is, walking from the head (a count of 0 or more;
// 0: all) or from the tail (below 0), with its place from the head at that moment; an emptied list deleted.
TEST_F(MonitorMovesTest, LremRemovesEqualElementsWhereTheyAre) {
    const auto r = import({ { "RPUSH", "l", "x", "yy", "x", "zzz", "x" }, { "LREM", "l", "-2", "x" },
        { "LREM", "l", "1", "zzz" }, { "LREM", "l", "0", "nothing" }, { "LREM", "l", "0", "x" },
        { "LREM", "l", "0", "yy" }, { "LREM", "l", "x", "yy" } });
    std::vector<Request> removals;
    for (const Request& q : r)
        if (q.op == Op::Element && q.elementOp().action == ElementAction::Remove)
            removals.push_back(q);
    // x yy x zzz x: -2 x takes the last x (place 4), then the one at 2; x yy zzz: zzz at 2; x yy: x at 0;
    // yy: at 0, the list gone.
    ASSERT_EQ(removals.size(), 5u);
    const std::uint32_t places[] = { 5, 3, 3, 1, 1 }; // request.h: the place from the head, plus one
    const std::uint32_t lengths[] = { 1, 1, 3, 1, 2 };
    for (std::size_t i = 0; i < removals.size(); ++i) {
        EXPECT_EQ(removals[i].valueBytes, places[i]) << i;
        EXPECT_EQ(removals[i].elementBytes, lengths[i]) << i;
    }
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u);
    EXPECT_EQ(m_rejects.notModelled.count("LREM"), 0u);
}

} // namespace
