// SPDX-License-Identifier: MIT
#pragma once

// Starts a private server for one test: 127.0.0.1, a free port, a temporary working directory,
// stopped by PID when the test ends (also when it fails).

#include "layoutlab/collect/server_process.h"
#include "layoutlab/collect/trace_keys.h"
#include "layoutlab/trace/request.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace layoutlab::test {

struct RunningServer {
    std::string workDir;
    std::uint16_t port = 0;
    std::unique_ptr<ServerProcess> process;

    ~RunningServer() {
        if (process)
            process->stop();
        if (!workDir.empty())
            removeTree(workDir);
    }
};

// argv gets "{port}" replaced by the chosen port. Returns nullptr (and records why) on failure.
inline std::unique_ptr<RunningServer> startServer(const std::string& binary, std::vector<std::string> argv) {
    // memcached refuses to run as root without -u (memcached.c: "can't run as root without the -u switch").
    if (::geteuid() == 0 && binary.find("memcached") != std::string::npos)
        argv.insert(argv.begin(), { "-u", "root" });
    auto server = std::make_unique<RunningServer>();
    auto dir = makeTempDir("layoutlab-test-");
    if (!dir) {
        ADD_FAILURE() << dir.error().describe();
        return nullptr;
    }
    server->workDir = *dir;
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto port = findFreePort();
        if (!port) {
            ADD_FAILURE() << port.error().describe();
            return nullptr;
        }
        std::vector<std::string> args { binary };
        for (const auto& a : argv)
            args.push_back(a == "{port}" ? std::to_string(*port) : a);
        auto process = ServerProcess::start(args, server->workDir, server->workDir + "/server.log");
        if (!process) {
            ADD_FAILURE() << process.error().describe();
            return nullptr;
        }
        if (waitForPort(*port, **process, std::chrono::seconds(10))) {
            server->port = *port;
            server->process = std::move(*process);
            return server;
        }
        (*process)->stop(); // lost a race for the port: try another
    }
    ADD_FAILURE() << "could not start " << binary;
    return nullptr;
}

// Keys and values as `drive` makes them.
inline std::string keyName(std::uint32_t id, std::uint32_t bytes) {
    return traceKeyName(id, bytes);
}
inline std::string valueOf(std::uint32_t bytes, ValueKind kind, std::uint32_t seed) {
    return traceValue(bytes, kind, seed);
}

} // namespace layoutlab::test
