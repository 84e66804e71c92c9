// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/progress_reader.h"

#include <chrono>

namespace layoutlab::cli {

// A one-line progress bar on stderr, shown only when stderr is a terminal. With LAYOUTLAB_PROGRESS=lines
// it prints machine-readable lines instead, whatever stderr is ("progress LABEL FRACTION DONE", FRACTION
// negative when the total is unknown), at most every 100 ms: what layoutlab-gui reads when it runs a
// command.
class ProgressBar final : public ProgressSink {
public:
    explicit ProgressBar(std::string label);
    ~ProgressBar() override;
    void progress(double fraction, std::uint64_t done) override;
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
