// SPDX-License-Identifier: MIT
#include "layoutlab/sim/slab_replay.h"

#include "slab_threshold_arena.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <fmt/format.h>
#include <future>
#include <span>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace layoutlab {

using namespace slab_arena;

namespace {
// Events logged before the arenas play them: 4 MiB of log, a few milliseconds of each arena's work between
// the stop checks of the replay.
constexpr std::size_t kLogEvents = std::size_t { 1 } << 18;
// Arenas played at once (a sweep's): each is a thread's working set of host memory.
constexpr std::size_t kMaxPlayers = 4;
// How far ahead an arena's play fetches an event's record (and handles), and the layouts and index bucket
// the record points to.
constexpr std::size_t kFarEvents = 16;
constexpr std::size_t kNearEvents = 4;

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
    m_filling.events.resize(kLogEvents);
    m_played.events.resize(kLogEvents);
    for (std::uint32_t t : thresholds)
        m_arenas.push_back(
            std::make_unique<ThresholdArena>(t, layout, allocator, options, m_policy, replay.keys().size()));
    if (slabOptions.expireCycle && m_policy.expiresTable)
        m_expireCycle.emplace();
}

SlabReplay::~SlabReplay() {
    if (m_playing.valid())
        m_playing.wait();
}

const SlabReplay::ThresholdArena* SlabReplay::arenaOf(std::uint32_t threshold) const {
    for (const auto& t : m_arenas)
        if (t->threshold == threshold)
            return t.get();
    return nullptr;
}

std::optional<ArenaUsage> SlabReplay::usageAt(std::uint32_t threshold) const {
    assert(m_filling.count == 0 && !m_playing.valid() && "catchUp() first");
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

SlabReplay::IndexSizes SlabReplay::replayIndexSizes(std::uint32_t database) const {
    const DatabaseTables& db = m_replay->databaseTables()[database];
    return { db.keys.heldBuckets(), m_replay->hasExpiresTables() ? db.expires.heldBuckets() : kNoTable, database };
}

std::uint32_t SlabReplay::indexSizesNow(std::uint32_t keyId) {
    const IndexSizes now = replayIndexSizes(m_replay->databaseOf(keyId));
    auto& sizes = m_filling.indexSizes;
    if (sizes.empty() || sizes.back() != now)
        sizes.push_back(now);
    return static_cast<std::uint32_t>(sizes.size() - 1);
}

void SlabReplay::log(const Event& event) {
    static_assert(sizeof(Event) == 16, "a log of events stays small");
    Event* to = &m_filling.events[m_filling.count];
#if defined(__SSE2__)
    // A non-temporal store: the line was last read by a player on another core, and a plain store would
    // fetch it back first (most of log()'s time, in the replay's thread).
    __m128i bytes;
    std::memcpy(&bytes, &event, sizeof event);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to), bytes);
#else
    *to = event;
#endif
    if (++m_filling.count == kLogEvents)
        flush();
}

void SlabReplay::Log::clear() {
    count = 0;
    dependentShapes.clear();
    newShapes.clear();
    indexSizes.clear();
    census.clear();
}

void SlabReplay::stored(std::uint32_t keyId, const KeyState& key, Op op) {
    removeIfExpired(keyId);
    if (key.collection()) [[unlikely]] {
        logCollection(keyId, key, nullptr, true); // a TTL's change or a rename: a command of its own
        return;
    }
    // The key's shape is the same at every threshold unless it keeps a stale expire field below some.
    const std::uint32_t sdsBytes = key.kind() == ValueKind::RawString ? m_replay->sdsBytesOf(keyId) : 0;
    Event e { keyId, 0, indexSizesNow(keyId), op, key.hasTtl() ? Event::kHasTtl : std::uint8_t { 0 } };
    if (key.thresholdFree()) {
        e.shape = shapeIdOf(key.shape(), sdsBytes);
    } else {
        e.flags |= Event::kDependent;
        e.shape = static_cast<std::uint32_t>(m_filling.dependentShapes.size());
        for (const auto& t : m_arenas)
            m_filling.dependentShapes.push_back(shapeIdOf(key.shapeAt(t->threshold), sdsBytes));
    }
    log(e);
}

void SlabReplay::placed(std::uint32_t keyId, std::uint32_t database) {
    log({ keyId, database, indexSizesNow(keyId), Op::Resize, Event::kPlace });
}

void SlabReplay::removed(std::uint32_t keyId) {
    log({ keyId, 0, indexSizesNow(keyId), Op::Delete, Event::kRemove });
}

void SlabReplay::expired(std::uint32_t keyId, std::uint64_t dueMs) {
    if (!m_expireCycle) {
        removed(keyId);
        return;
    }
    runExpireCycles(dueMs - 1); // the cycles before its time find it not expired
    m_expireCycle->expired(keyId);
}

