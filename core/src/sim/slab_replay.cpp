// SPDX-License-Identifier: MIT
#include "layoutlab/sim/slab_replay.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <map>

namespace layoutlab {

namespace {
constexpr JemallocArenaModel::Handle kNoHandle { UINT32_MAX, UINT32_MAX };
constexpr std::uint32_t kInExpires = 1u << 31; // record flag: the key is in the expires index
constexpr std::uint32_t kLayoutMask = kInExpires - 1; // record: the id of the key's layout (0: none)
} // namespace

struct SlabReplay::ThresholdArena {
    std::uint32_t threshold = 0;
    JemallocArenaModel arena;
    SlabIndex keys;
    SlabIndex expires;
    std::uint32_t stride = 2; // handles kept per key id
    std::vector<JemallocArenaModel::Handle> handles; // stride per key id, in the layout's order
    std::vector<std::uint32_t> records; // per key id: layout id | kInExpires
    // The layouts keys have, by id (0: none); ids by packed shape, and for RawString keys by shape and
    // sds buffer.
    std::deque<KeyLayout> layouts { KeyLayout {} };
    std::unordered_map<std::uint64_t, std::uint32_t> byShape;
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint32_t> byRawShape;

    ThresholdArena(
        std::uint32_t t, const SizeClassTable& table, JemallocArenaModel::Options options, const IndexPolicy& policy)
        : threshold(t)
        , arena(table, options)
        , keys(policy.kind, policy.params)
        , expires(policy.kind, policy.params) { }

