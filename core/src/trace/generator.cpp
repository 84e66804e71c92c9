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

namespace {
// A generator of its own for one key (and one field), from the seed: what is fixed per key or field.
Random keyedRandom(std::uint64_t seed, std::uint64_t keyId, std::uint64_t field = 0) {
    std::uint64_t mix = seed ^ (0x9e3779b97f4a7c15ULL * (keyId + 1)) ^ (0xbf58476d1ce4e5b9ULL * field);
    return Random(Random::splitmix64(mix));
}
// The most fields a hash workload holds in all: its state is 4 bytes a field.
constexpr std::uint64_t kMaxHashFields = std::uint64_t { 1 } << 30;
} // namespace

Status setHashFields(GeneratorConfig& config, std::string_view fields, std::string_view fieldSize) {
    auto f = SizeDistribution::parse(fields, field::kHashFields);
    if (!f)
        return f.error();
    auto fs = SizeDistribution::parse(fieldSize, field::kFieldSize);
    if (!fs)
        return fs.error();
    config.hashFields = *f;
    config.fieldSize = *fs;
    std::uint64_t total = 0;
    for (std::uint64_t k = 0; k < config.keys; ++k) {
        Random r = keyedRandom(config.seed, k, UINT64_MAX);
        total += std::max<std::uint32_t>(1, config.hashFields->sample(r));
        if (total > kMaxHashFields)
            return usageError(fmt::format("{} keys of {} fields are more than {} fields in all (the generator keeps "
                                          "4 bytes a field)",
                                  config.keys, fields, kMaxHashFields),
                field::kHashFields);
    }
    return Ok {};
}

SyntheticTrace::SyntheticTrace(GeneratorConfig config)
    : m_config(std::move(config))
    , m_random(m_config.seed) {
    if (m_config.zipfExponent > 0.0)
        m_zipf.emplace(m_config.keys, m_config.zipfExponent);
    if (m_config.hashFields) {
        // Each key's field count, fixed per key: the load's length is known before its first request.
        m_loadFields.resize(m_config.keys);
        m_fieldValues.resize(m_config.keys);
        for (std::uint64_t k = 0; k < m_config.keys; ++k) { // setHashFields checked their sum
            Random r = keyedRandom(m_config.seed, k, UINT64_MAX);
            m_loadFields[k] = std::max<std::uint32_t>(1, m_config.hashFields->sample(r));
            m_loadRequests += 1 + std::uint64_t { m_loadFields[k] };
        }
    }
}

std::uint64_t SyntheticTrace::totalRequests() const {
    if (m_config.hashFields)
        return (m_config.load ? m_loadRequests : 0) + m_config.ops;
    return (m_config.load ? m_config.keys : 0) + m_config.ops;
}

std::uint32_t SyntheticTrace::fieldBytesOf(std::uint32_t keyId, std::uint32_t field) const {
    Random r = keyedRandom(m_config.seed, keyId, std::uint64_t { field } + 1);
    return std::clamp<std::uint32_t>(m_config.fieldSize.sample(r), 1, kMaxKeyBytes);
}

Request SyntheticTrace::hashElement(std::uint32_t keyId, ElementAction action, std::uint32_t field) const {
    Request r;
    r.op = Op::Element;
    r.keyId = keyId;
    r.keyBytes = keyBytesOf(keyId);
    r.elementBytes = fieldBytesOf(keyId, field);
    r.element = ElementOp { CollectionKind::Hash, action }.packed();
    return r;
}

Request SyntheticTrace::nextHashRequest() {
    if (m_config.load && m_loadKey < m_config.keys) {
        const std::uint32_t k = m_loadKey;
        auto& values = m_fieldValues[k];
        if (m_loadField < 0) { // HSET with every field: hashTypeTryConversion sees them all first
            values.resize(m_loadFields[k]);
            std::uint32_t longest = 0;
            for (std::uint32_t f = 0; f < values.size(); ++f) {
                values[f] = m_config.valueSize.sample(m_random);
                longest = std::max({ longest, values[f], fieldBytesOf(k, f) });
            }
            Request r = hashElement(k, ElementAction::Command, 0);
            r.valueBytes = m_loadFields[k];
            r.elementBytes = longest;
            m_loadField = 0;
            return r;
        }
        const auto f = static_cast<std::uint32_t>(m_loadField);
        Request r = hashElement(k, ElementAction::Add, f);
        r.valueBytes = values[f];
        if (++m_loadField == static_cast<std::int64_t>(values.size())) {
            ++m_loadKey;
            m_loadField = -1;
        }
        return r;
    }
    const auto k = static_cast<std::uint32_t>(m_zipf ? m_zipf->sample(m_random) - 1 : m_random.below(m_config.keys));
    auto& values = m_fieldValues[k];
    const double u = m_random.uniform();
    if (u < m_config.getFraction || (u < m_config.getFraction + m_config.deleteFraction)) {
        // HGET, or HDEL: of a field the key has had (an absent one is a lookup, as the server's is).
        const auto f = values.empty() ? 0 : static_cast<std::uint32_t>(m_random.below(values.size()));
        const bool present = f < values.size() && values[f] != kAbsentField;
        if (u < m_config.getFraction || !present)
            return hashElement(k, ElementAction::Read, f);
        Request r = hashElement(k, ElementAction::Remove, f);
        r.ttlSeconds = values[f]; // the prior value's length
        values[f] = kAbsentField;
        return r;
    }
    // HSET of one field: a new one half the time, else one the key has had.
    const auto f = static_cast<std::uint32_t>(
        values.empty() || m_random.uniform() < 0.5 ? values.size() : m_random.below(values.size()));
    if (f == values.size())
        values.push_back(kAbsentField);
    const std::uint32_t value = m_config.valueSize.sample(m_random);
    Request r = hashElement(k, values[f] == kAbsentField ? ElementAction::Add : ElementAction::Update, f);
    r.valueBytes = value;
    if (values[f] != kAbsentField)
        r.ttlSeconds = values[f];
    values[f] = value;
    return r;
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
        if (m_config.hashFields) {
            r = nextHashRequest();
        } else if (m_emitted < loadOps) {
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
