// SPDX-License-Identifier: MIT
#pragma once

// The store server a measurement talks to: one layoutlab starts (127.0.0.1, a free port, persistence
// off, a private working directory, an argument vector, stopped by its PID at the end, on error and on
// Ctrl-C) or one it attaches to (--connect HOST:PORT; loopback unless remote hosts are allowed).

#include "layoutlab/collect/server_process.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

enum class Engine { Redis, Valkey, Memcached };
std::optional<Engine> parseEngine(std::string_view name);
std::string_view engineName(Engine engine);
// The binaries `--engine` looks for on PATH, in order.
std::vector<std::string> engineBinaries(Engine engine);

// The argument vector that starts `binary` as `engine` on 127.0.0.1:port with persistence off, working
// in the current directory (the caller's private one). memcached run as root needs "-u root".
std::vector<std::string> engineArgv(Engine engine, const std::string& binary, std::uint16_t port, bool asRoot);

struct Endpoint {
    std::string host;
    std::uint16_t port = 0;
};
// "HOST:PORT"; a host other than loopback needs allowRemote.
Expected<Endpoint> parseEndpoint(const std::string& text, bool allowRemote);

class EngineServer {
public:
    // Starts `binary` (empty: the first of engineBinaries() on PATH). The server is stopped, and its
    // directory removed, when this object goes, and by SIGINT/SIGTERM/SIGHUP before that. `extraArgs`
    // follow the usual ones (memcached's -f 1.08 -n 32: the slab classes measured).
    static Expected<std::unique_ptr<EngineServer>> start(
        Engine engine, const std::string& binary, const std::vector<std::string>& extraArgs = {});
    ~EngineServer();
    EngineServer(const EngineServer&) = delete;
    EngineServer& operator=(const EngineServer&) = delete;

    Endpoint endpoint() const { return { "127.0.0.1", m_port }; }
    const std::string& binary() const { return m_binary; }
    // The server's private working directory (its dir: where it reads dbfilename from).
    const std::string& workDir() const { return m_workDir; }
    pid_t pid() const { return m_process ? m_process->pid() : -1; }
    bool running() { return m_process && m_process->running(); }
    // The end of the server's log, for error messages.
    std::string logTail(std::size_t bytes = 2000) const;

private:
    EngineServer() = default;
    std::string m_binary;
    std::string m_workDir;
    std::uint16_t m_port = 0;
    std::unique_ptr<ServerProcess> m_process;
};

} // namespace layoutlab
