// SPDX-License-Identifier: MIT
// ElementCommandWriter: the collection commands a trace's element requests stand for, with texts of exactly the
// trace's lengths and integer classes, names unique within their key, and a command's elements sent together.

#include "layoutlab/collect/element_commands.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <set>

using namespace layoutlab;

namespace {

using Command = ElementCommandWriter::Command;

Request element(std::uint32_t keyId, CollectionKind kind, ElementAction action, std::uint32_t elementBytes,
    std::uint32_t valueBytes = 0, std::uint32_t priorBytes = 0, bool atHead = false,
    IntegerClass cls = IntegerClass::None) {
    Request r;
    r.op = Op::Element;
    r.keyId = keyId;
    r.keyBytes = 8;
    r.elementBytes = elementBytes;
    r.valueBytes = valueBytes;
    r.ttlSeconds = priorBytes;
    ElementOp op;
    op.collection = kind;
    op.action = action;
    op.atHead = atHead;
    op.element = cls;
    r.element = op.packed();
    return r;
}

TEST(ElementText, EveryClassAndLengthThatHoldsOneGivesIt) {
    const IntegerClass classes[] { IntegerClass::Uint7, IntegerClass::Int13, IntegerClass::Int16, IntegerClass::Int24,
        IntegerClass::Int32, IntegerClass::Int64 };
    for (const IntegerClass cls : classes)
        for (std::uint32_t bytes = 1; bytes <= 20; ++bytes) {
            std::string text;
            if (!elementText(bytes, cls, 0, text)) {
                EXPECT_EQ(text.size(), bytes); // no integer of the class is that long: letters of the length
                EXPECT_EQ(integerClassOf(text), IntegerClass::None);
                continue;
            }
            std::set<std::string> seen;
            for (std::uint64_t n = 0; n < 40; ++n) {
                const bool fits = elementText(bytes, cls, n, text, 12345);
                EXPECT_EQ(text.size(), bytes) << text;
                EXPECT_EQ(integerClassOf(text), cls) << text;
                if (fits)
                    EXPECT_TRUE(seen.insert(text).second) << "repeated " << text;
            }
        }
    std::string text;
    EXPECT_TRUE(elementText(3, IntegerClass::Uint7, 27, text)); // 100..127: 28 of them
    EXPECT_FALSE(elementText(3, IntegerClass::Uint7, 28, text)); // round again
    EXPECT_FALSE(elementText(2, IntegerClass::Int64, 0, text)); // no 2-character integer needs 64 bits
}

TEST(ElementText, StringsAreNeverIntegersAndDistinctUpToTheirCount) {
    std::string text;
    std::set<std::string> seen;
    for (std::uint64_t n = 0; n < 52; ++n) {
        EXPECT_TRUE(elementText(1, IntegerClass::None, n, text, 7));
        EXPECT_TRUE(seen.insert(text).second);
        EXPECT_EQ(integerClassOf(text), IntegerClass::None);
    }
    EXPECT_FALSE(elementText(1, IntegerClass::None, 52, text)); // one letter: 52 names
    EXPECT_TRUE(elementText(0, IntegerClass::None, 0, text)); // the empty name, once
    EXPECT_FALSE(elementText(0, IntegerClass::None, 1, text));
    for (std::uint32_t bytes : { 2u, 19u, 64u, 1000u }) {
        EXPECT_TRUE(elementText(bytes, IntegerClass::None, 3, text));
        EXPECT_EQ(text.size(), bytes);
        EXPECT_EQ(integerClassOf(text), IntegerClass::None);
    }
}

TEST(ScoreText, NonIntegerScoresPrintInTheirLength) {
    for (std::uint32_t bytes = 3; bytes <= 18; ++bytes) {
        std::string text;
        EXPECT_TRUE(scoreText(bytes, IntegerClass::None, text));
        EXPECT_EQ(text.size(), bytes) << text;
        EXPECT_EQ(integerClassOf(text), IntegerClass::None) << text;
        char printed[64];
        std::snprintf(printed, sizeof printed, "%.17g", std::strtod(text.c_str(), nullptr)); // Redis 7.0's d2string
        EXPECT_EQ(std::string(printed), text);
    }
    std::string text;
    EXPECT_TRUE(scoreText(2, IntegerClass::None, text)); // d2string's negative zero, a weighted sum's
    EXPECT_EQ(text, "-0");
    EXPECT_FALSE(scoreText(1, IntegerClass::None, text));
    EXPECT_TRUE(scoreText(5, IntegerClass::Int24, text));
    EXPECT_EQ(integerClassOf(text), IntegerClass::Int24);
}

// Where Redis 7.0's 17 digits are longer than the shortest text (request.h packScoreBytes), the score made up
// has both lengths.
TEST(ScoreText, AScoreLongerInSeventeenDigitsIsMadeSo) {
    // The last two a sign longer than any positive score's (a weighted sum's: -1234567.8901234567).
    for (const auto [shortest, seventeen] :
        { std::pair { 3u, 19u }, { 4u, 18u }, { 13u, 18u }, { 15u, 17u }, { 8u, 19u }, { 19u, 19u }, { 18u, 20u } }) {
        std::string text;
        EXPECT_TRUE(scoreText(packScoreBytes(shortest, seventeen), IntegerClass::None, text)) << shortest;
        const double v = std::strtod(text.c_str(), nullptr);
        char printed[64];
        EXPECT_EQ(std::snprintf(printed, sizeof printed, "%.17g", v), static_cast<int>(seventeen)) << text;
        EXPECT_EQ(text.size(), shortest) << text;
        EXPECT_EQ(integerClassOf(text), IntegerClass::None) << text;
    }
}

TEST(ElementCommandWriter, ACommandsElementsGoTogetherAndRemovesNameWhatWasAdded) {
    ElementCommandWriter writer;
    std::vector<Command> out;
    Request start = element(1, CollectionKind::Hash, ElementAction::Command, 10, 2);
    ASSERT_TRUE(writer.write(start, "h", out));
    ASSERT_TRUE(writer.write(element(1, CollectionKind::Hash, ElementAction::Add, 5, 7), "h", out));
    EXPECT_TRUE(out.empty()); // held until its last element
    ASSERT_TRUE(writer.write(element(1, CollectionKind::Hash, ElementAction::Add, 5, 70), "h", out));
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].size(), 6u);
    EXPECT_EQ(out[0][0], "HSET");
    EXPECT_NE(out[0][2], out[0][4]); // two fields of one length, two names
    EXPECT_EQ(out[0][3].size(), 7u);
    EXPECT_EQ(out[0][5].size(), 70u);
    const std::string second = out[0][4];
    out.clear();
    // The field whose value is 70 bytes long, updated to 3, then removed by its new shape.
    ASSERT_TRUE(writer.write(element(1, CollectionKind::Hash, ElementAction::Update, 5, 3, 70), "h", out));
    ASSERT_TRUE(writer.write(element(1, CollectionKind::Hash, ElementAction::Remove, 5, 0, 3), "h", out));
    ASSERT_TRUE(writer.write(element(1, CollectionKind::Hash, ElementAction::Read, 5), "h", out));
    ASSERT_EQ(out.size(), 3u);
    ASSERT_EQ(out[0].size(), 4u);
    EXPECT_EQ(out[0][2], second);
    EXPECT_EQ(out[0][3].size(), 3u);
    EXPECT_EQ(out[1], (Command { "HDEL", "h", second }));
    EXPECT_EQ(out[2][0], "HEXISTS");
    EXPECT_EQ(writer.unmatched(), 0u);
    ASSERT_TRUE(writer.write(element(1, CollectionKind::Hash, ElementAction::Remove, 5, 0, 99), "h", out));
    EXPECT_EQ(writer.unmatched(), 1u); // no field of that shape: not sent
    EXPECT_EQ(out.size(), 3u);
}

