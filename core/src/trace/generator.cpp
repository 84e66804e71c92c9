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
// The most elements a collection workload holds in all: its state is 4 bytes an element.
constexpr std::uint64_t kMaxElements = std::uint64_t { 1 } << 30;
// The most digits an integer member has (a long long's, string2ll).
constexpr std::uint32_t kMaxMemberDigits = 19;
} // namespace

Status setCollectionElements(
    GeneratorConfig& config, CollectionKind collection, std::string_view elements, std::string_view elementSize) {
    static constexpr const char* kCountFields[] { field::kHashFields, field::kSetMembers, field::kZsetMembers,
        field::kListElements };
    static constexpr const char* kSizeFields[] { field::kFieldSize, field::kMemberSize, field::kMemberSize,
        field::kElementSize };
    static constexpr const char* kNouns[] { "fields", "members", "members", "elements" };
    const auto kind = static_cast<std::size_t>(collection);
    const char* countField = kCountFields[kind];
    auto count = SizeDistribution::parse(elements, countField);
    if (!count)
        return count.error();
    auto size = SizeDistribution::parse(elementSize, kSizeFields[kind]);
    if (!size)
        return size.error();
    config.elements = *count;
    config.collection = collection;
    config.elementSize = *size;
    std::uint64_t total = 0;
    for (std::uint64_t k = 0; k < config.keys; ++k) {
        Random r = keyedRandom(config.seed, k, UINT64_MAX);
        total += std::max<std::uint32_t>(1, config.elements->sample(r));
        if (total > kMaxElements)
            return usageError(fmt::format("{} keys of {} {} are more than {} {} in all (the generator keeps 4 "
                                          "bytes each)",
                                  config.keys, elements, kNouns[kind], kMaxElements, kNouns[kind]),
                countField);
    }
    return Ok {};
}

SyntheticTrace::SyntheticTrace(GeneratorConfig config)
    : m_config(std::move(config))
    , m_random(m_config.seed) {
    if (m_config.zipfExponent > 0.0)
        m_zipf.emplace(m_config.keys, m_config.zipfExponent);
    if (m_config.elements) {
        // Each key's element count, fixed per key: the load's length is known before its first request.
        m_loadFields.resize(m_config.keys);
        m_fieldValues.resize(m_config.keys);
        if (m_config.collection == CollectionKind::List)
            m_listEnds.resize(m_config.keys);
        for (std::uint64_t k = 0; k < m_config.keys; ++k) { // setCollectionElements checked their sum
            Random r = keyedRandom(m_config.seed, k, UINT64_MAX);
            m_loadFields[k] = std::max<std::uint32_t>(1, m_config.elements->sample(r));
            m_loadRequests += 1 + std::uint64_t { m_loadFields[k] };
        }
    }
}

std::uint64_t SyntheticTrace::totalRequests() const {
    if (m_config.elements)
        return (m_config.load ? m_loadRequests : 0) + m_config.ops;
    return (m_config.load ? m_config.keys : 0) + m_config.ops;
}

bool SyntheticTrace::integerMembers(std::uint32_t keyId) const {
    if (m_config.collection != CollectionKind::Set || m_config.intValueFraction <= 0)
        return false;
    Random r = keyedRandom(m_config.seed, keyId, UINT64_MAX - 1);
    return r.uniform() < m_config.intValueFraction;
}

std::uint32_t SyntheticTrace::elementBytesOf(std::uint32_t keyId, std::uint32_t index) const {
    Random r = keyedRandom(m_config.seed, keyId, std::uint64_t { index } + 1);
    const std::uint32_t most = integerMembers(keyId) ? kMaxMemberDigits : kMaxKeyBytes;
    return std::clamp<std::uint32_t>(m_config.elementSize.sample(r), 1, most);
}

Request SyntheticTrace::element(std::uint32_t keyId, ElementAction action, std::uint32_t index) const {
    Request r;
    r.op = Op::Element;
    r.keyId = keyId;
    r.keyBytes = keyBytesOf(keyId);
    r.elementBytes = elementBytesOf(keyId, index);
    ElementOp op { m_config.collection, action };
    if (integerMembers(keyId)) // an integer of that many digits, stored by the class of the largest
        op.element = integerClassOf(largestOfDigits(r.elementBytes));
    r.element = op.packed();
    return r;
}

Request SyntheticTrace::nextElementRequest() {
    if (!m_config.load || m_loadKey >= m_config.keys)
        return nextOperation();
    const std::uint32_t k = m_loadKey;
    auto& values = m_fieldValues[k];
    if (m_loadField < 0) { // HSET, SADD, ZADD or RPUSH with every element: the engine sees them all first
        m_loadField = 0;
        return commandStart(k);
    }
    const auto f = static_cast<std::uint32_t>(m_loadField);
    Request r = scored(element(k, ElementAction::Add, f), values[f], 0);
    r.valueBytes = values[f];
    if (++m_loadField == static_cast<std::int64_t>(values.size())) {
        if (m_config.collection == CollectionKind::List) { // a list keeps its ends, not its elements
            m_listEnds[k] = { 0, static_cast<std::uint32_t>(values.size()) };
            values = {};
        }
        ++m_loadKey;
        m_loadField = -1;
    }
    return r;
}

