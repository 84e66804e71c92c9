// SPDX-License-Identifier: MIT
#pragma once

// A set-associative LRU cache hierarchy of 64-byte lines (L1d, L2, LLC; two or three levels), fed the
// lines a GET reads. Each level is looked up only when the level above missed, as in a non-inclusive
// hierarchy; prefetchers, TLBs and coherence are not modelled (docs/cache-model.md).

#include "layoutlab/expected.h"
#include "layoutlab/huge_page_allocator.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace layoutlab {

// The largest cache level CacheGeometry::parse accepts: 1 GiB, beyond any built.
inline constexpr std::uint64_t kMaxCacheLevelBytes = std::uint64_t { 1 } << 30;

struct CacheLevelGeometry {
    std::uint64_t sizeBytes = 0;
    std::uint32_t ways = 0;

    auto operator<=>(const CacheLevelGeometry&) const = default;
};

struct CacheGeometry {
    std::vector<CacheLevelGeometry> levels; // from L1 outward

    // "32K:8,512K:8,32M:16": one SIZE:WAYS per level, two or three levels, sizes with K/M/G suffixes.
    static Expected<CacheGeometry> parse(std::string_view text);
    // The data and unified caches of cpu0 under `sysfsDir` (/sys/devices/system/cpu/cpu0/cache); a
    // fallback of 32K:8,1M:16,32M:16 when it cannot be read.
    static CacheGeometry detect(const std::string& sysfsDir = "/sys/devices/system/cpu/cpu0/cache");
    std::string describe() const;
    bool operator==(const CacheGeometry&) const = default;
};

class CacheHierarchy {
    __extension__ typedef unsigned __int128 Uint128; // GCC and Clang; the quotient's high half

public:
    // Addresses must stay below 2^kMaxAddressBits (the cache evaluation's simulated space does).
    static constexpr unsigned kMaxAddressBits = 48;

    explicit CacheHierarchy(const CacheGeometry& geometry);

    // One access to the line holding `address`.
    void access(std::uint64_t address);
    // One access to the last level alone (lines the inner levels would have long evicted since).
    void accessLastLevel(std::uint64_t address);
    // Simulates only one in `every` sets of the last level (a power of two), chosen by a hash of the set
    // index so that no layout's stride lines up with them: sets are independent, so the misses counted
    // there, times `every`, estimate the whole level's. Accesses to other sets count as neither hits nor
    // misses. 1 (the default): every set.
    void sampleLastLevel(std::uint32_t every);
    std::uint32_t lastLevelSampling() const { return m_lastLevelEvery; }
    // A hint that `address` will be accessed soon: fetches the outer levels' sets for it into the host's
    // caches (the simulated state does not change). Always inlined: GCC 12 finds a function whose only
    // effect is a conditional __builtin_prefetch free of side effects and drops the call, prefetch and all
    // (the replay's prefetches were missing from the binary until this was marked); so must be its callers.
    [[gnu::always_inline]] void prefetch(std::uint64_t address) const {
        const std::uint64_t line = address / 64;
        // The first level is small and stays in the host's caches; the outer ones are where lookups stall.
        for (std::size_t i = 1; i < m_levels.size(); ++i) {
            const Level& level = m_levels[i];
            const std::uint64_t set = level.setOf(line);
            if (level.compact) {
                __builtin_prefetch(&level.compactSets[set], 1);
                continue;
            }
            __builtin_prefetch(&level.setGeneration[set]);
            if (level.narrow)
                __builtin_prefetch(level.narrowTags.data() + set * level.ways, 1);
            else
                __builtin_prefetch(level.wideTags.data() + set * level.ways, 1);
        }
    }
    // Misses per level since the last resetCounters().
    const std::vector<std::uint64_t>& misses() const { return m_misses; }
    std::uint64_t accesses() const { return m_accesses; }
    void resetCounters();
    // Empties every level (a cold cache) and resets the counters.
    void clear();

private:
    struct Level {
        std::uint32_t ways = 0;
        std::uint64_t sets = 0;
        std::uint64_t setMask = 0; // sets - 1 when sets is a power of two, else 0
        unsigned setShift = 0; // log2(sets) when a power of two
        // ceil(2^64 / sets) for other set counts below 2^22: line / sets is then one multiplication, exact
        // for every line below 2^(kMaxAddressBits - 6) because line * sets stays below 2^64. 0: divide.
        std::uint64_t reciprocal = 0;
        std::uint64_t quotient(std::uint64_t line) const {
            if (reciprocal == 0)
                return line / sets;
            return static_cast<std::uint64_t>((static_cast<Uint128>(line) * reciprocal) >> 64);
        }
        std::uint64_t setOf(std::uint64_t line) const {
            return setMask ? (line & setMask) : line - quotient(line) * sets;
        }
        // Per set, most recently used first: the line's tag (line / sets) + 1; 0 = empty. Levels whose
        // tags fit 32 bits keep them in `narrowTags`, halving the host memory a large LLC's lookups touch.
        bool narrow = false;
        std::vector<std::uint32_t, HugePageAllocator<std::uint32_t>> narrowTags;
        std::vector<std::uint64_t, HugePageAllocator<std::uint64_t>> wideTags;
        // The generation each set was last used in: a set of an older generation is empty.
        std::vector<std::uint16_t> setGeneration;
        // Levels whose tag array outgrows the host's caches (a large LLC) keep each set in one 32-byte
        // record instead: its generation and first kInlineWays tags, and the rest in an overflow block
        // taken only when a set holds more lines than that. A sample of GETs fills a small share of such a
        // level, so nearly every lookup reads one host cache line of a array a third the size.
        static constexpr std::uint32_t kInlineWays = 6;
        struct alignas(32) CompactSet {
            std::uint32_t tags[kInlineWays];
            std::uint32_t overflow; // 1 + the block's index in overflowTags; 0: none
            std::uint16_t generation;
            std::uint16_t unused;
        };
        static_assert(sizeof(CompactSet) == 32);
        bool compact = false;
        std::vector<CompactSet, HugePageAllocator<CompactSet>> compactSets;
        std::vector<std::uint32_t> overflowTags; // blocks of ways - kInlineWays tags, most recent first
    };
    bool lookupCompact(Level& level, std::uint64_t set, std::uint32_t tag);
    // True on a hit; on a miss the line goes to the front of its set, pushing out the last way.
    bool lookup(Level& level, std::uint64_t line);

    bool lastLevelSimulates(std::uint64_t line) const;

    std::vector<Level> m_levels;
    std::uint32_t m_lastLevelEvery = 1;
    // clear() starts a new generation: every set is empty until it is next used, whatever the size.
    std::uint16_t m_generation = 1;
    std::vector<std::uint64_t> m_misses;
    std::uint64_t m_accesses = 0;
};

} // namespace layoutlab
