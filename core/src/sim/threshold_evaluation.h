// SPDX-License-Identifier: MIT
#pragma once

// The per-threshold half of simulate(): every threshold's point from the final keyspace's shape
// histograms, at a cost that does not grow with the number of thresholds.

#include "layoutlab/sim/index_table_model.h"
#include "layoutlab/sim/shape_histogram.h"
#include "layoutlab/sim/simulation.h"

#include <stop_token>

namespace layoutlab {

Expected<std::vector<ThresholdPoint>> evaluateThresholds(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const std::vector<ShapeHistogram::Entry>& keyspace,
    const std::vector<ShapeHistogram::Entry>& gets,
    const std::vector<ThresholdShapeHistogram::Entry>& thresholdKeyspace,
    const std::vector<ThresholdShapeHistogram::Entry>& thresholdGets, const std::vector<IndexFootprint>& indexes,
    std::stop_token stop);

// A point's per-key figures (bytes, allocations, pointers per key, embedded share) from its sums.
void setPerKeyFigures(ThresholdPoint& point);
// The slab model's slabs per class beside the point's classes (a class can hold slabs and no live
// allocation: memcached keeps its pages, jemalloc a slab with only cached regions).
void addHeldSlabs(
    ThresholdPoint& point, const std::vector<HeldSlabs>& held, const std::vector<AllocatorClass>& allocatorClasses);
// Adds the collection keys (the same at every threshold) to each point's keys and bytes.
void addCollections(std::vector<ThresholdPoint>& points, const std::vector<CollectionUsage>& collections);

} // namespace layoutlab
