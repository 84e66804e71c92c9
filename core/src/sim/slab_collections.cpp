// SPDX-License-Identifier: MIT
// The slab model's collection keys (layoutlab/sim/slab_replay.h). A collection key's memory changes element
// by element in ways the replay follows as allocation counts by size (CollectionKeyModel::allocations: a
// listpack or intset reallocated to its new size, a table's entries added and removed, its bucket arrays
// replaced as it rehashes, a list's quicklist nodes). Each change is played into the arena as the difference
// between the regions the key holds and the counts it has now: the regions it gains allocated first, as
// zrealloc and a rehash's new array are, then those it lost freed. Which of a class's regions an element's
// removal frees is the key's own draw (the engine frees the removed element's, and elements are removed in
// no order the model follows). Counts the model has in expectation (a rehash's old array held by chance, a
// skiplist node's levels) are drawn per key, the same draw at each change, so that a key whose expectation
// does not move keeps its regions.

#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/trace/random.h"
#include "slab_threshold_arena.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace layoutlab {

using namespace slab_arena;

namespace {
std::uint64_t mix(std::uint64_t x) {
    return Random::splitmix64(x);
}

// A whole count for an expected one: its integer part, and one more with the chance of its fraction, drawn
// from the key and the class (the same draw whenever the key's count is asked).
std::uint32_t drawnCount(double expected, std::uint32_t keyId, std::uint32_t classIndex) {
    const double u = static_cast<double>(mix(std::uint64_t { keyId } << 32 | classIndex) >> 11) * 0x1.0p-53;
    return static_cast<std::uint32_t>(std::max(0.0, std::floor(expected + u)));
}
} // namespace

void SlabReplay::elementStored(std::uint32_t keyId, const KeyState& key, const Request& r, bool startsCommand) {
    removeIfExpired(keyId);
    logCollection(keyId, key, &r, startsCommand);
}

void SlabReplay::logCollection(std::uint32_t keyId, const KeyState& key, const Request* r, bool startsCommand) {
    const CollectionReplay* collections = m_replay->collections();
    std::vector<std::pair<std::uint32_t, double>> byClass;
    if (collections)
        for (const SizedAllocations& a : collections->allocations(keyId, key.keyBytes(), key.hasTtl())) {
            const auto classIndex = static_cast<std::uint32_t>(m_allocator->table().classIndex(a.bytes));
            if (classIndex >= m_allocator->table().classes().size())
                continue; // beyond every class: no allocation the arena can make
            auto found
                = std::find_if(byClass.begin(), byClass.end(), [&](const auto& c) { return c.first == classIndex; });
            if (found == byClass.end())
                byClass.emplace_back(classIndex, a.count);
            else
                found->second += a.count;
        }
    std::sort(byClass.begin(), byClass.end());
    auto& census = m_filling.census;
    const auto at = static_cast<std::uint32_t>(census.size());
    census.push_back(0);
    for (const auto& [classIndex, expected] : byClass)
        if (const std::uint32_t count = drawnCount(expected, keyId, classIndex)) {
            census.push_back(classIndex);
            census.push_back(count);
            ++census[at];
        }
    const auto argumentsAt = census.size();
    census.push_back(0);
    if (r)
        logArguments(*r, key, startsCommand, census);
    census[argumentsAt] = static_cast<std::uint32_t>(census.size() - argumentsAt - 1);
    std::uint8_t flags = Event::kCollection | (key.hasTtl() ? Event::kHasTtl : 0);
    if (startsCommand)
        flags |= Event::kNewCommand;
    log({ keyId, at, indexSizesNow(), Op::Element, flags });
}

namespace {
// The arguments one element request stands for in its command: a hash's field and value (HGET, HDEL: the field),
// a sorted set's score and member (ZREM, ZSCORE: the member), a set's member, a list's pushed element (LINDEX
// its index, LSET the index and the element). A list's pop has none, but makes an object of the element it
// pops for the reply or the push that moves it (t_list.c listTypePop: createStringObject), freed with the
// command's arguments: taken as one.
std::uint32_t argumentsOf(const ElementOp& op) {
    switch (op.action) {
    case ElementAction::Add:
    case ElementAction::Update:
        return op.collection == CollectionKind::Set
                || (op.collection == CollectionKind::List && op.action == ElementAction::Add)
            ? 1
            : 2;
    case ElementAction::Remove:
        return 1;
    case ElementAction::Read:
        return 1;
    case ElementAction::Command:
    case ElementAction::Load:
        return 0;
    }
    return 0;
}
// networking.c processMultibulkBuffer: a command's name, "HSET", "SADD", "RPUSH" and the like (an EMBSTR of any
// of them is one class).
constexpr std::uint32_t kCommandNameBytes = 4;
constexpr std::uint64_t kArgvPointerBytes = 8; // robj **argv: a pointer per argument
} // namespace

