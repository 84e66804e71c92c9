// SPDX-License-Identifier: MIT
#pragma once

// The RESP servers a test drives: Debian's redis-server (its layout the one its version names) and the
// builds of tests/engines; and what their keyspace holds, client buffers left out.

#include "engine_manifest.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/server_process.h"

#include <stdexcept>

namespace layoutlab::test {

inline std::vector<EngineBuild> respServers(const std::string& manifest) {
    std::vector<EngineBuild> out;
    if (auto redis = findExecutable("redis-server"))
        out.push_back({ *redis, "", "redis-debian" });
    for (auto& build : readEngineManifest(manifest))
        out.push_back(std::move(build));
    return out;
}

// used_memory less the normal clients' buffers (mem_clients_normal): the test's own connection's output is
// not the keyspace's.
inline std::uint64_t keyspaceMemory(RespClient& client) {
    auto info = client.info("memory");
    if (!info)
        throw std::runtime_error(info.error().describe());
    return std::stoull(info->at("used_memory")) - std::stoull(info->at("mem_clients_normal"));
}

} // namespace layoutlab::test
