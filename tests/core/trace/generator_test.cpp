// SPDX-License-Identifier: MIT
#include "layoutlab/trace/generator.h"

#include <deque>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

using namespace layoutlab;

namespace {

GeneratorConfig config(std::uint64_t keys, std::optional<std::uint64_t> ops, const char* keySize, const char* valueSize,
    double ttl = 0, double ints = 0, const char* popularity = "uniform", std::uint64_t seed = 7) {
    auto c = makeGeneratorConfig(keys, ops, keySize, valueSize, ttl, ints, 0.8, 0.05, popularity, seed);
    EXPECT_TRUE(c) << c.error().describe();
    return *c;
}

std::vector<Request> drain(SyntheticTrace& trace) {
    std::vector<Request> all(trace.totalRequests());
    std::size_t at = 0;
    while (true) {
        auto n = trace.read(std::span<Request>(all.data() + at, std::min<std::size_t>(1000, all.size() - at)));
        EXPECT_TRUE(n);
        if (!n || *n == 0)
            break;
        at += *n;
    }
    EXPECT_EQ(at, all.size());
    return all;
}

TEST(Generator, SameSeedSameTrace) {
    SyntheticTrace a(config(1000, 5000, "uniform:8:40", "lognormal:4:1:1:4096", 0.2, 0.1));
    SyntheticTrace b(config(1000, 5000, "uniform:8:40", "lognormal:4:1:1:4096", 0.2, 0.1));
    SyntheticTrace c(config(1000, 5000, "uniform:8:40", "lognormal:4:1:1:4096", 0.2, 0.1, "uniform", 8));
    const auto ra = drain(a);
    EXPECT_EQ(ra, drain(b));
    EXPECT_NE(ra, drain(c));
}

TEST(Generator, LoadWritesEveryKeyOnceWithAFixedKeyLength) {
    SyntheticTrace trace(config(500, 3000, "uniform:8:40", "96"));
    const auto all = drain(trace);
    ASSERT_EQ(all.size(), 3500u);
    std::map<std::uint32_t, std::uint32_t> keyLength;
    for (std::uint32_t i = 0; i < 500; ++i) {
        EXPECT_EQ(all[i].op, Op::Set);
        EXPECT_EQ(all[i].keyId, i);
        keyLength[i] = all[i].keyBytes;
        EXPECT_GE(all[i].keyBytes, 8u);
        EXPECT_LE(all[i].keyBytes, 40u);
    }
    std::map<Op, int> ops;
    for (std::size_t i = 500; i < all.size(); ++i) {
        EXPECT_EQ(all[i].keyBytes, keyLength[all[i].keyId]);
        ++ops[all[i].op];
    }
    EXPECT_NEAR(ops[Op::Get] / 3000.0, 0.8, 0.03);
    EXPECT_NEAR(ops[Op::Delete] / 3000.0, 0.05, 0.02);
}

TEST(Generator, IntegerValuesAndTtls) {
    SyntheticTrace trace(config(20000, std::nullopt, "16", "uniform:1:30", 0.25, 0.5));
    int ints = 0, small = 0, ttls = 0;
    for (const auto& r : drain(trace)) {
        if (r.kind != ValueKind::String) {
            ++ints;
            EXPECT_LE(r.valueBytes, 19u);
        }
        if (r.kind == ValueKind::SmallInteger) {
            ++small;
            EXPECT_LE(r.valueBytes, 4u);
        }
        ttls += r.ttlSeconds ? 1 : 0;
    }
    EXPECT_NEAR(ttls / 20000.0, 0.25, 0.02);
    // Half of the values are integers when the drawn length allows one (1..19 of 1..30).
    EXPECT_NEAR(ints / 20000.0, 0.5 * 19 / 30, 0.03);
    EXPECT_GT(small, 0);
}

TEST(Generator, ZipfFavoursLowRanks) {
    SyntheticTrace trace(config(1000, 50000, "16", "16", 0, 0, "zipf:1.1"));
    std::vector<int> hits(1000);
    const auto all = drain(trace);
    for (std::size_t i = 1000; i < all.size(); ++i)
        ++hits[all[i].keyId];
    EXPECT_GT(hits[0], hits[9] * 5);
    EXPECT_GT(hits[9], hits[500]);
}

TEST(Generator, DistributionsStayInRange) {
    Random random(3);
    auto uniform = SizeDistribution::parse("uniform:10:20", "x");
    auto lognormal = SizeDistribution::parse("lognormal:5:2:32:512", "x");
    auto normal = SizeDistribution::parse("normal:100:10", "x");
    ASSERT_TRUE(uniform && lognormal && normal);
    for (int i = 0; i < 10000; ++i) {
        const auto u = uniform->sample(random);
        EXPECT_TRUE(u >= 10 && u <= 20);
        const auto l = lognormal->sample(random);
        EXPECT_TRUE(l >= 32 && l <= 512);
    }
    double sum = 0;
    for (int i = 0; i < 10000; ++i)
        sum += normal->sample(random);
    EXPECT_NEAR(sum / 10000, 100, 1.0);
}

TEST(Generator, HistogramFile) {
    const auto path = std::filesystem::temp_directory_path() / "layoutlab-hist-test.txt";
    std::ofstream(path) << "# size weight\n16 1\n96 3\n";
    auto hist = SizeDistribution::parse("hist:" + path.string(), "x");
    ASSERT_TRUE(hist) << hist.error().describe();
    Random random(1);
    int big = 0;
    for (int i = 0; i < 10000; ++i) {
        const auto s = hist->sample(random);
        EXPECT_TRUE(s == 16 || s == 96);
        big += s == 96;
    }
    EXPECT_NEAR(big / 10000.0, 0.75, 0.02);
    std::ofstream(path) << "16 1\nninety-six 3\n";
    auto bad = SizeDistribution::parse("hist:" + path.string(), "x");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().describe().find("line 2"), std::string::npos) << bad.error().describe();
    std::filesystem::remove(path);
}

