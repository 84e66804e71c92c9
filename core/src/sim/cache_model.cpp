// SPDX-License-Identifier: MIT
#include "layoutlab/sim/cache_model.h"

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/spec.h"

#include <algorithm>
#include <cassert>
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
    for (const auto& g : geometry.levels) {
        Level level;
        level.ways = g.ways;
        level.sets = g.sizeBytes / (kCacheLineBytes * g.ways);
        level.setMask = (level.sets & (level.sets - 1)) == 0 ? level.sets - 1 : 0;
        level.tags.assign(level.sets * level.ways, 0);
        m_levels.push_back(std::move(level));
    }
    m_misses.assign(m_levels.size(), 0);
}

namespace {
constexpr int kGenerationShift = 51; // line numbers stay below 2^51 (addresses below 2^57)
constexpr std::uint64_t kMaxGeneration = (std::uint64_t { 1 } << (64 - kGenerationShift)) - 1;
} // namespace

bool CacheHierarchy::lookup(Level& level, std::uint64_t line) {
    // Sets are indexed by the low line-number bits (modulo for non-power-of-two set counts).
    const std::uint64_t set = level.setMask ? (line & level.setMask) : line % level.sets;
    std::uint64_t* ways = level.tags.data() + set * level.ways;
    assert(line + 1 < (std::uint64_t { 1 } << kGenerationShift)); // else tags of two generations could collide
    const std::uint64_t tag = (m_generation << kGenerationShift) | (line + 1);
    if (ways[0] == tag)
        return true; // already the most recently used
    // Find the line, shifting the ways before it back by one as we go: on a hit it moves to the front;
    // on a miss the least recently used (last) way falls off. A plain loop: sets are small (<= 64 ways).
    std::uint64_t carried = ways[0];
    for (std::uint32_t w = 1; w < level.ways; ++w) {
        const std::uint64_t current = ways[w];
        ways[w] = carried;
        if (current == tag) {
            ways[0] = tag;
            return true;
        }
        carried = current;
    }
    ways[0] = tag;
    return false;
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
    // O(1) however large the last level is, but for a real wipe when the generations run out.
    if (++m_generation > kMaxGeneration) {
        for (auto& level : m_levels)
            std::fill(level.tags.begin(), level.tags.end(), 0);
        m_generation = 1;
    }
    resetCounters();
}

} // namespace layoutlab
