// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/key_layout.h"

#include <memory>
#include <optional>
#include <string>

namespace layoutlab {

// The embed limit a sweep varies (Valkey's threshold, Redis's EMBSTR limit).
struct ThresholdParam {
    std::string name; // the layout parameter it sets, e.g. "threshold"
    std::uint32_t value = 0; // the layout's configured value
    std::uint32_t min = 0;
    std::uint32_t max = 0;
    std::string meaning; // one line for --help and `layouts`
};

// How the store indexes its keys; the simulator keeps these tables' sizes as the engine would.
enum class IndexKind : std::uint8_t {
    ValkeyHashtable, // hashtable.c: 64-byte buckets of 7 entries, child buckets, 5/32 growth
    RedisDict, // dict.c: 8-byte bucket slots, chained dictEntry, power-of-two growth at fill 1
    MemcachedAssoc, // assoc.c: 8-byte buckets, grows at 1.5 items per bucket, never shrinks
};

struct IndexPolicy {
    IndexKind kind = IndexKind::ValkeyHashtable;
    bool expiresTable = false; // TTL keys also live in a second table of the same kind
};

class LayoutModel {
public:
    virtual ~LayoutModel() = default;

    // Canonical specification with every parameter, e.g. "valkey:threshold=128,header=8,embstr-limit=auto".
    virtual std::string spec() const = 0;
    virtual std::string description() const = 0;
    virtual std::optional<ThresholdParam> threshold() const = 0;
    // The allocator this layout's engine uses by default, as an --alloc spec.
    virtual std::string defaultAllocator() const = 0;
    // Fails when the allocator cannot serve this layout (e.g. memcached items need slab classes).
    virtual Status checkAllocator(const AllocatorModel& allocator) const = 0;
    virtual IndexPolicy indexPolicy() const = 0;

    // The allocations and GET path of one key under the given embed threshold (ignored by layouts
    // without one). Contract the sweep relies on: as the threshold grows, a shape's layout changes at
    // most once (from not embedded to embedded), so equal layouts at the lowest and highest threshold
    // of a sweep mean equal layouts at every threshold in between.
    virtual KeyLayout describe(
        const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const = 0;
};

using LayoutPtr = std::shared_ptr<const LayoutModel>;

} // namespace layoutlab