    void reserve(std::uint32_t keyId, std::uint32_t needed) {
        if (needed > stride) {
            // Rare: a layout with more allocations than seen so far; every key's handles move once.
            std::vector<JemallocArenaModel::Handle> wider(records.size() * needed, kNoHandle);
            for (std::size_t k = 0; k < records.size(); ++k)
                std::copy_n(handles.begin() + static_cast<std::ptrdiff_t>(k * stride), stride,
                    wider.begin() + static_cast<std::ptrdiff_t>(k * needed));
            handles = std::move(wider);
            stride = needed;
        }
        if (keyId >= records.size()) {
            const std::size_t size = std::max<std::size_t>(std::size_t { keyId } + 1, records.size() * 2);
            records.resize(size, 0);
            handles.resize(size * stride, kNoHandle);
        }
    }
    JemallocArenaModel::Handle* of(std::uint32_t keyId) { return &handles[std::size_t { keyId } * stride]; }
};

SlabReplay::SlabReplay(const LayoutModel& layout, const JemallocModel& allocator,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, bool threadCache)
    : m_layout(&layout)
    , m_allocator(&allocator)
    , m_replay(&replay)
    , m_policy(layout.indexPolicy()) {
    JemallocArenaModel::Options options;
    options.threadCache = threadCache;
    options.largePad = allocator.largePad();
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
    for (auto& t : m_arenas)
        store(*t, keyId, key, op);
}

void SlabReplay::removed(std::uint32_t keyId) {
    for (auto& t : m_arenas)
        remove(*t, keyId);
}

void SlabReplay::settled() {
    for (auto& t : m_arenas)
        syncIndexes(*t);
}

std::uint32_t SlabReplay::layoutIdFor(ThresholdArena& t, std::uint32_t keyId, const KeyState& key) {
    const std::uint64_t packed = key.shapeAt(t.threshold);
    const bool raw = key.kind() == ValueKind::RawString;
    const std::uint32_t sdsBytes = raw ? m_replay->sdsBytesOf(keyId) : 0;
    std::uint32_t& id = raw ? t.byRawShape.try_emplace({ packed, sdsBytes }, 0).first->second
                            : t.byShape.try_emplace(packed, 0).first->second;
    if (id == 0) {
        KeyShape shape = unpackShape(packed);
        shape.sdsBytes = sdsBytes;
        id = static_cast<std::uint32_t>(t.layouts.size());
        t.layouts.push_back(m_layout->describe(shape, t.threshold, *m_allocator));
    }
    return id;
}

void SlabReplay::syncIndexes(ThresholdArena& t) {
    t.keys.resize(t.arena, m_replay->keyspaceTable().heldBuckets());
    if (const IndexTableModel* expires = m_replay->expiresTable())
        t.expires.resize(t.arena, expires->heldBuckets());
}

void SlabReplay::store(ThresholdArena& t, std::uint32_t keyId, const KeyState& key, Op op) {
    syncIndexes(t);
    const std::uint32_t id = layoutIdFor(t, keyId, key);
    const KeyLayout& layout = t.layouts[id];
    if (!layout.stored)
        return; // the engine refuses the write: what the key held stays
    t.reserve(keyId, layout.allocationCount);
    const std::uint32_t record = t.records[keyId];
    const KeyLayout& before = t.layouts[record & kLayoutMask];
    std::array<JemallocArenaModel::Handle, KeyLayout::kMaxAllocations> old {};
    std::copy_n(t.of(keyId), std::min<std::uint32_t>(before.allocationCount, t.stride), old.begin());
    // What the engine keeps in place of a live key (LayoutModel::keptOnRewrite): those regions stay.
    KeptAllocations kept;
    if ((record & kLayoutMask) != 0) {
        KeyShape shape = unpackShape(key.shapeAt(t.threshold));
        shape.sdsBytes = key.kind() == ValueKind::RawString ? m_replay->sdsBytesOf(keyId) : 0;
        kept = m_layout->keptOnRewrite(before, layout, shape, op, t.threshold, *m_allocator);
    }

    // The command's transients first (the client's argv), freed when it ends.
    std::array<JemallocArenaModel::Handle, KeyLayout::kMaxTransients> transients {};
    for (std::uint8_t i = 0; i < layout.transientCount; ++i)
        transients[i] = t.arena.allocate(layout.transients[i]);
    JemallocArenaModel::Handle* made = t.of(keyId);
    std::fill_n(made, t.stride, kNoHandle);
    std::uint32_t keptOld = 0; // bit j: old allocation j stays
    // Every request fits a class: a value is at most 4 GiB (32-bit lengths), jemalloc's classes reach 2^62.
    for (std::uint8_t n = 0; n < layout.allocationCount; ++n) {
        const std::size_t i = layout.made(n);
        if (const std::uint8_t from = kept.from[i]; from != KeptAllocations::kMade) {
            made[i] = old[from];
            keptOld |= 1u << from;
        } else {
            made[i] = t.arena.allocate(layout.allocations[i].requestedBytes);
        }
    }
    // freeClientArgv: the arguments in order, then the argv array.
    for (std::uint8_t i = 1; i <= layout.transientCount; ++i)
        t.arena.release(transients[i % layout.transientCount]);

    const bool hadExpire = record & kInExpires;
    const bool hasExpire = key.hasTtl() && m_policy.expiresTable;
    if ((record & kLayoutMask) == 0)
        t.keys.insert(t.arena, keyId);
    if (hasExpire && !hadExpire)
        t.expires.insert(t.arena, keyId);
    else if (hadExpire && !hasExpire)
        t.expires.erase(t.arena, keyId);
    t.records[keyId] = id | (hasExpire ? kInExpires : 0);
    for (std::uint8_t j = 0; j < before.allocationCount; ++j)
        if (old[j] != kNoHandle && !(keptOld & (1u << j)))
            t.arena.release(old[j]);
}

void SlabReplay::remove(ThresholdArena& t, std::uint32_t keyId) {
    if (keyId >= t.records.size() || t.records[keyId] == 0)
        return;
    const std::uint32_t record = t.records[keyId];
    t.keys.erase(t.arena, keyId);
    if (record & kInExpires)
        t.expires.erase(t.arena, keyId);
    JemallocArenaModel::Handle* held = t.of(keyId);
    const std::uint32_t count = t.layouts[record & kLayoutMask].allocationCount;
    for (std::uint32_t i = 0; i < std::min(count, t.stride); ++i)
        if (held[i] != kNoHandle) {
            t.arena.release(held[i]);
            held[i] = kNoHandle;
        }
    t.records[keyId] = 0;
    syncIndexes(t);
}

} // namespace layoutlab