std::uint64_t SlabReplay::clockAtMs(std::uint64_t nowMs) {
    if (!m_expireCycle)
        return UINT64_MAX;
    runExpireCycles(nowMs);
    return m_expireCycle->nextCycleMs();
}

void SlabReplay::runExpireCycles(std::uint64_t nowMs) {
    m_cycleRemovals.clear();
    // expire.c activeExpireCycle visits every database in turn; the model's cycle samples their keys as one.
    std::uint64_t volatileKeys = 0;
    for (const DatabaseTables& db : m_replay->databaseTables())
        volatileKeys += db.expires.entries();
    m_expireCycle->runUntil(nowMs, volatileKeys, m_cycleRemovals);
    logCycleRemovals();
}

void SlabReplay::logCycleRemovals() {
    for (const std::uint32_t keyId : m_cycleRemovals)
        log({ keyId, 0, indexSizesNow(keyId), Op::Delete, Event::kRemove | Event::kByExpireCycle });
}

namespace {
bool isSet(Op op) {
    return op == Op::Set || op == Op::Add || op == Op::Replace;
}
// The shape a SET request gives its key with a TTL or without.
std::uint64_t setShape(const Request& r, bool ttl) {
    return packShape(r.keyBytes, r.valueBytes, ttl, r.kind);
}
} // namespace

void SlabReplay::prefetch(const Request& ahead) {
    // The shapes a SET makes: the new value with the key's TTL as it was (KeyspaceReplay::write), then
    // with the request's (setTtl or clearTtl). Which TTL the key has is not known yet: both.
    if (isSet(ahead.op)) {
        m_idByShape.prefetch(setShape(ahead, false));
        m_idByShape.prefetch(setShape(ahead, true));
    }
}

void SlabReplay::settled() {
    if (m_expireCycle) {
        m_cycleRemovals.clear();
        m_expireCycle->drain(m_cycleRemovals);
        logCycleRemovals();
    }
    catchUp();
    for (auto& t : m_arenas) {
        releaseArguments(*t); // the last command has ended
        for (std::uint32_t db = 0; db < m_replay->databaseTables().size(); ++db)
            syncIndexes(*t, replayIndexSizes(db));
    }
}

void SlabReplay::catchUp() {
    flush();
    waitForPlayers();
}

void SlabReplay::waitForPlayers() {
    if (m_playing.valid())
        m_playing.get();
}

void SlabReplay::flush() {
    if (m_filling.count == 0)
        return;
#if defined(__SSE2__)
    _mm_sfence(); // the log's non-temporal stores are done before the players read it
#endif
    waitForPlayers();
    std::swap(m_filling, m_played);
    m_filling.clear();
    m_filling.indexSizes.assign(1, m_played.indexSizes.back()); // where the next log starts
    m_playing = std::async(std::launch::async, [this] { playAll(); });
}

void SlabReplay::playAll() {
    m_shapes.insert(m_shapes.end(), m_played.newShapes.begin(), m_played.newShapes.end());
    // Each arena plays the whole log on its own; a sweep's arenas are shared among the cores.
    const std::size_t players
        = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::min(kMaxPlayers, m_arenas.size()));
    std::atomic<std::size_t> next { 0 };
    auto player = [&] {
        for (std::size_t k = next++; k < m_arenas.size(); k = next++)
            play(*m_arenas[k], k);
    };
    std::vector<std::jthread> helpers;
    for (std::size_t i = 1; i < players; ++i)
        helpers.emplace_back(player);
    player();
}

std::uint32_t SlabReplay::shapeIdAt(const Event& e, std::size_t arenaIndex) const {
    return (e.flags & Event::kDependent) ? m_played.dependentShapes[e.shape + arenaIndex] : e.shape;
}

void SlabReplay::prefetchFor(const ThresholdArena& t, const Event& e, std::uint32_t shapeId) const {
    // The record prefetched kFarEvents ahead is here: the layouts it and the event point to, and the index
    // bucket a new key or a delete changes.
    const std::uint32_t record = t.recordOf(e.keyId);
    const std::uint32_t oldId = record & kLayoutMask;
    if (oldId != 0)
        __builtin_prefetch(&t.layouts[oldId]);
    const bool removes = e.flags & Event::kRemove;
    if (oldId == 0 || removes)
        t.keysOf(e.keyId).prefetch(e.keyId);
    if (!removes && shapeId < t.layoutOfShape.size())
        __builtin_prefetch(&t.layoutOfShape[shapeId]);
    if ((record & kInExpires) || (e.flags & Event::kHasTtl)) // leaves or joins the expires index
        t.expiresOf(e.keyId).prefetch(e.keyId);
}

