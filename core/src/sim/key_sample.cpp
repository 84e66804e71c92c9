// SPDX-License-Identifier: MIT
#include "layoutlab/sim/key_sample.h"

#include "layoutlab/trace/random.h"

#include <algorithm>
#include <cmath>

namespace layoutlab {

namespace {
// splitmix64 of a key id: key ids are dense, so their hash must scatter them.
std::uint64_t mix(std::uint64_t x) {
    return Random::splitmix64(x);
}
} // namespace

SpatialKeySample::SpatialKeySample(double rate, std::uint64_t salt)
    : m_rate(std::clamp(rate, 0.0, 1.0))
    , m_salt(mix(salt))
    , m_bound(m_rate >= 1.0 ? UINT64_MAX : static_cast<std::uint64_t>(std::ldexp(m_rate, 64))) { }

std::uint32_t SpatialKeySample::idOf(std::uint32_t keyId) {
    if (keyId >= m_ids.size())
        m_ids.resize(std::max<std::size_t>(std::size_t { keyId } + 1, m_ids.size() * 2), kUnseen);
    std::uint32_t& id = m_ids[keyId];
    if (id == kUnseen)
        id = mix(keyId ^ m_salt) <= m_bound ? ++m_next : kOutside;
    return id;
}

void SpatialKeySample::filter(std::span<const Request> batch, std::vector<Request>& out) {
    out.clear();
    for (const Request& r : batch) {
        const std::uint32_t id = idOf(r.keyId);
        if (id == kOutside)
            continue;
        out.push_back(r);
        out.back().keyId = id - 1;
    }
}

} // namespace layoutlab