TEST(Generator, MalformedDistributionsAreUsageErrors) {
    for (const char* text : { "uniform:5", "uniform:9:3", "foo:1:2", "lognormal:1", "-3", "normal:1:x", "" }) {
        auto d = SizeDistribution::parse(text, "--value-size");
        ASSERT_FALSE(d) << text;
        EXPECT_EQ(d.error().code, ErrorCode::Usage) << text;
        EXPECT_EQ(d.error().field, "--value-size");
    }
    EXPECT_FALSE(makeGeneratorConfig(10, 10, "16", "16", 1.5, 0, 0.5, 0, "uniform", 1));
    EXPECT_FALSE(makeGeneratorConfig(10, 10, "16", "16", 0, 0, 0.8, 0.5, "uniform", 1));
    EXPECT_FALSE(makeGeneratorConfig(10, 10, "16", "16", 0, 0, 0.5, 0, "zipf:0", 1));
    EXPECT_FALSE(makeGeneratorConfig(0, 10, "16", "16", 0, 0, 0.5, 0, "uniform", 1));
}

} // namespace

// Hash workloads (`gen --hash-fields`): each key loaded by one HSET (its start, then a request per field),
// then HGET, HDEL and HSET of single fields, every element request naming the lengths it needs.
namespace {
GeneratorConfig hashConfig(const char* fields, std::optional<std::uint64_t> ops, std::uint64_t seed = 7) {
    GeneratorConfig c = config(200, ops, "16", "uniform:1:30", 0, 0, "uniform", seed);
    EXPECT_TRUE(setCollectionElements(c, CollectionKind::Hash, fields, "uniform:4:12"));
    return c;
}
} // namespace

TEST(Generator, AHashLoadIsOneHsetPerKey) {
    SyntheticTrace trace(hashConfig("uniform:1:20", std::nullopt));
    const auto all = drain(trace);
    std::uint64_t commands = 0, adds = 0;
    std::uint32_t expected = 0, key = UINT32_MAX;
    for (const Request& r : all) {
        ASSERT_EQ(r.op, Op::Element);
        const ElementOp op = r.elementOp();
        EXPECT_EQ(op.collection, CollectionKind::Hash);
        if (op.action == ElementAction::Command) {
            EXPECT_EQ(expected, 0u) << "the last HSET had all its fields";
            ++commands;
            expected = r.valueBytes;
            key = r.keyId;
            EXPECT_GE(r.valueBytes, 1u);
            EXPECT_LE(r.valueBytes, 20u);
        } else {
            ASSERT_EQ(op.action, ElementAction::Add);
            EXPECT_EQ(r.keyId, key);
            EXPECT_GE(r.elementBytes, 4u);
            EXPECT_LE(r.elementBytes, 12u);
            --expected;
            ++adds;
        }
    }
    EXPECT_EQ(commands, 200u);
    EXPECT_EQ(all.size(), commands + adds);
}

