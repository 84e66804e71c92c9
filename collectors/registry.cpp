// SPDX-License-Identifier: MIT
#include "layoutlab/collect/registry.h"

#include "collectors_config.h"
#include "layoutlab/collect/cachegrind.h"
#include "layoutlab/collect/reference_engine.h"
#include "layoutlab/collect/server_process.h"
#if LAYOUTLAB_HAVE_PERF
#include "layoutlab/collect/perf_counters.h"
#endif

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
#if LAYOUTLAB_HAVE_PERF
    {
        const auto availability = perfAvailability();
        out.push_back({ "perf",
            availability.rfind("hardware and software", 0) == 0 || availability.rfind("software counters only", 0) == 0,
            availability });
    }
#else
    out.push_back({ "perf", false, "not built: libpfm4 (libpfm4-dev) was not found at configure time" });
#endif
    {
#if LAYOUTLAB_HAVE_JEMALLOC
        std::string why;
        const bool reference = ReferenceEngine::available(&why);
        out.push_back({ "reference", reference,
            reference ? "in-process reference engine on " + ReferenceEngine::allocatorVersion()
                    + " (a private arena): stats.allocated, per-bin slabs, ns per GET (`profile`)"
                      : why });
#else
        const bool reference = false;
        const std::string why
            = "this build does not link jemalloc (libjemalloc-dev missing, or LAYOUTLAB_WITH_JEMALLOC=OFF)";
        out.push_back({ "reference", false, why });
#endif
        bool valgrind = false;
        const std::string detail = cachegrindAvailability(&valgrind);
        out.push_back({ "cachegrind", valgrind && reference,
            reference ? detail : "needs the reference engine, which this build lacks (" + why + ")" });
    }
    engine("engine:redis", "redis-server", LAYOUTLAB_HAVE_HIREDIS, "RESP (hiredis)");
    engine("engine:valkey", "valkey-server", LAYOUTLAB_HAVE_HIREDIS, "RESP (hiredis)");
    engine("engine:memcached", "memcached", true, "memcached text protocol");
    return out;
}

} // namespace layoutlab
