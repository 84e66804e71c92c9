// SPDX-License-Identifier: MIT
#pragma once

// `layoutlab advise --param NAME=VALUES`: which value of a collection limit to run a trace at, weighing the
// keyspace's bytes per key against the lines each lookup of the limited type's elements reads (HGET,
// SISMEMBER, ZSCORE, LINDEX: CollectionUsage::lookupLines). A compact encoding saves bytes and scans its
// entries; a table costs bytes and reads a bucket and an entry: the trade the limits set.
//
// Each value costs, as a threshold does in advice.h,
//     weightMemory × (bytes per key / fewest bytes per key − 1)
//   + weightLookups × (lines per lookup / fewest lines per lookup − 1).
// Values whose bytes per key differ from the cheapest's by less than the model's uncertainty and whose lines
// per lookup are equal tie with it; the engine's default among them is advised, since nothing the model can
// show would repay changing it.

#include "layoutlab/expected.h"
#include "layoutlab/report/advice.h"
#include "layoutlab/sim/results.h"

#include <string>
#include <vector>

namespace layoutlab {

struct LimitAdvicePoint {
    std::int64_t value = 0;
    double bytesPerKey = 0; // usable bytes per key of the whole keyspace at this value
    double lookupLines = 0; // lines per lookup of an element of the limit's type
    double memoryCost = 0;
    double lookupCost = 0;
    double cost = 0;
    bool tiesWithAdvised = false;
};

struct LimitAdvice {
    std::string limit; // the engine's name
    std::string type; // hash, set, zset, list: whose elements the lookups read
    std::string lookup; // HGET, SISMEMBER, ZSCORE, LINDEX
    std::int64_t runValue = 0; // the run's own value
    std::int64_t defaultValue = 0; // what the engine ships with
    std::vector<LimitAdvicePoint> points; // in the sweep's order
    std::size_t chosen = 0;
    std::size_t cheapest = 0;
    std::size_t leanest = 0; // the fewest bytes per key
    std::size_t fewestLines = 0; // the fewest lines per lookup
    double bytesPerKeyUncertainty = 0;
};

// Collections' bytes per key: every type and encoding measured within 0.22% of real servers (docs/validation.md,
// "drive of collection traces and RDB files"); a difference between two values is known to about twice that.
inline constexpr double kCollectionBytesPerKeyUncertainty = 0.005;

// The limit's type ("hash" for hash-max-listpack-entries) and its lookup's command.
std::string limitType(std::string_view limit);
std::string_view lookupCommand(std::string_view type);
// Lines per lookup of the type's elements over the collections given (0: none of that type).
double lookupLinesPerElement(const std::vector<CollectionUsage>& collections, std::string_view type);

// Fails when the sweep has no values, the weights fail checkWeights, or the trace holds no key of the limit's
// type (nothing for the limit to change).
Expected<LimitAdvice> adviseLimit(const LimitSweepResult& sweep, const AdviceWeights& weights,
    double bytesPerKeyUncertainty = kCollectionBytesPerKeyUncertainty);

} // namespace layoutlab
