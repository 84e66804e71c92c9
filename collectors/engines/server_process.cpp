// SPDX-License-Identifier: MIT
#include "layoutlab/collect/server_process.h"

#include "layoutlab/temp_files.h"

#include <arpa/inet.h>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace layoutlab {

namespace {

// Every child started and not yet reaped, so that an interrupted command can kill them from its signal
// thread: a fixed table of PIDs, read and written with atomics only.
constexpr std::size_t kMaxChildren = 32;
std::array<std::atomic<pid_t>, kMaxChildren> g_children {};

void track(pid_t pid) {
    for (auto& slot : g_children) {
        pid_t empty = 0;
        if (slot.compare_exchange_strong(empty, pid))
            return;
    }
}

void untrack(pid_t pid) {
    for (auto& slot : g_children) {
        pid_t expected = pid;
        if (slot.compare_exchange_strong(expected, 0))
            return;
    }
}

// In the child, between fork and exec: only async-signal-safe calls (the parent may have other threads).
[[noreturn]] void execChild(
    const std::vector<char*>& args, const char* workDir, const char* logPath, pid_t parent, bool ownGroup) {
    // Die with the parent, however it ends (SIGKILL included): a server must never outlive the command
    // that started it. If the parent is already gone, do not start at all.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
        ::_exit(127);
    if (ownGroup)
        ::setpgid(0, 0);
    // The parent blocks its interrupt signals for its signal thread; the child starts with none blocked
    // and default dispositions, as it would from a shell.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : { SIGINT, SIGTERM, SIGHUP, SIGPIPE })
        ::signal(s, SIG_DFL);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0
        || ::dup2(out, STDERR_FILENO) < 0 || ::chdir(workDir) != 0)
        ::_exit(127);
    ::execve(args[0], args.data(), environ);
    ::_exit(127);
}

} // namespace

void killStartedProcesses() {
    for (auto& slot : g_children) {
        const pid_t p = slot.load();
        if (p > 0) {
            ::kill(-p, SIGKILL); // the child's group, when it leads one (else no such group: ESRCH)
            ::kill(p, SIGKILL);
        }
    }
}

Expected<std::unique_ptr<ServerProcess>> ServerProcess::start(
    const std::vector<std::string>& argv, const std::string& workDir, const std::string& logPath, bool ownGroup) {
    if (argv.empty())
        return usageError("no server binary given");
    if (::access(argv[0].c_str(), X_OK) != 0)
        return ioError(fmt::format("cannot start server: {}", std::strerror(errno)), argv[0]);
    // The child changes to its working directory before it runs the program: a relative path is made
    // absolute here, where it was meant.
    std::vector<std::string> absolute = argv;
    if (!absolute[0].starts_with('/'))
        absolute[0] = std::filesystem::absolute(absolute[0]).lexically_normal().string();
    std::vector<char*> args;
    for (const auto& a : absolute)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0)
        return ioError(fmt::format("cannot start server: fork: {}", std::strerror(errno)), argv[0]);
    if (pid == 0)
        execChild(args, workDir.c_str(), logPath.c_str(), parent, ownGroup);
    if (ownGroup)
        ::setpgid(pid, pid); // also here, so that a stop right after the fork finds the group
    track(pid);
    std::unique_ptr<ServerProcess> p(new ServerProcess());
    p->m_pid = pid;
    p->m_ownGroup = ownGroup;
    p->m_logPath = logPath;
    return p;
}

ServerProcess::~ServerProcess() {
    stop();
}

bool ServerProcess::running() {
    if (m_pid <= 0)
        return false;
    int status = 0;
    const pid_t r = waitpid(m_pid, &status, WNOHANG);
    if (r == m_pid) {
        untrack(m_pid);
        m_pid = -1;
        m_waitStatus = status; // for waitForExit
        return false;
    }
    return r == 0;
}

