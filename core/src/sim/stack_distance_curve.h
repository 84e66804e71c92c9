// SPDX-License-Identifier: MIT
#pragma once

// exact-lru over raw object sizes at every budget from one pass over the trace: byte stack distances
// (Mattson et al., "Evaluation techniques for storage hierarchies", 1970), instead of a replay per budget.
//
// An LRU cache that evicts its least recently used keys before each command until it holds at most B
// bytes keeps, after that eviction, the longest run of most recently used keys whose sizes sum to at most
// B, when three things hold: each key has one size for the whole trace, no key is deleted or expires, and
// every GET miss is filled at once (so every GET and SET moves its key to the front at every budget). A key
// the cache gave up then never fits again until it is used: the keys used more recently only grow. So a
// GET hits at B exactly when its byte stack distance (its own size and those of the distinct keys used
// since it last was) is at most B, and one pass gives every budget's hits, fills, evictions and the keys
// it holds at the end.

#include "budget_simulation.h"

#include <optional>
#include <string>

namespace layoutlab {

// Whether a budgeted run may take its budgets from one pass of stack distances: exact-lru over raw object
// sizes, every key (no sampling), every GET miss filled at once. The trace
// itself must keep the rest of the conditions above; simulateByStackDistance() looks as it goes.
bool stackDistancesApply(const SimulationConfig& config);

// The run's points, by threshold then budget, as simulateWithBudget() gives them. nullopt, with `declined`
// saying which request and why, when the trace breaks the conditions (a delete, an expiry, a key whose
// size changes, ADD or REPLACE, a command that rewrites a value in place): its budgets must be replayed.
// The keys each budget holds at the end are the only keyspace: the index tables are those keys' (inserted
// afresh and settled), not what the history under that budget left.
Expected<std::optional<SimulationResult>> simulateByStackDistance(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const std::vector<std::uint64_t>& budgets, TraceReader& trace,
    ProgressSink* progress, std::stop_token stop, std::string& declined);

} // namespace layoutlab
