// SPDX-License-Identifier: MIT
#include "layoutlab/sim/collection_census.h"

#include "layoutlab/sim/collection_replay.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace layoutlab {

namespace {
// A whole count for an expected one: its integer part, and one more with the chance of its fraction, drawn
// from the key and the class (the same draw whenever the key's count is asked).
std::uint32_t drawnCount(double expected, std::uint32_t keyId, std::uint32_t classIndex) {
    std::uint64_t state = std::uint64_t { keyId } << 32 | classIndex;
    const double u = static_cast<double>(Random::splitmix64(state) >> 11) * 0x1.0p-53;
    return static_cast<std::uint32_t>(std::max(0.0, std::floor(expected + u)));
}

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
    case ElementAction::Size:
        return 0;
    }
    return 0;
}
// networking.c processMultibulkBuffer: a command's name, "HSET", "SADD", "RPUSH" and the like (an EMBSTR of any
// of them is one class).
constexpr std::uint32_t kCommandNameBytes = 4;
constexpr std::uint64_t kArgvPointerBytes = 8; // robj **argv: a pointer per argument

// The argv array's class (kNoArgvArray unless `r` starts its command) and the lengths of the argument objects
// `r` adds to the command's argv (its name and key first when it starts the command).
void appendArguments(const Request& r, const KeyState& key, bool startsCommand, const SizeClassTable& table,
    std::vector<std::uint32_t>& out) {
    const ElementOp op = r.elementOp();
    std::uint32_t argvArray = kNoArgvArray;
    const std::size_t at = out.size();
    out.push_back(argvArray);
    if (op.action == ElementAction::Load)
        return; // a snapshot's key: no client
    if (startsCommand) {
        // The argv array for the command's arguments (its name, the key, each element's: a Command request
        // gives the count of its elements), made before any of them.
        ElementOp added = op;
        added.action = ElementAction::Add;
        const std::uint64_t elements = op.action == ElementAction::Command ? r.valueBytes : 1;
        const bool pops = op.collection == CollectionKind::List && op.action == ElementAction::Remove;
        const std::uint64_t argc
            = 2 + (pops ? 0 : elements * argumentsOf(op.action == ElementAction::Command ? added : op));
        if (const std::size_t array = table.classIndex(kArgvPointerBytes * argc); array < table.classes().size())
            argvArray = static_cast<std::uint32_t>(array); // else beyond every class: none the arena can make
        out[at] = argvArray;
        out.push_back(kCommandNameBytes);
        out.push_back(key.keyBytes());
    }
    const std::uint32_t count = argumentsOf(op);
    if (count == 0)
        return;
    if (count == 2) { // the value (a hash's), a sorted set's score or a list's LSET index, then the element
        if (op.collection == CollectionKind::SortedSet)
            out.push_back(shortestScoreBytes(r.valueBytes));
        else if (op.collection == CollectionKind::List)
            out.push_back(static_cast<std::uint32_t>(std::to_string(r.valueBytes).size()));
        else
            out.push_back(r.valueBytes);
    }
    out.push_back(r.elementBytes);
}
} // namespace

void appendCollectionCensus(const CollectionReplay* collections, const SizeClassTable& table, std::uint32_t keyId,
    const KeyState& key, const Request* r, bool startsCommand, std::vector<std::uint32_t>& out) {
    std::vector<std::pair<std::uint32_t, double>> byClass;
    std::uint64_t reallocated = 0;
    if (collections)
        for (const SizedAllocations& a : collections->allocations(keyId, key.keyBytes(), key.hasTtl(), &reallocated)) {
            const auto classIndex = static_cast<std::uint32_t>(table.classIndex(a.bytes));
            if (classIndex >= table.classes().size())
                continue; // beyond every class: no allocation the arena can make
            auto found
                = std::find_if(byClass.begin(), byClass.end(), [&](const auto& c) { return c.first == classIndex; });
            if (found == byClass.end())
                byClass.emplace_back(classIndex, a.count);
            else
                found->second += a.count;
        }
    std::sort(byClass.begin(), byClass.end());
    const auto at = out.size();
    out.push_back(0);
    for (const auto& [classIndex, expected] : byClass)
        if (const std::uint32_t count = drawnCount(expected, keyId, classIndex)) {
            out.push_back(classIndex);
            out.push_back(count);
            ++out[at];
        }
    out.push_back(static_cast<std::uint32_t>(reallocated));
    out.push_back(static_cast<std::uint32_t>(reallocated >> 32));
    const auto argumentsAt = out.size();
    out.push_back(0);
    if (r)
        appendArguments(*r, key, startsCommand, table, out);
    else
        out.push_back(kNoArgvArray);
    out[argumentsAt] = static_cast<std::uint32_t>(out.size() - argumentsAt - 1);
}

const std::vector<std::uint32_t>& CollectionArguments::classesOf(std::uint32_t bytes) {
    auto [found, isNew] = m_classes.try_emplace(bytes);
    if (isNew) {
        // A SET's key argument: the same createStringObject as any argument's, with the layout's own limit.
        KeyShape shape;
        shape.keyBytes = bytes;
        shape.valueBytes = 1;
        const KeyLayout layout = m_layout->describe(shape, m_threshold, *m_allocator);
        const SizeClassTable& table = m_allocator->table();
        for (std::uint8_t i = 0; i < layout.keyArgumentCount; ++i)
            if (const std::size_t c = table.classIndex(layout.transients[layout.keyArgumentAt + i]);
                c < table.classes().size())
                found->second.push_back(static_cast<std::uint32_t>(c));
    }
    return found->second;
}

} // namespace layoutlab
