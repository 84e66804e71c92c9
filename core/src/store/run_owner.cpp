// SPDX-License-Identifier: MIT
// Who owns a run, whether that owner is still at it, and the heartbeat that tells other hosts so.
#include "layoutlab/store/results_db.h"

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <fmt/format.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace layoutlab {

namespace {

std::string bootId() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
}

// Field 22 of /proc/PID/stat: the process's start, in clock ticks since boot. With the boot id, it tells
// a process from a later one that was given the same pid. Empty when there is no such process.
std::string startTicks(std::int64_t pid) {
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string stat;
    if (!std::getline(in, stat))
        return {};
    const auto close = stat.rfind(')'); // the command name may hold spaces and parentheses
    if (close == std::string::npos)
        return {};
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i)
        if (i == 22)
            return field;
    return {};
}

std::string hostName() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
        return "unknown";
    return name;
}

std::int64_t secondsSince(const std::string& utc) {
    std::tm tm {};
    if (utc.empty() || !strptime(utc.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm))
        return -1;
    const std::time_t then = timegm(&tm);
    return static_cast<std::int64_t>(std::time(nullptr) - then);
}

} // namespace

const RunOwner& RunOwner::self() {
    static const RunOwner owner = [] {
        RunOwner o;
        o.host = hostName();
        o.pid = ::getpid();
        o.process = bootId() + "/" + startTicks(o.pid);
        return o;
    }();
    return owner;
}

bool ownerIsLive(
    const std::string& host, std::int64_t pid, const std::string& process, const std::string& heartbeatAt) {
    if (host.empty() || pid <= 0)
        return false; // a run from before owners were recorded: nobody is at it any more
    const RunOwner& me = RunOwner::self();
    const auto slash = process.find('/');
    if (host == me.host && slash != std::string::npos && process.substr(0, slash) == bootId())
        return startTicks(pid) == process.substr(slash + 1); // same machine, same boot: ask the kernel
    // Another host (or this one rebooted): trust a recent heartbeat.
    const auto age = secondsSince(heartbeatAt);
    return age >= 0 && age <= 3 * RunHeartbeat::kHeartbeatSeconds;
}

struct RunHeartbeat::State {
    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;
    std::thread thread;
};

RunHeartbeat::RunHeartbeat(std::string dbPath, std::vector<std::int64_t> runIds)
    : m_state(std::make_unique<State>()) {
    if (runIds.empty() || dbPath.empty())
        return;
    m_state->thread = std::thread([state = m_state.get(), dbPath = std::move(dbPath), runIds = std::move(runIds)] {
        // Its own connection, opened at the first beat (not at every beat: opening checks the schema in a
        // write transaction) and kept for the next ones.
        std::unique_ptr<ResultsDb> db;
        std::unique_lock lock(state->mutex);
        while (
            !state->wake.wait_for(lock, std::chrono::seconds(kHeartbeatSeconds), [state] { return state->stopping; })) {
            lock.unlock();
            if (!db)
                if (auto opened = ResultsDb::open(dbPath))
                    db = std::move(*opened);
            if (db)
                (void)db->heartbeat(runIds); // a missed beat only makes the run look older
            lock.lock();
        }
    });
}

RunHeartbeat::~RunHeartbeat() {
    if (!m_state->thread.joinable())
        return;
    {
        std::lock_guard lock(m_state->mutex);
        m_state->stopping = true;
    }
    m_state->wake.notify_all();
    m_state->thread.join();
}

} // namespace layoutlab
