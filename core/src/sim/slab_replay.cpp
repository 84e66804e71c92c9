// SPDX-License-Identifier: MIT
#include "layoutlab/sim/slab_replay.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>

namespace layoutlab {

namespace {
constexpr JemallocArenaModel::Handle kNoHandle { UINT32_MAX, UINT32_MAX };
constexpr std::uint32_t kInExpires = 1u << 31; // record flag: the key is in the expires index
constexpr std::uint32_t kLayoutMask = kInExpires - 1; // record: the id of the key's layout (0: none)
constexpr std::uint8_t kUnmade = 0xff; // ArenaLayout::count of a layout not made yet
// A class index in an ArenaLayout: 16 bits, as in SizeClassTable's own lookup (jemalloc has about 230).
std::uint16_t narrowClass(std::uint32_t classIndex) {
    assert(classIndex <= UINT16_MAX);
    return static_cast<std::uint16_t>(classIndex);
}
} // namespace

// What the arena needs of a key's layout, in one cache line (a write reads its old and its new one): its
// allocations' classes (in the layout's order) and the order they are made in, and the command's
// transients' classes. With what the engine's rewrite rules ask of it (LayoutModel::keptPurposes): its
// encoding, its allocations' purposes (and which never stay: `unmatchable`, LayoutModel::kUnmatchable),
// and whether each kind of rewrite brings its value unembedded.
struct alignas(64) ArenaLayout {
    bool stored = true;
    std::uint8_t count = 0;
    std::uint8_t transientCount = 0;
    Encoding encoding = Encoding::Raw;
    std::uint8_t unembeddedByRule = 0; // bit ruleIndex(op): the new value arrives unembedded
    std::uint8_t unmatchable = 0; // bit n: allocation n is never kept (a run of chunks)
    std::array<std::uint8_t, KeyLayout::kMaxAllocations> made {};
    std::array<Purpose, KeyLayout::kMaxAllocations> purposes {};
    std::array<std::uint16_t, KeyLayout::kMaxAllocations> classes {};
    std::array<std::uint16_t, KeyLayout::kMaxTransients> transients {};

    // The identities LayoutModel::keepMatching compares.
    std::array<LayoutModel::AllocationIdentity, KeyLayout::kMaxAllocations> identities() const {
        std::array<LayoutModel::AllocationIdentity, KeyLayout::kMaxAllocations> out {};
        for (std::uint8_t n = 0; n < count; ++n)
            out[n] = { purposes[n], (unmatchable >> n) & 1u ? LayoutModel::kUnmatchable : classes[n] };
        return out;
    }
};
static_assert(sizeof(ArenaLayout) == 64, "a layout stays in one cache line");
static_assert(KeyLayout::kMaxAllocations <= 8, "ArenaLayout::unmatchable has a bit per allocation");

struct SlabReplay::ThresholdArena {
    std::uint32_t threshold = 0;
    JemallocArenaModel arena;
    SlabIndex keys;
    SlabIndex expires;
    // Per key id, side by side so that a write touches one place: its record (the id of its layout |
    // kInExpires, in the first slot's classIndex) and `stride` handles, in its layout's order.
    std::uint32_t stride = 2;
    std::vector<JemallocArenaModel::Handle> slots;
    std::size_t keyIds = 0;
    // The layouts keys have at this threshold, as the arena needs them, by the replay's shape id
    // (SlabReplay::shapeIdOf; 0: none), made when first asked for (`count` 0xff: not yet).
    std::vector<ArenaLayout> layouts { ArenaLayout {} };

    ThresholdArena(
        std::uint32_t t, const SizeClassTable& table, JemallocArenaModel::Options options, const IndexPolicy& policy)
        : threshold(t)
        , arena(table, options)
        , keys(policy.kind, policy.params)
        , expires(policy.kind, policy.params) { }

