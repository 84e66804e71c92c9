// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/layout/valkey_layout.h"

#include <gtest/gtest.h>

using namespace layoutlab;

TEST(LayoutRegistry, EverySpecRoundTrips) {
    for (const auto& info : listLayouts()) {
        auto layout = parseLayout(info.spec);
        ASSERT_TRUE(layout) << info.spec << ": " << layout.error().describe();
        EXPECT_EQ((*layout)->spec(), info.spec);
    }
}

// A spec parses back to the same layout, the traits it does not print included (ValkeyParams' collections and
// index tables, which its name brings): what a run stores or a snapshot's layout re-parses is what ran.
TEST(LayoutRegistry, ValkeySpecsParseBackToTheSameLine) {
    for (const char* text :
        { "valkey-8.1", "valkey-8.1:key-header=as-sent", "valkey-8.1:threshold=128,embstr-limit=108", "valkey-9.0",
            "valkey-9.1", "valkey-9.1:threshold=64", "valkey" }) {
        auto layout = parseLayout(text);
        ASSERT_TRUE(layout) << text;
        auto again = parseLayout((*layout)->spec());
        ASSERT_TRUE(again) << (*layout)->spec();
        const auto* first = dynamic_cast<const ValkeyLayout*>(layout->get());
        const auto* second = dynamic_cast<const ValkeyLayout*>(again->get());
        ASSERT_TRUE(first && second) << text;
        EXPECT_TRUE(first->params() == second->params()) << text << " -> " << (*layout)->spec();
    }
}

TEST(LayoutRegistry, PresetsCarryTheirReleaseParameters) {
    EXPECT_EQ((*parseLayout("valkey-8.1"))->spec(),
        "valkey-8.1:threshold=64,header=16,embstr-limit=44,key-sizing=legacy,key-header=smallest,expire-field=kept");
    EXPECT_EQ((*parseLayout("valkey-9.1"))->spec(),
        "valkey:threshold=128,header=8,embstr-limit=auto,key-sizing=exact,key-header=smallest,expire-field=kept");
    // The development tree of 2025-01-27 embeds keys with the header they arrived with.
    EXPECT_EQ((*parseLayout("valkey-8.1:key-header=as-sent"))->spec(),
        "valkey-8.1:threshold=64,header=16,embstr-limit=44,key-sizing=legacy,key-header=as-sent,expire-field=kept");
    EXPECT_EQ((*parseLayout("valkey-8.0"))->spec(), "valkey-8.0:embstr-limit=44,shared-integers=yes");
    EXPECT_EQ((*parseLayout("valkey:threshold=96,header=16"))->spec(),
        "valkey:threshold=96,header=16,embstr-limit=auto,key-sizing=exact,key-header=smallest,expire-field=kept");
}

TEST(LayoutRegistry, BadSpecsAreUsageErrorsNamingTheProblem) {
    struct Case {
        const char* spec;
        const char* mentions;
    };
    for (const auto& c : { Case { "valkyrie", "unknown layout" }, Case { "valkey:colour=blue", "colour" },
             Case { "valkey:header=12", "header" }, Case { "valkey:threshold=5000", "out of range" },
             Case { "valkey:embstr-limit=abc", "embstr-limit" }, Case { "valkey:threshold", "KEY=VALUE" },
             Case { "memcached-1.6:framing=json", "unknown framing" },
             Case { "redis-7.0:shared-integers=maybe", "yes or no" },
             Case { "valkey-8.1:key-header=long", "'smallest' or 'as-sent'" },
             Case { "valkey-8.1:expire-field=sometimes", "'kept' or 'dropped'" },
             Case { "valkey-8.0:threshold=128", "threshold" } }) {
        auto layout = parseLayout(c.spec);
        ASSERT_FALSE(layout) << c.spec;
        EXPECT_EQ(layout.error().code, ErrorCode::Usage) << c.spec;
        EXPECT_NE(layout.error().describe().find(c.mentions), std::string::npos)
            << c.spec << " -> " << layout.error().describe();
    }
}

TEST(LayoutRegistry, LayoutsRefuseAllocatorsTheirEngineCannotUse) {
    auto memcached = parseLayout("memcached-1.6");
    auto valkey = parseLayout("valkey");
    auto slabs = parseAllocator("memcached");
    auto jemalloc = parseAllocator("jemalloc:quantum=16");
    EXPECT_FALSE((*memcached)->checkAllocator(**jemalloc));
    EXPECT_FALSE((*valkey)->checkAllocator(**slabs));
    EXPECT_TRUE((*valkey)->checkAllocator(**jemalloc));
    EXPECT_FALSE((*memcached)->threshold().has_value());
}

namespace {

// Stored runs keep canonical specs; they are shown by the preset they are, or the nearest preset with the
// parameters that differ.
TEST(PresetName, NamesEveryPresetAndItsVariants) {
    using layoutlab::parseLayout;
    using layoutlab::presetName;
    for (const char* name : { "valkey-8.0", "valkey-8.1", "valkey-9.0", "valkey-9.1", "redis-7.0", "memcached-1.6" })
        EXPECT_EQ(presetName((*parseLayout(name))->spec()), name);
    EXPECT_EQ(presetName((*parseLayout("valkey"))->spec()), "valkey-9.1"); // the versioned name first
    EXPECT_EQ(presetName((*parseLayout("valkey-8.1:threshold=128"))->spec()), "valkey-8.1:threshold=128");
    EXPECT_EQ(presetName((*parseLayout("redis-7.0:embstr-limit=64"))->spec()), "redis-7.0:embstr-limit=64");
    EXPECT_EQ(presetName("something:else=1"), "something:else=1");
}

} // namespace
