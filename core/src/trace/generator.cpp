// SPDX-License-Identifier: MIT
#include "layoutlab/trace/generator.h"

#include "layoutlab/resources.h"

#include "layoutlab/spec.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// Integers the engines encode as a C long have at most 19 digits here (no sign); 1..4 digits are
// 0..9999, the range Redis shares (server.h OBJ_SHARED_INTEGERS 10000).
constexpr std::uint32_t kMaxIntegerDigits = 19;
constexpr std::uint32_t kMaxSharedIntegerDigits = 4;

Expected<double> fraction(double value, std::string_view field) {
    if (!(value >= 0.0 && value <= 1.0))
        return usageError(fmt::format("must be a fraction in [0, 1], got {}", value), std::string(field));
    return value;
}
} // namespace

Expected<GeneratorConfig> makeGeneratorConfig(std::uint64_t keys, std::optional<std::uint64_t> ops,
    std::string_view keySize, std::string_view valueSize, double ttlFraction, double intValues, double getFraction,
    double deleteFraction, std::string_view popularity, std::uint64_t seed) {
    GeneratorConfig c;
    if (keys == 0 || keys > UINT32_MAX)
        return usageError("must be between 1 and 4294967295", field::kKeys);
    c.keys = keys;
    c.ops = ops.value_or(0);
    // The trace holds the load (one write per key) and the operations: their sum must be a count.
    if (std::uint64_t total = 0; !addChecked(keys, c.ops, total))
        return usageError(
            fmt::format("the keys plus the operations are beyond 2^64 requests ({} operations)", c.ops), field::kOps);
    auto ks = SizeDistribution::parse(keySize, field::kKeySize);
    if (!ks)
        return ks.error();
    auto vs = SizeDistribution::parse(valueSize, field::kValueSize);
    if (!vs)
        return vs.error();
    c.keySize = *ks;
    c.valueSize = *vs;
    for (auto [value, name] :
        { std::pair { ttlFraction, field::kTtlFraction }, std::pair { intValues, field::kIntValues },
            std::pair { getFraction, field::kGetFraction }, std::pair { deleteFraction, field::kDeleteFraction } })
        if (auto ok = fraction(value, name); !ok)
            return ok.error();
    if (getFraction + deleteFraction > 1.0)
        return usageError("the GET and DELETE fractions add up to more than 1", field::kGetFraction);
    c.ttlFraction = ttlFraction;
    c.intValueFraction = intValues;
    c.getFraction = getFraction;
    c.deleteFraction = deleteFraction;
    if (popularity == "uniform") {
        c.zipfExponent = 0.0;
    } else if (popularity.substr(0, 5) == "zipf:") {
        auto a = parseReal(popularity.substr(5), field::kPopularity);
        if (!a || *a <= 0.0 || *a > 10.0)
            return usageError(fmt::format("zipf:A needs 0 < A <= 10, got '{}'", popularity), field::kPopularity);
        c.zipfExponent = *a;
    } else {
        return usageError(fmt::format("must be 'uniform' or 'zipf:A', got '{}'", popularity), field::kPopularity);
    }
    c.seed = seed;
    return c;
}

SyntheticTrace::SyntheticTrace(GeneratorConfig config)
    : m_config(std::move(config))
    , m_random(m_config.seed) {
    if (m_config.zipfExponent > 0.0)
        m_zipf.emplace(m_config.keys, m_config.zipfExponent);
}

std::uint64_t SyntheticTrace::totalRequests() const {
    return (m_config.load ? m_config.keys : 0) + m_config.ops;
}

std::uint32_t SyntheticTrace::keyBytesOf(std::uint32_t keyId) const {
    // A key's length never changes: draw it from a generator seeded by (seed, key id).
    std::uint64_t mix = m_config.seed ^ (0x9e3779b97f4a7c15ULL * (std::uint64_t { keyId } + 1));
    Random keyRandom(Random::splitmix64(mix));
    return std::clamp<std::uint32_t>(m_config.keySize.sample(keyRandom), 1, kMaxKeyBytes);
}

Request SyntheticTrace::makeWrite(std::uint32_t keyId, Op op) {
    Request r;
    r.op = op;
    r.keyId = keyId;
    r.keyBytes = keyBytesOf(keyId);
    r.valueBytes = m_config.valueSize.sample(m_random);
    if (m_config.intValueFraction > 0.0 && m_random.uniform() < m_config.intValueFraction && r.valueBytes > 0
        && r.valueBytes <= kMaxIntegerDigits)
        r.kind = r.valueBytes <= kMaxSharedIntegerDigits ? ValueKind::SmallInteger : ValueKind::Integer;
    if (m_config.ttlFraction > 0.0 && m_random.uniform() < m_config.ttlFraction)
        r.ttlSeconds = m_config.ttlSeconds;
    return r;
}

Expected<std::size_t> SyntheticTrace::read(std::span<Request> out) {
    const std::uint64_t total = totalRequests();
    const std::uint64_t loadOps = m_config.load ? m_config.keys : 0;
    std::size_t n = 0;
    while (n < out.size() && m_emitted < total) {
        Request r;
        if (m_emitted < loadOps) {
            r = makeWrite(static_cast<std::uint32_t>(m_emitted), Op::Set);
        } else {
            const auto keyId
                = static_cast<std::uint32_t>(m_zipf ? m_zipf->sample(m_random) - 1 : m_random.below(m_config.keys));
            const double u = m_random.uniform();
            if (u < m_config.getFraction) {
                r.op = Op::Get;
                r.keyId = keyId;
                r.keyBytes = keyBytesOf(keyId);
            } else if (u < m_config.getFraction + m_config.deleteFraction) {
                r.op = Op::Delete;
                r.keyId = keyId;
                r.keyBytes = keyBytesOf(keyId);
            } else {
                r = makeWrite(keyId, Op::Set);
            }
        }
        r.timeMs = m_emitted * 1000 / m_config.opsPerSecond;
        out[n++] = r;
        ++m_emitted;
    }
    return n;
}

} // namespace layoutlab
