// SPDX-License-Identifier: MIT
#pragma once

// A collection limit swept as the string threshold is: the trace's collection keys replayed under each value
// of one of the engines' limits (hash-max-listpack-entries, set-max-intset-entries, list-max-listpack-size,
// ...), the others the run's, all in the same pass over the trace (CollectionReplay's variants). Strings and
// the keyspace's index tables do not depend on the limits: each value's point is the run's point with that
// value's collections in it.

#include "layoutlab/expected.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/sim/results.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

struct LimitSweep {
    std::string name; // the engine's name for it
    std::vector<std::int64_t> values;
};

// The most values one sweep takes (a key held once per group of values alike: collection_replay.h).
inline constexpr std::size_t kMaxLimitValues = 256;

// "NAME=FIRST:LAST:STEP" or "NAME=V1,V2,...", NAME one of the engines' limits. Errors name field::kLimitSweep.
Expected<LimitSweep> parseLimitSweep(std::string_view text);
// A limit's value as the engines take it (config.c): entries and lengths from 0, list-max-listpack-size -5 to
// -1 (a node's bytes) or 1 to 32767 (its entries, quicklist.c FILL_MAX). An error naming the limit otherwise.
Status checkCollectionLimit(std::string_view name, std::int64_t value);
// Every limit's name, in config.c's order by type.
std::vector<std::string_view> allCollectionLimitNames();
// The limits that differ from config.c's defaults, by name in the same order.
std::vector<std::pair<std::string_view, std::int64_t>> changedCollectionLimits(const CollectionLimits& limits);
// Each limit checked (checkCollectionLimit): the first error.
Status checkCollectionLimits(const CollectionLimits& limits);

// The limits of each swept value: `base` with the swept limit set to it.
std::vector<CollectionLimits> limitVariants(const CollectionLimits& base, const LimitSweep& sweep);

// The sweep's points: `stringPoint` (the run's point before its collections were added to it) with each
// value's collections (`usage[i]` for `sweep.values[i]`).
LimitSweepResult limitSweepResult(const LimitSweep& sweep, const CollectionLimits& base,
    const ThresholdPoint& stringPoint, const std::vector<std::vector<CollectionUsage>>& usage);

// A sweep as a stored run gives it back: the run's point at `threshold` (its collections in it, `run`'s) with
// each value's collections in their place. Values without the point: none.
LimitSweepResult limitSweepOfRun(const LimitSweep& sweep, std::int64_t runValue, std::uint32_t threshold,
    const SimulationResult& run, const std::vector<std::vector<CollectionUsage>>& usage);

} // namespace layoutlab
