// SPDX-License-Identifier: MIT
#pragma once

// A store server started for a measurement: an argument vector (never a shell string), 127.0.0.1 and
// a free port, its own working directory, output captured to a log file, and stopped by its PID.

#include "layoutlab/expected.h"

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <sys/types.h>
#include <vector>

namespace layoutlab {

class ServerProcess {
public:
    // argv[0] is the binary; the child's stdout and stderr go to `logPath`. With `ownGroup` the child
    // leads a process group of its own, and stopping it stops the group: a build script and the
    // compilers it runs.
    static Expected<std::unique_ptr<ServerProcess>> start(const std::vector<std::string>& argv,
        const std::string& workDir, const std::string& logPath, bool ownGroup = false);
    ~ServerProcess();
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    pid_t pid() const { return m_pid; }
    bool running();
    // Waits for the process to exit (or takes the exit running() saw) and returns its exit status; stops
    // it when `stop` is requested
    // (then the result is a Cancelled error), and fails when a signal ended it.
    Expected<int> waitForExit(std::stop_token stop = {});
    // SIGTERM, then SIGKILL after the grace period (to its group when it leads one); reaps the child.
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
    std::string log() const;

private:
    ServerProcess() = default;
    pid_t m_pid = -1;
    bool m_ownGroup = false;
    std::optional<int> m_waitStatus; // the exit as running() reaped it
    std::string m_logPath;
};

// SIGKILL to every process ServerProcess started and has not reaped: for a command stopping at once.
// Only atomics and kill(): safe from a signal handler or a thread about to _exit. (The children also die
// with the process that started them: they are started with PR_SET_PDEATHSIG.)
void killStartedProcesses();

// A TCP port on 127.0.0.1 that nothing listens on right now.
Expected<std::uint16_t> findFreePort();
// Polls until something accepts connections on 127.0.0.1:port, or the process dies, or time runs out.
Status waitForPort(std::uint16_t port, ServerProcess& process, std::chrono::milliseconds timeout);
// The first executable called `name` on PATH (and /usr/sbin, /usr/bin).
std::optional<std::string> findExecutable(const std::string& name);
// A fresh private directory under the system temp dir. It is removed by removeTree(), by an interrupted
// command's cleanup (temp_files.h), or, if the process is killed outright, by a small janitor process
// that waits for this one to end.
Expected<std::string> makeTempDir(const std::string& prefix);
void removeTree(const std::string& path);

} // namespace layoutlab
