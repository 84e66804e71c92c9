// SPDX-License-Identifier: MIT
#pragma once

// "name:key=value,key=value" specifications, shared by --layout and --alloc.

#include "layoutlab/expected.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

class Spec {
public:
    static Expected<Spec> parse(std::string_view text, std::string_view what);

    const std::string& name() const { return m_name; }
    bool has(std::string_view key) const;
    // Every parameter given, by key (not marked used).
    const std::map<std::string, std::string, std::less<>>& parameters() const { return m_params; }
    // Each getter marks the key as used; unusedKeys() then names the parameters nobody understood.
    Expected<std::uint64_t> integer(std::string_view key, std::uint64_t fallback, std::uint64_t min, std::uint64_t max);
    Expected<double> real(std::string_view key, double fallback, double min, double max);
    std::string text(std::string_view key, std::string fallback);
    // A "yes" or "no" parameter.
    Expected<bool> yesNo(std::string_view key, bool fallback);
    // Fails with a usage error naming the first parameter no getter asked for.
    Status rejectUnused(std::string_view allowedList) const;

private:
    std::string m_what;
    std::string m_name;
    std::map<std::string, std::string, std::less<>> m_params;
    mutable std::map<std::string, bool, std::less<>> m_used;
};

Expected<std::uint64_t> parseUnsigned(std::string_view text, std::string_view field);
Expected<double> parseReal(std::string_view text, std::string_view field);
// A memory size as Valkey and Redis read maxmemory (util.c memtoll): a whole number with an optional unit,
// case-insensitive: b, k (1000), kb (1024), m (10^6), mb (2^20), g (10^9), gb (2^30).
Expected<std::uint64_t> parseMemorySize(std::string_view text, std::string_view field);
std::vector<std::string_view> splitString(std::string_view text, char separator);

} // namespace layoutlab
