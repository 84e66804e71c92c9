// SPDX-License-Identifier: MIT
#pragma once

// How long work tells its caller how far it is: the CLI's progress bar and the GUI's task runner
// implement it; traces, importers, the simulator and the collectors call it. It depends on nothing, so
// that a reader of traces need not know the simulator.

#include <cstdint>
#include <string_view>

namespace layoutlab {

class ProgressSink {
public:
    virtual ~ProgressSink() = default;
    // fraction in [0, 1] (negative when the total is unknown), and requests done so far.
    virtual void progress(double fraction, std::uint64_t requestsDone) = 0;
    // A job of several phases (a drive's load, settle, run and predict) names each as it starts; the
    // fractions that follow are of that phase.
    virtual void phase(std::string_view name) { (void)name; }
};

} // namespace layoutlab
