// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/progress_reader.h"

#include <chrono>

namespace layoutlab::cli {

// A one-line progress bar on stderr, shown only when stderr is a terminal. With LAYOUTLAB_PROGRESS=lines
// it prints machine-readable lines instead, whatever stderr is ("progress LABEL FRACTION DONE", FRACTION
// negative when the total is unknown), at most every 100 ms, for scripts that watch a long command. A job
// of several phases (drive) names each one, which becomes the label.
class ProgressBar final : public ProgressSink {
public:
    explicit ProgressBar(std::string label);
    ~ProgressBar() override;
    void progress(double fraction, std::uint64_t done) override;
    // A new phase: its name becomes the label, its clock starts again.
    void phase(std::string_view name) override;
    bool enabled() const { return m_enabled; }

private:
    std::string m_label;
    bool m_enabled = false;
    bool m_lines = false;
    bool m_drawn = false;
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastDraw;
};

} // namespace layoutlab::cli
