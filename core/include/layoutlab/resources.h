// SPDX-License-Identifier: MIT
#pragma once

// What a command may take from the machine: checked before a large allocation or write, so that a trace
// claiming four billion keys or a generator asked for 34 GB is refused with the figures, not OOM-killed
// or left to fill the disk.

#include "layoutlab/expected.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace layoutlab {

// The memory this process can still take: the least of the system's MemAvailable, the cgroup's limit
// less its usage, and the address-space limit (ulimit -v). UINT64_MAX when none is known.
std::uint64_t availableMemoryBytes();

// Fails, naming `what`, the bytes and the limit, when `bytes` is more than availableMemoryBytes().
Status checkMemory(std::uint64_t bytes, std::string_view what);

// Checks that the file system holding `path` (or its directory, when it does not exist) has room for
// `bytes` more, keeping 1% of it (at most 64 MiB) free. Devices and pipes are not checked.
Status checkFreeSpace(const std::string& path, std::uint64_t bytes, std::string_view what);

// a * b and a + b, or nothing when they wrap: counts from user input never wrap silently.
bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t& out);
bool addChecked(std::uint64_t a, std::uint64_t b, std::uint64_t& out);

} // namespace layoutlab
