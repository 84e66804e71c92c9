// SPDX-License-Identifier: MIT
#include "layoutlab/layout/valkey_layout.h"

#include "client_arguments.h"
#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/sds.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// server.h struct serverObject: type:4 encoding:4 lru:24 hasexpire:1 hasembkey:1 refcount:30 (8 bytes)
// followed by void *ptr: sizeof(robj) = 16. A RAW or INT object always keeps the pointer slot.
constexpr std::uint64_t kRobjBytes = 16;
constexpr std::uint64_t kPointerBytes = 8;
constexpr std::uint64_t kExpireBytes = 8; // object.c: long long expire, when hasexpire
constexpr std::uint64_t kKeyHeaderSizeByte = 1; // object.c: one byte holding the key sds header size
// object.c KEY_SIZE_TO_INCLUDE_EXPIRE_THRESHOLD: keys this long always get an expire field.
constexpr std::uint32_t kKeySizeToIncludeExpire = 128;
// object.c createEmbeddedStringObjectWithKeyAndExpire: the embedded value is always sds type 8.
constexpr std::uint64_t kEmbeddedValueSdsOverhead = sds::reqSize(0, sds::Type::Type8);
// sds type 8 holds lengths up to 255; 9.1 shouldEmbedStringObject: "if (len > 255) return false".
constexpr std::uint32_t kMaxEmbeddedValueBytes = 255;
// 9.1 (PR #2516) "Ensure it's possible to unembed": the embedded value area is at least a pointer.
constexpr std::uint64_t kMinEmbeddedValueArea = kPointerBytes;
// object.c tryObjectEncodingEx: only strings of at most 20 chars are tried as a long.
constexpr std::uint32_t kMaxIntegerChars = 20;
// object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT of the release: a client's key up to this length arrives as an
// EMBSTR (a type-8 sds), which an "as-sent" build embeds as it is.
constexpr std::uint64_t kArgvEmbstrLimit = 44;
// 8.1 header and 9.1 header (robj without val_ptr when the value is embedded).
constexpr std::uint32_t kHeaderWithPointer = 16;
constexpr std::uint32_t kHeaderWithoutPointer = 8;
} // namespace

ValkeyLayout::ValkeyLayout(std::string presetName, const ValkeyParams& params, std::string line)
    : m_presetName(std::move(presetName))
    , m_params(params)
    , m_line(std::move(line)) { }

std::string ValkeyLayout::spec() const {
    // Named by its line, so that the spec parses back to the same layout, collections and index tables included.
    return fmt::format("{}:threshold={},header={},embstr-limit={},key-sizing={},key-header={},expire-field={}", m_line,
        m_params.threshold, m_params.headerBytes,
        m_params.embstrLimit == 0 ? std::string("auto") : std::to_string(m_params.embstrLimit),
        m_params.exactKeySizing ? "exact" : "legacy", m_params.keyAsSent ? "as-sent" : "smallest",
        m_params.keepsExpireField ? "kept" : "dropped");
}

std::string ValkeyLayout::description() const {
    return fmt::format("{}: robj with embedded key and expire, value embedded when the object fits {} bytes "
                       "(header {}, client EMBSTR limit {}); 64-byte hashtable buckets of 7",
        m_presetName, m_params.threshold, m_params.headerBytes,
        m_params.embstrLimit == 0 ? std::string("derived from the threshold") : std::to_string(m_params.embstrLimit));
}

std::optional<ThresholdParam> ValkeyLayout::threshold() const {
    return ThresholdParam { "threshold", m_params.threshold, 16, 1024,
        "largest embedded object (header + expire + key + value) in bytes" };
}

Status ValkeyLayout::checkAllocator(const AllocatorModel& allocator) const {
    if (dynamic_cast<const MemcachedSlabModel*>(&allocator))
        return usageError("layout 'valkey' needs a malloc-style allocator (jemalloc or glibc), not memcached slabs",
            field::kAllocator);
    return Ok {};
}

std::uint32_t ValkeyLayout::effectiveEmbstrLimit(std::uint32_t threshold) const {
    if (m_params.embstrLimit != 0)
        return m_params.embstrLimit;
    // 9.1 createStringObject -> shouldEmbedStringObject(len, NULL, EXPIRY_NONE):
    // header + sdsReqSize(len, SDS_TYPE_8) <= threshold.
    const std::uint64_t fixed = m_params.headerBytes + kEmbeddedValueSdsOverhead;
    if (threshold <= fixed)
        return 0;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(threshold - fixed, kMaxEmbeddedValueBytes));
}

