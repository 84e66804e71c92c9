// SPDX-License-Identifier: MIT
#include "layoutlab/collect/engine_server.h"
#include "layoutlab/enum_names.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>
#include <vector>

namespace layoutlab {

namespace {

// The addresses `host` resolves to (numeric, as getnameinfo writes them), or the resolver's error.
Expected<std::vector<std::string>> resolve(const std::string& host) {
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
        return usageError(fmt::format("{}: cannot resolve the host: {}", host, gai_strerror(rc)), field::kConnect);
    std::vector<std::string> out;
    for (const addrinfo* a = found; a; a = a->ai_next) {
        char text[NI_MAXHOST] = {};
        if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
            out.emplace_back(text);
    }
    ::freeaddrinfo(found);
    if (out.empty())
        return usageError(fmt::format("{}: the host has no address", host), field::kConnect);
    return out;
}

// By address, never by name: 127.0.0.0/8, ::1 and IPv4-mapped 127.x.
bool isLoopbackAddress(const std::string& address) {
    in_addr v4 {};
    if (::inet_pton(AF_INET, address.c_str(), &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6 {};
    if (::inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&v6))
            return true;
        return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
    }
    return false;
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
    static constexpr std::array<std::string_view, 3> kNames { "redis", "valkey", "memcached" };
    static_assert(static_cast<std::size_t>(Engine::Memcached) == kNames.size() - 1, "a name for every value");
    return enumName(engine, kNames);
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
        return usageError(fmt::format("wants HOST:PORT, got '{}'", text), field::kConnect);
    Endpoint e;
    e.host = text.substr(0, colon);
    if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']')
        e.host = e.host.substr(1, e.host.size() - 2);
    const std::string port = text.substr(colon + 1);
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoul(port) == 0
        || std::stoul(port) > 65535)
        return usageError(fmt::format("'{}' is not a port", port), field::kConnect);
    e.port = static_cast<std::uint16_t>(std::stoul(port));
    if (allowRemote)
        return e;
    // The name is resolved once and checked by address; the connection then goes to that address, so a
    // name that resolves differently later (or to several places) cannot lead elsewhere.
    auto addresses = resolve(e.host);
    if (!addresses)
        return addresses.error();
    for (const auto& address : *addresses)
        if (!isLoopbackAddress(address)) {
            Error remote = usageError(fmt::format("{}: resolves to {}, not a loopback address; layoutlab loads and "
                                                  "flushes what it measures, so a remote server must be allowed",
                                          e.host, address),
                field::kConnect);
            remote.tag = kTagRemoteHost;
            return remote;
        }
    e.host = addresses->front();
    return e;
}

Expected<std::unique_ptr<EngineServer>> EngineServer::start(
    Engine engine, const std::string& binary, const std::vector<std::string>& extraArgs) {
    std::unique_ptr<EngineServer> server(new EngineServer());
    server->m_binary = binary;
    if (server->m_binary.empty()) {
        for (const auto& name : engineBinaries(engine))
            if (auto found = findExecutable(name)) {
                server->m_binary = *found;
                break;
            }
        if (server->m_binary.empty())
            return ioError(fmt::format("no {} binary on PATH (install it, e.g. scripts/install-deps, or name the "
                                       "server's binary, or attach to a running server)",
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
        auto argv = engineArgv(engine, server->m_binary, *port, ::geteuid() == 0);
        argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
        auto process = ServerProcess::start(argv, server->m_workDir, server->m_workDir + "/server.log");
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
