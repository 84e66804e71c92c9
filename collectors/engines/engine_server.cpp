// SPDX-License-Identifier: MIT
#include "layoutlab/collect/engine_server.h"

#include <array>
#include <atomic>
#include <csignal>
#include <fmt/format.h>
#include <unistd.h>

namespace layoutlab {

namespace {

bool isLoopback(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

} // namespace

std::optional<Engine> parseEngine(std::string_view name) {
    if (name == "redis")
        return Engine::Redis;
    if (name == "valkey")
        return Engine::Valkey;
    if (name == "memcached")
        return Engine::Memcached;
    return std::nullopt;
}

std::string_view engineName(Engine engine) {
    switch (engine) {
    case Engine::Redis:
        return "redis";
    case Engine::Valkey:
        return "valkey";
    case Engine::Memcached:
        return "memcached";
    }
    return "?";
}

std::vector<std::string> engineBinaries(Engine engine) {
    switch (engine) {
    case Engine::Redis:
        return { "redis-server" };
    case Engine::Valkey:
        return { "valkey-server" };
    case Engine::Memcached:
        return { "memcached" };
    }
    return {};
}

std::vector<std::string> engineArgv(Engine engine, const std::string& binary, std::uint16_t port, bool asRoot) {
    const std::string p = std::to_string(port);
    if (engine == Engine::Memcached) {
        // memcached.c refuses to run as root without -u. -U 0: no UDP port.
        std::vector<std::string> argv { binary, "-l", "127.0.0.1", "-p", p, "-U", "0", "-m", "4096" };
        if (asRoot)
            argv.insert(argv.begin() + 1, { "-u", "root" });
        return argv;
    }
    // No RDB snapshots, no AOF, no daemon; the working directory is the private one. DEBUG HTSTATS from
    // this host tells when tables have finished rehashing (Redis 7.0 reports it nowhere else). No
    // per-command latency histograms: each is allocated the first time its command runs (server.c
    // latency-tracking; about 20 KB in used_memory), which is not what the keys cost.
    return { binary, "--port", p, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
        "--protected-mode", "yes", "--dir", ".", "--enable-debug-command", "local", "--latency-tracking", "no" };
}

Expected<Endpoint> parseEndpoint(const std::string& text, bool allowRemote) {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
        return usageError(fmt::format("--connect wants HOST:PORT, got '{}'", text), "--connect");
    Endpoint e;
    e.host = text.substr(0, colon);
    if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']')
        e.host = e.host.substr(1, e.host.size() - 2);
    const std::string port = text.substr(colon + 1);
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoul(port) == 0
        || std::stoul(port) > 65535)
        return usageError(fmt::format("--connect: '{}' is not a port", port), "--connect");
    e.port = static_cast<std::uint16_t>(std::stoul(port));
    if (!allowRemote && !isLoopback(e.host))
        return usageError(fmt::format("--connect {}: not a loopback address; layoutlab loads and flushes what it "
                                      "measures, so a remote server needs --allow-remote",
                              e.host),
            "--connect");
    return e;
}

Expected<std::unique_ptr<EngineServer>> EngineServer::start(Engine engine, const std::string& binary) {
    std::unique_ptr<EngineServer> server(new EngineServer());
    server->m_binary = binary;
    if (server->m_binary.empty()) {
        for (const auto& name : engineBinaries(engine))
            if (auto found = findExecutable(name)) {
                server->m_binary = *found;
                break;
            }
        if (server->m_binary.empty())
            return ioError(fmt::format("no {} binary on PATH (install it, e.g. scripts/install-deps, or give "
                                       "--server-binary PATH or --connect HOST:PORT)",
                engineBinaries(engine).front()));
    }
    auto dir = makeTempDir("layoutlab-drive-");
    if (!dir)
        return dir.error();
    server->m_workDir = *dir;
    // A free port can be taken between looking and binding: try a few.
    std::string lastLog;
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto port = findFreePort();
        if (!port)
            return port.error();
        auto process = ServerProcess::start(engineArgv(engine, server->m_binary, *port, ::geteuid() == 0),
            server->m_workDir, server->m_workDir + "/server.log");
        if (!process)
            return process.error();
        if (auto ready = waitForPort(*port, **process, std::chrono::seconds(10)); ready) {
            server->m_port = *port;
            server->m_process = std::move(*process);
            return server;
        }
        lastLog = (*process)->log();
        (*process)->stop();
    }
    return ioError(fmt::format("{} did not start listening on 127.0.0.1; its log ends:\n{}", server->m_binary,
        lastLog.size() > 2000 ? lastLog.substr(lastLog.size() - 2000) : lastLog));
}

EngineServer::~EngineServer() {
    if (m_process) {
        m_process->stop();
    }
    if (!m_workDir.empty())
        removeTree(m_workDir);
}

std::string EngineServer::logTail(std::size_t bytes) const {
    if (!m_process)
        return {};
    const std::string log = m_process->log();
    return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

} // namespace layoutlab
