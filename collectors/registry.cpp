// SPDX-License-Identifier: MIT
#include "layoutlab/collect/registry.h"

#include "collectors_config.h"
#include "layoutlab/collect/server_process.h"

namespace layoutlab {

std::vector<CollectorInfo> listCollectors() {
    std::vector<CollectorInfo> out;
    auto engine = [&](const char* name, const char* binary, bool compiled, const char* protocol) {
        if (!compiled) {
            out.push_back(
                { name, false, std::string("not built: ") + protocol + " support missing at configure time" });
            return;
        }
        const auto path = findExecutable(binary);
        out.push_back({ name, path.has_value(),
            path ? std::string(protocol) + " engine driver; server binary " + *path
                 : std::string(protocol) + " engine driver built, but no '" + binary + "' on PATH" });
    };
    engine("engine:redis", "redis-server", LAYOUTLAB_HAVE_HIREDIS, "RESP (hiredis)");
    engine("engine:valkey", "valkey-server", LAYOUTLAB_HAVE_HIREDIS, "RESP (hiredis)");
    engine("engine:memcached", "memcached", true, "memcached text protocol");
    return out;
}

} // namespace layoutlab
