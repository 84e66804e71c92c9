// SPDX-License-Identifier: MIT
#pragma once

// A stored run read back whole: its record, its result rebuilt as the simulator returned it (so the
// normal reporters print it), and what it measured. `db show`, `report` and the GUI read runs this way.

#include "layoutlab/store/results_db.h"

namespace layoutlab {

struct StoredRun {
    RunRecord run;
    SimulationResult result;
    std::vector<Measurement> measurements; // reference-engine (and real-server) figures, if any
};

Expected<StoredRun> loadStoredRun(ResultsDb& db, std::int64_t runId);

} // namespace layoutlab
