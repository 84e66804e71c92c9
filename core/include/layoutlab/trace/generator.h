// SPDX-License-Identifier: MIT
#pragma once

// Synthetic traces (`layoutlab gen`): a load that writes every key once, then optionally a mix of
// operations over keys drawn uniformly or by Zipf popularity. Deterministic for a seed.

#include "layoutlab/trace/distribution.h"
#include "layoutlab/trace/request.h"
#include "layoutlab/trace/trace_reader.h"

#include <optional>
#include <vector>

namespace layoutlab {

struct GeneratorConfig {
    std::uint64_t keys = 100000;
    std::uint64_t ops = 0; // operations after the load
    bool load = true; // write every key once first
    SizeDistribution keySize;
    SizeDistribution valueSize;
    double ttlFraction = 0.0; // share of writes that carry a TTL
    std::uint32_t ttlSeconds = 86400;
    double intValueFraction = 0.0; // share of values that are decimal integers of the drawn length
    double getFraction = 0.9; // of the operations after the load
    double deleteFraction = 0.0; // the rest are sets
    double zipfExponent = 0.0; // 0: uniform popularity
    std::uint64_t seed = 1;
    std::uint32_t opsPerSecond = 100000; // spacing of timestamps
    // Collection workloads, as element requests: every key is a collection of this many elements, each
    // elementSize long, loaded by one command with them all.
    //   Hashes (`gen --hash-fields`): fields with a value of valueSize each, loaded by HSET; the operations
    //     are HGET (a field's lookup), HDEL (a field, or the lookup of one already gone) and HSET (a new
    //     field, or a value replaced).
    //   Sets (`gen --set-members`): members loaded by SADD, a key's members all integers of their length's
    //     digits for a share intValueFraction of the keys; the operations are SISMEMBER (a lookup), SREM (a
    //     member, or the lookup of one already gone) and SADD of one member (a new one half the time, else
    //     one the set has had: added again, or looked up where it is held).
    //   Sorted sets (`gen --zset-members`): members loaded by ZADD, each with an integer score of valueSize
    //     digits (at most 19); the operations are ZSCORE (a lookup), ZREM (a member, or the lookup of one
    //     already gone) and ZADD of one member (a new one half the time, else a new score for one it has had).
    //   Lists (`gen --list-elements`): elements loaded by RPUSH; the operations are LINDEX of the head (a
    //     read), LPOP (the head; a read of an empty list) and RPUSH of one element.
    // TTLs are for string keys only.
    std::optional<SizeDistribution> elements;
    CollectionKind collection = CollectionKind::Hash;
    SizeDistribution elementSize = *SizeDistribution::parse("8", field::kFieldSize);
};

// Makes `config` (its keys and seed set) a workload of `collection` keys (hashes, sets, sorted sets or lists)
// of `elements` elements each (a size distribution's text, at least 1) of `elementSize` bytes each; an error
// when they are more than 2^30 elements in all.
Status setCollectionElements(
    GeneratorConfig& config, CollectionKind collection, std::string_view elements, std::string_view elementSize);

Expected<GeneratorConfig> makeGeneratorConfig(std::uint64_t keys, std::optional<std::uint64_t> ops,
    std::string_view keySize, std::string_view valueSize, double ttlFraction, double intValues, double getFraction,
    double deleteFraction, std::string_view popularity, std::uint64_t seed);

class SyntheticTrace final : public TraceReader {
public:
    explicit SyntheticTrace(GeneratorConfig config);

    Expected<std::size_t> read(std::span<Request> out) override;
    std::uint64_t totalRequests() const override;
    std::uint64_t keyIdLimit() const override { return m_config.keys; }
    std::string name() const override { return "synthetic"; }

    // The key length of a key id: fixed per key, derived from the seed and the id.
    std::uint32_t keyBytesOf(std::uint32_t keyId) const;

private:
    Request makeWrite(std::uint32_t keyId, Op op);
    // Collection workloads: the next request of the load or of the operations.
    Request nextElementRequest();
    Request nextOperation();
    Request element(std::uint32_t keyId, ElementAction action, std::uint32_t index) const;
    Request commandStart(std::uint32_t keyId); // the load's command, its elements' values drawn
    Request nextListOperation(std::uint32_t keyId, double u);
    std::uint32_t scoreDigits(); // a sorted set member's score: an integer of this many digits
    // `r` with a sorted set's score classes: the new score's (`value` digits) and the one replaced (`prior`).
    Request scored(Request r, std::uint32_t value, std::uint32_t prior) const;
    std::uint32_t elementBytesOf(std::uint32_t keyId, std::uint32_t index) const;
    bool integerMembers(std::uint32_t keyId) const;

    GeneratorConfig m_config;
    // Collection workloads: each key's elements' value lengths (a set's: 0; a sorted set's: its score's digits),
    // kAbsentField once removed; a list's ends instead, once loaded (its first element not popped, and the
    // elements pushed: 8 bytes a key, whatever it holds); its elements at load, and where the load is (key,
    // element; the one before the first is the command's start).
    static constexpr std::uint32_t kAbsentField = UINT32_MAX;
    std::vector<std::vector<std::uint32_t>> m_fieldValues;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> m_listEnds;
    std::vector<std::uint32_t> m_loadFields;
    std::uint64_t m_loadRequests = 0;
    std::uint32_t m_loadKey = 0;
    std::int64_t m_loadField = -1;
    std::optional<ZipfSampler> m_zipf;
    Random m_random;
    std::uint64_t m_emitted = 0;
};

} // namespace layoutlab