// A ZADD or SADD that names a member again, or one the key holds, with its score unchanged: the import's lookup
// goes within the command, by a held name of that shape with its score, so that the server sizes the new key's
// table for all of the command's members (t_zset.c zsetTypeCreate) as the capture's did, not for a part of it.
TEST(ElementCommandWriter, AMemberNamedAgainStaysWithinItsCommand) {
    ElementCommandWriter writer;
    std::vector<Command> out;
    Request start = element(1, CollectionKind::SortedSet, ElementAction::Command, 6, 3);
    ASSERT_TRUE(writer.write(start, "z", out));
    ASSERT_TRUE(writer.write(element(1, CollectionKind::SortedSet, ElementAction::Add, 6, 3), "z", out));
    ASSERT_TRUE(writer.write(element(1, CollectionKind::SortedSet, ElementAction::Read, 6), "z", out));
    EXPECT_TRUE(out.empty()); // still one command
    ASSERT_TRUE(writer.write(element(1, CollectionKind::SortedSet, ElementAction::Add, 6, 4), "z", out));
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].size(), 8u);
    EXPECT_EQ(out[0][0], "ZADD");
    EXPECT_EQ(out[0][3], out[0][5]); // the first member again
    EXPECT_EQ(out[0][2], out[0][4]); // with its score as sent
    EXPECT_EQ(out[0][6].size(), 4u);
    out.clear();

    // A set's: the same; a member the key holds none of the length of (ZADD XX's absent one) is looked up
    // before the command, which stays whole.
    start = element(2, CollectionKind::Set, ElementAction::Command, 5, 3);
    ASSERT_TRUE(writer.write(start, "s", out));
    ASSERT_TRUE(writer.write(element(2, CollectionKind::Set, ElementAction::Add, 5), "s", out));
    ASSERT_TRUE(writer.write(element(2, CollectionKind::Set, ElementAction::Read, 9), "s", out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][0], "SISMEMBER");
    ASSERT_TRUE(writer.write(element(2, CollectionKind::Set, ElementAction::Read, 5), "s", out));
    ASSERT_EQ(out.size(), 2u); // the command's last member: sent
    EXPECT_EQ(out[1].size(), 4u);
    EXPECT_EQ(out[1][2], out[1][3]);
    EXPECT_EQ(writer.unmatched(), 0u);
    out.clear();

    // A ZADD's member the key does not hold, left out: ZADD XX's. The command goes with XX, that member in it by
    // a name the key has not had, so that the server converts a listpack for its length as the capture's did.
    start = element(3, CollectionKind::SortedSet, ElementAction::Command, 6, 1);
    ASSERT_TRUE(writer.write(start, "y", out));
    ASSERT_TRUE(writer.write(element(3, CollectionKind::SortedSet, ElementAction::Add, 6, 3), "y", out));
    ASSERT_EQ(out.size(), 1u);
    const std::string held = out[0][3];
    start = element(3, CollectionKind::SortedSet, ElementAction::Command, 70, 2);
    ASSERT_TRUE(writer.write(start, "y", out));
    ASSERT_TRUE(writer.write(element(3, CollectionKind::SortedSet, ElementAction::Read, 70), "y", out));
    ASSERT_TRUE(writer.write(element(3, CollectionKind::SortedSet, ElementAction::Read, 6), "y", out));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[1].size(), 7u);
    EXPECT_EQ(out[1][2], "XX");
    EXPECT_EQ(out[1][4].size(), 70u);
    EXPECT_EQ(out[1][6], held);
    EXPECT_EQ(out[1][5], out[0][2]); // its score as sent: unchanged
}

