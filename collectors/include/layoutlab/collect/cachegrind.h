// SPDX-License-Identifier: MIT
#pragma once

// The cachegrind collector: runs a program under valgrind's cache simulator with the D1 and LL geometry
// of the cache model given explicitly (so both simulate the same caches), and reads the data-read counts
// (Dr, D1mr, DLmr). Valgrind simulates two data levels: the model's first level is D1 and its last is LL.
//
// The simulator is callgrind's (`--tool=callgrind --cache-sim=yes`, the same cache simulation as
// cachegrind's) started with instrumentation off: the program runs unsimulated until it asks for the
// simulation (CALLGRIND_START_INSTRUMENTATION), zeroes the counts before what it measures and dumps them
// after (CALLGRIND_ZERO_STATS, CALLGRIND_DUMP_STATS_AT with kMeasuredDump). Loading a million keys is
// therefore not simulated, and one run gives the measured counts. Debian 12's valgrind (3.19) has no
// such control for cachegrind itself.

#include "layoutlab/expected.h"
#include "layoutlab/sim/cache_model.h"

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

struct CachegrindCounts {
    std::uint64_t instructions = 0; // Ir
    std::uint64_t dataReads = 0; // Dr
    std::uint64_t l1ReadMisses = 0; // D1mr
    std::uint64_t llReadMisses = 0; // DLmr
};

// The dump a measured program writes with CALLGRIND_DUMP_STATS_AT after what it measures.
inline constexpr const char* kMeasuredDump = "measured";

// The `valgrind` on PATH, if any.
std::optional<std::string> findValgrind();
// One line for `layoutlab collectors`.
std::string cachegrindAvailability(bool* available = nullptr);

// Valgrind simulates caches whose set count is a power of two. This keeps the size and the line size of
// each level and, where needed, raises the ways so that the sets become a power of two (a 300 MiB 20-way
// LLC becomes 65536 sets of 75 ways); the model then runs with the same geometry.
CacheGeometry cachegrindCompatible(const CacheGeometry& geometry);
// "--I1=32768,8,64 --D1=... --LL=...": the first level of `geometry` as D1 (and I1), the last as LL.
Expected<std::vector<std::string>> cachegrindCacheOptions(const CacheGeometry& geometry);

// Parses a cachegrind.out or callgrind.out file's `events:` and `summary:` lines.
Expected<CachegrindCounts> parseCachegrindOutput(const std::string& text, const std::string& file = {});

// Runs `program` (argv, argv[0] an absolute path) under valgrind's cache simulator in `workDir`, with the
// simulation off until the program starts it, and returns the counts of its kMeasuredDump dump. The
// program's own output goes to workDir/program.log; `programLog` receives it when given.
Expected<CachegrindCounts> runUnderCacheSimulator(const std::vector<std::string>& program,
    const CacheGeometry& geometry, const std::string& workDir, std::stop_token stop = {},
    std::string* programLog = nullptr);

} // namespace layoutlab
