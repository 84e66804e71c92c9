// SPDX-License-Identifier: MIT
#pragma once

// Traces every Valkey and Redis build is driven with (`layoutlab gen` arguments): keyspaces just past a
// power of two, keys and values across every limit, and overwrites that add and drop TTLs.

#include <string>
#include <vector>

namespace layoutlab::test {

struct DriveTrace {
    const char* name;
    std::vector<std::string> genArgs;
};

inline std::vector<DriveTrace> respDriveTraces() {
    return {
        // Just past a power of two: a dict has just doubled from 131,072 slots, and drive must measure
        // once the server has finished rehashing (both tables are in used_memory until then).
        { "k16v16-131073", { "--keys", "131073", "--ops", "0", "--key-size", "16", "--value-size", "16" } },
        // Keys of 3 to 60 bytes, values across every limit (44, 64, 108, 128, the sds types).
        { "sizes-150000",
            { "--keys", "150000", "--ops", "0", "--key-size", "uniform:3:60", "--value-size", "uniform:0:300" } },
        // Overwrites that add and drop TTLs.
        { "ttl-churn",
            { "--keys", "30000", "--ops", "90000", "--key-size", "uniform:4:40", "--value-size", "uniform:1:140",
                "--ttl-fraction", "0.5", "--get-fraction", "0" } },
    };
}

} // namespace layoutlab::test
