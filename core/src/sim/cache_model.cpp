// SPDX-License-Identifier: MIT
#include "layoutlab/sim/cache_model.h"

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/spec.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace layoutlab {

namespace {

Expected<std::uint64_t> parseSize(std::string_view text) {
    std::uint64_t multiplier = 1;
    if (!text.empty()) {
        const char unit = static_cast<char>(text.back() | 0x20); // lower case
        if (unit == 'k' || unit == 'm' || unit == 'g') {
            multiplier = unit == 'k' ? 1024 : unit == 'm' ? 1024 * 1024 : 1024ull * 1024 * 1024;
            text.remove_suffix(1);
        }
    }
    auto value = parseUnsigned(text, field::kCacheGeometry);
    if (!value)
        return value.error();
    return *value * multiplier;
}

std::string readLine(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

} // namespace

Expected<CacheGeometry> CacheGeometry::parse(std::string_view text) {
    CacheGeometry g;
    for (auto level : splitString(text, ',')) {
        const auto colon = level.find(':');
        if (colon == std::string_view::npos)
            return usageError(fmt::format("cache level '{}' is not SIZE:WAYS", level), field::kCacheGeometry);
        auto size = parseSize(level.substr(0, colon));
        auto ways = parseUnsigned(level.substr(colon + 1), field::kCacheGeometry);
        if (!size || !ways || *ways == 0 || *ways > 64 || *size < kCacheLineBytes * *ways
            || *size % (kCacheLineBytes * *ways) != 0)
            return usageError(fmt::format("cache level '{}': size must be a multiple of 64 x ways, ways 1..64", level),
                field::kCacheGeometry);
        // The largest caches built are a few hundred MiB (stacked L3); the model keeps a tag per line, so a
        // typo like 512G would ask for gigabytes of tags.
        if (*size > kMaxCacheLevelBytes)
            return usageError(fmt::format("cache level '{}': {} bytes is larger than any cache ({} MiB at most)", level,
                                  *size, kMaxCacheLevelBytes >> 20),
                field::kCacheGeometry);
        if (!g.levels.empty() && *size < g.levels.back().sizeBytes)
            return usageError(fmt::format("cache level '{}' is smaller than the level before it: give levels from L1 "
                                          "outward",
                                  level),
                field::kCacheGeometry);
        g.levels.push_back({ *size, static_cast<std::uint32_t>(*ways) });
    }
    if (g.levels.size() < 2 || g.levels.size() > 3)
        return usageError(
            "give two or three cache levels, from L1 outward (e.g. 32K:8,512K:8,32M:16)", field::kCacheGeometry);
    return g;
}

CacheGeometry CacheGeometry::detect(const std::string& sysfsDir) {
    // index*/level, type (Data, Instruction, Unified), size ("48K"), ways_of_associativity.
    std::vector<std::pair<int, CacheLevelGeometry>> found;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(sysfsDir, ec)) {
        const auto type = readLine(entry.path() / "type");
        if (type != "Data" && type != "Unified")
            continue;
        auto size = parseSize(readLine(entry.path() / "size"));
        auto ways = parseUnsigned(readLine(entry.path() / "ways_of_associativity"), "ways");
        auto level = parseUnsigned(readLine(entry.path() / "level"), "level");
        if (!size || !ways || !level || *ways == 0 || *size % (kCacheLineBytes * *ways) != 0)
            continue;
        found.push_back({ static_cast<int>(*level), { *size, static_cast<std::uint32_t>(*ways) } });
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    CacheGeometry g;
    for (const auto& [level, geometry] : found)
        if (g.levels.size() < 3)
            g.levels.push_back(geometry);
    if (g.levels.size() < 2)
        return *parse("32K:8,1M:16,32M:16");
    return g;
}

std::string CacheGeometry::describe() const {
    std::string out;
    for (const auto& l : levels) {
        const auto kib = l.sizeBytes / 1024;
        out += fmt::format("{}{}:{}", out.empty() ? "" : ",",
            kib % 1024 == 0 ? fmt::format("{}M", kib / 1024) : fmt::format("{}K", kib), l.ways);
    }
    return out;
}

namespace {
// A level whose plain tag array would be larger than this keeps compact sets (Level::CompactSet).
constexpr std::uint64_t kCompactAboveBytes = std::uint64_t { 1 } << 20;
} // namespace

CacheHierarchy::CacheHierarchy(const CacheGeometry& geometry) {
    constexpr std::uint64_t kMaxLines = (std::uint64_t { 1 } << kMaxAddressBits) / kCacheLineBytes;
    for (const auto& g : geometry.levels) {
        Level level;
        level.ways = g.ways;
        level.sets = g.sizeBytes / (kCacheLineBytes * g.ways);
        level.setMask = (level.sets & (level.sets - 1)) == 0 ? level.sets - 1 : 0;
        level.setShift = level.setMask ? static_cast<unsigned>(std::countr_zero(level.sets)) : 0;
        constexpr std::uint64_t kMaxReciprocalSets = std::uint64_t { 1 } << (64 - (kMaxAddressBits - 6));
        if (!level.setMask && level.sets < kMaxReciprocalSets)
            level.reciprocal = static_cast<std::uint64_t>(
                ((static_cast<Uint128>(1) << 64) + level.sets - 1) / level.sets); // ceil(2^64 / sets)
        level.narrow = kMaxLines / level.sets + 1 <= UINT32_MAX;
        level.compact = level.narrow && level.ways > Level::kInlineWays
            && level.sets * level.ways * sizeof(std::uint32_t) > kCompactAboveBytes;
        if (level.compact)
            level.compactSets.assign(level.sets, Level::CompactSet {});
        else if (level.narrow)
            level.narrowTags.assign(level.sets * level.ways, 0);
        else
            level.wideTags.assign(level.sets * level.ways, 0);
        if (!level.compact)
            level.setGeneration.assign(level.sets, 0);
        m_levels.push_back(std::move(level));
    }
    m_misses.assign(m_levels.size(), 0);
}

namespace {

// Moves ways[0, count) one place down.
template <class Tag> inline void shiftDown(Tag* ways, std::uint32_t count) {
    std::memmove(ways + 1, ways, std::size_t { count } * sizeof(Tag));
}

// Move-to-front LRU within one set: on a hit the line moves to the front; on a miss the least recently
// used (last) way falls off. A read-only search, then one move of the ways in front of it.
template <class Tag> bool lookupSet(Tag* ways, std::uint32_t count, Tag tag) {
    if (ways[0] == tag)
        return true; // already the most recently used
    Tag* const end = ways + count;
    Tag* const found = std::find(ways + 1, end, tag);
    const bool hit = found != end;
    Tag* const last = hit ? found : end - 1; // the way that is overwritten
    shiftDown(ways, static_cast<std::uint32_t>(last - ways));
    ways[0] = tag;
    return hit;
}

} // namespace

bool CacheHierarchy::lookup(Level& level, std::uint64_t line) {
    assert(line < (std::uint64_t { 1 } << (kMaxAddressBits - 6)));
    // Sets are indexed by the low line-number bits (modulo for non-power-of-two set counts); the rest of
    // the line number is the tag.
    std::uint64_t set, tag;
    if (level.setMask) {
        set = line & level.setMask;
        tag = (line >> level.setShift) + 1;
    } else {
        const std::uint64_t q = level.quotient(line);
        set = line - q * level.sets;
        tag = q + 1;
    }
    if (level.compact)
        return lookupCompact(level, set, static_cast<std::uint32_t>(tag));
    const bool stale = level.setGeneration[set] != m_generation;
    if (stale)
        level.setGeneration[set] = m_generation;
    if (level.narrow) {
        std::uint32_t* ways = level.narrowTags.data() + set * level.ways;
        if (stale)
            std::fill(ways, ways + level.ways, 0u);
        return lookupSet<std::uint32_t>(ways, level.ways, static_cast<std::uint32_t>(tag));
    }
    std::uint64_t* ways = level.wideTags.data() + set * level.ways;
    if (stale)
        std::fill(ways, ways + level.ways, std::uint64_t { 0 });
    return lookupSet<std::uint64_t>(ways, level.ways, tag);
}

bool CacheHierarchy::lookupCompact(Level& level, std::uint64_t set, std::uint32_t tag) {
    constexpr std::uint32_t kInline = Level::kInlineWays;
    Level::CompactSet& s = level.compactSets[set];
    if (s.generation != m_generation) { // empty since clear()
        s = Level::CompactSet {};
        s.generation = m_generation;
    }
    std::uint32_t* const in = s.tags;
    if (in[0] == tag)
        return true; // already the most recently used
    // The set is one list, most recent first: the inline tags, then the overflow block's.
    const std::uint32_t overflowWays = level.ways - kInline;
    std::uint32_t* over
        = s.overflow ? level.overflowTags.data() + std::size_t { s.overflow - 1 } * overflowWays : nullptr;
    std::uint32_t position = level.ways; // not found
    for (std::uint32_t i = 1; i < kInline; ++i)
        if (in[i] == tag)
            position = i;
    if (position == level.ways && over)
        for (std::uint32_t j = 0; j < overflowWays; ++j)
            if (over[j] == tag)
                position = kInline + j;
    const bool hit = position != level.ways;
    // The way overwritten: the line's own on a hit; on a miss the last one, which is the inline part's
    // last while the set has no overflow and an empty inline way.
    std::uint32_t last = position;
    if (!hit)
        last = over || in[kInline - 1] != 0 ? level.ways - 1 : kInline - 1;
    if (last >= kInline) {
        if (!over) { // the set's seventh line: it needs its overflow block now
            level.overflowTags.resize(level.overflowTags.size() + overflowWays, 0);
            s.overflow = static_cast<std::uint32_t>(level.overflowTags.size() / overflowWays);
            over = level.overflowTags.data() + std::size_t { s.overflow - 1 } * overflowWays;
        }
        shiftDown(over, last - kInline);
        over[0] = in[kInline - 1];
        last = kInline - 1;
    }
    shiftDown(in, last);
    in[0] = tag;
    return hit;
}

void CacheHierarchy::access(std::uint64_t address) {
    ++m_accesses;
    const std::uint64_t line = address / kCacheLineBytes;
    const std::size_t last = m_levels.size() - 1;
    for (std::size_t i = 0; i < m_levels.size(); ++i) {
        if (i == last && m_lastLevelEvery > 1 && !lastLevelSimulates(line))
            return;
        if (lookup(m_levels[i], line))
            return;
        ++m_misses[i];
    }
}

void CacheHierarchy::accessLastLevel(std::uint64_t address) {
    const std::uint64_t line = address / kCacheLineBytes;
    if (m_lastLevelEvery == 1 || lastLevelSimulates(line))
        (void)lookup(m_levels.back(), line);
}

void CacheHierarchy::sampleLastLevel(std::uint32_t every) {
    assert(every > 0 && std::has_single_bit(every));
    m_lastLevelEvery = every;
}

bool CacheHierarchy::lastLevelSimulates(std::uint64_t line) const {
    const Level& level = m_levels.back();
    const std::uint64_t set = level.setOf(line);
    // Fibonacci hashing of the set index: its top bits pick one set in m_lastLevelEvery.
    return ((set * 0x9E3779B97F4A7C15ULL) >> 40 & (m_lastLevelEvery - 1)) == 0;
}

void CacheHierarchy::resetCounters() {
    std::fill(m_misses.begin(), m_misses.end(), 0);
    m_accesses = 0;
}

} // namespace layoutlab

namespace layoutlab {

void CacheHierarchy::clear() {
    // O(1) however large the last level is; when the 16-bit generations run out, a real wipe.
    if (++m_generation == 0) {
        for (auto& level : m_levels) {
            std::fill(level.setGeneration.begin(), level.setGeneration.end(), std::uint16_t { 0 });
            for (auto& set : level.compactSets)
                set.generation = 0;
        }
        m_generation = 1;
    }
    // Every compact set is stale now and drops its block when next used: the blocks can all go.
    for (auto& level : m_levels)
        level.overflowTags.clear();
    resetCounters();
}

} // namespace layoutlab