KeyLayout ValkeyLayout::describe(
    const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const {
    const std::uint64_t k = shape.keyBytes;
    const std::uint64_t v = shape.valueBytes;
    const bool forcedExpire = shape.keyBytes >= kKeySizeToIncludeExpire;
    // A stale expire field (KeyShape::staleExpire) is the object of the key's TTL, kept: sized and
    // embedded as with the TTL; only the expires table no longer holds the key.
    const bool objectExpire = shape.hasTtl || (shape.staleExpire && m_params.keepsExpireField);
    const bool wantsExpire = objectExpire || forcedExpire;
    // Embedded key: one byte of header size, then the key sds (object.c objectGetKey).
    const std::uint64_t embeddedKeyBytes = kKeyHeaderSizeByte
        + (m_params.keyAsSent ? sds::valkeyArgvBytes(k, kArgvEmbstrLimit) : sds::reqSize(k, sds::valkeyReqType(k)));
    // The decision's key term: 8.1 counted K + 3 (a type-5 header); PR #2087 uses the real header.
    const std::uint64_t decisionKeyBytes = m_params.exactKeySizing ? embeddedKeyBytes : k + 3;
    const std::uint64_t header = m_params.headerBytes;

    KeyLayout out;
    out.indexLinesPerGet = 1; // the bucket: one 64-byte line (hashtable.c bucket)
    out.pointerBytes = static_cast<std::uint16_t>(kPointerBytes * (shape.hasTtl ? 2 : 1)); // bucket slot(s)

    // An object without an embedded value (RAW or INT): createObjectWithKeyAndExpire reserves an
    // expire field whenever the allocation has 8 spare bytes.
    auto robjWithKey = [&](bool expire) {
        std::uint64_t bytes = kRobjBytes + (expire ? kExpireBytes : 0) + embeddedKeyBytes;
        if (!expire && allocator.usableSize(bytes) >= bytes + kExpireBytes)
            bytes += kExpireBytes;
        return bytes;
    };

    // Where the key's bytes start in the object (objectGetKey): after the header, the expire and the
    // header-size byte, its sds header.
    auto keyAt = [&](std::uint64_t objectHeader, bool expire) {
        return objectHeader + (expire ? kExpireBytes : 0) + embeddedKeyBytes - k - 1;
    };
    // The client's arguments (KeyLayout::transients), with the EMBSTR limit of the layout's own threshold,
    // not the swept one: a shape's layout then still changes once as the threshold grows
    // (LayoutModel::describe). They differ only where a swept 9.1 threshold moves the limit past the value.
    const std::uint32_t argvLimit = std::min(effectiveEmbstrLimit(m_params.threshold), kMaxEmbeddedValueBytes);
    const client_arguments::Rules arguments { header, header == kHeaderWithoutPointer ? kMinEmbeddedValueArea : 0,
        argvLimit, sds::valkeyNewLenBytes };
    using client_arguments::Value;
    auto addWriteTransients = [&](Value value) { client_arguments::addSetTransients(out, shape, arguments, value); };

    auto addRaw = [&](std::uint64_t valueBytes, std::uint64_t readBytes) {
        const auto robjBytes = robjWithKey(wantsExpire);
        out.encoding = Encoding::Raw;
        out.add({ robjBytes, robjBytes, 1, Purpose::Object, k,
            memcmpVectorEnd(keyAt(kRobjBytes, robjBytes > kRobjBytes + embeddedKeyBytes), k), true });
        out.add({ valueBytes, readBytes, 1, Purpose::Value, v });
        // The sds exists first (the argument's, or sdsnewlen in createStringObjectWithKeyAndExpire), then
        // createObjectWithKeyAndExpire makes the object.
        out.setMadeOrder({ 1, 0 });
        out.dependentLoads = 2;
        out.pointerBytes += kPointerBytes;
        return out;
    };
    if (shape.kind == ValueKind::RawString) {
        // APPEND/SETRANGE made the value a RAW sds (db.c dbUnshareStringValue), which dbSetValue swaps
        // into the key's object or objectSetKeyAndExpire wraps in a new one: never embedded again.
        const std::uint64_t buffer = shape.sdsBytes != 0 ? shape.sdsBytes : sds::valkeyNewLenBytes(v);
        return addRaw(buffer, std::min<std::uint64_t>(buffer, sds::headerBytesOf(buffer, v) + v + 1));
    }

    const bool isInteger = isIntegerKind(shape.kind) && shape.valueBytes <= kMaxIntegerChars;
    if (isInteger) {
        // tryObjectEncodingEx -> OBJ_ENCODING_INT; Valkey never shares integers in the keyspace
        // (objectSetKeyAndExpire copies a shared integer).
        const auto bytes = robjWithKey(wantsExpire);
        out.encoding = Encoding::Integer;
        // the key embedded, the value in the ptr field
        out.add({ bytes, bytes, 1, Purpose::Object, k + v,
            memcmpVectorEnd(keyAt(kRobjBytes, bytes > kRobjBytes + embeddedKeyBytes), k), true });
        out.dependentLoads = 1;
        addWriteTransients(Value::Integer);
        return out;
    }

    const bool argvEmbstr = v <= effectiveEmbstrLimit(threshold) && v <= kMaxEmbeddedValueBytes;
    const std::uint64_t valueArea = header == kHeaderWithoutPointer
        ? std::max<std::uint64_t>(v + kEmbeddedValueSdsOverhead, kMinEmbeddedValueArea)
        : v + kEmbeddedValueSdsOverhead;
    auto fits = [&](bool expire) {
        // createStringObjectWithKeyAndExpire (8.1) / shouldEmbedStringObject (9.1).
        return argvEmbstr
            && header + decisionKeyBytes + (expire ? kExpireBytes : 0) + v + kEmbeddedValueSdsOverhead <= threshold;
    };
    auto embeddedBytes
        = [&](bool expire) { return header + (expire ? kExpireBytes : 0) + embeddedKeyBytes + valueArea; };

    // SET k v EX t: dbAdd decides without the expire, then setExpire re-decides with it unless the
    // first allocation had room for an expire field already (db.c setExpire -> objectSetExpire).
    std::uint64_t embedded = 0;
    if (fits(forcedExpire)) {
        const auto bytes = embeddedBytes(forcedExpire);
        if (forcedExpire || allocator.usableSize(bytes) >= bytes + kExpireBytes)
            embedded = forcedExpire ? bytes : bytes + kExpireBytes; // expire field reserved from slack
        else if (!objectExpire)
            embedded = bytes;
        else if (fits(true))
            embedded = embeddedBytes(true);
    }
    if (embedded != 0) {
        out.encoding = Encoding::Embedded;
        const bool expireField = embedded > header + embeddedKeyBytes + valueArea;
        out.add(
            { embedded, embedded, 1, Purpose::Object, k + v, memcmpVectorEnd(keyAt(header, expireField), k), true });
        out.dependentLoads = 1;
        addWriteTransients(Value::Copied);
        if (header == kHeaderWithPointer)
            out.pointerBytes += kPointerBytes; // the robj ptr still points at the embedded value
        return out;
    }

    const auto valueBytes = sds::valkeyNewLenBytes(v);
    addWriteTransients(v > argvLimit ? Value::SdsKept : Value::Copied);
    return addRaw(valueBytes, valueBytes);
}

std::uint32_t ValkeyLayout::staleExpireNewValueBound(const KeyShape& after, Op op) const {
    // db.c dbSetValue keeps the old object, swapping in the new value's ptr, only when neither the old
    // object nor the new value is EMBSTR and both are unshared; otherwise objectSetKeyAndExpire makes a
    // new object with the old object's expire, which is -1 here: a new object without the field.
    switch (op) {
    case Op::Append:
    case Op::Prepend:
    case Op::SetRange:
        // t_string.c appendCommand: a RAW value grows in place; an INT one is unshared into a RAW
        // (dbUnshareStringValue -> dbReplaceValue), which swaps into the old object.
    case Op::Incr:
    case Op::Decr:
        // t_string.c incrDecrCommand: an INT changes in place; otherwise the new value is an unshared INT
        // (createStringObjectFromLongLongForValue) that dbReplaceValue swaps in.
        return kNoThresholdBound;
    default:
        break;
    }
    // SET: the client's value after tryObjectEncoding: a shared integer for 0..9999, an unshared INT
    // object for other longs, EMBSTR up to the client limit, else RAW.
    if (isIntegerKind(after.kind) && after.valueBytes <= kMaxIntegerChars)
        return after.kind == ValueKind::SmallInteger ? 0 : kNoThresholdBound;
    if (after.valueBytes > kMaxEmbeddedValueBytes)
        return kNoThresholdBound;
    if (m_params.embstrLimit != 0)
        return after.valueBytes <= m_params.embstrLimit ? 0 : kNoThresholdBound;
    // effectiveEmbstrLimit(t) = t - (header + sds type 8 overhead): EMBSTR from t = V + that on.
    return after.valueBytes == 0
        ? 0
        : static_cast<std::uint32_t>(after.valueBytes + m_params.headerBytes + kEmbeddedValueSdsOverhead);
}

} // namespace layoutlab
