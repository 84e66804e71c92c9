// SPDX-License-Identifier: MIT
#pragma once

// Starts a private server for one test: 127.0.0.1, a free port, a temporary working directory,
// stopped by PID when the test ends (also when it fails).

#include "layoutlab/collect/server_process.h"
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

// A key name of exactly `bytes` bytes for a key id ("key:000000000042" for 16 bytes).
inline std::string keyName(std::uint32_t id, std::uint32_t bytes) {
    std::string digits = std::to_string(id);
    std::string name = "key:";
    if (bytes < name.size() + digits.size())
        return digits.substr(0, bytes);
    name.append(bytes - name.size() - digits.size(), '0');
    return name + digits;
}

// A value of `bytes` bytes; integers get canonical decimal digits (no leading zero).
inline std::string valueOf(std::uint32_t bytes, ValueKind kind, std::uint32_t seed) {
    if (kind == ValueKind::String || bytes == 0)
        return std::string(bytes, static_cast<char>('a' + seed % 26));
    std::string digits(bytes, '0');
    digits[0] = static_cast<char>('1' + seed % 9);
    for (std::uint32_t i = 1; i < bytes; ++i)
        digits[i] = static_cast<char>('0' + (seed + i) % 10);
    return digits;
}

} // namespace layoutlab::test