void SlabReplay::play(ThresholdArena& t, std::size_t arenaIndex) const {
    const Event* events = m_played.events.data();
    const std::size_t n = m_played.count;
    const IndexSizes* sizes = m_played.indexSizes.data();
    for (std::size_t i = 0; i < n; ++i) {
        if (i + kFarEvents < n)
            t.prefetch(events[i + kFarEvents].keyId);
        if (i + kNearEvents < n)
            prefetchFor(t, events[i + kNearEvents], shapeIdAt(events[i + kNearEvents], arenaIndex));
        const Event& e = events[i];
        if (!t.arguments.empty() && !(e.flags & Event::kCollection)) [[unlikely]]
            releaseArguments(t); // a collection command's: another command has started
        if (e.flags & Event::kPlace) [[unlikely]]
            t.place(e.keyId, e.shape);
        else if (e.flags & Event::kRemove)
            remove(t, e.keyId, sizes[e.indexSizes], e.flags & Event::kByExpireCycle);
        else if (e.flags & Event::kRename) [[unlikely]]
            moveCollection(t, e.keyId, e.shape);
        else if (e.flags & Event::kCollection) [[unlikely]]
            storeCollection(t, e.keyId, e.flags, &m_played.census[e.shape], sizes[e.indexSizes]);
        else
            store(t, e.keyId, e.flags & Event::kHasTtl, e.op, shapeIdAt(e, arenaIndex), sizes[e.indexSizes]);
    }
}

std::uint32_t SlabReplay::shapeIdOf(std::uint64_t packed, std::uint32_t sdsBytes) {
    // Ids by packed shape, and for RawString keys by shape and sds buffer: one table for every threshold.
    std::uint64_t& id = sdsBytes != 0 ? m_idByRawShape.at({ packed, sdsBytes, 0 }) : m_idByShape.at(packed);
    if (id == 0) {
        m_filling.newShapes.push_back({ packed, sdsBytes, 0 });
        id = ++m_shapeCount; // 1-based: 0 is no layout
    }
    return static_cast<std::uint32_t>(id);
}

std::uint32_t SlabReplay::layoutIdFor(ThresholdArena& t, std::uint32_t shapeId) const {
    if (shapeId >= t.layoutOfShape.size())
        t.layoutOfShape.resize(std::max<std::size_t>(shapeId + 1, t.layoutOfShape.size() * 2), kUnmade);
    std::uint32_t& id = t.layoutOfShape[shapeId];
    if (id != kUnmade)
        return id;
    const ShapeBound& bound = m_shapes[shapeId - 1];
    KeyShape shape = unpackShape(bound.shape);
    shape.sdsBytes = bound.sdsBytes;
    const KeyLayout layout = m_layout->describe(shape, t.threshold, *m_allocator);
    ArenaLayout a;
    std::memset(static_cast<void*>(&a), 0, sizeof a); // the padding too: the table compares bytes
    a.stored = layout.stored;
    a.count = layout.allocationCount;
    a.transientCount = layout.transientCount;
    a.keyArgumentAt = layout.keyArgumentAt;
    a.keyArgumentCount = layout.keyArgumentCount;
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
    id = t.layouts.idOf(a);
    return id;
}

void SlabReplay::syncIndexes(ThresholdArena& t, const IndexSizes& sizes) {
    t.holdDatabase(sizes.database); // the settled sizes name every database, keys placed in it or not
    t.keysIn(sizes.database).resize(t.arena, sizes.keys);
    if (sizes.expires != kNoTable)
        t.expiresIn(sizes.database).resize(t.arena, sizes.expires);
}