void SlabReplay::logArguments(
    const Request& r, const KeyState& key, bool startsCommand, std::vector<std::uint32_t>& out) {
    const ElementOp op = r.elementOp();
    if (op.action == ElementAction::Load)
        return; // a snapshot's key: no client
    auto argument = [&](std::uint32_t bytes) {
        const auto& classes = argumentClasses(bytes);
        out.insert(out.end(), classes.begin(), classes.end());
    };
    if (startsCommand) {
        // The argv array for the command's arguments (its name, the key, each element's: a Command request
        // gives the count of its elements), made before any of them.
        ElementOp added = op;
        added.action = ElementAction::Add;
        const std::uint64_t elements = op.action == ElementAction::Command ? r.valueBytes : 1;
        const bool pops = op.collection == CollectionKind::List && op.action == ElementAction::Remove;
        const std::uint64_t argc
            = 2 + (pops ? 0 : elements * argumentsOf(op.action == ElementAction::Command ? added : op));
        const auto array = static_cast<std::uint32_t>(m_allocator->table().classIndex(kArgvPointerBytes * argc));
        if (array < m_allocator->table().classes().size()) // else beyond every class: none the arena can make
            out.push_back(array);
        argument(kCommandNameBytes);
        argument(key.keyBytes());
    }
    const std::uint32_t count = argumentsOf(op);
    if (count == 0)
        return;
    if (count == 2) { // the value (a hash's), a sorted set's score or a list's LSET index, then the element
        if (op.collection == CollectionKind::SortedSet)
            argument(shortestScoreBytes(r.valueBytes));
        else if (op.collection == CollectionKind::List)
            argument(static_cast<std::uint32_t>(std::to_string(r.valueBytes).size()));
        else
            argument(r.valueBytes);
    }
    argument(r.elementBytes);
}

const std::vector<std::uint32_t>& SlabReplay::argumentClasses(std::uint32_t bytes) {
    auto [found, isNew] = m_argumentClasses.try_emplace(bytes);
    if (isNew) {
        // A SET's key argument: the same createStringObject as any argument's, with the layout's own limit.
        KeyShape shape;
        shape.keyBytes = bytes;
        shape.valueBytes = 1;
        const KeyLayout layout = m_layout->describe(shape, m_arenas.front()->threshold, *m_allocator);
        for (std::uint8_t i = 0; i < layout.keyArgumentCount; ++i)
            if (const std::size_t c = m_allocator->table().classIndex(layout.transients[layout.keyArgumentAt + i]);
                c < m_allocator->table().classes().size())
                found->second.push_back(static_cast<std::uint32_t>(c));
    }
    return found->second;
}

void SlabReplay::storeCollection(ThresholdArena& t, std::uint32_t keyId, std::uint8_t flags,
    const std::uint32_t* census, const IndexSizes& sizes) const {
    syncIndexes(t, sizes);
    if (flags & Event::kNewCommand)
        releaseArguments(t);
    const std::uint32_t classes = census[0];
    const std::uint32_t* arguments = census + 1 + 2 * classes;
    for (std::uint32_t i = 1; i <= arguments[0]; ++i)
        t.arguments.push_back(t.arena.allocateClass(arguments[i]));
    const bool hasTtl = flags & Event::kHasTtl;
    auto [it, isNew] = t.collections.try_emplace(keyId);
    CollectionRegions& key = it->second;
    std::vector<JemallocArenaModel::Handle>& held = key.held;
    std::vector<JemallocArenaModel::Handle>& next = t.nextHeld;
    next.clear();
    t.freeing.clear();
    std::size_t h = 0;
    for (std::uint32_t i = 0; i < classes; ++i) {
        const std::uint32_t classIndex = census[1 + 2 * i];
        const std::uint32_t want = census[2 + 2 * i];
        for (; h < held.size() && held[h].classIndex < classIndex; ++h)
            t.freeing.push_back(held[h]); // a class it no longer has
        const std::size_t from = h;
        while (h < held.size() && held[h].classIndex == classIndex)
            ++h;
        std::size_t have = h - from;
        // Too many: the key's draws choose which go (the last of the run takes the place of each).
        for (; have > want; --have) {
            const std::size_t j = from + mix(std::uint64_t { keyId } << 32 ^ key.draws++) % have;
            t.freeing.push_back(held[j]);
            held[j] = held[from + have - 1];
        }
        next.insert(next.end(), held.begin() + static_cast<std::ptrdiff_t>(from),
            held.begin() + static_cast<std::ptrdiff_t>(from + have));
        for (; have < want; ++have)
            next.push_back(t.arena.allocateClass(classIndex));
    }
    t.freeing.insert(t.freeing.end(), held.begin() + static_cast<std::ptrdiff_t>(h), held.end());
    std::swap(held, next); // the old list's room kept for the next change
    // The key joins the keyspace once its value is made (db.c dbAdd), its TTL's entry with it; then what
    // the change freed (the old listpack after zrealloc, a rehashed table's old array, removed elements).
    if (isNew)
        t.keys.insert(t.arena, keyId);
    const bool hasExpire = hasTtl && m_policy.expiresTable;
    if (hasExpire && !key.inExpires)
        t.expires.insert(t.arena, keyId);
    else if (!hasExpire && key.inExpires)
        t.expires.erase(t.arena, keyId);
    key.inExpires = hasExpire;
    for (const JemallocArenaModel::Handle freed : t.freeing)
        t.arena.release(freed);
}

void SlabReplay::renamed(std::uint32_t from, std::uint32_t to) {
    if (!m_replay->keys()[from].collection())
        return; // a string's object is freed and made again (removed(), stored())
    log({ from, to, indexSizesNow(), Op::Rename, Event::kRename });
}

void SlabReplay::moveCollection(ThresholdArena& t, std::uint32_t from, std::uint32_t to) {
    auto node = t.collections.extract(from);
    if (!node)
        return;
    // The source's entries go (dbDelete of the name, the value kept), the destination's come (dbAdd); its
    // TTL is set again by the change that follows (setExpire).
    t.keys.erase(t.arena, from);
    if (node.mapped().inExpires)
        t.expires.erase(t.arena, from);
    node.mapped().inExpires = false;
    t.keys.insert(t.arena, to);
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
    t.keys.erase(t.arena, keyId);
    if (found->second.inExpires)
        t.expires.erase(t.arena, keyId);
    for (const JemallocArenaModel::Handle h : found->second.held)
        t.arena.release(h);
    t.collections.erase(found);
    return true;
}

} // namespace layoutlab
