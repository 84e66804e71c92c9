// SPDX-License-Identifier: MIT
// The slab model's collection keys (layoutlab/sim/slab_replay.h). A collection key's memory changes element
// by element in ways the replay follows as allocation counts by size (CollectionKeyModel::allocations: a
// listpack or intset reallocated to its new size, a table's entries added and removed, its bucket arrays
// replaced as it rehashes, a list's quicklist nodes). Each change is logged as a census and played into each
// arena as the reference engine plays it into its real one (layoutlab/sim/collection_census.h).

#include "layoutlab/sim/collection_census.h"
#include "slab_threshold_arena.h"

namespace layoutlab {

using namespace slab_arena;

void SlabReplay::elementStored(std::uint32_t keyId, const KeyState& key, const Request& r, bool startsCommand) {
    removeIfExpired(keyId);
    logCollection(keyId, key, &r, startsCommand);
}

void SlabReplay::logCollection(std::uint32_t keyId, const KeyState& key, const Request* r, bool startsCommand) {
    const auto at = static_cast<std::uint32_t>(m_filling.census.size());
    appendCollectionCensus(
        m_replay->collections(), m_allocator->table(), keyId, key, r, startsCommand, m_filling.census);
    std::uint8_t flags = Event::kCollection | (key.hasTtl() ? Event::kHasTtl : 0);
    if (startsCommand)
        flags |= Event::kNewCommand;
    log({ keyId, at, indexSizesNow(keyId), Op::Element, flags });
}

void SlabReplay::storeCollection(ThresholdArena& t, std::uint32_t keyId, std::uint8_t flags, const std::uint32_t* words,
    const IndexSizes& sizes) const {
    syncIndexes(t, sizes);
    if (flags & Event::kNewCommand)
        releaseArguments(t);
    const CollectionCensus census(words);
    t.argumentClasses.allocate(census, [&t](std::uint32_t c) { t.arguments.push_back(t.arena.allocateClass(c)); });
    auto [it, isNew] = t.collections.try_emplace(keyId);
    CollectionRegions& key = it->second;
    const std::uint64_t reallocated = census.reallocatedBytes();
    if (reallocated > key.reallocatedBytes)
        t.arena.reallocated(reallocated - key.reallocatedBytes);
    key.reallocatedBytes = reallocated;
    t.freeing.clear();
    changeHeldRegions(
        key, keyId, census, t.nextHeld, t.freeing, [&t](std::uint32_t c) { return t.arena.allocateClass(c); });
    // The key joins the keyspace once its value is made (db.c dbAdd), its TTL's entry with it; then what
    // the change freed (the old listpack after zrealloc, a rehashed table's old array, removed elements).
    if (isNew)
        t.keysOf(keyId).insert(t.arena, keyId);
    const bool hasExpire = (flags & Event::kHasTtl) && m_policy.expiresTable;
    if (hasExpire && !key.inExpires)
        t.expiresOf(keyId).insert(t.arena, keyId);
    else if (!hasExpire && key.inExpires)
        t.expiresOf(keyId).erase(t.arena, keyId);
    key.inExpires = hasExpire;
    for (const JemallocArenaModel::Handle freed : t.freeing)
        t.arena.release(freed);
}

void SlabReplay::renamed(std::uint32_t from, std::uint32_t to) {
    if (!m_replay->keys()[from].collection())
        return; // a string's object is freed and made again (removed(), stored())
    log({ from, to, indexSizesNow(to), Op::Rename, Event::kRename });
}

void SlabReplay::moveCollection(ThresholdArena& t, std::uint32_t from, std::uint32_t to) {
    auto node = t.collections.extract(from);
    if (!node)
        return;
    // The source's entries go (dbDelete of the name, the value kept), the destination's come (dbAdd); its
    // TTL is set again by the change that follows (setExpire).
    t.keysOf(from).erase(t.arena, from);
    if (node.mapped().inExpires)
        t.expiresOf(from).erase(t.arena, from);
    node.mapped().inExpires = false;
    t.keysOf(to).insert(t.arena, to);
    node.key() = to;
    t.collections.insert(std::move(node));
}

void SlabReplay::releaseArguments(ThresholdArena& t) {
    const std::size_t n = t.arguments.size();
    for (std::size_t i = 1; i <= n; ++i)
        t.arena.release(t.arguments[i % n]);
    t.arguments.clear();
}

bool SlabReplay::removeCollection(ThresholdArena& t, std::uint32_t keyId) {
    auto found = t.collections.find(keyId);
    if (found == t.collections.end())
        return false;
    t.keysOf(keyId).erase(t.arena, keyId);
    if (found->second.inExpires)
        t.expiresOf(keyId).erase(t.arena, keyId);
    for (const JemallocArenaModel::Handle h : found->second.held)
        t.arena.release(h);
    t.collections.erase(found);
    return true;
}

} // namespace layoutlab
