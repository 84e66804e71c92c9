// SPDX-License-Identifier: MIT
// memcached items and Dalli/Rails framings: every row of the worked tables in LAYOUTS-memcached-dalli.md
// §9 and of the measured table (datasets/reference/memcached-*.csv).

#include "csv.h"
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/layout/memcached_layout.h"
#include "layoutlab/layout/value_framing.h"

#include <gtest/gtest.h>

using namespace layoutlab;
using namespace layoutlab::test;

namespace {

std::vector<std::uint64_t> chunkList(const KeyLayout& layout, const AllocatorModel& alloc) {
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < layout.allocationCount; ++i)
        for (std::uint32_t c = 0; c < layout.allocations[i].count; ++c)
            out.push_back(alloc.usableSize(layout.allocations[i].requestedBytes));
    return out;
}

TEST(Framing, MarshalLengthEncoding) {
    EXPECT_EQ(marshalLengthBytes(0), 1u);
    EXPECT_EQ(marshalLengthBytes(122), 1u);
    EXPECT_EQ(marshalLengthBytes(123), 2u);
    EXPECT_EQ(marshalLengthBytes(255), 2u);
    EXPECT_EQ(marshalLengthBytes(256), 3u);
    EXPECT_EQ(marshalLengthBytes(65535), 3u);
    EXPECT_EQ(marshalLengthBytes(65536), 4u);
    EXPECT_EQ(marshalLengthBytes(16777216), 5u);
    // LAYOUTS-memcached-dalli.md §7: V = 1000 -> UTF-8 1012, binary 1006.
    EXPECT_EQ(frameValue(Framing::MarshalUtf8, 1000).storedBytes, 1012u);
    EXPECT_EQ(frameValue(Framing::MarshalBinary, 1000).storedBytes, 1006u);
    // Rails 7.1 with a 20-byte version: V = 16 -> 39 bytes over V with Dalli Marshal (§8 table).
    EXPECT_EQ(frameValue(Framing::Rails71, 16, 20).storedBytes - 16, 39u);
}

TEST(Framing, EveryRowOfTheWorkedTables) {
    const auto rows = readCsv(LAYOUTLAB_DATASETS_DIR "/reference/memcached-framing-worked.csv");
    ASSERT_EQ(rows.size(), 180u);
    auto alloc = parseAllocator("memcached");
    ASSERT_TRUE(alloc);
    for (const auto& row : rows) {
        auto layout = parseLayout("memcached-1.6:framing=" + row.at("framing"));
        ASSERT_TRUE(layout) << layout.error().describe();
        const auto k = static_cast<std::uint32_t>(std::stoul(row.at("key_len")));
        const auto v = static_cast<std::uint32_t>(std::stoul(row.at("value_len")));
        const auto framing = parseFraming(row.at("framing"));
        const auto framed = frameValue(*framing, v);
        const std::string where = row.at("framing") + " K=" + row.at("key_len") + " V=" + row.at("value_len");
        EXPECT_EQ(framed.storedBytes, std::stoull(row.at("stored_len"))) << where;
        const auto& mc = dynamic_cast<const MemcachedLayout&>(**layout);
        const auto total = mc.itemTotalBytes(k, framed.storedBytes, framed.nonZeroFlags);
        EXPECT_EQ(total, std::stoull(row.at("item_total"))) << where;
        const auto kl = mc.describe({ k, v, false, ValueKind::String }, 0, **alloc);
        const auto chunks = chunkList(kl, **alloc);
        EXPECT_EQ(chunks, splitPlus(row.at("chunks"))) << where;
        std::uint64_t sum = 0;
        for (auto c : chunks)
            sum += c;
        EXPECT_EQ(sum - total, std::stoull(row.at("waste"))) << where;
    }
}

TEST(Framing, EveryMeasuredMemcachedRow) {
    const auto rows = readCsv(LAYOUTLAB_DATASETS_DIR "/reference/memcached-1.6.18-k16.csv");
    ASSERT_GE(rows.size(), 34u);
    for (const auto& row : rows) {
        const bool flags = row.at("flags") != "0";
        const std::string itemMax = row.at("item_size_max");
        auto alloc = parseAllocator("memcached:item-max=" + itemMax);
        auto layout = parseLayout(flags ? "memcached-1.6:framing=raw-utf8" : "memcached-1.6");
        ASSERT_TRUE(alloc && layout);
        const auto k = static_cast<std::uint32_t>(std::stoul(row.at("key_len")));
        const auto v = static_cast<std::uint32_t>(std::stoul(row.at("value_len")));
        const auto kl = (*layout)->describe({ k, v, false, ValueKind::String }, 0, **alloc);
        const std::string where = "K=" + row.at("key_len") + " V=" + row.at("value_len") + " F=" + row.at("flags");
        ASSERT_TRUE(kl.stored) << where;
        const auto& mc = dynamic_cast<const MemcachedLayout&>(**layout);
        EXPECT_EQ(mc.itemTotalBytes(k, v, flags), static_cast<std::uint64_t>(std::stod(row.at("bytes_stat_per_item"))))
            << where;
        std::uint64_t slabBytes = 0;
        for (auto c : chunkList(kl, **alloc))
            slabBytes += c;
        EXPECT_EQ(slabBytes, static_cast<std::uint64_t>(std::stod(row.at("used_chunk_bytes_per_item")))) << where;
        if (kl.encoding == Encoding::Item)
            EXPECT_EQ(chunkList(kl, **alloc).front(), std::stoull(row.at("chunk_size"))) << where;
    }
}

TEST(Framing, ItemsLargerThanItemSizeMaxAreRefused) {
    auto alloc = parseAllocator("memcached");
    auto layout = parseLayout("memcached-1.6");
    // V <= 1048576 - (K + 59) for K = 16: 1 048 501 fits, 1 048 502 does not.
    EXPECT_TRUE((*layout)->describe({ 16, 1048501, false, ValueKind::String }, 0, **alloc).stored);
    EXPECT_FALSE((*layout)->describe({ 16, 1048502, false, ValueKind::String }, 0, **alloc).stored);
}

} // namespace
