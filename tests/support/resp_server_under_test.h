// SPDX-License-Identifier: MIT
#pragma once

// One of respServers() started for a test and connected, with the layout and allocator that model it: the
// build's own layout where the manifest names one, else the one the server's version names.

#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/layout/layout_registry.h"
#include "resp_servers.h"
#include "server_fixture.h"

#include <optional>

namespace layoutlab::test {

struct RespServerUnderTest {
    std::unique_ptr<RunningServer> running;
    std::optional<RespClient> client;
    std::string layoutName;
    std::string allocatorName; // as the server reports it (INFO mem_allocator), parsed into models.allocator
    LayoutAndAllocator models;
};

// Starts `server` on a free port (no persistence, no latency tracking, plus `extraArgs`); nullptr, with the
// reason recorded as a test failure, when it cannot.
inline std::unique_ptr<RespServerUnderTest> startRespServer(
    const EngineBuild& server, const std::vector<std::string>& extraArgs = {}) {
    std::vector<std::string> args { "--port", "{port}", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--daemonize", "no", "--latency-tracking", "no" };
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    auto out = std::make_unique<RespServerUnderTest>();
    out->running = startServer(server.binary, args);
    if (!out->running)
        return nullptr;
    auto client = RespClient::connect("127.0.0.1", out->running->port);
    if (!client) {
        ADD_FAILURE() << client.error().describe();
        return nullptr;
    }
    auto info = describeRespServer(*client);
    if (!info) {
        ADD_FAILURE() << info.error().describe();
        return nullptr;
    }
    out->layoutName = server.layout.empty() ? info->layout : server.layout;
    if (out->layoutName.empty()) {
        ADD_FAILURE() << server.label << ": no layout for version " << info->version;
        return nullptr;
    }
    auto models = parseLayoutAndAllocator(out->layoutName, info->allocator);
    if (!models) {
        ADD_FAILURE() << models.error().describe();
        return nullptr;
    }
    out->models = std::move(*models);
    out->allocatorName = info->allocator;
    out->client.emplace(std::move(*client));
    return out;
}

} // namespace layoutlab::test
