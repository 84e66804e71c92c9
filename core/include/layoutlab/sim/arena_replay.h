// SPDX-License-Identifier: MIT
#pragma once

// What the allocator keeps through a replay, beside what its size classes round away: every change the
// replay makes to the keyspace is played into a model of the allocator's memory, one per threshold, so
// that what deletes, overwrites and expiries leave behind is known at every threshold from one pass.
// Two models sit behind this one interface, chosen by the allocator:
//   - jemalloc: one arena per threshold (SlabReplay, sim/slab_replay.h): slabs kept whole by one live
//     region, the index tables, the thread cache;
//   - memcached: its slab pages per class (MemcachedPageReplay, sim/memcached_page_replay.h): pages never
//     given back, and the page mover.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/results.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace layoutlab {

struct SlabModelOptions {
    bool threadCache = true; // jemalloc: a server's main thread allocates through its tcache
    // memcached: settings.slab_automove_window (30), the page mover's window in runs of one second on the
    // trace's clock; 0: no page moves (a server loaded faster than its clock runs the mover, as `drive`
    // loads one).
    std::uint32_t pageMoverWindow = 30;
    // jemalloc: the bins a server holds before the trace (`drive` reads them from MEMORY MALLOC-STATS once it
    // has drained the server's thread cache); none: the arena starts empty.
    std::vector<JemallocArenaModel::StartBin> startBins;
    // jemalloc: keys whose TTL runs out are freed as the server's expire cycles find them (sim/expire_cycle.h),
    // with the key object each makes (expire.c activeExpireCycleTryExpire); else when the replay drops them.
    bool expireCycle = false;
};

class ArenaReplay : public KeyspaceObserver {
public:
    // After KeyspaceReplay::finish(): what the engine's cron leaves (the index tables settled).
    virtual void settled() = 0;
    // Brings the models up to the replay (a model may defer its work): before usageAt or heldSlabsAt in the
    // middle of a trace.
    virtual void catchUp() { }
    // What the model of `threshold` holds now, with its peaks (nullopt: not one of the run's thresholds).
    virtual std::optional<ArenaUsage> usageAt(std::uint32_t threshold) const = 0;
    // The slabs (pages) each class holds now, classes holding none left out, by class.
    virtual std::vector<HeldSlabs> heldSlabsAt(std::uint32_t threshold) const = 0;
    // Where the model's class table came from: "linked", "emulated" (jemalloc), "memcached".
    virtual std::string tableSource() const = 0;
};

// Whether a slab model covers `allocator`: jemalloc's and memcached's (glibc has none).
Status slabModelCovers(const AllocatorModel& allocator);

// The model for `allocator` (fails when slabModelCovers does), observing `replay` from now on.
Expected<std::unique_ptr<ArenaReplay>> makeArenaReplay(const LayoutModel& layout, const AllocatorModel& allocator,
    const std::vector<std::uint32_t>& thresholds, KeyspaceReplay& replay, const SlabModelOptions& options);

// Bytes of model state per key id and threshold, at most (for the memory check before a run).
std::uint64_t arenaStateBytesPerKey(const AllocatorModel& allocator);

} // namespace layoutlab
