// SPDX-License-Identifier: MIT
#include "layoutlab/layout/declared_layout.h"

#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/layout/layout_file.h"

#include "client_arguments.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// One evaluation of a layout: the key's shape and the encoding being tried.
struct Context {
    const KeyShape& shape;
    std::uint64_t storedValueBytes; // after the value framing
    bool nonZeroFlags;
    Encoding encoding;
    bool withoutKey = false; // the client-side EMBSTR limit is decided as if there were no key
};

bool atomHolds(const Condition::Term& t, const Context& ctx) {
    switch (t.atom) {
    case ConditionAtom::Ttl:
        return ctx.shape.hasTtl;
    case ConditionAtom::StaleExpire:
        return ctx.shape.staleExpire;
    case ConditionAtom::Embedded:
        return ctx.encoding == Encoding::Embedded;
    case ConditionAtom::Raw:
        return ctx.encoding == Encoding::Raw;
    case ConditionAtom::Integer:
        return ctx.encoding == Encoding::Integer;
    case ConditionAtom::SharedInteger:
        return ctx.encoding == Encoding::SharedInteger;
    case ConditionAtom::Flags:
        return ctx.nonZeroFlags;
    case ConditionAtom::KeyAtLeast:
        return ctx.shape.keyBytes >= t.number;
    case ConditionAtom::ValueAtLeast:
        return ctx.shape.valueBytes >= t.number;
    }
    return false;
}

bool holds(const Condition& c, const Context& ctx) {
    if (c.anyOf.empty())
        return true;
    return std::any_of(c.anyOf.begin(), c.anyOf.end(), [&](const auto& terms) {
        return std::all_of(terms.begin(), terms.end(), [&](const auto& t) { return atomHolds(t, ctx) != t.negated; });
    });
}

struct FieldSize {
    std::uint64_t bytes = 0;
    std::uint64_t decisionBytes = 0; // as the embed decision counts it
    std::uint64_t payloadBytes = 0;
    bool pointer = false;
};

FieldSize sizeOf(const FieldDefinition& f, const Context& ctx, const LayoutDefinition& def) {
    FieldSize s;
    if (f.content == FieldContent::Fixed) {
        s.bytes = s.decisionBytes = f.bytes;
        s.pointer = f.pointer;
        if (f.holdsInteger && ctx.encoding == Encoding::Integer) {
            s.pointer = false; // object.c: an INT object's ptr field holds the long itself
            s.payloadBytes = ctx.shape.valueBytes;
        }
        return s;
    }
    const bool isKey = f.content == FieldContent::Key;
    const std::uint64_t length = isKey ? ctx.shape.keyBytes : ctx.storedValueBytes;
    const std::uint64_t header = f.lengthHeader >= 0
        ? def.lengthHeaders[static_cast<std::size_t>(f.lengthHeader)].bytesFor(length)
        : f.headerBytes;
    const std::uint64_t decisionHeader
        = f.decisionHeaderBytes >= 0 ? static_cast<std::uint64_t>(f.decisionHeaderBytes) : header;
    s.bytes = std::max<std::uint64_t>(f.prefixBytes + header + length + f.terminatorBytes, f.minBytes);
    s.decisionBytes = f.prefixBytes + decisionHeader + length + f.terminatorBytes;
    s.payloadBytes = isKey ? ctx.shape.keyBytes : ctx.shape.valueBytes;
    s.pointer = f.pointer;
    return s;
}

// Fields added afterwards (LayoutDefinition: addedWhen), per allocation and field.
using Forced = std::vector<std::vector<char>>;

// No field added yet.
Forced noFieldsForced(const LayoutDefinition& def) {
    Forced forced(def.allocations.size());
    for (std::size_t a = 0; a < def.allocations.size(); ++a)
        forced[a].assign(def.allocations[a].fields.size(), 0);
    return forced;
}

struct BuiltAllocation {
    bool present = false;
    std::uint64_t requestedBytes = 0;
    std::uint64_t decisionBytes = 0;
    std::uint64_t payloadBytes = 0;
    std::uint64_t pointerBytes = 0;
    std::uint64_t valueFieldBytes = 0; // the Value field's bytes (what memcached chunks hold)
    std::uint64_t valuePayloadBytes = 0;
    std::uint32_t memcmpEnd = 0; // where a GET's compare of the key loads to (key_layout.h memcmpVectorEnd)
    bool holdsKey = false; // a Key field is present
    std::vector<char> fieldPresent;
};

