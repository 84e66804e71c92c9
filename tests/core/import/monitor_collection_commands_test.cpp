// SPDX-License-Identifier: MIT
// The MONITOR importer's collection commands: hashes, sets, sorted sets and lists as element requests in the
// engines' order, and the commands that move elements between keys or pop from the first of several.

#include "monitor_capture_import.h"

#include <gtest/gtest.h>
#include <set>

using namespace layoutlab;
using layoutlab::test::MonitorCommandsTest;

namespace {

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

// t_set.c spopWithCountCommand's case 3: a count that leaves at most a fifth of the set. The server draws the
// members that stay into a new set, added one by one, frees the old one, and keeps the key and its TTL: the key
// deleted, each member kept added by a command of its own, the TTL set again.
TEST_F(MonitorCommandsTest, SpopLeavingAFifthOrLessRebuildsTheSet) {
    std::vector<std::string> add { "SADD", "s" };
    for (int i = 0; i < 12; ++i)
        add.push_back(std::string(static_cast<std::size_t>(10 + i), 'm'));
    const auto r = import({ add, { "EXPIRE", "s", "100" }, { "SPOP", "s", "10" }, { "SCARD", "s" } });
    // SADD's command and twelve adds, EXPIRE; then the rebuild of the two kept.
    ASSERT_EQ(r.size(), 1u + 12 + 1 + 1 + 2 * 2 + 1);
    EXPECT_EQ(r[14].op, Op::Delete);
    std::set<std::uint32_t> kept;
    for (const std::size_t i : { 15, 17 }) {
        ASSERT_EQ(r[i].elementOp().action, ElementAction::Command) << i;
        EXPECT_EQ(r[i].valueBytes, 1u) << i;
        ASSERT_EQ(r[i + 1].elementOp().action, ElementAction::Add) << i;
        EXPECT_EQ(r[i + 1].elementBytes, r[i].elementBytes) << i;
        kept.insert(r[i + 1].elementBytes);
    }
    EXPECT_EQ(kept.size(), 2u);
    EXPECT_EQ(r[19].op, Op::Expire);
    EXPECT_EQ(r[19].ttlSeconds, 99u); // 100 s from the EXPIRE, a second of the capture before
    EXPECT_EQ(m_rejects.drawnByImporter.at("SPOP"), 1u);
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
    EXPECT_EQ(m_rejects.drawnByImporter.at("SPOP"), 3u); // the three that popped members
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

} // namespace

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

// LINSERT: BEFORE or AFTER checked before the key; the conversion's Command for the element whether or not the
// pivot is found; the element beside the first element from the head equal to the pivot, the pivot's place plus
// one in priorBytes and its length and class in valueBytes and the value's class (request.h).
TEST_F(MonitorMovesTest, LinsertPutsTheElementBesideTheFirstPivotFromTheHead) {
    const auto r = import({ { "RPUSH", "l", "a", "77", "a" }, { "LINSERT", "l", "AFTER", "a", "xyz" },
        { "LINSERT", "l", "before", "77", "q" }, { "LINSERT", "l", "AFTER", "nothing", "w" },
        { "LINSERT", "l", "BESIDE", "a", "v" }, { "LINSERT", "absent", "AFTER", "a", "v" }, { "SET", "s", "1" },
        { "LINSERT", "s", "AFTER", "a", "v" }, { "LINSERT", "l", "AFTER", "77" }, { "RPOP", "l", "9" } });
    std::vector<Request> lists, sizes;
    for (const Request& q : r)
        if (q.op == Op::Element && q.elementOp().action == ElementAction::Size)
            sizes.push_back(q);
        else if (q.op == Op::Element && q.elementOp().action != ElementAction::Command)
            lists.push_back(q);
    // Before the list's first LINSERT, the sizes of what it holds (a 77 a), once (request.h).
    ASSERT_EQ(sizes.size(), 3u);
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(sizes[i].valueBytes, i);
        EXPECT_EQ(sizes[i].elementBytes, i == 1 ? 2u : 1u);
    }
    // a 77 a -> a xyz 77 a -> a xyz q 77 a; RPOP of 9 takes them all from the tail.
    ASSERT_EQ(lists.size(), 3u + 2u + 5u);
    EXPECT_EQ(lists[3].elementBytes, 3u);
    EXPECT_EQ(lists[3].priorBytes(), 1u); // after the pivot at place 0
    EXPECT_EQ(lists[3].valueBytes, 1u);
    EXPECT_FALSE(lists[3].elementOp().atHead);
    EXPECT_EQ(lists[4].elementBytes, 1u);
    EXPECT_EQ(lists[4].priorBytes(), 3u); // before "77", now at place 2
    EXPECT_EQ(lists[4].valueBytes, 2u);
    EXPECT_EQ(lists[4].elementOp().value, IntegerClass::Uint7);
    EXPECT_TRUE(lists[4].elementOp().atHead);
    const std::uint32_t popped[] = { 1, 2, 1, 3, 1 }; // a 77 q xyz a, from the tail
    for (std::size_t i = 0; i < 5; ++i)
        EXPECT_EQ(lists[5 + i].elementBytes, popped[i]) << i;
    std::size_t commands = 0;
    for (const Request& q : r)
        commands += q.op == Op::Element && q.elementOp().action == ElementAction::Command;
    EXPECT_EQ(commands, 1u + 3u); // the RPUSH's, and the three LINSERTs on the list (the missing pivot's too)
    EXPECT_EQ(m_rejects.refused.at("syntax error"), 1u);
    EXPECT_EQ(m_rejects.refused.at("WRONGTYPE Operation against a key holding the wrong kind of value"), 1u);
    EXPECT_EQ(m_rejects.refused.at("wrong number of arguments"), 1u);
    EXPECT_EQ(m_rejects.notModelled.count("LINSERT"), 0u);
}

} // namespace
