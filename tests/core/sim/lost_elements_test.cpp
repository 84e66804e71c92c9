// SPDX-License-Identifier: MIT
// Under a budget, an evicted collection key's elements are lost to the server while the trace goes on naming
// them (CollectionReplay::evicted): a removal of a lost one changes nothing, an update of one adds it. The
// replay does not know which elements the trace names, only how many it lost, and draws each request's with
// their share. Against a server followed element by element (each field an identity): the same hashes,
// evicted, then removals and updates of fields drawn as `gen` draws them (uniformly among those the trace
// takes the key to hold), must leave the replay's keys holding what the server's hold, within a few percent.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/trace/random.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace layoutlab {
namespace {

Request fieldRequest(std::uint32_t keyId, ElementAction action) {
    Request r;
    r.op = Op::Element;
    r.keyId = keyId;
    r.keyBytes = 12;
    r.elementBytes = 10;
    r.valueBytes = action == ElementAction::Remove ? 0 : 80; // past hash-max-listpack-value: a table
    r.ttlSeconds = action == ElementAction::Add ? 0 : 80; // the prior value's length
    r.element = ElementOp { CollectionKind::Hash, action }.packed();
    return r;
}

struct Followed {
    std::set<int> traceView; // the fields the trace takes the key to hold
    std::set<int> server; // those the server holds
    bool live = false; // the replay holds the key
};

TEST(LostElements, AnEvictedKeysElementsAreTakenAsTheServerTakesThem) {
    auto layout = parseLayout("valkey-9.1");
    auto allocator = parseAllocator("jemalloc:quantum=8,page=4096");
    ASSERT_TRUE(layout && allocator);
    for (const bool followLost : { true, false }) {
        CollectionReplay replay(**layout, **allocator);
        replay.setElementsMayBeGone(true);
        constexpr std::uint32_t kKeys = 2000;
        std::vector<Followed> keys(kKeys);
        Random random(7);
        // Each key made with 40 fields, then evicted: the server's hold none, the trace's view keeps them.
        for (std::uint32_t k = 0; k < kKeys; ++k) {
            for (int f = 0; f < 40; ++f) {
                ASSERT_TRUE(replay.apply(k, fieldRequest(k, ElementAction::Add), f == 0));
                keys[k].traceView.insert(f);
                keys[k].server.insert(f);
            }
            const std::uint64_t lost = replay.namedByTrace(k);
            EXPECT_EQ(lost, 40u);
            replay.erase(k);
            if (followLost)
                replay.evicted(k, lost);
            keys[k].server.clear();
        }
        // Removals and updates of fields the trace's view holds, and new fields, as gen makes them: the
        // keyspace replay's part done here (a key not held: a removal changes nothing, an update makes it).
        int nextField = 40;
        for (int n = 0; n < 60000; ++n) {
            const auto k = static_cast<std::uint32_t>(random.below(kKeys));
            Followed& key = keys[k];
            const double u = random.uniform();
            ElementAction action = ElementAction::Add;
            int field = nextField;
            if (u < 0.6 && !key.traceView.empty()) {
                auto it = key.traceView.begin();
                std::advance(it, static_cast<std::ptrdiff_t>(random.below(key.traceView.size())));
                field = *it;
                action = u < 0.3 ? ElementAction::Remove : ElementAction::Update;
            } else {
                ++nextField;
            }
            if (action == ElementAction::Remove) {
                key.traceView.erase(field);
                key.server.erase(field);
            } else {
                key.traceView.insert(field);
                key.server.insert(field);
            }
            if (!key.live && action == ElementAction::Remove) {
                replay.lostElementRemoved(k);
                continue;
            }
            auto emptied = replay.apply(k, fieldRequest(k, action), !key.live);
            ASSERT_TRUE(emptied);
            key.live = !*emptied;
            if (*emptied)
                replay.erase(k);
        }
        std::uint64_t server = 0, replayed = 0;
        for (std::uint32_t k = 0; k < kKeys; ++k) {
            server += keys[k].server.size();
            replayed += replay.entries(k);
        }
        const double error
            = (static_cast<double>(replayed) - static_cast<double>(server)) / static_cast<double>(server);
        std::printf("%s lost elements: server %llu fields, replay %llu (%+.2f%%)\n", followLost ? "with" : "without",
            static_cast<unsigned long long>(server), static_cast<unsigned long long>(replayed), 100 * error);
        if (followLost)
            EXPECT_NEAR(error, 0.0, 0.03);
        else
            EXPECT_LT(error, -0.2) << "taking the lost fields as held removes and updates what the server lacks";
    }
}

} // namespace
} // namespace layoutlab