// A SINTERSTORE's result (request.h): from an intset, the SADD of its members; from any other set, those members
// in a set the server then intersects with itself, so that it builds the result as SINTERSTORE did.
TEST(ElementCommandWriter, AnIntersectionsResultIsBuiltByTheServersOwnSinterstore) {
    auto result = [](std::uint32_t source, std::uint64_t setMaxIntsetEntries) {
        CollectionLimits limits;
        limits.setMaxIntsetEntries = setMaxIntsetEntries;
        ElementCommandWriter writer(limits);
        std::vector<Command> out;
        Request start = element(1, CollectionKind::Set, ElementAction::Command, 3, 2, source);
        EXPECT_TRUE(writer.write(start, "s", out));
        for (int i = 0; i < 2; ++i)
            EXPECT_TRUE(writer.write(
                element(1, CollectionKind::Set, ElementAction::Add, 3, 0, 0, false, IntegerClass::Int13), "s", out));
        EXPECT_TRUE(writer.write(element(1, CollectionKind::Set, ElementAction::Size, 3, 2), "s", out));
        writer.flush(out);
        return out;
    };
    const auto plain = result(kIntersectionOfIntegers + 400, 512); // an intset of 400
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(plain[0].size(), 4u);
    EXPECT_EQ(plain[0][0], "SADD");
    for (const auto& out : { result(kIntersectionOfIntegers + 400, 256), result(kIntersectionOfNonIntegers, 512) }) {
        ASSERT_EQ(out.size(), 3u);
        ASSERT_EQ(out[0].size(), 5u);
        EXPECT_EQ((Command(out[0].begin(), out[0].begin() + 3)), (Command { "SADD", "s", "~" }));
        EXPECT_EQ(out[1], (Command { "SREM", "s", "~" }));
        EXPECT_EQ(out[2], (Command { "SINTERSTORE", "s", "s" }));
    }
}

