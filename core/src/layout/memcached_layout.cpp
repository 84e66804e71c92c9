// SPDX-License-Identifier: MIT
#include "layoutlab/layout/memcached_layout.h"

#include "layoutlab/alloc/memcached_slabs.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
constexpr std::uint64_t kItemHeaderBytes = 48; // memcached.h sizeof(item), LP64
constexpr std::uint64_t kItemChunkHeaderBytes = 48; // memcached.h sizeof(item_chunk)
constexpr std::uint64_t kCasBytes = 8; // memcached.h ITEM_CAS: uint64_t in data[]
constexpr std::uint64_t kClientFlagsBytes = 4; // item_make_header: sizeof(flags) when flags != 0
constexpr std::uint64_t kValueTerminatorBytes = 2; // proto_text.c: vlen += 2 for "\r\n"
constexpr std::uint64_t kKeyTerminatorBytes = 1; // items.c: nkey + 1
constexpr std::uint16_t kItemPointerBytes = 24; // next, prev, h_next
constexpr std::uint16_t kChunkPointerBytes = 16; // item_chunk next, prev
constexpr std::uint16_t kBucketPointerBytes = 8; // assoc.c primary_hashtable slot
} // namespace

MemcachedLayout::MemcachedLayout(const MemcachedParams& params)
    : m_params(params) { }

std::string MemcachedLayout::spec() const {
    std::string text
        = fmt::format("memcached-1.6:framing={},cas={}", framingName(m_params.framing), m_params.cas ? "yes" : "no");
    if (m_params.versionBytes != 0)
        text += fmt::format(",version-bytes={}", m_params.versionBytes);
    return text;
}

std::string MemcachedLayout::description() const {
    return fmt::format("memcached 1.6 item: 48-byte header{}, key + NUL, flags if non-zero, value + CRLF, in slab "
                       "chunks; values framed '{}'",
        m_params.cas ? " + CAS" : "", framingName(m_params.framing));
}

Status MemcachedLayout::checkAllocator(const AllocatorModel& allocator) const {
    if (!dynamic_cast<const MemcachedSlabModel*>(&allocator))
        return usageError(
            "layout 'memcached-1.6' stores items in memcached's slab classes: use the memcached allocator",
            field::kAllocator);
    return Ok {};
}

std::uint64_t MemcachedLayout::itemTotalBytes(
    std::uint32_t keyBytes, std::uint64_t storedBytes, bool nonZeroFlags) const {
    // memcached.h ITEM_ntotal: sizeof(item) + nkey + 1 + nsuffix + nbytes (+ CAS).
    return kItemHeaderBytes + (m_params.cas ? kCasBytes : 0) + keyBytes + kKeyTerminatorBytes
        + (nonZeroFlags ? kClientFlagsBytes : 0) + storedBytes + kValueTerminatorBytes;
}

KeyLayout MemcachedLayout::describe(const KeyShape& shape, std::uint32_t, const AllocatorModel& allocator) const {
    const auto& slabs = static_cast<const MemcachedSlabModel&>(allocator);
    const auto framed = frameValue(m_params.framing, shape.valueBytes, m_params.versionBytes);
    const std::uint64_t total = itemTotalBytes(shape.keyBytes, framed.storedBytes, framed.nonZeroFlags);
    const std::uint64_t chunkMax = slabs.params().chunkMaxBytes;

    KeyLayout out;
    out.indexLinesPerGet = 1;
    out.dependentLoads = 1;
    out.pointerBytes = kBucketPointerBytes + kItemPointerBytes;
    if (total > slabs.params().itemSizeMaxBytes) {
        // slabs_clsid() == 0: "SERVER_ERROR object too large for cache"; nothing is stored.
        out.encoding = Encoding::Item;
        out.stored = false;
        return out;
    }
    if (total <= chunkMax) {
        out.encoding = Encoding::Item;
        // assoc.c assoc_find compares the key (ITEM_key: after the header and the CAS) with memcmp.
        out.add({ total, total, 1, Purpose::Item, std::uint64_t { shape.keyBytes } + shape.valueBytes,
            memcmpVectorEnd(kItemHeaderBytes + (m_params.cas ? kCasBytes : 0), shape.keyBytes), true });
        return out;
    }
    // items.c do_item_alloc: a header item (item + item_chunk + CAS + key + suffix), then
    // do_item_alloc_chunk() pieces of min(remaining + sizeof(item_chunk), slab_chunk_max) bytes.
    out.encoding = Encoding::ChunkedItem;
    const std::uint64_t header = kItemHeaderBytes + kItemChunkHeaderBytes + (m_params.cas ? kCasBytes : 0)
        + shape.keyBytes + kKeyTerminatorBytes + (framed.nonZeroFlags ? kClientFlagsBytes : 0);
    out.add({ header, header, 1, Purpose::ItemHeader, shape.keyBytes,
        memcmpVectorEnd(header - shape.keyBytes - kKeyTerminatorBytes - (framed.nonZeroFlags ? kClientFlagsBytes : 0),
            shape.keyBytes),
        true });
    const std::uint64_t data = framed.storedBytes + kValueTerminatorBytes;
    const std::uint64_t perChunk = chunkMax - kItemChunkHeaderBytes;
    const std::uint64_t fullChunks = data / perChunk;
    const std::uint64_t remainder = data % perChunk;
    // The value's bytes by chunk: full chunks first, the rest in the last one (where the framing's and
    // the terminator's bytes are counted). When the data fills the last full chunk exactly, the
    // division's remainder (fewer bytes than there are chunks) is left out.
    const std::uint64_t value = shape.valueBytes;
    const std::uint64_t fullPayload = fullChunks ? std::min(perChunk, value / fullChunks) : 0;
    if (fullChunks > 0)
        out.add({ chunkMax, chunkMax, static_cast<std::uint32_t>(fullChunks), Purpose::ItemChunk, fullPayload });
    if (remainder > 0)
        out.add({ remainder + kItemChunkHeaderBytes, remainder + kItemChunkHeaderBytes, 1, Purpose::ItemChunk,
            value - fullPayload * fullChunks });
    const auto chunks = fullChunks + (remainder > 0 ? 1 : 0);
    out.dependentLoads = static_cast<std::uint8_t>(std::min<std::uint64_t>(1 + chunks, 255));
    out.pointerBytes = static_cast<std::uint16_t>(out.pointerBytes + kChunkPointerBytes * chunks);
    return out;
}

} // namespace layoutlab
