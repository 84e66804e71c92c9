// SPDX-License-Identifier: MIT
#include "layoutlab/layout/redis_layout.h"

#include "layoutlab/layout/sds.h"
#include "value_object.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
// dict.h struct dictEntry {void *key; union v; struct dictEntry *next;} (no metadata standalone).
constexpr std::uint64_t kDictEntryBytes = 24;
constexpr std::uint64_t kDictEntryPointerBytes = 24; // key, v.val, next
constexpr std::uint64_t kPointerBytes = 8; // the bucket slot
} // namespace

RedisLayout::RedisLayout(const RedisParams& params)
    : m_params(params) { }

std::string RedisLayout::spec() const {
    return fmt::format("{}:embstr-limit={},shared-integers={}", releaseName(), m_params.embstrLimit,
        m_params.sharedIntegers ? "yes" : "no");
}

std::string RedisLayout::releaseName() const {
    return m_params.release == RedisRelease::V7_2 ? "redis-7.2" : "redis-7.0";
}

std::string RedisLayout::description() const {
    return fmt::format("Redis {}: dictEntry + separate key sds + robj; EMBSTR for values of at most {} bytes; "
                       "expires in a second dict",
        m_params.release == RedisRelease::V7_2 ? "7.2" : "7.0", m_params.embstrLimit);
}

std::optional<ThresholdParam> RedisLayout::threshold() const {
    return value_object::embstrLimitParam(m_params.embstrLimit);
}

Status RedisLayout::checkAllocator(const AllocatorModel& allocator) const {
    return value_object::requireMalloc(allocator, releaseName());
}

KeyLayout RedisLayout::describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel&) const {
    KeyLayout out;
    out.indexLinesPerGet = shape.hasTtl ? 2 : 1; // keyspace slot, plus the expires slot (expireIfNeeded)
    out.pointerBytes = static_cast<std::uint16_t>(kPointerBytes + kDictEntryPointerBytes);
    // db.c dbAdd: dictAddRaw (dictEntry) with a copy of the key (sdsdup).
    out.add({ kDictEntryBytes, kDictEntryBytes, 1, Purpose::Entry });
    const auto keyBytes = sds::redisNewLenBytes(shape.keyBytes);
    out.add({ keyBytes, keyBytes, 1, Purpose::Key, shape.keyBytes,
        memcmpVectorEnd(keyBytes - shape.keyBytes - 1, shape.keyBytes), true }); // dictSdsKeyCompare
    out.dependentLoads = 2; // dictEntry from the slot, key sds from the entry

    value_object::add(out, shape, threshold, m_params.sharedIntegers, sds::redisNewLenBytes);
    if (shape.hasTtl)
        value_object::addExpireEntry(out); // db.c setExpire: the entry shares the key sds, `when` in v.s64
    value_object::addWriteTransients(out, shape, m_params.embstrLimit, sds::redisNewLenBytes);
    value_object::madeInWriteOrder(out);
    return out;
}

} // namespace layoutlab
