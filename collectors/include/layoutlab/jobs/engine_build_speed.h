// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

namespace layoutlab {

// How scripts/build-engine compiles a Valkey build. Each has the release build's memory layout (the same
// allocations in the same order), which is what a drive compares; they differ in build time and speed.
enum class EngineBuildSpeed : std::uint8_t {
    Release, // the archive's own Makefile (-O3, link-time optimisation): measure throughput on it
    Quick, // -O1, no link-time optimisation (--quick): about -O0's build time, near release speed
    Unoptimized, // -O0 (--unoptimized): Valkey's `make noopt`
};

} // namespace layoutlab
