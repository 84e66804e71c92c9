// SPDX-License-Identifier: MIT
#pragma once

// What the collection workloads (collection_workloads.cpp, zset_workloads.cpp) share: draws with a fixed seed,
// key names of each type, fields, members and scores named apart in each key.

#include "collection_workloads.h"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <random>
#include <string>

namespace layoutlab::test::workload {

class Draw {
public:
    explicit Draw(std::uint64_t seed)
        : m_rng(seed) { }
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) {
        return std::uniform_int_distribution<std::uint64_t>(lo, hi)(m_rng);
    }
    bool chance(double p) { return std::bernoulli_distribution(p)(m_rng); }
    // A value's length: mostly short, some at hash-max-listpack-value (64) and some past it.
    std::string value(std::uint64_t salt) {
        const std::uint64_t r = between(0, 99);
        const std::uint64_t length = r < 80 ? between(1, 40) : r < 95 ? between(41, 64) : between(65, 120);
        std::string v(length, 'v');
        for (std::size_t c = 0; c < v.size(); ++c)
            v[c] = static_cast<char>('a' + (salt * 7 + c) % 26);
        return v;
    }

private:
    std::mt19937_64 m_rng;
};

// Fields named apart in each key (one hash seed per server: the same names in every key would put every
// key's fields in the same buckets), 4 to 20 bytes.
inline std::string field(std::uint64_t key, std::uint64_t i) {
    std::string f = fmt::format("f{:x}.{}", key * 2654435761ULL % 65521, i);
    f.resize(4 + (key + i) % 17, '_');
    return f;
}
inline std::string hashKey(std::uint64_t k) {
    return fmt::format("hash:{:07}", k);
}

// A set's member: an integer of a width drawn per key (an intset's 2, 4 or 8 bytes, the i-th apart from the
// others), or a string of 4 to 80 bytes (some past set-max-listpack-value).
inline std::string integerMember(std::uint64_t key, std::uint64_t i, std::uint64_t width) {
    static const std::int64_t kBase[] = { 0, -20000, 70000, 5000000000LL };
    const auto v = kBase[width % 4] + static_cast<std::int64_t>(i * (1 + key % 7));
    return std::to_string(width % 4 == 1 ? -v : v);
}
inline std::string stringMember(std::uint64_t key, std::uint64_t i, std::uint64_t length) {
    std::string m = fmt::format("m{:x}.{}", key * 40503ULL % 65521, i);
    m.resize(std::max<std::size_t>(length, m.size()), '-');
    return m;
}
inline std::string setKey(std::uint64_t k) {
    return fmt::format("set:{:07}", k);
}

inline std::string zsetKey(std::uint64_t k) {
    return fmt::format("zset:{:07}", k);
}
// A score: an integer (a timestamp's or a small count's digits) or a fraction of 1 to 17 significant digits.
inline std::string score(Draw& d) {
    const std::uint64_t r = d.between(0, 99);
    if (r < 40)
        return std::to_string(d.between(0, 300));
    if (r < 60)
        return std::to_string(1700000000000 + d.between(0, 1000000000));
    if (r < 80)
        return fmt::format("{}.{}", d.between(0, 99), d.between(1, 9));
    return fmt::format("{:.6f}", static_cast<double>(d.between(0, 1u << 30)) / 7.0);
}

// The sorted-set workloads (zset_workloads.cpp).
Workload zsetsGrow(std::uint64_t keys);
Workload zsetsChurn(std::uint64_t keys);
Workload zsetsMixedLengths(std::uint64_t keys);
Workload zsetsRanges(std::uint64_t keys);
// Keys of every type renamed (rename_workloads.cpp).
Workload renames(std::uint64_t keys);
Workload copies(std::uint64_t keys);
// Lists written in their middle by LINSERT (list_workloads.cpp).
Workload listInserts(std::uint64_t keys);
// Groups of sets, and of sorted sets, whose intersections, unions and differences are stored
// (store_workloads.cpp).
Workload setStores(std::uint64_t groups);
Workload zsetStores(std::uint64_t groups);
// Sets, hashes and sorted sets grown to their tables' sizes with members named again (repeat_workloads.cpp).
Workload namedAgain(std::uint64_t keys);

} // namespace layoutlab::test::workload
