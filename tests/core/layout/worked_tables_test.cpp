// SPDX-License-Identifier: MIT
// Every row of the worked tables in LAYOUTS-valkey-redis.md §7 (datasets/reference/
// valkey-redis-worked-k16.csv): the requested size and class of every allocation, the allocation count,
// the encoding and the expected distinct lines per GET.

#include "csv.h"
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "reference_builds.h"

#include <gtest/gtest.h>

using namespace layoutlab;
using namespace layoutlab::test;

namespace {

TEST(WorkedTables, EveryRowOfTheValkeyAndRedisTables) {
    const auto rows = readCsv(LAYOUTLAB_DATASETS_DIR "/reference/valkey-redis-worked-k16.csv");
    ASSERT_EQ(rows.size(), 132u) << "6 models x 11 value sizes x TTL or not";
    for (const auto& row : rows) {
        const auto setup = referenceBuild(row.at("model"));
        ASSERT_FALSE(setup.layout.empty()) << row.at("model");
        auto layout = parseLayout(setup.layout);
        auto alloc = parseAllocator(setup.allocator);
        ASSERT_TRUE(layout && alloc);
        const KeyShape shape { static_cast<std::uint32_t>(std::stoul(row.at("key_len"))),
            static_cast<std::uint32_t>(std::stoul(row.at("value_len"))), row.at("ttl") == "yes", ValueKind::String };
        const auto threshold = (*layout)->threshold()->value;
        const auto cost = costOf(**layout, **alloc, shape, threshold);
        const std::string where = row.at("model") + " V=" + row.at("value_len") + " ttl=" + row.at("ttl");

        std::vector<std::uint64_t> requested, classes;
        for (std::size_t i = 0; i < cost.layout.allocationCount; ++i) {
            requested.push_back(cost.layout.allocations[i].requestedBytes);
            classes.push_back((*alloc)->usableSize(cost.layout.allocations[i].requestedBytes));
        }
        EXPECT_EQ(requested, splitPlus(row.at("requested"))) << where;
        EXPECT_EQ(classes, splitPlus(row.at("classes"))) << where;
        EXPECT_EQ(cost.layout.allocationCount, std::stoul(row.at("allocations"))) << where;
        EXPECT_EQ(std::string(encodingName(cost.layout.encoding)), row.at("encoding")) << where;
        EXPECT_NEAR(cost.linesTouched, std::stod(row.at("get_lines")), 1e-9) << where;
    }
}

TEST(WorkedTables, TheThresholdChangeAloneDoesNothingAbove44BytesOn81Code) {
    // LAYOUTS-valkey-redis.md §3: with the argv EMBSTR limit still 44, threshold 128 embeds no value of 48+.
    auto t128 = parseLayout("valkey-8.1:threshold=128");
    auto alloc = parseAllocator("jemalloc:quantum=8,page=4096");
    ASSERT_TRUE(t128 && alloc);
    for (std::uint32_t v = 45; v <= 120; ++v)
        EXPECT_FALSE((*t128)->describe({ 16, v, false, ValueKind::String }, 128, **alloc).embedded()) << v;
    EXPECT_TRUE((*t128)->describe({ 16, 44, false, ValueKind::String }, 128, **alloc).embedded());
}

TEST(WorkedTables, Valkey91Embeds96ByteValuesOnlyWithoutTtl) {
    auto layout = parseLayout("valkey-9.1");
    auto alloc = parseAllocator("jemalloc:quantum=8,page=4096");
    ASSERT_TRUE(layout && alloc);
    EXPECT_TRUE((*layout)->describe({ 16, 97, false, ValueKind::String }, 128, **alloc).embedded());
    EXPECT_FALSE((*layout)->describe({ 16, 98, false, ValueKind::String }, 128, **alloc).embedded());
    EXPECT_TRUE((*layout)->describe({ 16, 89, true, ValueKind::String }, 128, **alloc).embedded());
    EXPECT_FALSE((*layout)->describe({ 16, 90, true, ValueKind::String }, 128, **alloc).embedded());
}

TEST(WorkedTables, IntegerValues) {
    auto alloc = parseAllocator("jemalloc:quantum=8,page=4096");
    auto valkey = parseLayout("valkey-9.1");
    auto redis = parseLayout("redis-7.0");
    ASSERT_TRUE(alloc && valkey && redis);
    // Valkey: INT keeps one allocation 16 + 8e + KE, never shared.
    const auto v = (*valkey)->describe({ 16, 3, false, ValueKind::SmallInteger }, 128, **alloc);
    EXPECT_EQ(v.encoding, Encoding::Integer);
    ASSERT_EQ(v.allocationCount, 1);
    EXPECT_EQ(v.allocations[0].requestedBytes, 35u);
    // Redis: 0..9999 are shared (no value allocation), other longs take a 16-byte robj.
    const auto shared = (*redis)->describe({ 16, 3, false, ValueKind::SmallInteger }, 44, **alloc);
    EXPECT_EQ(shared.encoding, Encoding::SharedInteger);
    EXPECT_EQ(shared.allocationCount, 2); // dictEntry + key
    const auto big = (*redis)->describe({ 16, 12, false, ValueKind::Integer }, 44, **alloc);
    EXPECT_EQ(big.encoding, Encoding::Integer);
    EXPECT_EQ(big.allocations[2].requestedBytes, 16u);
    auto noShare = parseLayout("redis-7.0:shared-integers=no");
    EXPECT_EQ((*noShare)->describe({ 16, 3, false, ValueKind::SmallInteger }, 44, **alloc).encoding, Encoding::Integer);
}

TEST(WorkedTables, LongKeysReserveAnExpireField) {
    auto layout = parseLayout("valkey-9.1");
    auto alloc = parseAllocator("jemalloc:quantum=8,page=4096");
    ASSERT_TRUE(layout && alloc);
    // K >= 128 (KEY_SIZE_TO_INCLUDE_EXPIRE_THRESHOLD): robj 16 + 8 + 1 + (3 + 130 + 1).
    const auto k = (*layout)->describe({ 130, 200, false, ValueKind::String }, 128, **alloc);
    EXPECT_EQ(k.encoding, Encoding::Raw);
    EXPECT_EQ(k.allocations[0].requestedBytes, 16u + 8 + 1 + 134);
    // K >= 32 uses an sds type-8 key header: embedded key 1 + 3 + K + 1.
    const auto k40 = (*layout)->describe({ 40, 16, false, ValueKind::String }, 128, **alloc);
    EXPECT_TRUE(k40.embedded());
    EXPECT_EQ(k40.allocations[0].requestedBytes, 8u + 45 + 20);
}

} // namespace