// A ZUNIONSTORE's result (request.h) that ends a skiplist: its sources put back together, the members met again
// named as an earlier source's of their shape, each but the last in a key of its own and the last in the
// destination, which the server's ZUNIONSTORE of them then builds as the captured one did, each member scored by
// its place in its source so that the server meets them in the trace's order. One that ends a listpack: one ZADD
// of its members with the trace's scores.
TEST(ElementCommandWriter, AUnionsResultIsBuiltByTheServersOwnZunionstore) {
    auto result = [](std::uint32_t members) {
        ElementCommandWriter writer;
        std::vector<Command> out;
        auto write = [&](const Request& r) { EXPECT_TRUE(writer.write(r, "z", out)); };
        auto zset = [](ElementAction action, std::uint32_t bytes, std::uint32_t value = 0, std::uint32_t prior = 0,
                        bool atHead = false) {
            return element(1, CollectionKind::SortedSet, action, bytes, value, prior, atHead);
        };
        // Sources {a2 b3}, {a2 c1}, {d1 a2 b3} met in that order: a union of four.
        write(zset(ElementAction::Command, 3, members, 3, true));
        write(zset(ElementAction::Size, 0, 2, 7));
        write(zset(ElementAction::Add, 2, 3)); // scores of three characters ("1.5")
        write(zset(ElementAction::Add, 3, 3));
        write(zset(ElementAction::Size, 0, 2));
        write(zset(ElementAction::Read, 2, kFoundForInsert));
        write(zset(ElementAction::Add, 1, 3));
        write(zset(ElementAction::Size, 0, 3));
        write(zset(ElementAction::Add, 1, 3));
        write(zset(ElementAction::Read, 2, kFoundForInsert));
        EXPECT_TRUE(out.empty()); // not all of it yet
        write(zset(ElementAction::Read, 3, kFoundForInsert));
        EXPECT_EQ(writer.approximated(), 0u);
        return out;
    };
    const auto listpack = result(4);
    ASSERT_EQ(listpack.size(), 1u);
    ASSERT_EQ(listpack[0].size(), 10u); // ZADD z and four pairs
    EXPECT_EQ(listpack[0][0], "ZADD");
    EXPECT_EQ(listpack[0][2].size(), 3u);
    const std::string first = "\x7funion-source-0", second = "\x7funion-source-1";
    const auto out = result(200);
    ASSERT_EQ(out.size(), 5u);
    ASSERT_EQ(out[0].size(), 6u);
    ASSERT_EQ(out[1].size(), 6u);
    ASSERT_EQ(out[2].size(), 8u);
    EXPECT_EQ(out[0][1], first);
    EXPECT_EQ(out[1][1], second);
    EXPECT_EQ(out[2][1], "z");
    EXPECT_NE(out[1][5], out[2][3]); // c and d: one byte each, not the same member
    EXPECT_EQ(out[1][3], out[0][3]); // a, met again
    EXPECT_EQ(out[2][5], out[0][3]);
    EXPECT_EQ(out[2][7], out[0][5]); // b
    EXPECT_EQ((Command { out[2][2], out[2][4], out[2][6] }), (Command { "0", "1", "2" })); // by place
    EXPECT_EQ(out[3], (Command { "ZUNIONSTORE", "z", "3", first, second, "z", "AGGREGATE", "MIN" }));
    EXPECT_EQ(out[4], (Command { "DEL", first, second }));
}

