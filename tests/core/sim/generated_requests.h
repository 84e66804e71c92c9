// SPDX-License-Identifier: MIT
#pragma once

// Every request `gen` makes of a generator configuration, in memory: the simulation tests' traces.

#include "layoutlab/trace/generator.h"

#include <gtest/gtest.h>
#include <vector>

namespace layoutlab::test {

inline std::vector<Request> generatedRequests(const Expected<GeneratorConfig>& config) {
    EXPECT_TRUE(config);
    if (!config)
        return {};
    SyntheticTrace trace(*config);
    std::vector<Request> all(trace.totalRequests());
    auto n = trace.read(all);
    EXPECT_TRUE(n);
    all.resize(n ? *n : 0);
    return all;
}

} // namespace layoutlab::test