TEST(Generator, HashOperationsKnowWhatTheyReplace) {
    SyntheticTrace a(hashConfig("uniform:1:5", 20000));
    SyntheticTrace b(hashConfig("uniform:1:5", 20000));
    const auto all = drain(a);
    EXPECT_EQ(all, drain(b)); // same seed, same trace
    // Every action is there, and a removal or an update names a value length the generator can have set.
    std::map<ElementAction, std::uint64_t> actions;
    for (const Request& r : all) {
        const ElementOp op = r.elementOp();
        ++actions[op.action];
        if (op.action == ElementAction::Update || op.action == ElementAction::Remove)
            EXPECT_LE(r.priorBytes(), 30u);
    }
    EXPECT_GT(actions[ElementAction::Read], 10000u); // 80% HGET
    EXPECT_GT(actions[ElementAction::Remove], 0u);
    EXPECT_GT(actions[ElementAction::Update], 0u);
    EXPECT_GT(actions[ElementAction::Add], 200u);
}

TEST(Generator, TooManyHashFieldsAreRefused) {
    GeneratorConfig c = config(2000000, std::nullopt, "16", "8");
    const auto refused = setCollectionElements(c, CollectionKind::Hash, "1000", "8");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().describe().find("fields in all"), std::string::npos);
    EXPECT_EQ(refused.error().field, field::kHashFields);
}

// Set workloads (`gen --set-members`): one SADD per key (its start with its first member's integer class,
// then an add per member), then SISMEMBER, SREM and SADD of single members; --int-values makes that share of
// the sets integer-only.
TEST(Generator, ASetWorkloadLoadsBySaddAndKeepsItsIntegerSets) {
    GeneratorConfig c = config(300, 20000, "16", "8", 0, 0, "uniform", 11);
    c.intValueFraction = 0.5;
    ASSERT_TRUE(setCollectionElements(c, CollectionKind::Set, "uniform:1:50", "uniform:2:12"));
    SyntheticTrace trace(c);
    const auto all = drain(trace);
    std::map<ElementAction, std::uint64_t> actions;
    std::map<std::uint32_t, bool> integerKeys;
    for (const Request& r : all) {
        ASSERT_EQ(r.op, Op::Element);
        const ElementOp op = r.elementOp();
        EXPECT_EQ(op.collection, CollectionKind::Set);
        ++actions[op.action];
        EXPECT_EQ(r.valueBytes == 0, op.action != ElementAction::Command) << "a member has no value";
        if (op.action == ElementAction::Command)
            continue;
        const bool integer = op.element != IntegerClass::None;
        const auto [it, first] = integerKeys.emplace(r.keyId, integer);
        EXPECT_EQ(it->second, integer) << "a set's members are all integers or none";
        if (integer)
            EXPECT_EQ(op.element, integerClassOf(largestOfDigits(r.elementBytes)));
    }
    EXPECT_EQ(actions[ElementAction::Command], 300u);
    EXPECT_EQ(actions[ElementAction::Update], 0u);
    EXPECT_GT(actions[ElementAction::Read], 15000u); // 90% SISMEMBER, and SADDs of members held
    EXPECT_GT(actions[ElementAction::Remove], 0u);
    std::uint64_t integerSets = 0;
    for (const auto& [key, integer] : integerKeys)
        integerSets += integer;
    EXPECT_GT(integerSets, 100u);
    EXPECT_LT(integerSets, 200u);
    SyntheticTrace again(c);
    EXPECT_EQ(all, drain(again));
}

