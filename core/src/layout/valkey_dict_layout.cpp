// SPDX-License-Identifier: MIT
#include "layoutlab/layout/valkey_dict_layout.h"

#include "layoutlab/layout/sds.h"
#include "value_object.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
// dict.c dictEntryEmbedded {union v (8); dictEntry *next (8); uint8_t key_header_size; key_buf[]}:
// compactSizeEmbeddedDictEntry() = offsetof(key_buf) = 17, allocated with the key's sdsminlen.
constexpr std::uint64_t kEmbeddedEntryBytes = 17;
constexpr std::uint64_t kEmbeddedEntryPointerBytes = 16; // v.val, next
constexpr std::uint64_t kPointerBytes = 8; // the bucket slot
// object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT as the release builds it: client arguments (the key among them)
// up to this length arrive as EMBSTR objects. Keys follow the release's limit whatever the swept value
// limit (a build's limit only changes a key's header below 32 bytes, where limits under 31 are absurd),
// so a shape's layout still changes once as the threshold grows.
constexpr std::uint64_t kArgvEmbstrLimit = 44;
} // namespace

ValkeyDictLayout::ValkeyDictLayout(const ValkeyDictParams& params)
    : m_params(params) { }

std::string ValkeyDictLayout::spec() const {
    // key-header is named only when it is not the default, so that the specs runs stored before it are
    // found again.
    return fmt::format("valkey-8.0:embstr-limit={},shared-integers={}{}", m_params.embstrLimit,
        m_params.sharedIntegers ? "yes" : "no", m_params.keyAsSent ? "" : ",key-header=smallest");
}

std::string ValkeyDictLayout::description() const {
    return fmt::format("Valkey 8.0: dict entry with the key embedded {} + robj; EMBSTR for values of at "
                       "most {} bytes; expires in a second dict",
        m_params.keyAsSent ? "as sent" : "with the smallest header (as loaded from an RDB file)", m_params.embstrLimit);
}

std::optional<ThresholdParam> ValkeyDictLayout::threshold() const {
    return value_object::embstrLimitParam(m_params.embstrLimit);
}

Status ValkeyDictLayout::checkAllocator(const AllocatorModel& allocator) const {
    return value_object::requireMalloc(allocator, "valkey-8.0");
}

KeyLayout ValkeyDictLayout::describe(const KeyShape& shape, std::uint32_t threshold, const AllocatorModel&) const {
    KeyLayout out;
    out.indexLinesPerGet = shape.hasTtl ? 2 : 1; // keyspace slot, plus the expires slot (expireIfNeeded)
    out.pointerBytes = static_cast<std::uint16_t>(kPointerBytes + kEmbeddedEntryPointerBytes);
    // db.c dbAddInternal -> kvstoreDictAddRaw -> createEmbeddedEntry: the entry holds the argv key's sds.
    const std::uint64_t entryBytes = kEmbeddedEntryBytes
        + (m_params.keyAsSent ? sds::valkeyArgvBytes(shape.keyBytes, kArgvEmbstrLimit)
                              : sds::valkeyNewLenBytes(shape.keyBytes));
    out.add({ entryBytes, entryBytes, 1, Purpose::Entry, shape.keyBytes,
        memcmpVectorEnd(entryBytes - shape.keyBytes - 1, shape.keyBytes), true }); // dictSdsKeyCompare
    out.dependentLoads = 1; // the entry from the slot; the key compare reads the same allocation

    // object.c createStringObject / tryObjectEncodingEx, as in Redis 7.0 but with Valkey's sds types.
    value_object::add(out, shape, threshold, m_params.sharedIntegers, sds::valkeyNewLenBytes);
    if (shape.hasTtl)
        value_object::addExpireEntry(out); // setExpire: the entry's key points at the embedded key
    value_object::addWriteTransients(out, shape, m_params.embstrLimit, sds::valkeyNewLenBytes);
    value_object::madeInWriteOrder(out);
    return out;
}

} // namespace layoutlab
