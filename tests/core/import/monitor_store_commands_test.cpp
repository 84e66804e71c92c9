// SPDX-License-Identifier: MIT
// The MONITOR importer's STORE commands of the set and sorted-set algebra (monitor_set_store.cpp,
// monitor_zset_store.cpp): the sources' lookups first, then the destination's delete, then the result's adds
// (and SDIFFSTORE's second algorithm's removals), each request on its key.

#include "monitor_capture_import.h"

#include <fmt/ranges.h>

namespace layoutlab::test {

namespace {

// Each request as "key action", keys told apart by their lengths: "2 add", "1 read", "3 delete".
std::vector<std::string> summary(const std::vector<Request>& requests) {
    std::vector<std::string> out;
    for (const Request& r : requests) {
        if (r.op != Op::Element) {
            out.push_back(fmt::format("{} {}", r.keyBytes, opName(r.op)));
            continue;
        }
        out.push_back(fmt::format("{} {}", r.keyBytes, elementActionName(r.elementOp().action)));
    }
    return out;
}

using Lines = std::vector<std::string>;

} // namespace

TEST_F(MonitorCommandsTest, SetStoresLookUpTheSourcesThenReplaceTheDestination) {
    // Keys by length: a (1) {1 2 3 x}, bb (2) {2 3 4}, ddd (3) a string, then each STORE.
    const auto r = import({ { "SADD", "a", "1", "2", "3", "x" }, { "SADD", "bb", "2", "3", "4" },
        { "SET", "ddd", "text" }, { "SINTERSTORE", "ddd", "a", "bb" }, { "SUNIONSTORE", "uuuu", "a", "bb" },
        { "SDIFFSTORE", "fffff", "a", "bb", "missing" }, { "SINTERSTORE", "gggggg", "a", "ddd", "zzz" } });
    const Lines all = summary(r);
    ASSERT_EQ(all.size(), 41u) << fmt::format("{}", fmt::join(all, ", "));
    // SINTERSTORE ddd a bb: bb is the smaller, its members looked up in a (2, 3 held; 4 not); the string
    // deleted; 2 and 3 added by one command that names bb (integers only, 3 of them: request.h), then, the
    // result being integers only, each again as a Size (an intset at the end within the layout's limit).
    EXPECT_EQ(Lines(all.begin() + 10, all.begin() + 19),
        (Lines { "1 read", "1 read", "1 read", "3 delete", "3 command", "3 add", "3 add", "3 size", "3 size" }));
    EXPECT_EQ(r[14].priorBytes(), kIntersectionOfIntegers + 3);
    EXPECT_EQ(r[14].valueBytes, 2u);
    EXPECT_EQ(r[17].valueBytes, 2u); // the first Size: the members' count
    EXPECT_EQ(r[18].valueBytes, 0u);
    EXPECT_EQ(r[17].elementOp().element, IntegerClass::Uint7);
    // SUNIONSTORE uuuu a bb: nothing looked up in the sources; every member added in turn, the second 2 and 3
    // looked up in the result (setTypeAddAux finds them there).
    EXPECT_EQ(Lines(all.begin() + 19, all.begin() + 33),
        (Lines { "4 command", "4 add", "4 command", "4 add", "4 command", "4 add", "4 command", "4 add", "4 command",
            "4 read", "4 command", "4 read", "4 command", "4 add" }));
    // SDIFFSTORE fffff a bb missing: the first algorithm (a's 4 x 2 sources / 2 <= 7); each of a's members looked
    // up in bb until held: 1 (not), 2, 3, x (not); 1 and x added.
    EXPECT_EQ(Lines(all.begin() + 33, all.end()),
        (Lines { "2 read", "2 read", "2 read", "2 read", "5 command", "5 add", "5 command", "5 add" }));
    // SINTERSTORE gggggg a ddd zzz: a missing key is an empty set, so nothing at all (ddd is a set by now).
    EXPECT_EQ(m_rejects.notModelled.count("SINTERSTORE"), 0u);
}

// sinterGenericCommand builds its result in a listpack unless its smallest source is an intset: the result's
// Command says which source it had, for the layout to decide by its own limits (request.h).
TEST_F(MonitorCommandsTest, SinterstoreNamesItsSmallestSourceForTheLayout) {
    const auto r = import({ { "SADD", "a", "1", "2", "3", "x" }, { "SADD", "bb", "1", "2", "3", "4", "5" },
        { "SINTERSTORE", "ccc", "bb", "a" }, { "SADD", "dd", "x", "y" }, { "SINTERSTORE", "eeeee", "a", "dd" } });
    std::vector<Request> made;
    for (const Request& q : r)
        if (q.op == Op::Element && q.elementOp().action == ElementAction::Command && q.keyBytes >= 3)
            made.push_back(q);
    ASSERT_EQ(made.size(), 2u);
    EXPECT_EQ(made[0].priorBytes(), kIntersectionOfNonIntegers); // a, holding x, the smaller
    EXPECT_EQ(made[0].valueBytes, 3u); // 1, 2, 3 in one command
    EXPECT_EQ(made[1].priorBytes(), kIntersectionOfNonIntegers); // dd, of strings
    // ccc holds integers only: its members again as Sizes; eeeee holds x: none.
    EXPECT_EQ(std::count_if(r.begin(), r.end(),
                  [](const Request& q) {
                      return q.op == Op::Element && q.elementOp().action == ElementAction::Size && q.keyBytes == 3;
                  }),
        3);
    EXPECT_EQ(std::count_if(r.begin(), r.end(),
                  [](const Request& q) { return q.elementOp().action == ElementAction::Size && q.keyBytes == 5; }),
        0);
}

TEST_F(MonitorCommandsTest, SdiffstoresSecondAlgorithmAddsTheFirstSetThenRemoves) {
    std::vector<std::string> big { "SADD", "a" };
    for (int i = 0; i < 10; ++i)
        big.push_back("m" + std::to_string(i));
    // Four sources, the first of 10 and three of one: 4 x 10 / 2 = 20 > 13, the second algorithm. cc holds m3
    // and a member a does not; ddd holds m4.
    const auto r = import({ big, { "SADD", "bb", "m1" }, { "SADD", "cc", "m3", "zz" }, { "SADD", "ddd", "m4" },
        { "SDIFFSTORE", "eeeee", "a", "bb", "cc", "ddd" }, { "SDIFFSTORE", "a", "a", "bb", "a" } });
    const Lines all = summary(r);
    // 11 + 2 + 3 + 2 requests of the SADDs; then ten SADDs of one (20), and SREM m1, m3, zz (not held: a lookup)
    // and m4; then SDIFFSTORE a a bb a: a from itself, empty: a deleted.
    ASSERT_EQ(all.size(), 18u + 20 + 4 + 1);
    EXPECT_EQ(Lines(all.begin() + 38, all.end()), (Lines { "5 remove", "5 remove", "5 read", "5 remove", "1 delete" }));
    for (std::size_t i = 18; i < 38; i += 2)
        EXPECT_EQ(all[i + 1], "5 add") << i;
}

TEST_F(MonitorCommandsTest, SortedSetStoresAggregateScoresAndCheckTheirArguments) {
    const auto r = import({ { "ZADD", "a", "1", "x", "2", "yy", "3", "zzz" }, { "ZADD", "bb", "10", "yy", "20", "zzz" },
        { "SADD", "ccc", "yy", "w" },
        { "ZUNIONSTORE", "uuuu", "3", "a", "bb", "ccc", "WEIGHTS", "1", "2", "0.5", "AGGREGATE", "max" },
        { "ZINTERSTORE", "iiiii", "2", "a", "bb" }, { "ZDIFFSTORE", "dddddd", "2", "a", "ccc" },
        { "ZUNIONSTORE", "uuuu", "0", "a" }, { "ZUNIONSTORE", "uuuu", "3", "a" },
        { "ZUNIONSTORE", "uuuu", "1", "a", "WEIGHTS", "x" }, { "ZINTERSTORE", "uuuu", "1", "a", "AGGREGATE", "avg" },
        { "ZDIFFSTORE", "uuuu", "1", "a", "WEIGHTS", "1" } });
    const Lines all = summary(r);
    // The sources' 4 + 3 + 3 requests; ZUNIONSTORE: the union's four members as the command meets them (request.h),
    // the sources smallest first (bb {yy zzz}, then ccc {yy w} as it was listed, then a {x yy zzz}), each behind
    // a Size of its count: the members new to the result added (yy, zzz, w, x), the others found there.
    ASSERT_GE(all.size(), 21u);
    EXPECT_EQ(Lines(all.begin() + 10, all.begin() + 21),
        (Lines { "4 command", "4 size", "4 add", "4 add", "4 size", "4 read", "4 add", "4 size", "4 add", "4 read",
            "4 read" }));
    EXPECT_EQ(r[10].valueBytes, 4u); // the union's member count
    EXPECT_TRUE(r[10].elementOp().atHead); // a union's
    EXPECT_EQ(r[10].priorBytes(), 3u); // its largest source, a
    EXPECT_EQ(r[11].valueBytes, 2u); // bb's count
    EXPECT_EQ(r[11].priorBytes(), 7u); // every source's members: 2 + 2 + 3
    EXPECT_EQ(r[14].valueBytes, 2u);
    EXPECT_EQ(r[14].priorBytes(), 0u);
    EXPECT_EQ(r[17].valueBytes, 3u);
    EXPECT_EQ(r[15].valueBytes, kFoundForInsert);
    EXPECT_EQ(r[15].elementBytes, 2u); // yy
    EXPECT_EQ(r[16].elementBytes, 1u); // w
    EXPECT_EQ(r[18].elementBytes, 1u); // x
    // ZINTERSTORE: bb the smaller; yy and zzz looked up in a, both held, then each added.
    EXPECT_EQ(Lines(all.begin() + 21, all.begin() + 27),
        (Lines { "1 read", "1 read", "5 command", "5 add", "5 command", "5 add" }));
    // ZDIFFSTORE dddddd a ccc: a's members looked up in the set ccc until held: x (not), yy (held), zzz (not).
    EXPECT_EQ(Lines(all.begin() + 27, all.end()),
        (Lines { "3 read", "3 read", "3 read", "6 command", "6 add", "6 command", "6 add" }));
    EXPECT_EQ(m_rejects.refused.at("at least 1 input key is needed for 'zunionstore' command"), 1u);
    EXPECT_EQ(m_rejects.refused.at("syntax error"), 3u); // numkeys past the keys, AGGREGATE avg, ZDIFFSTORE WEIGHTS
    EXPECT_EQ(m_rejects.refused.at("weight value is not a float"), 1u);
}

// ZRANGESTORE: a rank range's members as one ZADD (its count sizes the table), a score or member range's one at
// a time, after LIMIT's offset and count; REV walks from the highest (a score range given as max, min).
TEST_F(MonitorCommandsTest, RangeStoresTakeTheRangeFromEitherEnd) {
    const auto r = import(
        { { "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e" }, { "ZRANGESTORE", "rr", "z", "0", "-2" },
            { "ZRANGESTORE", "sss", "z", "(4", "2", "BYSCORE", "REV", "LIMIT", "1", "5" },
            { "ZRANGESTORE", "llll", "z", "[b", "+", "BYLEX", "LIMIT", "0", "2" },
            { "ZRANGESTORE", "rr", "z", "0", "1", "LIMIT", "0", "1" }, { "ZRANGESTORE", "z", "z", "1", "2", "REV" },
            { "ZRANGESTORE", "nnnnn", "missing", "0", "1" }, { "ZRANGESTORE", "rr", "z", "x", "1" },
            { "ZRANGESTORE", "rr", "z", "0", "1", "BYSCORE", "BYLEX" } });
    const Lines all = summary(r);
    // ZADD z: a command and five adds. rr: a, b, c, d in one ZADD. sss: c (3), b (2) from the highest, the first
    // skipped: b. llll: b and c, each a ZADD. z onto itself from the highest: d and c, after z's delete.
    EXPECT_EQ(Lines(all.begin() + 6, all.end()),
        (Lines { "2 command", "2 add", "2 add", "2 add", "2 add", "3 command", "3 add", "4 command", "4 add",
            "4 command", "4 add", "1 delete", "1 command", "1 add", "1 add" }));
    EXPECT_EQ(r[6].valueBytes, 4u);
    EXPECT_EQ(
        m_rejects.refused.at("syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"), 1u);
    EXPECT_EQ(m_rejects.refused.at("value is not an integer or out of range"), 1u);
    EXPECT_EQ(m_rejects.refused.at("syntax error"), 1u); // BYSCORE and BYLEX
}

} // namespace layoutlab::test
