// SPDX-License-Identifier: MIT
#pragma once

// When to sample a timeline (SimulationConfig::timelineSamples): at even steps of the trace's requests
// when their number is known, the last at the end. A stream of unknown length starts with small steps and,
// each time it holds twice the samples asked for, keeps every other one and doubles the step, so that its
// samples stay even whatever the length and their number stays between what was asked and twice that;
// the end then thins them to what was asked.

#include "layoutlab/sim/results.h"

#include <cstdint>
#include <vector>

namespace layoutlab {

class TimelineSampler {
public:
    TimelineSampler(std::uint32_t samples, std::uint64_t totalRequests);
    // The request count at which the next sample is due (UINT64_MAX: none before the end).
    std::uint64_t nextAt() const { return m_next; }
    void take(TimelineSample sample);
    // The sample at the end of the trace added; the samples, at most as many as asked.
    std::vector<TimelineSample> finish(TimelineSample last);

private:
    std::uint32_t m_samples;
    std::uint64_t m_total;
    std::uint64_t m_step;
    std::uint64_t m_next;
    std::vector<TimelineSample> m_taken;
};

} // namespace layoutlab