// The allocation as the engine makes it; `allocator` (when given) lets slack fields in.
BuiltAllocation build(const LayoutDefinition& def, std::size_t index, const Context& ctx, const Forced& forced,
    const AllocatorModel* allocator) {
    const auto& a = def.allocations[index];
    BuiltAllocation b;
    b.present = holds(a.when, ctx);
    if (!b.present)
        return b;
    b.fieldPresent.assign(a.fields.size(), 0);
    for (std::size_t i = 0; i < a.fields.size(); ++i) {
        const auto& f = a.fields[i];
        if (ctx.withoutKey && f.content == FieldContent::Key)
            continue;
        if (!holds(f.when, ctx) && !forced[index][i])
            continue;
        const auto s = sizeOf(f, ctx, def);
        b.fieldPresent[i] = 1;
        b.requestedBytes += s.bytes;
        b.decisionBytes += s.decisionBytes;
        b.payloadBytes += s.payloadBytes;
        b.pointerBytes += s.pointer ? s.bytes : 0;
        if (f.content == FieldContent::Value) {
            b.valueFieldBytes += s.bytes;
            b.valuePayloadBytes += s.payloadBytes;
        }
    }
    auto keyCompare = [&] {
        std::uint64_t offset = 0;
        for (std::size_t i = 0; i < a.fields.size(); ++i) {
            if (!b.fieldPresent[i])
                continue;
            const auto& f = a.fields[i];
            const auto s = sizeOf(f, ctx, def);
            if (f.content == FieldContent::Key) { // the key's bytes follow its prefix and length header
                b.holdsKey = true;
                return memcmpVectorEnd(offset + s.bytes - f.terminatorBytes - ctx.shape.keyBytes, ctx.shape.keyBytes);
            }
            offset += s.bytes;
        }
        return std::uint32_t { 0 };
    };
    if (!allocator) {
        b.memcmpEnd = keyCompare();
        return b;
    }
    // object.c createObjectWithKeyAndExpire: a field the size class has room for comes for free.
    for (std::size_t i = 0; i < a.fields.size(); ++i) {
        const auto& f = a.fields[i];
        if (b.fieldPresent[i] || !f.whenSlack)
            continue;
        const auto s = sizeOf(f, ctx, def);
        if (allocator->usableSize(b.requestedBytes) >= b.requestedBytes + s.bytes) {
            b.fieldPresent[i] = 1;
            b.requestedBytes += s.bytes;
            b.payloadBytes += s.payloadBytes;
            b.pointerBytes += s.pointer ? s.bytes : 0;
        }
    }
    b.memcmpEnd = keyCompare();
    return b;
}

// [write] order: the allocations listed, in that order, then any others as a GET reads them.
void addWriteOrder(const LayoutDefinition& def, KeyLayout& out, const std::vector<std::uint8_t>& madeAt) {
    if (def.madeOrder.empty())
        return;
    std::vector<char> listed(out.allocationCount, 0);
    std::vector<std::uint8_t> order;
    for (const int a : def.madeOrder)
        if (const auto at = madeAt[static_cast<std::size_t>(a)]; at != UINT8_MAX && at < out.allocationCount) {
            order.push_back(at);
            listed[at] = 1;
        }
    for (std::uint8_t at = 0; at < out.allocationCount; ++at)
        if (!listed[at])
            order.push_back(at);
    out.setMadeOrder(order.data(), order.size());
}

// [write] arguments: SET's argv (client_arguments.h), each argument an EMBSTR up to the client limit at the
// layout's own threshold, as the built-in models take it.
void addArguments(const LayoutDefinition& def, std::uint64_t autoLimitFixedBytes, KeyLayout& out, const Context& ctx) {
    if (def.arguments == LayoutDefinition::Arguments::None || !def.threshold)
        return;
    const std::uint64_t configured = def.threshold->value;
    std::uint64_t limit = configured; // Dict: the EMBSTR limit is the threshold swept
    if (def.arguments == LayoutDefinition::Arguments::Valkey)
        limit = def.clientValueLimit >= 0 ? static_cast<std::uint64_t>(def.clientValueLimit)
            : def.clientValueLimit == -2  ? (configured > autoLimitFixedBytes ? configured - autoLimitFixedBytes : 0)
                                          : UINT64_MAX;
    limit = std::min<std::uint64_t>(limit, def.maxEmbeddedValueBytes);
    const LengthHeader* sdsHeader = nullptr;
    for (const auto& header : def.lengthHeaders)
        if (header.name == "sds")
            sdsHeader = &header;
    client_arguments::Rules rules { def.argumentHeaderBytes, def.argumentMinValueBytes, limit,
        [sdsHeader](std::uint64_t len) { return (sdsHeader ? sdsHeader->bytesFor(len) : 0) + len + 1; } };
    using client_arguments::Value;
    if (def.arguments == LayoutDefinition::Arguments::Dict)
        return client_arguments::addSetTransients(out, ctx.shape, rules, Value::Stored);
    if (ctx.shape.kind == ValueKind::RawString)
        return; // APPEND or SETRANGE made the value: no SET of it to model
    const Value value = ctx.encoding == Encoding::Integer                     ? Value::Integer
        : ctx.encoding == Encoding::Embedded || ctx.shape.valueBytes <= limit ? Value::Copied
                                                                              : Value::SdsKept;
    client_arguments::addSetTransients(out, ctx.shape, rules, value);
}