    void reserve(std::uint32_t keyId, std::uint32_t needed) {
        if (needed > stride) {
            // Rare: a layout with more allocations than seen so far; every key's slots move once.
            std::vector<JemallocArenaModel::Handle> wider(keyIds * (needed + 1), kNoHandle);
            for (std::size_t k = 0; k < keyIds; ++k)
                std::copy_n(slots.begin() + static_cast<std::ptrdiff_t>(k * (stride + 1)), stride + 1,
                    wider.begin() + static_cast<std::ptrdiff_t>(k * (needed + 1)));
            slots = std::move(wider);
            stride = needed;
        }
        if (keyId >= keyIds) {
            const std::size_t size = std::max<std::size_t>(std::size_t { keyId } + 1, keyIds * 2);
            slots.resize(size * (stride + 1), kNoHandle);
            for (std::size_t k = keyIds; k < size; ++k)
                slots[k * (stride + 1)].classIndex = 0;
            keyIds = size;
        }
    }
    std::uint32_t& record(std::uint32_t keyId) { return slots[std::size_t { keyId } * (stride + 1)].classIndex; }
    std::uint32_t recordOf(std::uint32_t keyId) const {
        return keyId < keyIds ? slots[std::size_t { keyId } * (stride + 1)].classIndex : 0;
    }
    JemallocArenaModel::Handle* of(std::uint32_t keyId) { return &slots[std::size_t { keyId } * (stride + 1) + 1]; }
    void prefetch(std::uint32_t keyId) const {
        if (keyId < keyIds)
            __builtin_prefetch(&slots[std::size_t { keyId } * (stride + 1)], 1);
    }
};

namespace {
// The ops whose rewrite rules are the same (LayoutModel::keptPurposes): one representative each.
constexpr Op kRuleOps[] = { Op::Set, Op::Expire, Op::Append, Op::Incr };
std::size_t ruleIndex(Op op) {
    switch (op) {
    case Op::Expire:
    case Op::Persist:
        return 1;
    case Op::Append:
    case Op::Prepend:
    case Op::SetRange:
        return 2;
    case Op::Incr:
    case Op::Decr:
        return 3;
    default:
        return 0;
    }
}
} // namespace

SlabReplay::SlabReplay(const LayoutModel& layout, const JemallocModel& allocator,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, const SlabModelOptions& slabOptions)
    : m_layout(&layout)
    , m_allocator(&allocator)
    , m_replay(&replay)
    , m_policy(layout.indexPolicy()) {
    JemallocArenaModel::Options options;
    options.threadCache = slabOptions.threadCache;
    options.largePad = allocator.largePad();
    options.startBins = slabOptions.startBins;
    for (std::uint32_t t : thresholds)
        m_arenas.push_back(std::make_unique<ThresholdArena>(t, allocator.table(), options, m_policy));
}

SlabReplay::~SlabReplay() = default;

const SlabReplay::ThresholdArena* SlabReplay::arenaOf(std::uint32_t threshold) const {
    for (const auto& t : m_arenas)
        if (t->threshold == threshold)
            return t.get();
    return nullptr;
}

std::optional<ArenaUsage> SlabReplay::usageAt(std::uint32_t threshold) const {
    const ThresholdArena* t = arenaOf(threshold);
    if (!t)
        return std::nullopt;
    const JemallocArenaModel& a = t->arena;
    return ArenaUsage { a.allocatedBytes(), a.activeBytes(), a.peakAllocatedBytes(), a.peakActiveBytes() };
}

std::vector<HeldSlabs> SlabReplay::heldSlabsAt(std::uint32_t threshold) const {
    std::vector<HeldSlabs> out;
    if (const ThresholdArena* t = arenaOf(threshold))
        for (std::uint32_t bin = 0; bin < t->arena.binCount(); ++bin)
            if (const std::uint64_t slabs = t->arena.slabsHeld(bin))
                out.push_back({ m_allocator->table().classes()[bin].size, slabs });
    return out;
}

void SlabReplay::stored(std::uint32_t keyId, const KeyState& key, Op op) {
    // The key's shape is the same at every threshold unless it keeps a stale expire field below some.
    const std::uint32_t sdsBytes = key.kind() == ValueKind::RawString ? m_replay->sdsBytesOf(keyId) : 0;
    const std::uint32_t common = key.thresholdFree() ? shapeIdOf(key.shape(), sdsBytes) : 0;
    for (auto& t : m_arenas)
        store(*t, keyId, key, op, common != 0 ? common : shapeIdOf(key.shapeAt(t->threshold), sdsBytes));
}

namespace {
bool isSet(Op op) { return op == Op::Set || op == Op::Add || op == Op::Replace; }
// The shape a SET request gives its key with a TTL or without.
std::uint64_t setShape(const Request& r, bool ttl) { return packShape(r.keyBytes, r.valueBytes, ttl, r.kind); }
} // namespace

void SlabReplay::prefetch(const Request& ahead) {
    for (const auto& t : m_arenas)
        t->prefetch(ahead.keyId);
    // The shapes a SET makes: the new value with the key's TTL as it was (KeyspaceReplay::write), then
    // with the request's (setTtl or clearTtl). Which TTL the key has is not known yet: both.
    if (isSet(ahead.op)) {
        m_idByShape.prefetch(setShape(ahead, false));
        m_idByShape.prefetch(setShape(ahead, true));
    }
}

void SlabReplay::prefetchNear(const Request& ahead, const KeyState& key) {
    // The slots prefetch(ahead) asked for are here: the layouts the write will read, old and new (the
    // shapes it passes through, as prefetch(ahead) has them), and the index bucket a new key or a delete
    // will change.
    std::array<std::uint32_t, 2> newIds {};
    auto idOf = [&](std::uint64_t shape) {
        const std::uint64_t* found = m_idByShape.find(shape);
        return found ? static_cast<std::uint32_t>(*found) : 0u;
    };
    if (isSet(ahead.op)) {
        const bool ttl = ahead.ttlSeconds == kKeepTtl ? key.hasTtl() : ahead.ttlSeconds != 0;
        newIds[0] = idOf(setShape(ahead, key.hasTtl()));
        if (ttl != key.hasTtl())
            newIds[1] = idOf(setShape(ahead, ttl));
    } else if (ahead.op == Op::Expire && key.live() && key.plainShape()) {
        newIds[0] = idOf(packShape(key.keyBytes(), key.valueBytes, true, key.kind()));
    }
    for (const auto& t : m_arenas) {
        const std::uint32_t record = t->recordOf(ahead.keyId);
        const std::uint32_t oldId = record & kLayoutMask;
        if (oldId != 0)
            __builtin_prefetch(&t->layouts[oldId]);
        if (oldId == 0 || ahead.op == Op::Delete)
            t->keys.prefetch(ahead.keyId);
        for (const std::uint32_t id : newIds)
            if (id != 0 && id < t->layouts.size())
                __builtin_prefetch(&t->layouts[id]);
        if ((record & kInExpires) || ahead.ttlSeconds != 0) // leaves or joins the expires index
            t->expires.prefetch(ahead.keyId);
    }
}

void SlabReplay::removed(std::uint32_t keyId) {
    for (auto& t : m_arenas)
        remove(*t, keyId);
}

void SlabReplay::settled() {
    for (auto& t : m_arenas)
        syncIndexes(*t);
}

std::uint32_t SlabReplay::shapeIdOf(std::uint64_t packed, std::uint32_t sdsBytes) {
    // Ids by packed shape, and for RawString keys by shape and sds buffer: one table for every threshold.
    std::uint64_t& id = sdsBytes != 0 ? m_idByRawShape.at({ packed, sdsBytes, 0 }) : m_idByShape.at(packed);
    if (id == 0) {
        m_shapes.push_back({ packed, sdsBytes, 0 });
        id = m_shapes.size(); // 1-based: 0 is no layout
    }
    return static_cast<std::uint32_t>(id);
}

std::uint32_t SlabReplay::layoutIdFor(ThresholdArena& t, std::uint32_t shapeId) {
    if (shapeId >= t.layouts.size()) {
        ArenaLayout unmade;
        unmade.count = kUnmade;
        t.layouts.resize(std::max<std::size_t>(shapeId + 1, t.layouts.size() * 2), unmade);
    }
    ArenaLayout& a = t.layouts[shapeId];
    if (a.count != kUnmade)
        return shapeId;
    const ShapeBound& bound = m_shapes[shapeId - 1];
    KeyShape shape = unpackShape(bound.shape);
    shape.sdsBytes = bound.sdsBytes;
    const KeyLayout layout = m_layout->describe(shape, t.threshold, *m_allocator);
    a = ArenaLayout {};
    a.stored = layout.stored;
    a.count = layout.allocationCount;
    a.transientCount = layout.transientCount;
    a.encoding = layout.encoding;
    for (std::uint8_t n = 0; n < layout.allocationCount; ++n) {
        const Allocation& allocation = layout.allocations[n];
        a.made[n] = static_cast<std::uint8_t>(layout.made(n));
        a.classes[n] = narrowClass(t.arena.classOf(allocation.requestedBytes));
        a.purposes[n] = allocation.purpose;
        if (allocation.count != 1)
            a.unmatchable |= static_cast<std::uint8_t>(1u << n);
    }
    for (std::uint8_t i = 0; i < layout.transientCount; ++i)
        a.transients[i] = narrowClass(t.arena.classOf(layout.transients[i]));
    for (std::size_t r = 0; r < std::size(kRuleOps); ++r)
        if (m_layout->newValueArrivesUnembedded(shape, kRuleOps[r], t.threshold))
            a.unembeddedByRule |= static_cast<std::uint8_t>(1u << r);
    return shapeId;
}

void SlabReplay::syncIndexes(ThresholdArena& t) {
    t.keys.resize(t.arena, m_replay->keyspaceTable().heldBuckets());
    if (const IndexTableModel* expires = m_replay->expiresTable())
        t.expires.resize(t.arena, expires->heldBuckets());
}

void SlabReplay::store(ThresholdArena& t, std::uint32_t keyId, const KeyState& key, Op op, std::uint32_t shapeId) {
    syncIndexes(t);
    const std::uint32_t id = layoutIdFor(t, shapeId);
    const ArenaLayout& layout = t.layouts[id];
    if (!layout.stored)
        return; // the engine refuses the write: what the key held stays
    t.reserve(keyId, layout.count);
    const std::uint32_t record = t.record(keyId);
    const std::uint32_t oldId = record & kLayoutMask;
    const ArenaLayout& before = t.layouts[oldId];
    const std::uint8_t oldCount = before.count;
    std::array<JemallocArenaModel::Handle, KeyLayout::kMaxAllocations> old {};
    std::copy_n(t.of(keyId), std::min<std::uint32_t>(oldCount, t.stride), old.begin());
    // What the engine keeps in place of a live key (LayoutModel::keptOnRewrite): those regions stay.
    KeptAllocations kept;
    if (oldId != 0) {
        const std::size_t rule = ruleIndex(op);
        const std::uint32_t purposes
            = m_layout->keptPurposes(before.encoding, layout.encoding, op, (layout.unembeddedByRule >> rule) & 1u);
        if (purposes != 0) {
            const auto was = before.identities(), will = layout.identities();
            kept = LayoutModel::keepMatching(
                std::span(was.data(), before.count), std::span(will.data(), layout.count), purposes);
        }
    }

    // The command's transients first (the client's argv), freed when it ends.
    std::array<JemallocArenaModel::Handle, KeyLayout::kMaxTransients> transients {};
    for (std::uint8_t i = 0; i < layout.transientCount; ++i)
        transients[i] = t.arena.allocateClass(layout.transients[i]);
    JemallocArenaModel::Handle* made = t.of(keyId);
    std::fill_n(made, t.stride, kNoHandle);
    std::uint32_t keptOld = 0; // bit j: old allocation j stays
    for (std::uint8_t n = 0; n < layout.count; ++n) {
        const std::size_t i = layout.made[n];
        if (const std::uint8_t from = kept.from[i]; from != KeptAllocations::kMade) {
            made[i] = old[from];
            keptOld |= 1u << from;
        } else {
            made[i] = t.arena.allocateClass(layout.classes[i]);
        }
    }
    // freeClientArgv: the arguments in order, then the argv array.
    for (std::uint8_t i = 1; i <= layout.transientCount; ++i)
        t.arena.release(transients[i % layout.transientCount]);

    const bool hadExpire = record & kInExpires;
    const bool hasExpire = key.hasTtl() && m_policy.expiresTable;
    if (oldId == 0)
        t.keys.insert(t.arena, keyId);
    if (hasExpire && !hadExpire)
        t.expires.insert(t.arena, keyId);
    else if (hadExpire && !hasExpire)
        t.expires.erase(t.arena, keyId);
    t.record(keyId) = id | (hasExpire ? kInExpires : 0);
    for (std::uint8_t j = 0; j < oldCount; ++j)
        if (old[j] != kNoHandle && !(keptOld & (1u << j)))
            t.arena.release(old[j]);
}

void SlabReplay::remove(ThresholdArena& t, std::uint32_t keyId) {
    const std::uint32_t record = t.recordOf(keyId);
    if (record == 0)
        return;
    t.keys.erase(t.arena, keyId);
    if (record & kInExpires)
        t.expires.erase(t.arena, keyId);
    JemallocArenaModel::Handle* held = t.of(keyId);
    const std::uint32_t count = t.layouts[record & kLayoutMask].count;
    for (std::uint32_t i = 0; i < std::min(count, t.stride); ++i)
        if (held[i] != kNoHandle) {
            t.arena.release(held[i]);
            held[i] = kNoHandle;
        }
    t.record(keyId) = 0;
    syncIndexes(t);
}

} // namespace layoutlab
