// SPDX-License-Identifier: MIT
#pragma once

// What one change of a collection key asks of a jemalloc arena, in the one form both of layoutlab's arenas
// play it: the slab model's (sim/slab_replay.h, slab_collections.cpp) and the reference engine's real one
// (collectors/reference). A change is a census, appended to a flat vector of words:
//   [classes, (class index, count) x classes, reallocated (low, high), argument words, argv class,
//    argument length...]
// The regions the key's allocations take now, by class (CollectionReplay::allocations: a count the model
// has in expectation, a rehash's old array held by chance or a skiplist node's levels, is drawn per key, the
// same draw at each change, so that a key whose expectation does not move keeps its regions). Then the bytes
// its reallocations in place have counted so far (CollectionKeyState::reallocatedBytes: a count the thread
// cache's GC follows, no region changing). Then what
// the client's argv gains for the request: the argv array's class when the request starts its command
// (kNoArgvArray otherwise), and each argument object's length, whose classes depend on the layout's threshold
// (CollectionArguments).
//
// A change is played as the difference between the regions the key holds and the counts it has now
// (changeHeldRegions): the regions it gains allocated first, as zrealloc and a rehash's new array are, then
// those it lost freed. Which of a class's regions an element's removal frees is the key's own draw (the
// engine frees the removed element's, and elements are removed in no order the model follows).

#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/trace/random.h"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace layoutlab {

class CollectionReplay;

inline constexpr std::uint32_t kNoArgvArray = UINT32_MAX;

// Appends the census of `keyId`'s change: its allocations under `collections` (none when null), and the
// arguments `r` adds to the command's argv (none without a request: a TTL's change or a rename).
void appendCollectionCensus(const CollectionReplay* collections, const SizeClassTable& table, std::uint32_t keyId,
    const KeyState& key, const Request* r, bool startsCommand, std::vector<std::uint32_t>& out);

// A census read back.
class CollectionCensus {
public:
    explicit CollectionCensus(const std::uint32_t* words)
        : m_words(words) { }
    std::uint32_t classes() const { return m_words[0]; }
    std::uint32_t classAt(std::uint32_t i) const { return m_words[1 + 2 * i]; }
    std::uint32_t countAt(std::uint32_t i) const { return m_words[2 + 2 * i]; }
    std::uint64_t reallocatedBytes() const {
        const std::uint32_t* at = m_words + 1 + 2 * classes();
        return std::uint64_t { at[1] } << 32 | at[0];
    }
    std::uint32_t argvArrayClass() const { return arguments()[1]; }
    std::span<const std::uint32_t> argumentLengths() const { return { arguments() + 2, arguments()[0] - 1 }; }

private:
    const std::uint32_t* arguments() const { return m_words + 3 + 2 * classes(); }
    const std::uint32_t* m_words;
};

// The classes of a command's argument objects at one threshold, as createStringObject makes them (an EMBSTR,
// or an robj and its sds: the layout's SET makes its key argument the same way), by length.
class CollectionArguments {
public:
    CollectionArguments(const LayoutModel& layout, const JemallocModel& allocator, std::uint32_t threshold)
        : m_layout(&layout)
        , m_allocator(&allocator)
        , m_threshold(threshold) { }
    const std::vector<std::uint32_t>& classesOf(std::uint32_t bytes);
    // Each allocation the census's arguments make, in the server's order: the argv array, then each argument.
    template <class Allocate> void allocate(const CollectionCensus& census, Allocate&& allocate) {
        if (census.argvArrayClass() != kNoArgvArray)
            allocate(census.argvArrayClass());
        for (const std::uint32_t bytes : census.argumentLengths())
            for (const std::uint32_t classIndex : classesOf(bytes))
                allocate(classIndex);
    }

private:
    const LayoutModel* m_layout;
    const JemallocModel* m_allocator;
    std::uint32_t m_threshold;
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> m_classes;
};

// A collection key's regions in an arena: as many of each class as its census says, held in class order.
// `Handle` names its class in `classIndex`.
template <class Handle> struct HeldRegions {
    std::vector<Handle> held;
    std::uint64_t reallocatedBytes = 0; // the census's, when last played
    bool inExpires = false;
    std::uint64_t draws = 0; // which region a removal frees: a draw of the key's own sequence
};

// Plays `census` into `key`: the regions it gains are made (`allocate(classIndex)`, in class order), those
// it loses appended to `freeing` for the caller to free once the key is in the index. `next` is room kept
// from change to change.
template <class Handle, class Allocate>
void changeHeldRegions(HeldRegions<Handle>& key, std::uint32_t keyId, const CollectionCensus& census,
    std::vector<Handle>& next, std::vector<Handle>& freeing, Allocate&& allocate) {
    std::vector<Handle>& held = key.held;
    next.clear();
    std::size_t h = 0;
    for (std::uint32_t i = 0; i < census.classes(); ++i) {
        const std::uint32_t classIndex = census.classAt(i);
        const std::uint32_t want = census.countAt(i);
        for (; h < held.size() && held[h].classIndex < classIndex; ++h)
            freeing.push_back(held[h]); // a class it no longer has
        const std::size_t from = h;
        while (h < held.size() && held[h].classIndex == classIndex)
            ++h;
        std::size_t have = h - from;
        // Too many: the key's draws choose which go (the last of the run takes the place of each).
        for (; have > want; --have) {
            std::uint64_t draw = std::uint64_t { keyId } << 32 ^ key.draws++;
            const std::size_t j = from + Random::splitmix64(draw) % have;
            freeing.push_back(held[j]);
            held[j] = held[from + have - 1];
        }
        next.insert(next.end(), held.begin() + static_cast<std::ptrdiff_t>(from),
            held.begin() + static_cast<std::ptrdiff_t>(from + have));
        for (; have < want; ++have)
            next.push_back(allocate(classIndex));
    }
    freeing.insert(freeing.end(), held.begin() + static_cast<std::ptrdiff_t>(h), held.end());
    std::swap(held, next); // the old list's room kept for the next change
}

} // namespace layoutlab