// One command's removals go as one command (all but the last say more follow); a range's (ZREMRANGEBY*) as
// its members moved to -inf and a ZREMRANGEBYSCORE of -inf.
TEST(ElementCommandWriter, OneCommandsRemovalsGoTogetherAndARangeAsARange) {
    ElementCommandWriter writer;
    std::vector<Command> out;
    for (int i = 0; i < 4; ++i)
        ASSERT_TRUE(writer.write(element(4, CollectionKind::SortedSet, ElementAction::Add, 6, 2, 0, false), "z", out));
    std::set<std::string> members;
    for (const Command& c : out)
        members.insert(c.at(3));
    ASSERT_EQ(members.size(), 4u);
    out.clear();
    ASSERT_TRUE(writer.write(element(4, CollectionKind::SortedSet, ElementAction::Remove, 6, 0, 2, true), "z", out));
    EXPECT_TRUE(out.empty()); // held until its last
    ASSERT_TRUE(writer.write(element(4, CollectionKind::SortedSet, ElementAction::Remove, 6, 0, 2, false), "z", out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].size(), 4u);
    EXPECT_EQ(out[0][0], "ZREM");
    out.clear();
    // A member the command named and the key did not hold goes in the same command, by a name never made.
    ASSERT_TRUE(writer.write(element(4, CollectionKind::SortedSet, ElementAction::Remove, 6, 0, 2, true), "z", out));
    ASSERT_TRUE(writer.write(element(4, CollectionKind::SortedSet, ElementAction::Read, 6), "z", out));
    ASSERT_TRUE(writer.write(element(4, CollectionKind::SortedSet, ElementAction::Add, 6, 2), "z", out));
    ASSERT_EQ(out.size(), 2u); // the removal command, then the add's ZADD
    ASSERT_EQ(out[0].size(), 4u);
    EXPECT_EQ(out[0][0], "ZREM");
    EXPECT_TRUE(members.contains(out[0][2]));
    EXPECT_FALSE(members.contains(out[0][3]));
    EXPECT_EQ(out[1][0], "ZADD");
    EXPECT_EQ(out[1][3], out[0][3]); // the next name made is the one looked up, not held until now
    members.insert(out[1][3]);
    out.clear();
    for (const bool moreFollow : { true, false })
        ASSERT_TRUE(writer.write(
            element(4, CollectionKind::SortedSet, ElementAction::Remove, 6, kRemovedByRange, 2, moreFollow), "z", out));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].size(), 7u);
    EXPECT_EQ((Command { out[0][0], out[0][1], out[0][2], out[0][3], out[0][5] }),
        (Command { "ZADD", "z", "XX", "-inf", "-inf" }));
    EXPECT_TRUE(members.contains(out[0][4]) && members.contains(out[0][6]));
    EXPECT_EQ(out[1], (Command { "ZREMRANGEBYSCORE", "z", "-inf", "-inf" }));
}

