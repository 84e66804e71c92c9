// SPDX-License-Identifier: MIT
#pragma once

// Hardware and software event counters through perf_event_open, with events named as people say them
// (cycles, instructions, l1d-read-misses, llc-read-misses, task-clock, page-faults) and encoded by
// libpfm4. Whether this machine has hardware counters is found by opening them:
//   ENOENT, EOPNOTSUPP, ENODEV: no hardware counters here (a virtual machine without a vPMU);
//   EACCES, EPERM: kernel.perf_event_paranoid forbids them.
// Software events are still counted when hardware ones are not; the reason is kept, never a crash.

#include "layoutlab/expected.h"

#include <memory>
#include <string>
#include <vector>

namespace layoutlab {

struct CounterValue {
    std::string name;
    bool available = false;
    std::uint64_t value = 0;
    std::string unavailableReason; // why not, when !available
};

class PerfCounters {
public:
    // The names `open` understands, and the libpfm4 event each stands for.
    static std::vector<std::pair<std::string, std::string>> knownEvents();
    static std::vector<std::string> defaultEvents();

    // Opens what it can of `events`: hardware events as one group (counted together), software events
    // each on its own. Fails only for unknown names; events the machine lacks are reported unavailable.
    static Expected<std::unique_ptr<PerfCounters>> open(const std::vector<std::string>& events);
    ~PerfCounters();

    // Counts this thread from start() to stop().
    void start();
    void stop();
    std::vector<CounterValue> read() const;
    // True when at least one hardware event opened.
    bool hardwareAvailable() const;
    // "no hardware counters on this machine (perf_event_open: ENOENT)" and the like, or empty.
    const std::string& hardwareReason() const { return m_hardwareReason; }

private:
    PerfCounters() = default;
    struct Event {
        std::string name;
        bool hardware = false;
        int fd = -1;
        std::string reason;
    };
    std::vector<Event> m_events;
    int m_groupLeader = -1;
    std::string m_hardwareReason;
};

// One line for `layoutlab collectors`: whether perf works here, and why not.
std::string perfAvailability();

} // namespace layoutlab
