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

enum class RedisRelease { V7_0, V7_2 };

struct RedisParams {
    std::uint32_t embstrLimit = 44; // object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT
    bool sharedIntegers = true; // object.c tryObjectEncoding: shared.integers[] when maxmemory-policy allows
    // The collections' rules (layout/collection_layout.h) differ between 7.0 and 7.2: 7.2 adds listpack sets
    // and lists, set dicts without values, size hints, and HSET's one lookup per field. Strings are alike.
    RedisRelease release = RedisRelease::V7_0;
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
    // Redis 7.0.15's and 7.2.6's sds.c (the same sdsReqType, the alloc field capped at the type's maximum);
    // object.c tryObjectEncoding's trimStringObjectIfNeeded trims every RAW value in 7.0, and in 7.2 only
    // arguments of PROTO_MBULK_BIG_ARG (32 KiB) or more, as Valkey's does.
    // hyperloglog.c: 7.0.15 makes room for a sparse change by sdsMakeRoomFor, 7.2.6 by its own greedy sdsResize.
    StringRules stringRules() const override {
        const bool v70 = m_params.release == RedisRelease::V7_0;
        return { StringRules::Mode::Sds, sds::Flavor::Redis70, v70,
            v70 ? StringRules::HllRoom::MakeRoomForThree : StringRules::HllRoom::Greedy };
    }

private:
    RedisParams m_params;
    std::string releaseName() const; // the layout's name: redis-7.0 or redis-7.2

public:
    const RedisParams& params() const { return m_params; }
};

} // namespace layoutlab
