// SPDX-License-Identifier: MIT
#pragma once

// `layoutlab advise`: which threshold to run a trace at, weighing memory against cache misses.
//
// Each point of a sweep costs
//     weightMemory × (bytes per key / fewest bytes per key − 1)       (active bytes with the slab model)
//   + weightMisses × (misses per GET / fewest misses per GET − 1)
// i.e. the fraction by which it exceeds the best point on each axis. The cheapest point is advised;
// equal costs go to fewer bytes per key, then to the lower threshold. The misses are those of one cache
// level of the cache model (the last level by default). Without the cache model, lines touched per GET
// stand in for them.
//
// Points whose bytes per key and misses per GET both differ from the advised point's by less than the
// model's stated uncertainty (ModelUncertainty) tie with it: the model cannot tell them apart. When the
// layout's own threshold (the setting its engine ships with) is among them, it is advised instead, since
// nothing the model can show would repay changing it; the advice says so either way.

#include "layoutlab/expected.h"
#include "layoutlab/sim/results.h"
#include "layoutlab/sim/simulation.h"

#include <optional>
#include <string>

namespace layoutlab {

struct AdviceWeights {
    double memory = 1.0;
    double misses = 1.0;
    // The cache level whose misses count: 0 = L1, and so on; nullopt = the last level.
    std::optional<std::size_t> missLevel;
};

// How far the model's figures can be trusted, as the validation measured them; differences smaller than
// this are ties.
struct ModelUncertainty {
    // Bytes per key: each threshold of a Valkey build measured within 0.08% of its prediction, and every
    // memcached setting exactly (docs/validation.md, "Measured curves"): a difference between two points
    // is known to about twice that.
    double bytesPerKey = 0.002; // a fraction of the larger value
    // Active bytes per key (the slab model): it equals the reference engine's arena to the byte, and runs
    // 0.6-1.3% over real servers' Δallocator_active, by an offset each server starts with rather than one
    // of the threshold (docs/validation.md, "Fragmentation"): a difference between two points to 0.5%.
    double activeBytesPerKey = 0.005;
    // Misses per GET of a cache level: kMissesPerGetUncertainty.
    double missesPerGet = kMissesPerGetUncertainty; // a fraction of the larger value
    // ... and never finer than this many per GET: where the last level holds the keyspace, both sides
    // count almost none (0.000 against 0.000 on 1,000,000 keys in a 300 MiB LLC), and ratios of such
    // counts mean nothing.
    double missesPerGetFloor = 0.01;
    // Lines touched per GET follow from the layout alone: exact.
    double linesPerGet = 0.0;
};

struct AdvicePoint {
    std::uint32_t threshold = 0;
    double bytesPerKey = 0; // the memory axis: Advice::memoryMetric
    double usableBytesPerKey = 0; // what the size classes hand out (used_memory), whatever the axis
    double missesPerGet = 0; // or lines touched per GET without the cache model
    double memoryCost = 0; // bytesPerKey / fewest - 1
    double missCost = 0; // missesPerGet / fewest - 1
    double cost = 0; // the weighted sum
    bool tiesWithAdvised = false; // within the model's uncertainty of the advised point on both axes
};

struct Advice {
    std::vector<AdvicePoint> points; // in the sweep's order
    std::size_t chosen = 0; // index into points
    // The memory axis: "usable_bytes_per_key", or with the slab model "active_bytes_per_key" (the pages the
    // allocator keeps: what the machine pays after deletes and overwrites).
    std::string memoryMetric = "usable_bytes_per_key";
    std::size_t leanest = 0; // the fewest bytes per key on the memory axis (usable: the sweep's best threshold)
    std::size_t leanestByUsable = 0; // the sweep's best threshold, leanestPoint(): it may differ by active bytes
    std::size_t fewestMisses = 0; // the first point with the fewest misses (or lines) per GET
    std::string accessMetric; // "llc_misses_per_get", "l1_misses_per_get", ... or "lines_touched_per_get"
    ModelUncertainty uncertainty;
    std::size_t cheapest = 0; // the lowest cost; `chosen` differs when the shipped threshold ties with it
    std::optional<std::uint32_t> shippedThreshold; // the layout's own, when the sweep has it
    std::size_t ties() const; // points tied with the advised one, itself included
};

// The weights' own check: non-negative and not both zero (a usage error naming --weight-memory).
Status checkWeights(const AdviceWeights& weights);

// Fails when the result has no points, the weights fail checkWeights, or `missLevel` is not a level of
// the cache model.
Expected<Advice> advise(
    const SimulationResult& result, const AdviceWeights& weights, const ModelUncertainty& uncertainty = {});

} // namespace layoutlab
