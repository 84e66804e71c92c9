// SPDX-License-Identifier: MIT
#pragma once

// `layoutlab advise`: which threshold to run a trace at, weighing memory against cache misses.
//
// Each point of a sweep costs
//     weightMemory × (bytes per key / fewest bytes per key − 1)
//   + weightMisses × (misses per GET / fewest misses per GET − 1)
// i.e. the fraction by which it exceeds the best point on each axis. The cheapest point is advised;
// ties go to fewer bytes per key, then to the lower threshold. The misses are those of one cache level
// of the cache model (the last level by default). Without the cache model, lines touched per GET
// stand in for them.

#include "layoutlab/expected.h"
#include "layoutlab/sim/results.h"

#include <optional>
#include <string>

namespace layoutlab {

struct AdviceWeights {
    double memory = 1.0;
    double misses = 1.0;
    // The cache level whose misses count: 0 = L1, and so on; nullopt = the last level.
    std::optional<std::size_t> missLevel;
};

struct AdvicePoint {
    std::uint32_t threshold = 0;
    double bytesPerKey = 0;
    double missesPerGet = 0; // or lines touched per GET without the cache model
    double memoryCost = 0; // bytesPerKey / fewest - 1
    double missCost = 0; // missesPerGet / fewest - 1
    double cost = 0; // the weighted sum
};

struct Advice {
    std::vector<AdvicePoint> points; // in the sweep's order
    std::size_t chosen = 0; // index into points
    std::size_t leanest = 0; // the fewest bytes per key: leanestPoint(), the sweep's best threshold
    std::size_t fewestMisses = 0; // the first point with the fewest misses (or lines) per GET
    std::string accessMetric; // "llc_misses_per_get", "l1_misses_per_get", ... or "lines_touched_per_get"
};

// The weights' own check: non-negative and not both zero (a usage error naming --weight-memory).
Status checkWeights(const AdviceWeights& weights);

// Fails when the result has no points, the weights fail checkWeights, or `missLevel` is not a level of
// the cache model.
Expected<Advice> advise(const SimulationResult& result, const AdviceWeights& weights);

} // namespace layoutlab
