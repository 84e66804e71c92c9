// SPDX-License-Identifier: MIT
#include "layoutlab/collect/perf_counters.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <linux/perf_event.h>
#include <mutex>
#include <perfmon/pfmlib_perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace layoutlab {

namespace {

struct KnownEvent {
    const char* name;
    const char* pfmName; // libpfm4's generic perf_events names
    bool hardware;
};
constexpr std::array kKnownEvents {
    KnownEvent { "cycles", "perf::PERF_COUNT_HW_CPU_CYCLES", true },
    KnownEvent { "instructions", "perf::PERF_COUNT_HW_INSTRUCTIONS", true },
    KnownEvent { "l1d-read-misses", "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", true },
    KnownEvent { "llc-read-misses", "perf::PERF_COUNT_HW_CACHE_LL:READ:MISS", true },
    KnownEvent { "task-clock", "perf::PERF_COUNT_SW_TASK_CLOCK", false },
    KnownEvent { "page-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS", false },
};

Status initializePfm() {
    static std::once_flag once;
    static int rc = PFM_SUCCESS;
    std::call_once(once, [] { rc = pfm_initialize(); });
    if (rc != PFM_SUCCESS)
        return ioError(fmt::format("libpfm4 initialisation failed: {}", pfm_strerror(rc)));
    return Ok {};
}

long perfEventOpen(perf_event_attr* attr, int groupFd) {
    return syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1 /* any cpu */, groupFd, 0);
}

std::string paranoidLevel() {
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    std::string level;
    in >> level;
    return level.empty() ? "?" : level;
}

std::string reasonFor(int error) {
    switch (error) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        return fmt::format("no hardware counters on this machine (perf_event_open: {})", std::strerror(error));
    case EACCES:
    case EPERM:
        return fmt::format("kernel.perf_event_paranoid = {} forbids them (perf_event_open: {})", paranoidLevel(),
            std::strerror(error));
    default:
        return fmt::format("perf_event_open failed: {}", std::strerror(error));
    }
}

} // namespace

std::vector<std::pair<std::string, std::string>> PerfCounters::knownEvents() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : kKnownEvents)
        out.emplace_back(e.name, e.pfmName);
    return out;
}

std::vector<std::string> PerfCounters::defaultEvents() {
    std::vector<std::string> out;
    for (const auto& e : kKnownEvents)
        out.emplace_back(e.name);
    return out;
}

Expected<std::unique_ptr<PerfCounters>> PerfCounters::open(const std::vector<std::string>& names) {
    if (auto ok = initializePfm(); !ok)
        return ok.error();
    std::unique_ptr<PerfCounters> counters(new PerfCounters());
    for (const auto& name : names) {
        const KnownEvent* known = nullptr;
        for (const auto& e : kKnownEvents)
            if (name == e.name)
                known = &e;
        if (!known)
            return usageError(fmt::format("unknown event '{}' (known: cycles, instructions, l1d-read-misses, "
                                          "llc-read-misses, task-clock, page-faults)",
                                  name),
                "--events");
        perf_event_attr attr {};
        attr.size = sizeof attr;
        pfm_perf_encode_arg_t arg {};
        arg.attr = &attr;
        arg.size = sizeof arg;
        Event event { name, known->hardware, -1, {} };
        const int rc = pfm_get_os_event_encoding(known->pfmName, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
        if (rc != PFM_SUCCESS) {
            event.reason = fmt::format("libpfm4 cannot encode {}: {}", known->pfmName, pfm_strerror(rc));
            counters->m_events.push_back(event);
            continue;
        }
        attr.disabled = 1; // enabled by start()
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        attr.read_format = 0;
        // Hardware events form one group led by the first that opens; software events count alone.
        const int group = known->hardware ? counters->m_groupLeader : -1;
        const long fd = perfEventOpen(&attr, group);
        if (fd < 0) {
            event.reason = reasonFor(errno);
            if (known->hardware && counters->m_hardwareReason.empty())
                counters->m_hardwareReason = event.reason;
        } else {
            event.fd = static_cast<int>(fd);
            if (known->hardware && counters->m_groupLeader < 0)
                counters->m_groupLeader = event.fd;
        }
        counters->m_events.push_back(event);
    }
    return counters;
}

PerfCounters::~PerfCounters() {
    for (const auto& e : m_events)
        if (e.fd >= 0)
            ::close(e.fd);
}

void PerfCounters::start() {
    for (const auto& e : m_events)
        if (e.fd >= 0) {
            ioctl(e.fd, PERF_EVENT_IOC_RESET, 0);
            ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0);
        }
}

void PerfCounters::stop() {
    for (const auto& e : m_events)
        if (e.fd >= 0)
            ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
}

std::vector<CounterValue> PerfCounters::read() const {
    std::vector<CounterValue> out;
    for (const auto& e : m_events) {
        CounterValue v {};
        v.name = e.name;
        v.available = e.fd >= 0;
        v.unavailableReason = e.reason;
        if (v.available) {
            std::uint64_t value = 0;
            if (::read(e.fd, &value, sizeof value) == static_cast<ssize_t>(sizeof value))
                v.value = value;
            else {
                v.available = false;
                v.unavailableReason = fmt::format("read failed: {}", std::strerror(errno));
            }
        }
        out.push_back(v);
    }
    return out;
}

bool PerfCounters::hardwareAvailable() const {
    for (const auto& e : m_events)
        if (e.hardware && e.fd >= 0)
            return true;
    return false;
}

std::string perfAvailability() {
    auto counters = PerfCounters::open(PerfCounters::defaultEvents());
    if (!counters)
        return counters.error().describe();
    std::string software;
    for (const auto& v : (*counters)->read())
        if (v.available && (v.name == "task-clock" || v.name == "page-faults"))
            software += (software.empty() ? "" : ", ") + v.name;
    if ((*counters)->hardwareAvailable())
        return "hardware and software counters (libpfm4)";
    return fmt::format("software counters only ({}); hardware: {}", software.empty() ? "none" : software,
        (*counters)->hardwareReason());
}

} // namespace layoutlab
