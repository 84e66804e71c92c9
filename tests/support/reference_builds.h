// SPDX-License-Identifier: MIT
#pragma once

// Which layout and allocator reproduce each build named in datasets/reference/: the worked tables'
// model names and the measured servers' names.

#include <string>

namespace layoutlab::test {

struct ReferenceBuild {
    std::string layout;
    std::string allocator;
};

// Model names of valkey-redis-worked-k16.csv and server names of valkey-redis-k16.csv.
inline ReferenceBuild referenceBuild(const std::string& name) {
    const std::string bundled = "jemalloc:quantum=8,page=4096"; // Valkey/Redis deps/jemalloc
    const std::string debian = "jemalloc:quantum=16,page=4096"; // Debian's libjemalloc2
    if (name == "redis70q16" || name == "redis-debian")
        return { "redis-7.0", debian };
    if (name == "redis70q8")
        return { "redis-7.0", bundled };
    if (name == "valkey81_t64" || name == "valkey-t64")
        return { "valkey-8.1", bundled };
    if (name == "valkey81_t128" || name == "valkey-t128")
        return { "valkey-8.1:threshold=128", bundled };
    if (name == "valkey81_t128L" || name == "valkey-t128L")
        return { "valkey-8.1:threshold=128,embstr-limit=108", bundled };
    if (name == "valkey91")
        return { "valkey-9.1", bundled };
    return {};
}

} // namespace layoutlab::test