// [write]: both, for a key the engine stores.
void addWrite(const LayoutDefinition& def, std::uint64_t autoLimitFixedBytes, KeyLayout& out, const Context& ctx,
    const std::vector<std::uint8_t>& madeAt) {
    if (!out.stored)
        return;
    addWriteOrder(def, out, madeAt);
    addArguments(def, autoLimitFixedBytes, out, ctx);
}

} // namespace

std::uint32_t LengthHeader::bytesFor(std::uint64_t length) const {
    if (length == 0 && emptyBytes >= 0)
        return static_cast<std::uint32_t>(emptyBytes);
    for (const auto& [largest, bytes] : steps)
        if (length <= largest)
            return bytes;
    return otherwiseBytes;
}

DeclaredLayout::DeclaredLayout(LayoutDefinition definition)
    : m_def(std::move(definition)) {
    if (m_def.clientValueLimit == -2 && m_def.embedInto >= 0) {
        // 9.1 shouldEmbedStringObject(len, NULL, EXPIRY_NONE): the embedding allocation with no key, no TTL
        // and an empty value, whatever the key's shape; fields added later do not count.
        const KeyShape bare {};
        const Context none { bare, 0, false, Encoding::Embedded, true };
        m_autoLimitFixedBytes
            = build(m_def, static_cast<std::size_t>(m_def.embedInto), none, noFieldsForced(m_def), nullptr)
                  .decisionBytes;
    }
}

bool DeclaredLayout::clientEmbeds(std::uint64_t v, std::uint32_t threshold) const {
    if (m_def.clientValueLimit == -2)
        return threshold > m_autoLimitFixedBytes && v <= threshold - m_autoLimitFixedBytes;
    return m_def.clientValueLimit < 0 || v <= static_cast<std::uint64_t>(m_def.clientValueLimit);
}

std::uint32_t DeclaredLayout::staleExpireNewValueBound(const KeyShape& after, Op op) const {
    // The old object stays (the new value swapped into it) where neither it nor the new value is
    // embedded: APPEND and INCR make an unshared, unembedded value; SET brings the client's value as it
    // arrives: a small integer as the shared object (object.c tryObjectEncoding), a string embedded up to
    // the client limit.
    if (op == Op::Append || op == Op::Prepend || op == Op::Incr || op == Op::Decr)
        return kNoThresholdBound;
    if (m_def.integerMaxChars > 0 && isIntegerKind(after.kind) && after.valueBytes <= m_def.integerMaxChars)
        return after.kind == ValueKind::SmallInteger ? 0 : kNoThresholdBound;
    const auto v = frameValue(m_def.framing, after.valueBytes, m_def.framingVersionBytes).storedBytes;
    if (m_def.embedRule == EmbedRule::Never || v > m_def.maxEmbeddedValueBytes)
        return kNoThresholdBound;
    if (m_def.clientValueLimit == -2) // embedded from the threshold at which the derived limit reaches v
        return static_cast<std::uint32_t>(
            std::min<std::uint64_t>(std::max(v, std::uint64_t { 1 }) + m_autoLimitFixedBytes, UINT32_MAX - 1));
    if (m_def.clientValueLimit >= 0)
        return v <= static_cast<std::uint64_t>(m_def.clientValueLimit) ? 0 : kNoThresholdBound;
    return kNoThresholdBound;
}

std::string DeclaredLayout::spec() const {
    return layoutFileSpec(m_def.path) + "#" + m_def.contentHash;
}

std::string DeclaredLayout::description() const {
    return m_def.description.empty() ? m_def.name + " (layout file)" : m_def.name + ": " + m_def.description;
}

