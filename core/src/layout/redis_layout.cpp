// SPDX-License-Identifier: MIT
#include "layoutlab/layout/redis_layout.h"

#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/sds.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
// dict.h struct dictEntry {void *key; union v; struct dictEntry *next;} (no metadata standalone).
constexpr std::uint64_t kDictEntryBytes = 24;
constexpr std::uint64_t kDictEntryPointerBytes = 24; // key, v.val, next
// server.h struct redisObject: type:4 encoding:4 lru:24, int refcount, void *ptr.
constexpr std::uint64_t kRobjBytes = 16;
constexpr std::uint64_t kPointerBytes = 8;
// object.c tryObjectEncoding: only strings of at most 20 chars are tried as a long.
constexpr std::uint32_t kMaxIntegerChars = 20;
// An EMBSTR's sds is type 8 (object.c createEmbeddedStringObject: struct sdshdr8).
constexpr std::uint64_t kEmbstrSdsOverhead = sds::reqSize(0, sds::Type::Type8);
static_assert(kRobjBytes + kEmbstrSdsOverhead + 44 == 64,
    "OBJ_ENCODING_EMBSTR_SIZE_LIMIT 44 is the value that fills a 64-byte allocation");
} // namespace

RedisLayout::RedisLayout(const RedisParams& params)
    : m_params(params) { }

std::string RedisLayout::spec() const {
    return fmt::format(
        "redis-7.0:embstr-limit={},shared-integers={}", m_params.embstrLimit, m_params.sharedIntegers ? "yes" : "no");
}

std::string RedisLayout::description() const {
    return fmt::format("Redis 7.0: dictEntry + separate key sds + robj; EMBSTR for values of at most {} bytes; "
                       "expires in a second dict",
        m_params.embstrLimit);
}

std::optional<ThresholdParam> RedisLayout::threshold() const {
    return ThresholdParam { "embstr-limit", m_params.embstrLimit, 0, 1024,
        "largest value length created EMBSTR (robj and value in one allocation)" };
}

Status RedisLayout::checkAllocator(const AllocatorModel& allocator) const {
    if (dynamic_cast<const MemcachedSlabModel*>(&allocator))
        return usageError(
            "layout 'redis-7.0' needs a malloc-style allocator (jemalloc or glibc), not memcached slabs", "alloc");
    return Ok {};
}

KeyLayout RedisLayout::describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel&) const {
    const std::uint64_t v = shape.valueBytes;
    KeyLayout out;
    out.indexLinesPerGet = shape.hasTtl ? 2 : 1; // keyspace slot, plus the expires slot (expireIfNeeded)
    out.pointerBytes = static_cast<std::uint16_t>(kPointerBytes + kDictEntryPointerBytes);
    // db.c dbAdd: dictAddRaw (dictEntry) with a copy of the key (sdsdup).
    out.add({ kDictEntryBytes, kDictEntryBytes, 1, Purpose::Entry });
    const auto keyBytes = sds::redisNewLenBytes(shape.keyBytes);
    out.add({ keyBytes, keyBytes, 1, Purpose::Key, shape.keyBytes });
    out.dependentLoads = 2; // dictEntry from the slot, key sds from the entry

    const bool isInteger = shape.kind != ValueKind::String && shape.valueBytes <= kMaxIntegerChars;
    if (isInteger && shape.kind == ValueKind::SmallInteger && m_params.sharedIntegers) {
        out.encoding = Encoding::SharedInteger; // shared.integers[value]: nothing allocated per key
        out.dependentLoads += 1; // the shared robj is still read
    } else if (isInteger) {
        out.encoding = Encoding::Integer;
        out.add({ kRobjBytes, kRobjBytes, 1, Purpose::Object, v }); // the value is in robj->ptr
        out.dependentLoads += 1;
    } else if (v <= threshold) {
        // createEmbeddedStringObject: robj + sdshdr8 + value + NUL in one allocation.
        const std::uint64_t bytes = kRobjBytes + kEmbstrSdsOverhead + v;
        out.encoding = Encoding::Embedded;
        out.add({ bytes, bytes, 1, Purpose::Object, v });
        out.dependentLoads += 1;
        out.pointerBytes += kPointerBytes;
    } else {
        const auto valueBytes = sds::redisNewLenBytes(v);
        out.encoding = Encoding::Raw;
        out.add({ kRobjBytes, kRobjBytes, 1, Purpose::Object });
        out.add({ valueBytes, valueBytes, 1, Purpose::Value, v });
        out.dependentLoads += 2;
        out.pointerBytes += kPointerBytes;
    }
    if (shape.hasTtl) {
        // db.c setExpire: a dictEntry in db->expires sharing the key sds, `when` in v.s64.
        out.add({ kDictEntryBytes, kDictEntryBytes, 1, Purpose::ExpireEntry });
        out.dependentLoads += 1;
        out.pointerBytes += static_cast<std::uint16_t>(kPointerBytes + kDictEntryPointerBytes);
    }
    return out;
}

} // namespace layoutlab
