// SPDX-License-Identifier: MIT
#include "layoutlab/sim/simulation.h"
#include "layoutlab/spec.h"

#include <fmt/format.h>

namespace layoutlab {

namespace {
// A region count past any real server's start-up objects in one class (jemalloc slabs hold at most 512).
constexpr std::uint64_t kMaxStartRegions = std::uint64_t { 1 } << 32;
} // namespace

Expected<std::map<std::uint64_t, std::uint64_t>> parseStartRegions(std::string_view text, const std::string& field) {
    std::map<std::uint64_t, std::uint64_t> out;
    if (text.empty())
        return out;
    for (auto part : splitString(text, ',')) {
        const auto pair = splitString(part, ':');
        if (pair.size() != 2)
            return usageError(
                fmt::format("'{}' is not SIZE:REGIONS (e.g. 40:41: 41 regions of the 40-byte class)", part), field);
        auto size = parseUnsigned(pair[0], field);
        auto regions = parseUnsigned(pair[1], field);
        if (!size || !regions || *size == 0)
            return usageError(
                fmt::format("'{}' needs a size class in bytes and a whole number of regions", part), field);
        if (*regions > kMaxStartRegions)
            return usageError(
                fmt::format("'{}': {} regions is more than a class's start-up objects hold", part, *regions), field);
        out[*size] = *regions;
    }
    return out;
}

std::string startRegionsText(const std::map<std::uint64_t, std::uint64_t>& startRegions) {
    std::string out;
    for (const auto& [size, regions] : startRegions)
        out += fmt::format("{}{}:{}", out.empty() ? "" : ",", size, regions);
    return out;
}

} // namespace layoutlab
