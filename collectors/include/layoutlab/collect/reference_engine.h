// SPDX-License-Identifier: MIT
#pragma once

// The reference engine: an in-process store that builds a modelled layout for real. Every allocation a
// layout describes for a key is made, at its exact requested size, from a jemalloc arena of its own
// (mallocx with MALLOCX_ARENA and no thread cache, so the arena's statistics count exactly this store);
// the key index is a real hash table with the engine's bucket structure (Valkey hashtable.c buckets of
// seven entries with child buckets, or Redis dict.c slot arrays with chained dictEntry), sized as the
// simulator sizes it. The trace's semantics come from the same KeyspaceReplay the simulator uses, so both
// end with the same keyspace; only the bytes are real here.
//
// What each allocation holds (docs/cache-model.md, "The reference engine"): its requested bytes are
// written in full; a GET follows pointers stored inside the allocations (dictEntry key/value/next,
// robj ptr), compares a 4-byte key tag at the start of the key's allocation, and reads each allocation
// for as many bytes as the layout's GET path says, from lengths stored in the allocations themselves.
//
// Collection keys (hashes, sets, sorted sets, lists) are built as the slab model plays them: each change's
// allocations by class (CollectionReplay::allocations) and its command's argument objects, made and freed in
// the engine's order, so that the arena's stats.active checks the slab model's on collection traces too. Their
// bytes are allocated, not written, and GETs read string keys only.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/results.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/trace_reader.h"

#include <memory>
#include <span>
#include <stop_token>
#include <vector>

namespace layoutlab {

// One small size class ("bin") of the arena, from jemalloc's stats.arenas.<i>.bins.<j>.*.
struct ArenaBinStats {
    std::uint64_t regionBytes = 0; // arenas.bin.<j>.size
    std::uint32_t regionsPerSlab = 0; // arenas.bin.<j>.nregs
    std::uint64_t slabBytes = 0; // arenas.bin.<j>.slab_size
    std::uint64_t currentRegions = 0; // curregs
    std::uint64_t currentSlabs = 0; // curslabs
    double utilisation = 0; // curregs / (curslabs * nregs)
};

struct ArenaStats {
    std::uint64_t allocatedBytes = 0; // small.allocated + large.allocated: this arena's stats.allocated
    std::uint64_t activeBytes = 0; // pactive pages: this arena's stats.active
    std::uint64_t residentBytes = 0; // resident
    std::vector<ArenaBinStats> bins; // bins with at least one slab
};

struct ReferenceEngineConfig {
    LayoutPtr layout;
    AllocatorPtr allocator; // must be the linked jemalloc ("jemalloc")
    std::uint32_t threshold = 0; // the layout's embed threshold (0: its configured one)
    std::uint32_t getSampleSize = 100000; // the trace's most recent GET hits kept for replayGets()
    CollectionLimits collectionLimits; // the compact encodings' limits (config.c's defaults)
};

struct ReferenceLoadReport {
    TraceSummary trace;
    ArenaStats after;
    std::uint64_t allocatedBytes = 0; // stats.allocated of the arena after the load minus before
    std::uint64_t activeBytes = 0; // stats.active of the arena after the load minus before
    std::uint64_t keyBytes = 0; // usable bytes of the keys' own allocations
    std::uint64_t indexBytes = 0; // usable bytes of the index tables (arrays and child buckets)
    std::uint64_t indexChildBuckets = 0; // Valkey: child buckets the real table holds
    std::uint64_t liveKeys = 0;
    double loadSeconds = 0;
};

struct GetReplayReport {
    std::uint64_t gets = 0;
    std::uint64_t hits = 0;
    double nanosecondsPerGet = 0;
    std::uint64_t checksum = 0; // of every byte read, so the reads cannot be optimised away
};

class ReferenceEngine {
public:
    // True when this build links jemalloc with statistics; else false and the reason in `whyNot`.
    static bool available(std::string* whyNot = nullptr);
    // The linked jemalloc's version string (mallctl "version").
    static std::string allocatorVersion();
    static Expected<std::unique_ptr<ReferenceEngine>> create(const ReferenceEngineConfig& config);
    ~ReferenceEngine();
    ReferenceEngine(const ReferenceEngine&) = delete;
    ReferenceEngine& operator=(const ReferenceEngine&) = delete;

    // Replays the trace's writes, deletes and expiries into the store (once per engine).
    Expected<ReferenceLoadReport> load(TraceReader& trace, ProgressSink* progress = nullptr, std::stop_token stop = {});
    // The GET hits to replay after load(): the trace's last `getSampleSize` GET hits, oldest first, or every
    // live key once when the trace has no GETs. The same keys the cache model replays.
    const std::vector<std::uint32_t>& getSample() const;
    // The last `count` live keys in key-id (insertion) order, oldest first: read before the sampled GETs,
    // they leave in the caches what loading the keyspace would (warmKeyCount).
    std::vector<std::uint32_t> lastLiveKeys(std::uint64_t count) const;
    // Looks each key up and reads it along the layout's GET path; timed with the steady clock.
    GetReplayReport replayGets(std::span<const std::uint32_t> keyIds);
    // Deletes every second live key (by key id): what is left shows the slabs' external fragmentation.
    std::uint64_t deleteEveryOtherKey();
    Expected<ArenaStats> arenaStats() const;
    // The layout's specification at the threshold this engine builds.
    std::string layoutSpec() const;

private:
    struct Impl;
    explicit ReferenceEngine(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace layoutlab
