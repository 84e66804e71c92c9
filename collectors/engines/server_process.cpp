// SPDX-License-Identifier: MIT
#include "layoutlab/collect/server_process.h"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <netinet/in.h>
#include <spawn.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace layoutlab {

Expected<std::unique_ptr<ServerProcess>> ServerProcess::start(
    const std::vector<std::string>& argv, const std::string& workDir, const std::string& logPath) {
    if (argv.empty())
        return usageError("no server binary given");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    // Run inside the private working directory (glibc >= 2.29 has the _np call; Debian 12 has 2.36).
    posix_spawn_file_actions_addchdir_np(&actions, workDir.c_str());
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
        return ioError(fmt::format("cannot start server: {}", std::strerror(rc)), argv[0]);
    std::unique_ptr<ServerProcess> p(new ServerProcess());
    p->m_pid = pid;
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
        m_pid = -1;
        return false;
    }
    return r == 0;
}

Expected<int> ServerProcess::waitForExit(std::stop_token stop) {
    while (m_pid > 0) {
        int status = 0;
        const pid_t r = waitpid(m_pid, &status, WNOHANG);
        if (r == m_pid) {
            m_pid = -1;
            if (WIFSIGNALED(status))
                return ioError(fmt::format(
                    "the process was ended by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status))));
            return WEXITSTATUS(status);
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
    ::kill(m_pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
            m_pid = -1;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(m_pid, SIGKILL);
    int status = 0;
    waitpid(m_pid, &status, 0);
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

Expected<std::string> makeTempDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (!::mkdtemp(pattern.data()))
        return ioError(fmt::format("mkdtemp: {}", std::strerror(errno)), pattern);
    return pattern;
}

void removeTree(const std::string& path) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
}

} // namespace layoutlab
