// SPDX-License-Identifier: MIT
#pragma once

// Redis 7.0 string keys (src/db.c dbAdd, src/object.c createStringObject/tryObjectEncoding, src/dict.c).
//
//   bucket slot (8) -> dictEntry {key, v, next} (24) -> key sds (hdr + K + NUL)
//                                                     -> robj {type|enc|lru, refcount, ptr} (16)
//   EMBSTR (V <= 44): robj and a type-8 value sds in one allocation (16 + 3 + V + 1)
//   RAW: robj (16) -> value sds;  INT: robj holds the long (shared objects for 0..9999)
//   TTL: a dictEntry in db->expires sharing the key sds

#include "layoutlab/layout/layout_model.h"

namespace layoutlab {

struct RedisParams {
    std::uint32_t embstrLimit = 44; // object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT
    bool sharedIntegers = true; // object.c tryObjectEncoding: shared.integers[] when maxmemory-policy allows
    // Rehash steps an HSET takes per field it adds to a hash table (layout/hash_layout.h): Redis 7.0's
    // t_hash.c hashTypeSet looks the field up (dictFind) and then adds it (dictAdd), a step each; 7.2's
    // adds it in one call (dictAddRaw). Strings are alike either way.
    std::uint32_t hsetRehashSteps = 2;
};

class RedisLayout final : public LayoutModel {
public:
    explicit RedisLayout(const RedisParams& params);

    std::string spec() const override;
    std::string description() const override;
    std::optional<ThresholdParam> threshold() const override;
    std::string defaultAllocator() const override { return "jemalloc:quantum=8,page=4096"; }
    Status checkAllocator(const AllocatorModel& allocator) const override;
    IndexPolicy indexPolicy() const override { return engineIndexPolicy(IndexKind::RedisDict, true); }
    KeyLayout describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const override;
    // Redis 7.0.15 sds.c, and object.c tryObjectEncoding's trimStringObjectIfNeeded for every RAW value.
    StringRules stringRules() const override { return { StringRules::Mode::Sds, sds::Flavor::Redis70, true }; }

private:
    RedisParams m_params;

public:
    const RedisParams& params() const { return m_params; }
};

} // namespace layoutlab
