// SPDX-License-Identifier: MIT
#pragma once

// The allocator's view of a replay: every change the replay makes to the keyspace is played, in the
// engine's order, into a model of one jemalloc arena per threshold (JemallocArenaModel), so that what a
// trace's deletes, overwrites and expiries leave behind (slabs kept whole by one live region) is known
// at every threshold from one pass.
//
// The order of one write is the reference engine's (collectors/reference), which is the engines' own:
// the command's transient allocations (argv), the key's new allocations in the order the engine makes
// them, the transients freed (freeClientArgv), the key put into the index (a Valkey bucket may need a
// child bucket), then the old allocations freed. A delete frees the key's allocations, then the index
// shrinks if the replay's table model says so. The index tables are allocated where the replay's
// IndexTableModel settles them; Valkey's child buckets follow the same hash of the key id as the
// reference engine's index (SlabIndex).
//
// The replay's calls are logged (an event of 16 bytes each) and played into the arenas a log at a time,
// each arena on its own, so that one arena's state is what the caches hold while its events are played.
// A full log is played on other threads (a sweep's arenas shared among the cores) while the replay fills
// the next one. The arenas are up to date after catchUp() or settled().

#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/sim/arena_replay.h"
#include "layoutlab/sim/expire_cycle.h"
#include "layoutlab/sim/shape_histogram.h"
#include "layoutlab/sim/slab_index.h"

#include <future>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

namespace layoutlab {

class SlabReplay final : public ArenaReplay {
public:
    // options.threadCache: a server's main thread allocates through its tcache; the reference engine does not.
    SlabReplay(const LayoutModel& layout, const JemallocModel& allocator, const std::vector<std::uint32_t>& thresholds,
        const KeyspaceReplay& replay, const SlabModelOptions& options);
    ~SlabReplay() override;
    SlabReplay(const SlabReplay&) = delete;
    SlabReplay& operator=(const SlabReplay&) = delete;