Status DeclaredLayout::checkAllocator(const AllocatorModel& allocator) const {
    const bool slabs = dynamic_cast<const MemcachedSlabModel*>(&allocator) != nullptr;
    if (m_def.allocators == LayoutDefinition::Allocators::Malloc && slabs)
        return usageError(fmt::format("layout file {} ({}) needs a malloc-style allocator (jemalloc or glibc), not "
                                      "memcached slabs ([layout] allocators = \"malloc\")",
                              m_def.path, m_def.name),
            field::kAllocator);
    if (m_def.chunked && slabs
        && static_cast<const MemcachedSlabModel&>(allocator).params().chunkMaxBytes <= m_def.chunkHeaderBytes)
        return usageError(
            fmt::format("layout file {} ({}): the allocator's largest chunk ({} bytes) cannot hold a "
                        "chunk header of {} bytes ([chunking] chunk_header_bytes)",
                m_def.path, m_def.name, static_cast<const MemcachedSlabModel&>(allocator).params().chunkMaxBytes,
                m_def.chunkHeaderBytes),
            field::kAllocator);
    if (m_def.allocators == LayoutDefinition::Allocators::Slabs && !slabs)
        return usageError(fmt::format("layout file {} ({}) stores items in memcached's slab classes: use the "
                                      "memcached allocator ([layout] allocators = \"slabs\")",
                              m_def.path, m_def.name),
            field::kAllocator);
    return Ok {};
}

