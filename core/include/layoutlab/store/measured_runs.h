// SPDX-License-Identifier: MIT
#pragma once

// The two stored runs of a measurement (`drive`, `profile`): the prediction (a "sim" or "profile" run
// with the simulator's points) and what was measured beside it (a "drive" or "reference" run with its
// measurements), on one trace, begun together and ended together: complete, failed with the error, or
// interrupted. While they are at work a heartbeat shows their owner alive. Results the database will not
// take are kept in a file beside it, never dropped. The CLI and the GUI share it through the jobs that
// use it, so a measurement is stored the same way whichever front end ran it.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/results.h"
#include "layoutlab/store/results_db.h"
#include "layoutlab/store/run_parameters.h"

#include <memory>
#include <vector>

namespace layoutlab {

// The parameters every run on a trace is stored with: the trace and how it is read, the layout (a layout
// file as it was), the allocator, the thresholds.
RunParameters runParametersFor(const std::string& tracePath, const ImportOptions& importOptions,
    const LayoutModel& layout, const AllocatorModel& allocator, const std::vector<std::uint32_t>& thresholds);

class MeasuredRuns {
public:
    // With no database (`db` null), every call does nothing and the run ids stay 0.
    explicit MeasuredRuns(ResultsDb* db)
        : m_db(db) { }
    ~MeasuredRuns();
    MeasuredRuns(const MeasuredRuns&) = delete;
    MeasuredRuns& operator=(const MeasuredRuns&) = delete;

    // Records the trace and begins both runs; the measured run's parameters name the prediction run
    // (prediction_run). With `predictionKind` empty only the measured run is made: its measurements
    // carry their own predictions (an engine sweep of memcached, whose settings are allocators).
    Status begin(const std::string& tracePath, const ImportOptions& importOptions, const std::string& predictionKind,
        const std::string& measuredKind, const RunParameters& parameters, const std::string& toolVersion);
    // Completes both. `summary` is stored as the measured run's replay summary; on a database error the
    // prediction, measurements and summary are kept in a file beside it and the error says where.
    Status complete(const SimulationResult& prediction, const std::vector<Measurement>& measurements,
        const nlohmann::json& summary);
    // Ends both runs for `error`: interrupted for a stop (the error then says so), else failed with it.
    // Returns the error to show.
    Error end(const Error& error);

    std::int64_t prediction() const { return m_prediction; }
    std::int64_t measured() const { return m_measured; }
    bool stored() const { return m_db && m_measured; }

private:
    std::vector<std::int64_t> ids() const; // the runs begun

    ResultsDb* m_db;
    std::int64_t m_prediction = 0;
    std::int64_t m_measured = 0;
    std::unique_ptr<RunHeartbeat> m_heartbeat;
};

// A measurement as JSON (the unstored-results file, `db show --json`).
nlohmann::json toJson(const Measurement& m);

} // namespace layoutlab
