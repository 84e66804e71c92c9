// SPDX-License-Identifier: MIT
#pragma once

// One path from what a front end asks for to a runnable job. The CLI (`sim`, `sweep`, `advise`, `batch`)
// and the GUI's sweep page fill a SimulationRequest with what the user gave, in the user's words (a
// layout spec, a threshold range as typed), and buildSimulationJob checks it and builds the job, with
// errors that name the request's fields (field::kThresholds, field::kCacheGeometry, ...), never a
// front end's flags or labels.

#include "layoutlab/store/jobs.h"

#include <optional>
#include <string>

namespace layoutlab {

// The deepest GET pipeline a stall prediction takes (redis-benchmark's -P goes higher; no server batches more
// than prefetch-batch-max-size's 128).
inline constexpr std::uint32_t kMaxGetPipeline = 1024;
// The most keys a server's prefetch batch takes: config.c createIntConfig("prefetch-batch-max-size", ...,
// 0, 128, ...).
inline constexpr std::uint32_t kMaxPrefetchBatch = 128;

struct SimulationRequest {
    std::string tracePath;
    ImportOptions importOptions;
    std::string layout; // a layout spec (valkey-9.1, valkey:threshold=128, ...) or "file:PATH"
    std::string allocator; // an allocator spec; empty: the layout's engine default
    // The thresholds: one (`threshold`), a list or range as typed ("64,128", "32:512:16"), or neither (the
    // layout's own; none at all for a layout without a threshold).
    std::optional<std::uint32_t> threshold;
    std::string thresholds;
    // A layout without an embed threshold (memcached) given `thresholds`: a usage error tagged
    // kTagNoThreshold (false), or one run with no threshold, of kind "sim" (true: a batch plan or the GUI
    // sweeping several layouts at once).
    bool layoutWithoutThresholdRunsOnce = false;
    // Whether to also evaluate the layout's own threshold, the setting its engine ships with, when
    // `thresholds` lack it: always (a batch summary and a sweep of several layouts show each layout there
    // beside its leanest), or only when it lies between the first and last threshold given (the GUI: a
    // sweep typed as 16:48:16 stays that range).
    enum class Shipped { No, Always, WithinRange };
    Shipped withShippedThreshold = Shipped::No;
    bool cache = false; // the cache model, with this machine's geometry unless `cacheGeometry` is given
    std::string cacheGeometry; // "32K:8,512K:8,32M:16"; implies `cache`
    std::string startRegions; // "40:41": SimulationConfig::startRegions, for the cache model
    // For the GET-stall prediction: the GETs a client sends per round trip, and the server's prefetch batch
    // (prefetch-batch-max-size; unset: the layout's engine's own, LayoutModel::queuedKeyPrefetchBatch).
    std::uint32_t getPipeline = 1;
    std::optional<std::uint32_t> prefetchBatch;
    bool slabs = false; // the slab model: what the allocator keeps active (SimulationConfig::slabs)
    bool slabThreadCache = true; // with `slabs`: a thread cache in front of the arena, as in a server
    // With `slabs` or a memory limit on memcached: the page mover's window (SlabModelOptions::pageMoverWindow,
    // EvictionOptions::pageMoverWindow; 0: no moves).
    std::uint32_t pageMoverWindow = SlabModelOptions {}.pageMoverWindow;
    // Samples of a timeline along the trace (SimulationConfig::timelineSamples; 0: none). Implies `slabs`.
    std::uint32_t timeline = 0;
    // With `slabs` and an allocator the slab model does not cover (memcached's): a usage error (false), or
    // the run without it (true: several layouts side by side, some of them memcached's).
    bool slabsWhereCovered = false;
    // A memory budget (SimulationConfig::eviction): maxmemory as the server reads it ("64mb"; empty: none;
    // several as parseBudgets reads them, "16mb:1gb:32" or "64mb,128mb": SimulationConfig::budgets),
    // the policy (the server's default: noeviction), its settings, and the server's own used_memory before
    // the trace (`baseMemory`, as typed; empty: none counted).
    // The collections' limits (SimulationConfig::collectionLimits), and one of them swept in the same pass:
    // "hash-max-listpack-entries=64:1024:64" or "NAME=V1,V2" (empty: none; sim/limit_sweep.h).
    CollectionLimits collectionLimits;
    std::string limitSweep;
    std::string maxmemory;
    // memcached's budget instead (-m, read as maxmemory is: "64mb"): its own eviction, no policy.
    std::string memoryLimit;
    std::string evictionPolicy = "noeviction";
    std::uint32_t maxmemorySamples = 5;
    std::uint32_t lfuLogFactor = 10;
    std::uint32_t lfuDecayTime = 1;
    std::string baseMemory;
    std::uint64_t evictionSeed = 1;
    bool rawSizes = false; // EvictionOptions::rawSizes
    double budgetSampleRate = 1.0; // SimulationConfig::budgetSampleRate
    // Look-aside filling (unset: off); `fillBatch` requests' misses are filled after them (1: each right
    // after its miss).
    std::optional<bool> fillOnMiss;
    std::uint32_t fillBatch = 1;
    std::string kind = "sweep"; // sim, sweep or advise, as stored with the run
    std::string toolVersion;
    std::string extraParametersJson = "{}";
    std::string traceContentHash;
    std::string batchCell;
};

Expected<SimulationJob> buildSimulationJob(const SimulationRequest& request);

} // namespace layoutlab
