// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace layoutlab {

struct CollectorInfo {
    std::string name;
    bool available = false;
    std::string detail; // what it measures, or why it is not available here
};

// What this build compiled in and this machine can run.
std::vector<CollectorInfo> listCollectors();

} // namespace layoutlab
