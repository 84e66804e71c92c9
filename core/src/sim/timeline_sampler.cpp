// SPDX-License-Identifier: MIT
#include "timeline_sampler.h"

#include <algorithm>

namespace layoutlab {

namespace {
constexpr std::uint64_t kFirstUnknownStep = 1024; // requests between samples of a stream, at first

// Every other sample kept, ending with the last: the samples stay evenly spaced.
void thin(std::vector<TimelineSample>& samples) {
    std::vector<TimelineSample> kept;
    for (std::size_t i = samples.size() % 2 == 0 ? 1 : 0; i < samples.size(); i += 2)
        kept.push_back(std::move(samples[i]));
    samples = std::move(kept);
}
} // namespace

TimelineSampler::TimelineSampler(std::uint32_t samples, std::uint64_t totalRequests)
    : m_samples(std::max<std::uint32_t>(samples, 1))
    , m_total(totalRequests)
    , m_step(totalRequests ? 0 : kFirstUnknownStep) {
    // Known: sample k of n after k * total / n requests (the last is the end's own).
    m_next = m_total ? (m_samples > 1 ? m_total / m_samples : UINT64_MAX) : m_step;
    if (m_next == 0)
        m_next = 1;
}

void TimelineSampler::take(TimelineSample sample) {
    m_taken.push_back(std::move(sample));
    if (m_total) {
        const std::uint64_t k = m_taken.size() + 1;
        m_next = k < m_samples ? std::max<std::uint64_t>(k * m_total / m_samples, m_next + 1) : UINT64_MAX;
        return;
    }
    if (m_taken.size() >= 2 * std::size_t { m_samples }) {
        // Keep the samples at even multiples of the step.
        std::vector<TimelineSample> kept;
        for (std::size_t i = 1; i < m_taken.size(); i += 2)
            kept.push_back(std::move(m_taken[i]));
        m_taken = std::move(kept);
        m_step *= 2;
    }
    m_next += m_step;
}

std::vector<TimelineSample> TimelineSampler::finish(TimelineSample last) {
    if (!m_taken.empty() && m_taken.back().requests == last.requests)
        m_taken.pop_back(); // a sample due at the very end is the end's
    m_taken.push_back(std::move(last));
    while (m_taken.size() > m_samples)
        thin(m_taken);
    return std::move(m_taken);
}

} // namespace layoutlab
