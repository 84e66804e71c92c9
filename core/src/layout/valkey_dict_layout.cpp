// SPDX-License-Identifier: MIT
#include "layoutlab/layout/valkey_dict_layout.h"

#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/sds.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
// dict.c dictEntryEmbedded {union v (8); dictEntry *next (8); uint8_t key_header_size; key_buf[]}:
// compactSizeEmbeddedDictEntry() = offsetof(key_buf) = 17, allocated with the key's sdsminlen.
constexpr std::uint64_t kEmbeddedEntryBytes = 17;
constexpr std::uint64_t kEmbeddedEntryPointerBytes = 16; // v.val, next
// dict.c dictEntryNormal {void *key; union v; dictEntry *next}: db->expires (kvstoreExpiresDictType has
// no embedded keys; setExpire points its key at the keyspace entry's embedded key).
constexpr std::uint64_t kNormalEntryBytes = 24;
constexpr std::uint64_t kNormalEntryPointerBytes = 24; // key, v, next
// server.h struct serverObject: type:4 encoding:4 lru:24, int refcount, void *ptr.
constexpr std::uint64_t kRobjBytes = 16;
constexpr std::uint64_t kPointerBytes = 8;
// object.c tryObjectEncodingEx: only strings of at most 20 chars are tried as a long.
constexpr std::uint32_t kMaxIntegerChars = 20;
// object.c createEmbeddedStringObject: robj + struct sdshdr8 + value + NUL.
constexpr std::uint64_t kEmbstrSdsOverhead = sds::reqSize(0, sds::Type::Type8);
// object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT as the release builds it: client arguments (the key among them)
// up to this length arrive as EMBSTR objects. Keys follow the release's limit whatever the swept value
// limit (a build's limit only changes a key's header below 32 bytes, where limits under 31 are absurd),
// so a shape's layout still changes once as the threshold grows.
constexpr std::uint64_t kArgvEmbstrLimit = 44;
} // namespace

ValkeyDictLayout::ValkeyDictLayout(const ValkeyDictParams& params)
    : m_params(params) { }

std::string ValkeyDictLayout::spec() const {
    return fmt::format(
        "valkey-8.0:embstr-limit={},shared-integers={}", m_params.embstrLimit, m_params.sharedIntegers ? "yes" : "no");
}

std::string ValkeyDictLayout::description() const {
    return fmt::format("Valkey 8.0: dict entry with the key embedded as sent + robj; EMBSTR for values of at "
                       "most {} bytes; expires in a second dict",
        m_params.embstrLimit);
}

std::optional<ThresholdParam> ValkeyDictLayout::threshold() const {
    return ThresholdParam { "embstr-limit", m_params.embstrLimit, 0, 1024,
        "largest value length created EMBSTR (robj and value in one allocation)" };
}

Status ValkeyDictLayout::checkAllocator(const AllocatorModel& allocator) const {
    if (dynamic_cast<const MemcachedSlabModel*>(&allocator))
        return usageError(
            "layout 'valkey-8.0' needs a malloc-style allocator (jemalloc or glibc), not memcached slabs", "alloc");
    return Ok {};
}

KeyLayout ValkeyDictLayout::describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel&) const {
    const std::uint64_t v = shape.valueBytes;
    KeyLayout out;
    out.indexLinesPerGet = shape.hasTtl ? 2 : 1; // keyspace slot, plus the expires slot (expireIfNeeded)
    out.pointerBytes = static_cast<std::uint16_t>(kPointerBytes + kEmbeddedEntryPointerBytes);
    // db.c dbAddInternal -> kvstoreDictAddRaw -> createEmbeddedEntry: the entry holds the argv key's sds.
    const std::uint64_t entryBytes = kEmbeddedEntryBytes + sds::valkeyArgvBytes(shape.keyBytes, kArgvEmbstrLimit);
    out.add({ entryBytes, entryBytes, 1, Purpose::Entry, shape.keyBytes });
    out.dependentLoads = 1; // the entry from the slot; the key compare reads the same allocation

    const bool isInteger = shape.kind != ValueKind::String && shape.valueBytes <= kMaxIntegerChars;
    if (isInteger && shape.kind == ValueKind::SmallInteger && m_params.sharedIntegers) {
        out.encoding = Encoding::SharedInteger; // shared.integers[value]: nothing allocated per key
        out.dependentLoads += 1; // the shared robj is still read
    } else if (isInteger) {
        out.encoding = Encoding::Integer;
        out.add({ kRobjBytes, kRobjBytes, 1, Purpose::Object, v }); // the value is in robj->ptr
        out.dependentLoads += 1;
    } else if (v <= threshold) {
        const std::uint64_t bytes = kRobjBytes + kEmbstrSdsOverhead + v;
        out.encoding = Encoding::Embedded;
        out.add({ bytes, bytes, 1, Purpose::Object, v });
        out.dependentLoads += 1;
        out.pointerBytes += kPointerBytes;
    } else {
        const auto valueBytes = sds::valkeyNewLenBytes(v);
        out.encoding = Encoding::Raw;
        out.add({ kRobjBytes, kRobjBytes, 1, Purpose::Object });
        out.add({ valueBytes, valueBytes, 1, Purpose::Value, v });
        out.dependentLoads += 2;
        out.pointerBytes += kPointerBytes;
    }
    if (shape.hasTtl) {
        out.add({ kNormalEntryBytes, kNormalEntryBytes, 1, Purpose::ExpireEntry });
        out.dependentLoads += 1;
        out.pointerBytes += static_cast<std::uint16_t>(kPointerBytes + kNormalEntryPointerBytes);
    }
    return out;
}

} // namespace layoutlab