Expected<int> ServerProcess::waitForExit(std::stop_token stop) {
    auto exited = [](int status) -> Expected<int> {
        if (WIFSIGNALED(status))
            return ioError(
                fmt::format("the process was ended by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status))));
        return WEXITSTATUS(status);
    };
    if (m_pid <= 0 && m_waitStatus)
        return exited(*m_waitStatus); // reaped by running()
    while (m_pid > 0) {
        int status = 0;
        const pid_t r = waitpid(m_pid, &status, WNOHANG);
        if (r == m_pid) {
            untrack(m_pid);
            m_pid = -1;
            return exited(status);
        }
        if (r < 0)
            return ioError(fmt::format("waitpid failed: {}", std::strerror(errno)));
        if (stop.stop_requested()) {
            this->stop();
            return cancelledError();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return ioError("the process is not running");
}

void ServerProcess::stop(std::chrono::milliseconds grace) {
    if (m_pid <= 0)
        return;
    ::kill(m_ownGroup ? -m_pid : m_pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
            untrack(m_pid);
            m_pid = -1;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(m_ownGroup ? -m_pid : m_pid, SIGKILL);
    int status = 0;
    waitpid(m_pid, &status, 0);
    untrack(m_pid);
    m_pid = -1;
}

std::string ServerProcess::log() const {
    std::ifstream in(m_logPath);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Expected<std::uint16_t> findFreePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return ioError(fmt::format("socket: {}", std::strerror(errno)));
    sockaddr_in addr {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0
        || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ::close(fd);
        return ioError(fmt::format("cannot find a free port: {}", std::strerror(errno)));
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

Status waitForPort(std::uint16_t port, ServerProcess& process, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (!process.running())
            return ioError(
                fmt::format("server exited before listening on port {}; its output:\n{}", port, process.log()));
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr {};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(port);
        const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
        ::close(fd);
        if (ok)
            return Ok {};
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return ioError(fmt::format("server did not listen on 127.0.0.1:{} within {} ms", port, timeout.count()));
}

std::optional<std::string> findExecutable(const std::string& name) {
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
    path += ":/usr/sbin:/usr/bin:/usr/local/bin";
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty())
            continue;
        const auto candidate = dir + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return std::nullopt;
}

namespace {
// The janitor of each temporary directory: its PID and the write end of its pipe (see makeTempDir).
std::mutex g_janitorsMutex;
std::map<std::string, std::pair<pid_t, int>> g_janitors;

// A shell that waits for the end of a pipe only this process writes to, then removes `dir`: the pipe
// ends when this process does, whatever ends it (SIGKILL included), so the directory goes with it. It
// ignores the terminal's interrupts, which reach the whole process group.
void startJanitor(const std::string& dir) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return;
    const char* args[] = { "/bin/sh", "-c", "trap '' INT TERM HUP; cat >/dev/null; sleep 0.2; rm -rf -- \"$0\"",
        dir.c_str(), nullptr };
    const pid_t pid = ::fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        const int null = ::open("/dev/null", O_WRONLY);
        if (::dup2(fds[0], STDIN_FILENO) < 0 || null < 0 || ::dup2(null, STDOUT_FILENO) < 0
            || ::dup2(null, STDERR_FILENO) < 0)
            ::_exit(127);
        ::execv(args[0], const_cast<char* const*>(args));
        ::_exit(127);
    }
    ::close(fds[0]);
    if (pid < 0) {
        ::close(fds[1]);
        return;
    }
    std::lock_guard lock(g_janitorsMutex);
    g_janitors[dir] = { pid, fds[1] };
}
} // namespace

Expected<std::string> makeTempDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (!::mkdtemp(pattern.data()))
        return ioError(fmt::format("mkdtemp: {}", std::strerror(errno)), pattern);
    registerTempPath(pattern, true);
    startJanitor(pattern);
    return pattern;
}

void removeTree(const std::string& path) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    unregisterTempPath(path);
    std::pair<pid_t, int> janitor { -1, -1 };
    {
        std::lock_guard lock(g_janitorsMutex);
        if (auto it = g_janitors.find(path); it != g_janitors.end()) {
            janitor = it->second;
            g_janitors.erase(it);
        }
    }
    if (janitor.first > 0) {
        ::close(janitor.second); // the janitor finds the directory gone and exits
        int status = 0;
        ::waitpid(janitor.first, &status, 0);
    }
}

} // namespace layoutlab