// Sorted-set workloads (`gen --zset-members`): one ZADD per key (its start with its member count, longest
// member and first member's length, then an add per member with an integer score of --value-size digits),
// then ZSCORE, ZREM and ZADD of single members, a score replaced naming the one it replaces.
TEST(Generator, ASortedSetWorkloadLoadsByZaddWithIntegerScores) {
    GeneratorConfig c = config(300, 20000, "16", "uniform:1:8", 0, 0, "uniform", 5);
    c.getFraction = 0.3;
    c.deleteFraction = 0.2;
    ASSERT_TRUE(setCollectionElements(c, CollectionKind::SortedSet, "uniform:1:200", "uniform:2:70"));
    SyntheticTrace trace(c);
    const auto all = drain(trace);
    std::map<ElementAction, std::uint64_t> actions;
    Request start;
    std::uint32_t longest = 0, left = 0;
    for (const Request& r : all) {
        ASSERT_EQ(r.op, Op::Element);
        const ElementOp op = r.elementOp();
        EXPECT_EQ(op.collection, CollectionKind::SortedSet);
        ++actions[op.action];
        if (op.action == ElementAction::Command) {
            EXPECT_EQ(left, 0u);
            start = r;
            left = r.valueBytes;
            longest = 0;
            continue;
        }
        if (left > 0) { // the load's adds
            ASSERT_EQ(op.action, ElementAction::Add);
            if (left == start.valueBytes)
                EXPECT_EQ(start.priorBytes(), r.elementBytes) << "the first member's length";
            longest = std::max(longest, r.elementBytes);
            if (--left == 0)
                EXPECT_EQ(start.elementBytes, longest) << "the longest member";
        }
        if (op.action == ElementAction::Add || op.action == ElementAction::Update) {
            EXPECT_GE(r.valueBytes, 1u);
            EXPECT_LE(r.valueBytes, 8u);
            EXPECT_EQ(op.value, integerClassOf(largestOfDigits(r.valueBytes)));
        }
        if (op.action == ElementAction::Update || op.action == ElementAction::Remove)
            EXPECT_EQ(op.prior, integerClassOf(largestOfDigits(r.priorBytes())));
    }
    EXPECT_EQ(actions[ElementAction::Command], 300u);
    EXPECT_GT(actions[ElementAction::Read], 4000u);
    EXPECT_GT(actions[ElementAction::Remove], 2000u);
    EXPECT_GT(actions[ElementAction::Update], 0u);
    SyntheticTrace again(c);
    EXPECT_EQ(all, drain(again));
}

// List workloads (`gen --list-elements`): one RPUSH per key (its start with its elements' lengths summed),
// then LINDEX of the head, LPOP and RPUSH of one element: pops at the head of what was pushed at the tail, in
// order, and never more than there are.
TEST(Generator, AListWorkloadPushesAtTheTailAndPopsTheHead) {
    GeneratorConfig c = config(100, 30000, "16", "8", 0, 0, "uniform", 3);
    c.getFraction = 0.2;
    c.deleteFraction = 0.5;
    ASSERT_TRUE(setCollectionElements(c, CollectionKind::List, "uniform:1:40", "uniform:1:30"));
    SyntheticTrace trace(c);
    const auto all = drain(trace);
    std::map<std::uint32_t, std::deque<std::uint32_t>> lists; // each key's element lengths, head first
    std::map<ElementAction, std::uint64_t> actions;
    Request start;
    std::uint64_t summed = 0, left = 0;
    for (const Request& r : all) {
        ASSERT_EQ(r.op, Op::Element);
        const ElementOp op = r.elementOp();
        EXPECT_EQ(op.collection, CollectionKind::List);
        ++actions[op.action];
        auto& list = lists[r.keyId];
        switch (op.action) {
        case ElementAction::Command:
            start = r;
            left = r.valueBytes;
            summed = 0;
            break;
        case ElementAction::Add:
            EXPECT_FALSE(op.atHead) << "RPUSH";
            list.push_back(r.elementBytes);
            summed += r.elementBytes;
            if (left > 0 && --left == 0)
                EXPECT_EQ(start.elementBytes, summed) << "the load's lengths summed";
            break;
        case ElementAction::Remove:
            EXPECT_TRUE(op.atHead) << "LPOP";
            ASSERT_FALSE(list.empty()) << "a pop of an empty list";
            EXPECT_EQ(r.elementBytes, list.front()) << "the head, as it was pushed";
            list.pop_front();
            break;
        default:
            EXPECT_EQ(op.action, ElementAction::Read);
            break;
        }
    }
    EXPECT_EQ(actions[ElementAction::Command], 100u);
    EXPECT_GT(actions[ElementAction::Remove], 10000u);
    EXPECT_GT(actions[ElementAction::Read], 4000u);
}

TEST(Generator, OnlyOneCollectionTypeAndItsOwnFieldsAreNamed) {
    GeneratorConfig c = config(10, std::nullopt, "16", "8");
    const auto refused = setCollectionElements(c, CollectionKind::List, "0x", "8");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().field, field::kListElements);
    const auto badSize = setCollectionElements(c, CollectionKind::SortedSet, "5", "nope");
    ASSERT_FALSE(badSize);
    EXPECT_EQ(badSize.error().field, field::kMemberSize);
}