void SlabReplay::store(ThresholdArena& t, std::uint32_t keyId, bool hasTtl, Op op, std::uint32_t shapeId,
    const IndexSizes& indexSizes) const {
    syncIndexes(t, indexSizes);
    const std::uint32_t id = layoutIdFor(t, shapeId);
    const ArenaLayout& layout = t.layouts[id];
    if (!layout.stored)
        return; // the engine refuses the write: what the key held stays
    t.reserve(keyId, layout.count);
    // A collection key overwritten by a string (SET of any key): its regions freed with the old value's.
    std::optional<CollectionRegions> collection;
    if (!t.collections.empty()) [[unlikely]]
        if (auto node = t.collections.extract(keyId))
            collection = std::move(node.mapped());
    const std::uint32_t record = t.record(keyId);
    const std::uint32_t oldId = record & kLayoutMask;
    const ArenaLayout& before = t.layouts[oldId];
    const std::uint8_t oldCount = before.count;
    // Plain words, not Handles: a Handle array is zeroed first (its members' initializers), which GCC does
    // with `rep stos`, a fifth of this function's time. Only the first oldHeld are read.
    std::uint64_t old[KeyLayout::kMaxAllocations];
    const std::uint32_t oldHeld = std::min<std::uint32_t>(oldCount, t.stride);
    const JemallocArenaModel::Handle* held = t.of(keyId);
    copyHandles(held, oldHeld, old);
    // What the engine keeps in place of a live key (LayoutModel::keptOnRewrite): those regions stay.
    KeptAllocations kept;
    if (oldId != 0) {
        const std::size_t rule = ruleIndex(op);
        const std::uint32_t purposes
            = m_layout->keptPurposes(before.encoding, layout.encoding, op, (layout.unembeddedByRule >> rule) & 1u);
        if (purposes != 0) {
            kept = LayoutModel::keepMatching(
                before.identities(t.wasIdentities), layout.identities(t.willIdentities), purposes);
        }
    }

    // The command's transients first (the client's argv), freed when it ends.
    std::uint64_t transients[KeyLayout::kMaxTransients]; // the first transientCount, as `old`
    for (std::uint8_t i = 0; i < layout.transientCount; ++i)
        transients[i] = std::bit_cast<std::uint64_t>(t.arena.allocateClass(layout.transients[i]));
    JemallocArenaModel::Handle* made = t.of(keyId);
    std::fill_n(made, t.stride, kNoHandle);
    std::uint32_t keptOld = 0; // bit j: old allocation j stays
    for (std::uint8_t n = 0; n < layout.count; ++n) {
        const std::size_t i = layout.made[n];
        if (const std::uint8_t from = kept.from[i]; from != KeptAllocations::kMade) {
            made[i] = std::bit_cast<JemallocArenaModel::Handle>(old[from]);
            keptOld |= 1u << from;
        } else {
            made[i] = t.arena.allocateClass(layout.classes[i]);
        }
    }
    // freeClientArgv: the arguments in order, then the argv array.
    for (std::uint8_t i = 1; i <= layout.transientCount; ++i)
        t.arena.release(std::bit_cast<JemallocArenaModel::Handle>(transients[i % layout.transientCount]));

    const bool hadExpire = (record & kInExpires) || (collection && collection->inExpires);
    const bool hasExpire = hasTtl && m_policy.expiresTable;
    if (oldId == 0 && !collection)
        t.keysOf(keyId).insert(t.arena, keyId);
    if (hasExpire && !hadExpire)
        t.expiresOf(keyId).insert(t.arena, keyId);
    else if (hadExpire && !hasExpire)
        t.expiresOf(keyId).erase(t.arena, keyId);
    t.record(keyId) = id | (hasExpire ? kInExpires : 0);
    for (std::uint32_t j = 0; j < oldHeld; ++j)
        if (old[j] != std::bit_cast<std::uint64_t>(kNoHandle) && !(keptOld & (1u << j)))
            t.arena.release(std::bit_cast<JemallocArenaModel::Handle>(old[j]));
    if (collection) [[unlikely]]
        for (const JemallocArenaModel::Handle h : collection->held)
            t.arena.release(h);
}

void SlabReplay::remove(ThresholdArena& t, std::uint32_t keyId, const IndexSizes& indexSizes, bool byCycle) const {
    const std::uint32_t record = t.recordOf(keyId);
    if (record == 0) {
        if (!t.collections.empty() && removeCollection(t, keyId))
            syncIndexes(t, indexSizes);
        return;
    }
    // expire.c activeExpireCycleTryExpire: the key's name made an object (createStringObject) for the
    // deletion and its propagation, freed after it; the client's argument of a SET, as the layout has it
    // (an EMBSTR, or an robj and its sds: the sds made first, and freed first).
    const ArenaLayout& layout = t.layouts[record & kLayoutMask];
    std::uint64_t keyObject[2];
    const std::uint8_t keyObjects = byCycle ? std::min<std::uint8_t>(layout.keyArgumentCount, 2) : 0;
    for (std::uint8_t i = keyObjects; i-- > 0;)
        keyObject[i] = std::bit_cast<std::uint64_t>(t.arena.allocateClass(layout.transients[layout.keyArgumentAt + i]));
    t.keysOf(keyId).erase(t.arena, keyId);
    if (record & kInExpires)
        t.expiresOf(keyId).erase(t.arena, keyId);
    JemallocArenaModel::Handle* held = t.of(keyId);
    const std::uint32_t count = layout.count;
    for (std::uint32_t i = 0; i < std::min(count, t.stride); ++i)
        if (held[i] != kNoHandle) {
            t.arena.release(held[i]);
            held[i] = kNoHandle;
        }
    t.record(keyId) = 0;
    for (std::uint8_t i = keyObjects; i-- > 0;) // decrRefCount: the sds, then the object
        t.arena.release(std::bit_cast<JemallocArenaModel::Handle>(keyObject[i]));
    syncIndexes(t, indexSizes);
}

} // namespace layoutlab