std::uint32_t SyntheticTrace::scoreDigits() {
    return std::clamp<std::uint32_t>(m_config.valueSize.sample(m_random), 1, kMaxMemberDigits);
}

Request SyntheticTrace::commandStart(std::uint32_t k) {
    auto& values = m_fieldValues[k];
    values.resize(m_loadFields[k]);
    const CollectionKind kind = m_config.collection;
    std::uint32_t longest = 0;
    std::uint64_t summed = 0;
    for (std::uint32_t f = 0; f < values.size(); ++f) {
        values[f] = kind == CollectionKind::Hash ? m_config.valueSize.sample(m_random)
            : kind == CollectionKind::SortedSet  ? scoreDigits()
                                                 : 0;
        const std::uint32_t bytes = elementBytesOf(k, f);
        longest = std::max({ longest, kind == CollectionKind::Hash ? values[f] : 0, bytes });
        summed += bytes;
    }
    Request r = element(k, ElementAction::Command, 0); // a set's: its first member's class
    r.valueBytes = m_loadFields[k];
    r.elementBytes = longest; // request.h: a hash's longest argument, a sorted set's longest member
    if (kind == CollectionKind::List) // ... a list's elements' lengths summed
        r.elementBytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(summed, UINT32_MAX));
    if (kind == CollectionKind::SortedSet) // ... and its first member's length
        r.ttlSeconds = elementBytesOf(k, 0);
    if (kind != CollectionKind::Set)
        r.element = ElementOp { kind, ElementAction::Command }.packed();
    return r;
}

Request SyntheticTrace::scored(Request r, std::uint32_t value, std::uint32_t prior) const {
    if (m_config.collection != CollectionKind::SortedSet) // a sorted set's scores: integers of their digits
        return r;
    ElementOp op = r.elementOp();
    op.value = value ? integerClassOf(largestOfDigits(value)) : IntegerClass::None;
    op.prior = prior && prior != kAbsentField ? integerClassOf(largestOfDigits(prior)) : IntegerClass::None;
    r.element = op.packed();
    return r;
}

Request SyntheticTrace::nextListOperation(std::uint32_t k, double u) {
    auto& [head, tail] = m_listEnds[k];
    auto atHead = [](Request r) {
        ElementOp op = r.elementOp();
        op.atHead = true;
        r.element = op.packed();
        return r;
    };
    if (u < m_config.getFraction + m_config.deleteFraction) {
        // LINDEX 0, or LPOP: the head, the first element not popped (a read of an empty list).
        if (u < m_config.getFraction || head == tail)
            return atHead(element(k, ElementAction::Read, head));
        return atHead(element(k, ElementAction::Remove, head++));
    }
    return element(k, ElementAction::Add, tail++); // RPUSH of one element, at the tail
}

Request SyntheticTrace::nextOperation() {
    const auto k = static_cast<std::uint32_t>(m_zipf ? m_zipf->sample(m_random) - 1 : m_random.below(m_config.keys));
    auto& values = m_fieldValues[k];
    const double u = m_random.uniform();
    if (m_config.collection == CollectionKind::List)
        return nextListOperation(k, u);
    const bool zset = m_config.collection == CollectionKind::SortedSet;
    if (u < m_config.getFraction || (u < m_config.getFraction + m_config.deleteFraction)) {
        // A lookup, or a removal: of an element the key has had (an absent one is a lookup, as the server's
        // is). A set's removal is of a member drawn at random, its place in the order of adds not given.
        const auto f = values.empty() ? 0 : static_cast<std::uint32_t>(m_random.below(values.size()));
        const bool present = f < values.size() && values[f] != kAbsentField;
        if (u < m_config.getFraction || !present)
            return element(k, ElementAction::Read, f);
        Request r = element(k, ElementAction::Remove, f);
        if (m_config.collection != CollectionKind::Set)
            r.ttlSeconds = values[f]; // the prior value's length
        r = scored(r, 0, values[f]);
        values[f] = kAbsentField;
        return r;
    }
    // HSET or SADD of one element: a new one half the time, else one the key has had.
    const auto f = static_cast<std::uint32_t>(
        values.empty() || m_random.uniform() < 0.5 ? values.size() : m_random.below(values.size()));
    if (f == values.size())
        values.push_back(kAbsentField);
    if (m_config.collection == CollectionKind::Set) { // SADD of a member held: a lookup
        const bool held = values[f] != kAbsentField;
        values[f] = 0;
        return element(k, held ? ElementAction::Read : ElementAction::Add, f);
    }
    const std::uint32_t value = zset ? scoreDigits() : m_config.valueSize.sample(m_random);
    Request r = element(k, values[f] == kAbsentField ? ElementAction::Add : ElementAction::Update, f);
    r.valueBytes = value;
    if (values[f] != kAbsentField)
        r.ttlSeconds = values[f];
    r = scored(r, value, values[f]);
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
        if (m_config.elements) {
            r = nextElementRequest();
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