KeyLayout DeclaredLayout::describe(
    const KeyShape& shape, std::uint32_t threshold, const AllocatorModel& allocator) const {
    const auto& def = m_def;
    const auto framed = frameValue(def.framing, shape.valueBytes, def.framingVersionBytes);
    Context ctx { shape, framed.storedBytes, framed.nonZeroFlags, Encoding::Raw };
    Forced forced = noFieldsForced(def);

    // The embed rule, for the value as stored; `forced` fields count in the decision.
    auto embeds = [&]() {
        const std::uint64_t v = framed.storedBytes;
        if (v > def.maxEmbeddedValueBytes)
            return false;
        switch (def.embedRule) {
        case EmbedRule::Never:
            return false;
        case EmbedRule::Always:
            return true;
        case EmbedRule::ValueAtMostThreshold:
            return v <= threshold;
        case EmbedRule::ValueAtMost:
            return v <= def.embedValueLimit;
        case EmbedRule::TotalAtMostThreshold:
            break;
        }
        const auto into = static_cast<std::size_t>(def.embedInto);
        if (!clientEmbeds(v, threshold))
            return false;
        Context embedded = ctx;
        embedded.encoding = Encoding::Embedded;
        return build(def, into, embedded, forced, nullptr).decisionBytes <= threshold;
    };

    const bool isInteger
        = def.integerMaxChars > 0 && isIntegerKind(shape.kind) && shape.valueBytes <= def.integerMaxChars;
    if (isInteger)
        ctx.encoding = def.sharedSmallIntegers && shape.kind == ValueKind::SmallInteger ? Encoding::SharedInteger
                                                                                        : Encoding::Integer;
    else
        ctx.encoding = embeds() ? Encoding::Embedded : Encoding::Raw;

    std::vector<BuiltAllocation> built(def.allocations.size());
    auto buildAll = [&] {
        for (std::size_t a = 0; a < def.allocations.size(); ++a)
            built[a] = build(def, a, ctx, forced, &allocator);
    };
    buildAll();
    // Fields added after the key was created (db.c setExpire -> objectSetExpire): the object is made again
    // with them, and the embedding decided again.
    bool added = false;
    for (std::size_t a = 0; a < def.allocations.size(); ++a)
        for (std::size_t f = 0; built[a].present && f < def.allocations[a].fields.size(); ++f) {
            const auto& field = def.allocations[a].fields[f];
            if (field.hasAddedWhen && !built[a].fieldPresent[f] && holds(field.addedWhen, ctx)) {
                forced[a][f] = 1;
                added = true;
            }
        }
    if (added) {
        if (ctx.encoding == Encoding::Embedded && !embeds())
            ctx.encoding = Encoding::Raw;
        buildAll();
    }

    KeyLayout out;
    out.encoding = ctx.encoding == Encoding::Embedded ? def.embeddedEncoding : ctx.encoding;
    const bool expiresSlot = shape.hasTtl && def.index.expiresTable;
    // The entry's pointer in its bucket, and in the expires table's too.
    const std::uint64_t slotPointerBytes = std::uint64_t { def.index.params.slotPointerBytes } * (expiresSlot ? 2 : 1);
    std::uint64_t pointerBytes = slotPointerBytes;
    const std::uint64_t bucketLines = def.index.kind == IndexKind::ValkeyHashtable
        ? std::max<std::uint64_t>(1, (def.index.params.bucketBytes + kCacheLineBytes - 1) / kCacheLineBytes)
        : 1;
    std::uint64_t indexLines = bucketLines;
    std::uint64_t loads = ctx.encoding == Encoding::SharedInteger ? 1 : 0; // the shared object is still read

    std::vector<std::uint8_t> madeAt(def.allocations.size(), UINT8_MAX); // where each is in `out`
    auto addAllocation = [&](std::size_t a, bool read) {
        const auto& b = built[a];
        const auto purpose = def.allocations[a].purpose;
        pointerBytes += b.pointerBytes;
        if (read) {
            loads += 1;
            if (def.allocations[a].indexedBy == IndexedBy::Expires)
                indexLines += bucketLines;
        }
        const std::uint64_t chunkMax
            = def.chunked ? static_cast<const MemcachedSlabModel&>(allocator).params().chunkMaxBytes : UINT64_MAX;
        madeAt[a] = out.allocationCount;
        if (!def.chunked || b.valueFieldBytes == 0 || b.requestedBytes <= chunkMax) {
            out.add(
                { b.requestedBytes, read ? b.requestedBytes : 0, 1, purpose, b.payloadBytes, b.memcmpEnd, b.holdsKey });
            return;
        }
        // items.c do_item_alloc: a header item (the fields but the value, plus an item_chunk), then chunks
        // of min(remaining + sizeof(item_chunk), slab_chunk_max) bytes holding the value field.
        out.encoding = Encoding::ChunkedItem;
        const std::uint64_t header = b.requestedBytes - b.valueFieldBytes + def.chunkHeaderBytes;
        // The chunk header sits before the fields (items.c: ITEM_key after the item_chunk of a chunked item).
        out.add({ header, read ? header : 0, 1, Purpose::ItemHeader, b.payloadBytes - b.valuePayloadBytes,
            b.memcmpEnd ? b.memcmpEnd + def.chunkHeaderBytes : 0, b.holdsKey });
        const std::uint64_t data = b.valueFieldBytes;
        const std::uint64_t perChunk = chunkMax - def.chunkHeaderBytes;
        const std::uint64_t fullChunks = data / perChunk;
        const std::uint64_t remainder = data % perChunk;
        // The value's bytes fill the full chunks first; framing and terminator count in the last one.
        const std::uint64_t value = b.valuePayloadBytes;
        const std::uint64_t fullPayload = fullChunks ? std::min(perChunk, value / fullChunks) : 0;
        if (fullChunks > 0)
            out.add({ chunkMax, read ? chunkMax : 0, static_cast<std::uint32_t>(fullChunks), Purpose::ItemChunk,
                fullPayload });
        if (remainder > 0)
            out.add({ remainder + def.chunkHeaderBytes, read ? remainder + def.chunkHeaderBytes : 0, 1,
                Purpose::ItemChunk, value - fullPayload * fullChunks });
        const std::uint64_t chunks = fullChunks + (remainder > 0 ? 1 : 0);
        if (read)
            loads += chunks;
        pointerBytes += std::uint64_t { def.chunkPointerBytes } * chunks;
    };
    // The GET path first, in its order (the cache model reads allocations in this order), then the rest.
    std::vector<char> onPath(def.allocations.size(), 0);
    for (const int a : def.getPath)
        onPath[static_cast<std::size_t>(a)] = 1;
    for (const int a : def.getPath)
        if (built[static_cast<std::size_t>(a)].present)
            addAllocation(static_cast<std::size_t>(a), true);
    for (std::size_t a = 0; a < def.allocations.size(); ++a)
        if (!onPath[a] && built[a].present)
            addAllocation(a, false);

    if (def.chunked) {
        // slabs_clsid() == 0 for an item over -I: "SERVER_ERROR object too large for cache".
        const auto& slabs = static_cast<const MemcachedSlabModel&>(allocator);
        for (std::size_t a = 0; a < def.allocations.size(); ++a)
            if (built[a].present && built[a].valueFieldBytes > 0
                && built[a].requestedBytes > slabs.params().itemSizeMaxBytes) {
                out.stored = false;
                out.allocationCount = 0;
                out.allocations = {};
                out.encoding = def.embeddedEncoding;
                loads = 1;
                pointerBytes = slotPointerBytes + built[a].pointerBytes;
            }
    }
    addWrite(def, m_autoLimitFixedBytes, out, ctx, madeAt);
    out.indexLinesPerGet = static_cast<std::uint8_t>(std::min<std::uint64_t>(indexLines, 255));
    out.dependentLoads = static_cast<std::uint8_t>(std::min<std::uint64_t>(loads, 255));
    out.pointerBytes = static_cast<std::uint16_t>(std::min<std::uint64_t>(pointerBytes, UINT16_MAX));
    return out;
}

} // namespace layoutlab