    void stored(std::uint32_t keyId, const KeyState& key, Op op) override;
    // Collection keys too: each change gives the key the regions its allocations take now
    // (CollectionReplay::allocations; slab_collections.cpp).
    bool modelsCollections() const override { return true; }
    // With the command's arguments, as the client's argv holds them until the command ends.
    void elementStored(std::uint32_t keyId, const KeyState& key, const Request& r, bool startsCommand) override;
    // The value's regions move to the new name (db.c renameGenericCommand keeps the object).
    void renamed(std::uint32_t from, std::uint32_t to) override;
    void placed(std::uint32_t keyId, std::uint32_t database) override;
    void removed(std::uint32_t keyId) override;
    // With options.expireCycle: held until a cycle of the server's removes it (ActiveExpireCycle).
    void expired(std::uint32_t keyId, std::uint64_t dueMs) override;
    std::uint64_t clockAtMs(std::uint64_t nowMs) override;
    void prefetch(const Request& ahead) override;
    // The index tables as the engine's cron leaves them (settled), the expired keys the cycles still held
    // removed.
    void settled() override;
    void catchUp() override;
    std::optional<ArenaUsage> usageAt(std::uint32_t threshold) const override;
    std::vector<HeldSlabs> heldSlabsAt(std::uint32_t threshold) const override;
    // Where the size classes came from: "linked" (mallctl of this program's jemalloc) or "emulated".
    std::string tableSource() const override { return m_allocator->isLinked() ? "linked" : "emulated"; }
    // Bytes of model state per key id and threshold, at most (for the memory check before a run): a
    // record (the key's layout id) and a handle per allocation the key has (two for Valkey 8.1 and later,
    // up to five for Redis 7.0 with a TTL; KeyLayout's limit here).
    static constexpr std::uint64_t kStateBytesPerKey
        = (KeyLayout::kMaxAllocations + 1) * sizeof(JemallocArenaModel::Handle);

private:
    struct ThresholdArena;
    struct Event;
    // A database's (keyspace, expires) held buckets (IndexTableModel::heldBuckets); expires kNoTable when there
    // is none.
    struct IndexSizes {
        std::uint64_t keys = 0;
        std::uint64_t expires = 0;
        std::uint32_t database = 0;
        bool operator==(const IndexSizes&) const = default;
    };
    static constexpr std::uint64_t kNoTable = UINT64_MAX;
    // Events and what they refer to, filled by the replay's thread, then played.
    struct Log {
        // Room for a whole log, allocated once; the first `count` are filled. The replay writes them past
        // its caches (SlabReplay::log), since the players read them on other cores.
        std::vector<Event> events;
        std::size_t count = 0;
        // A key whose shape depends on the threshold (a stale expire field): its shape id at each threshold.
        std::vector<std::uint32_t> dependentShapes;
        std::vector<IndexSizes> indexSizes; // each the sizes from one event on
        std::vector<ShapeBound> newShapes; // the shapes given ids while it filled, in id order
        // A collection key's changes (Event::kCollection), each a census (sim/collection_census.h).
        std::vector<std::uint32_t> census;
        void clear();
    };
    const ThresholdArena* arenaOf(std::uint32_t threshold) const;
    // The sizes of a database's index tables the replay holds now, and those of `keyId`'s database as an index
    // into m_filling.indexSizes.
    IndexSizes replayIndexSizes(std::uint32_t database) const;
    std::uint32_t indexSizesNow(std::uint32_t keyId);
    void log(const Event& event);
    // Hands the filled log to the players (after the one they play now) and starts a new one.
    void flush();
    void waitForPlayers();
    // Plays m_played into every arena (on the players' threads).
    void playAll();
    void play(ThresholdArena& t, std::size_t arenaIndex) const;
    void prefetchFor(const ThresholdArena& t, const Event& e, std::uint32_t shapeId) const;
    std::uint32_t shapeIdAt(const Event& e, std::size_t arenaIndex) const;
    void store(ThresholdArena& t, std::uint32_t keyId, bool hasTtl, Op op, std::uint32_t shapeId,
        const IndexSizes& sizes) const;
    // A collection key's change: its allocations now, as counts by class, logged (stored() of a collection
    // key), and played: the regions it gains allocated, then those it lost freed.
    // `r`: the element request that changed it, whose arguments the client's argv holds (none: a TTL's
    // change or a rename, a command of its own).
    void logCollection(std::uint32_t keyId, const KeyState& key, const Request* r, bool startsCommand);
    void storeCollection(ThresholdArena& t, std::uint32_t keyId, std::uint8_t flags, const std::uint32_t* words,
        const IndexSizes& sizes) const;
    // freeClientArgv of the collection command the arena holds the arguments of: the arguments in order,
    // then the argv array.
    static void releaseArguments(ThresholdArena& t);
    // A collection key's regions given to `to`, its index entries moved there (its TTL's with the next change).
    static void moveCollection(ThresholdArena& t, std::uint32_t from, std::uint32_t to);
    // A collection key's regions freed, and its index entries removed (false: it holds none).
    static bool removeCollection(ThresholdArena& t, std::uint32_t keyId);
    // `byCycle`: an expire cycle's removal, which makes and frees the key's name as an object around it.
    void remove(ThresholdArena& t, std::uint32_t keyId, const IndexSizes& sizes, bool byCycle) const;
    // Logs the removals of the expire cycles due by `nowMs`.
    void runExpireCycles(std::uint64_t nowMs);
    void logCycleRemovals(); // m_cycleRemovals, in order
    // A key the cycles still hold, reached by a command: removed first, as db.c expireIfNeeded does.
    void removeIfExpired(std::uint32_t keyId) {
        if (m_expireCycle && m_expireCycle->holds(keyId)) [[unlikely]] {
            m_expireCycle->take(keyId);
            removed(keyId);
        }
    }
    static void syncIndexes(ThresholdArena& t, const IndexSizes& sizes);
    // The id of a shape (with a RawString key's sds buffer), the same at every threshold.
    std::uint32_t shapeIdOf(std::uint64_t packed, std::uint32_t sdsBytes);
    // The shape's layout in `t`, described the first time `t` meets it; returns its id (`shapeId`).
    std::uint32_t layoutIdFor(ThresholdArena& t, std::uint32_t shapeId) const;

    const LayoutModel* m_layout;
    const JemallocModel* m_allocator;
    const KeyspaceReplay* m_replay;
    IndexPolicy m_policy;
    std::vector<std::unique_ptr<ThresholdArena>> m_arenas;
    // The replay's thread: shape ids, and the log it fills.
    ShapeHistogram m_idByShape;
    ThresholdShapeHistogram m_idByRawShape;
    std::uint32_t m_shapeCount = 0;
    Log m_filling;
    // The players': the log they play, and every shape by id - 1 (Log::newShapes appended as they start).
    Log m_played;
    std::vector<ShapeBound> m_shapes;
    std::optional<ActiveExpireCycle> m_expireCycle;
    std::vector<std::uint32_t> m_cycleRemovals; // a run of cycles' removals, before they are logged
    std::future<void> m_playing; // the play of m_played; last, so that it ends first
};

} // namespace layoutlab
