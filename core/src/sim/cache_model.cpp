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
    auto value = parseUnsigned(text, "--cache-geometry");
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
            return usageError(fmt::format("cache level '{}' is not SIZE:WAYS", level), "--cache-geometry");
        auto size = parseSize(level.substr(0, colon));
        auto ways = parseUnsigned(level.substr(colon + 1), "--cache-geometry");
        if (!size || !ways || *ways == 0 || *ways > 64 || *size < kCacheLineBytes * *ways
            || *size % (kCacheLineBytes * *ways) != 0)
            return usageError(fmt::format("cache level '{}': size must be a multiple of 64 x ways, ways 1..64", level),
                "--cache-geometry");
        g.levels.push_back({ *size, static_cast<std::uint32_t>(*ways) });
    }
    if (g.levels.size() < 2 || g.levels.size() > 3)
        return usageError(
            "give two or three cache levels, from L1 outward (e.g. 32K:8,512K:8,32M:16)", "--cache-geometry");
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
        if (level.narrow)
            level.narrowTags.assign(level.sets * level.ways, 0);
        else
            level.wideTags.assign(level.sets * level.ways, 0);
        level.setGeneration.assign(level.sets, 0);
        m_levels.push_back(std::move(level));
    }
    m_misses.assign(m_levels.size(), 0);
}

namespace {

// Move-to-front LRU within one set: on a hit the line moves to the front; on a miss the least recently
// used (last) way falls off. A read-only search, then one move of the ways in front of it.
template <class Tag> bool lookupSet(Tag* ways, std::uint32_t count, Tag tag) {
    if (ways[0] == tag)
        return true; // already the most recently used
    Tag* const end = ways + count;
    Tag* const found = std::find(ways + 1, end, tag);
    const bool hit = found != end;
    Tag* const last = hit ? found : end - 1; // the way that is overwritten
    std::memmove(ways + 1, ways, static_cast<std::size_t>(last - ways) * sizeof(Tag));
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

void CacheHierarchy::access(std::uint64_t address) {
    ++m_accesses;
    const std::uint64_t line = address / kCacheLineBytes;
    for (std::size_t i = 0; i < m_levels.size(); ++i) {
        if (lookup(m_levels[i], line))
            return;
        ++m_misses[i];
    }
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
        for (auto& level : m_levels)
            std::fill(level.setGeneration.begin(), level.setGeneration.end(), std::uint16_t { 0 });
        m_generation = 1;
    }
    resetCounters();
}

} // namespace layoutlab
