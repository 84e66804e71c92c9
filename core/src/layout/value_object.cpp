// SPDX-License-Identifier: MIT
#include "value_object.h"

#include "client_arguments.h"

#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/sds.h"
#include "layoutlab/layout/sds_buffer.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace layoutlab::value_object {

namespace {
// server.h struct redisObject (Redis 7.0) / serverObject (Valkey 8.0): type:4 encoding:4 lru:24, int
// refcount, void *ptr.
constexpr std::uint64_t kRobjBytes = 16;
constexpr std::uint64_t kPointerBytes = 8;
// object.c tryObjectEncoding: only strings of at most 20 chars are tried as a long.
constexpr std::uint32_t kMaxIntegerChars = 20;
// An EMBSTR's sds is type 8 (object.c createEmbeddedStringObject: struct sdshdr8).
constexpr std::uint64_t kEmbstrSdsOverhead = sds::reqSize(0, sds::Type::Type8);
static_assert(kRobjBytes + kEmbstrSdsOverhead + 44 == 64,
    "OBJ_ENCODING_EMBSTR_SIZE_LIMIT 44 is the value that fills a 64-byte allocation");
// dict.h struct dictEntry {void *key; union v; struct dictEntry *next;} (no metadata standalone).
constexpr std::uint64_t kDictEntryBytes = 24;
constexpr std::uint64_t kDictEntryPointerBytes = 24; // key, v, next
} // namespace

void addWriteTransients(
    KeyLayout& out, const KeyShape& shape, std::uint32_t embstrLimit, std::uint64_t (*sdsBytes)(std::uint64_t)) {
    client_arguments::addSetTransients(
        out, shape, { kRobjBytes, 0, embstrLimit, sdsBytes }, client_arguments::Value::Stored);
}

void add(KeyLayout& out, const KeyShape& shape, std::uint32_t embstrLimit, bool sharedIntegers,
    std::uint64_t (*sdsBytes)(std::uint64_t)) {
    const std::uint64_t v = shape.valueBytes;
    const bool isInteger = isIntegerKind(shape.kind) && shape.valueBytes <= kMaxIntegerChars;
    if (shape.kind == ValueKind::RawString) {
        // APPEND/SETRANGE left a RAW sds whatever the limit (t_string.c via db.c dbUnshareStringValue).
        addRawSds(out, shape, sdsBytes);
    } else if (isInteger && shape.kind == ValueKind::SmallInteger && sharedIntegers) {
        out.encoding = Encoding::SharedInteger; // shared.integers[value]: nothing allocated per key
        out.dependentLoads += 1; // the shared robj is still read
    } else if (isInteger) {
        out.encoding = Encoding::Integer;
        out.add({ kRobjBytes, kRobjBytes, 1, Purpose::Object, v }); // the value is in robj->ptr
        out.dependentLoads += 1;
    } else if (v <= embstrLimit) {
        const std::uint64_t bytes = kRobjBytes + kEmbstrSdsOverhead + v;
        out.encoding = Encoding::Embedded;
        out.add({ bytes, bytes, 1, Purpose::Object, v });
        out.dependentLoads += 1;
        out.pointerBytes += kPointerBytes;
    } else {
        const auto valueBytes = sdsBytes(v);
        out.encoding = Encoding::Raw;
        out.add({ kRobjBytes, kRobjBytes, 1, Purpose::Object });
        out.add({ valueBytes, valueBytes, 1, Purpose::Value, v });
        out.dependentLoads += 2;
        out.pointerBytes += kPointerBytes;
    }
}

void addRawSds(KeyLayout& out, const KeyShape& shape, std::uint64_t (*sdsBytes)(std::uint64_t)) {
    const std::uint64_t v = shape.valueBytes;
    const std::uint64_t buffer = shape.sdsBytes != 0 ? shape.sdsBytes : sdsBytes(v);
    // A GET reads the header and the string, not the free space a growth left behind it.
    const std::uint64_t read = std::min<std::uint64_t>(buffer, sds::headerBytesOf(buffer, v) + v + 1);
    out.encoding = Encoding::Raw;
    out.add({ kRobjBytes, kRobjBytes, 1, Purpose::Object });
    out.add({ buffer, read, 1, Purpose::Value, v });
    out.dependentLoads += 2;
    out.pointerBytes += kPointerBytes;
}

void addExpireEntry(KeyLayout& out) {
    out.add({ kDictEntryBytes, kDictEntryBytes, 1, Purpose::ExpireEntry });
    out.dependentLoads += 1;
    out.pointerBytes += static_cast<std::uint16_t>(kPointerBytes + kDictEntryPointerBytes);
}

void madeInWriteOrder(KeyLayout& out) {
    std::array<std::uint8_t, KeyLayout::kMaxAllocations> order {};
    std::size_t made = 0;
    auto take = [&](Purpose purpose) {
        for (std::size_t a = 0; a < out.allocationCount; ++a)
            if (out.allocations[a].purpose == purpose)
                order[made++] = static_cast<std::uint8_t>(a);
    };
    take(Purpose::Value);
    take(Purpose::Object);
    take(Purpose::Key);
    take(Purpose::Entry);
    take(Purpose::ExpireEntry);
    out.setMadeOrder(order.data(), made);
}

ThresholdParam embstrLimitParam(std::uint32_t value) {
    return ThresholdParam { "embstr-limit", value, 0, 1024,
        "largest value length created EMBSTR (robj and value in one allocation)" };
}

Status requireMalloc(const AllocatorModel& allocator, std::string_view layout) {
    if (dynamic_cast<const MemcachedSlabModel*>(&allocator))
        return usageError(
            fmt::format("layout '{}' needs a malloc-style allocator (jemalloc or glibc), not memcached slabs", layout),
            field::kAllocator);
    return Ok {};
}

} // namespace layoutlab::value_object
