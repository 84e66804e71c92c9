// SPDX-License-Identifier: MIT
#pragma once

// A Valkey build at chosen settings through the project's engine build script (scripts/build-engine),
// which builds once into its cache outside the clone and prints the binary's path. Progress comes from
// the files compiled; a stop stops the script and every compiler it started.

#include "layoutlab/expected.h"
#include "layoutlab/jobs/engine_build_speed.h"

#include <functional>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

struct EngineBuildRequest {
    std::string script; // empty: $LAYOUTLAB_BUILD_ENGINE, else the project's scripts/build-engine
    std::string archive;
    std::vector<std::string> settings; // --set values, e.g. "embed-threshold=96"
    EngineBuildSpeed speed = EngineBuildSpeed::Release;
};

// The script a request runs.
std::string engineBuildScript(const std::string& requested);

// The built server's path. `progress` gets the fraction compiled.
Expected<std::string> buildEngine(
    const EngineBuildRequest& request, const std::function<void(double)>& progress, std::stop_token stop);

} // namespace layoutlab
