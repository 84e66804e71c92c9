// SPDX-License-Identifier: MIT
#pragma once

// The models the layout tests price keys with: jemalloc's size classes as the engines link it, and a layout
// by its spec (a failed parse is a test failure).

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"

#include <gtest/gtest.h>

namespace layoutlab::test {

inline const AllocatorModel& jemalloc() {
    static const auto allocator = *parseAllocator("jemalloc:quantum=8,page=4096");
    return *allocator;
}

inline LayoutPtr layout(const std::string& spec) {
    auto parsed = parseLayout(spec);
    EXPECT_TRUE(parsed) << parsed.error().describe();
    return *parsed;
}

} // namespace layoutlab::test
