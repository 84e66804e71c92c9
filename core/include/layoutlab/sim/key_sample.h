// SPDX-License-Identifier: MIT
#pragma once

// Spatial sampling of a keyspace, as SHARDS does it (Waldspurger et al., FAST '15): a key is in the sample
// when a hash of it falls under rate x 2^64, so a sampled key keeps every one of its requests, and a cache
// of B bytes over the whole trace behaves as a cache of rate x B over the sample. A budget's replay over
// the sample costs `rate` of one over the trace: a miss-ratio curve of many budgets in the time of a few
// replays. Sampled key ids are renumbered densely, so a replay's state is the sample's size.

#include "layoutlab/trace/request.h"

#include <cstdint>
#include <span>
#include <vector>

namespace layoutlab {

class SpatialKeySample {
public:
    // `rate` in (0, 1]; `salt` chooses which keys (two salts: two independent samples).
    SpatialKeySample(double rate, std::uint64_t salt);

    // The requests of `batch` whose keys are in the sample, with their keys renumbered, into `out`.
    void filter(std::span<const Request> batch, std::vector<Request>& out);
    double rate() const { return m_rate; }
    std::uint64_t sampledKeys() const { return m_next; }

private:
    static constexpr std::uint32_t kUnseen = 0;
    static constexpr std::uint32_t kOutside = UINT32_MAX;
    std::uint32_t idOf(std::uint32_t keyId);

    double m_rate;
    std::uint64_t m_salt;
    std::uint64_t m_bound; // rate x 2^64
    std::vector<std::uint32_t> m_ids; // by key id: 1 + the sampled id, kUnseen, or kOutside
    std::uint32_t m_next = 0;
};

} // namespace layoutlab