TEST(ElementCommandWriter, ListsPushPopAndSetInPlace) {
    ElementCommandWriter writer;
    std::vector<Command> out;
    Request start = element(2, CollectionKind::List, ElementAction::Command, 9, 2);
    ASSERT_TRUE(writer.write(start, "l", out));
    ASSERT_TRUE(writer.write(element(2, CollectionKind::List, ElementAction::Add, 4, 0, 0, true), "l", out));
    ASSERT_TRUE(writer.write(
        element(2, CollectionKind::List, ElementAction::Add, 5, 0, 0, true, IntegerClass::Int24), "l", out));
    ASSERT_TRUE(writer.write(element(2, CollectionKind::List, ElementAction::Remove, 4, 0, 0, false), "l", out));
    ASSERT_TRUE(writer.write(element(2, CollectionKind::List, ElementAction::Update, 6, 0, 4), "l", out));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0][0], "LPUSH");
    ASSERT_EQ(out[0].size(), 4u);
    EXPECT_EQ(integerClassOf(out[0][3]), IntegerClass::Int24);
    EXPECT_EQ(out[1], (Command { "RPOP", "l" }));
    EXPECT_EQ(out[2][0], "LSET");
    EXPECT_EQ(out[2][2], "0");
    EXPECT_EQ(out[2][3].size(), 6u);
    // A removal at a place (LREM, request.h: the place plus one): the element marked there, then removed.
    out.clear();
    ASSERT_TRUE(writer.write(element(2, CollectionKind::List, ElementAction::Remove, 6, 1), "l", out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], (Command { "LSET", "l", "0", "~" }));
    EXPECT_EQ(out[1], (Command { "LREM", "l", "1", "~" }));
}

// LINSERT beside a place (request.h: an Add with the pivot's place plus one in priorBytes, its length and class in
// valueBytes and the value's class): the pivot marked by a string of the same listpack entry, the element
// inserted beside the mark, the place given back a text of the pivot's shape; a LINSERT that found no pivot
// (a Command with kNoPivot) as one whose pivot no element is.
TEST(ElementCommandWriter, ListInsertsMarkThePivotAndGiveItBack) {
    ElementCommandWriter writer;
    std::vector<Command> out;
    Request start = element(2, CollectionKind::List, ElementAction::Command, 3, 1);
    ASSERT_TRUE(writer.write(start, "l", out));
    ASSERT_TRUE(writer.write(element(2, CollectionKind::List, ElementAction::Add, 3, 5, 3, true), "l", out));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0], (Command { "LSET", "l", "2", "~~~~~" }));
    EXPECT_EQ(out[1][0], "LINSERT");
    EXPECT_EQ((Command { out[1][2], out[1][3] }), (Command { "BEFORE", "~~~~~" }));
    EXPECT_EQ(out[1][4].size(), 3u);
    EXPECT_EQ((Command { out[2][0], out[2][2] }), (Command { "LSET", "3" })); // the pivot one place on
    EXPECT_EQ(out[2][3].size(), 5u);
    // After a pivot that is an integer of 24 bits ("1234567", a listpack entry of 5 bytes): a mark of 3.
    out.clear();
    Request after = element(2, CollectionKind::List, ElementAction::Add, 3, 7, 1, false);
    ElementOp op = after.elementOp();
    op.value = IntegerClass::Int24;
    after.element = op.packed();
    ASSERT_TRUE(writer.write(after, "l", out));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0], (Command { "LSET", "l", "0", "~~~" }));
    EXPECT_EQ((Command { out[1][2], out[1][3] }), (Command { "AFTER", "~~~" }));
    EXPECT_EQ((Command { out[2][0], out[2][2] }), (Command { "LSET", "0" }));
    EXPECT_EQ(integerClassOf(out[2][3]), IntegerClass::Int24);
    out.clear();
    ASSERT_TRUE(writer.write(element(2, CollectionKind::List, ElementAction::Command, 40, 1, kNoPivot), "l", out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ((Command { out[0][0], out[0][2], out[0][3] }), (Command { "LINSERT", "AFTER", "~no pivot~" }));
    EXPECT_EQ(out[0][4].size(), 40u);
}

TEST(ElementCommandWriter, AStringWriteForgetsTheKeyAndASnapshotIsRefused) {
    ElementCommandWriter writer;
    std::vector<Command> out;
    ASSERT_TRUE(writer.write(element(3, CollectionKind::Set, ElementAction::Add, 4), "s", out));
    Request set;
    set.op = Op::Set;
    set.keyId = 3;
    writer.before(set, out);
    ASSERT_TRUE(writer.write(element(3, CollectionKind::Set, ElementAction::Remove, 4), "s", out));
    EXPECT_EQ(writer.unmatched(), 1u); // the set went with the SET over it
    const auto refused = writer.write(element(4, CollectionKind::Hash, ElementAction::Load, 0), "k", out);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("RDB file"), std::string::npos) << refused.error().message;
}

} // namespace
