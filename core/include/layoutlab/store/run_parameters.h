// SPDX-License-Identifier: MIT
#pragma once

// The parameters a simulation run is stored with (runs.parameters_json), as one typed struct: written by
// runSimulationJob and read back by every reader (stored runs, batch, compare) through fromJson, not
// picked out of hand-built JSON in each. Keys a kind of run adds of its own (advise's weights, a drive's
// engine) stay in `extra`, written beside the typed ones.

#include "layoutlab/expected.h"

#include "layoutlab/sim/arena_replay.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

struct RunParameters {
    std::string trace;
    std::string layout;
    // The name the layout was given under: its preset (valkey-8.1, valkey-8.1:threshold=128) or a layout
    // file's own name. Kept so that a run keeps its name when presets change.
    std::string layoutName;
    std::string allocator;
    std::vector<std::uint32_t> thresholds; // empty: the layout's own
    std::string format = "auto";
    std::string onError = "fail";
    std::uint32_t keySize = 16; // oracleGeneral key bytes
    std::string thresholdParameter; // the layout's threshold parameter's name; empty without one
    struct LayoutFile {
        std::string name, path, contentHash, text;
    };
    std::optional<LayoutFile> layoutFile; // a layout file as it was when the run was made
    std::optional<std::string> cacheGeometry;
    std::optional<std::uint32_t> cacheSampleGets;
    std::optional<std::string> startRegions; // SimulationConfig::startRegions, as "40:41"
    // The slab model ran (SimulationConfig::slabs) with these options, and took a timeline of this many
    // samples (0: none).
    std::optional<SlabModelOptions> slabModel;
    std::uint32_t timelineSamples = 0;
    std::string batchCell;
    nlohmann::json extra = nlohmann::json::object();

    nlohmann::json toJson() const;
    // Parameters as stored; unknown keys go to `extra`. A value that is not what its key holds is an error
    // naming the key.
    static Expected<RunParameters> fromJson(std::string_view text);
};

} // namespace layoutlab
