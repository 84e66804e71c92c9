// SPDX-License-Identifier: MIT
#pragma once

// Traces every Valkey and Redis build is driven with (`layoutlab gen` arguments): keyspaces just past a
// power of two, keys and values across every limit, and overwrites that add and drop TTLs.

#include <cstdint>
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

// Traces whose deletes and overwrites leave the allocator's slabs partly empty (the slab model's cases,
// docs/validation.md "Fragmentation"). The gen ones by their arguments; the others as MONITOR logs.
inline std::vector<DriveTrace> churnDriveTraces() {
    return {
        // About a third of 200,000 keys deleted at random: most slabs keep a live region.
        { "half-deleted",
            { "--keys", "200000", "--ops", "100000", "--key-size", "16", "--value-size", "96", "--get-fraction", "0",
                "--delete-fraction", "1" } },
        // A cache: reads, writes over live keys with other sizes, deletes.
        { "cache-mix",
            { "--keys", "250000", "--ops", "500000", "--key-size", "uniform:8:40", "--value-size",
                "lognormal:4.5:0.8:1:4000", "--get-fraction", "0.5", "--delete-fraction", "0.1", "--popularity",
                "zipf:0.9" } },
    };
}

// A MONITOR line of `args`, the `n`th of its log.
inline std::string monitorLine(std::uint64_t n, const std::vector<std::string>& args) {
    std::string out = "1700000000." + std::to_string(1000000 + n).substr(1) + " [0 127.0.0.1:50000]";
    for (const auto& a : args)
        out += " \"" + a + "\"";
    return out + "\n";
}

// 150,000 keys, every other one deleted, then 75,000 new keys of larger sizes: the freed regions are in
// classes the new keys do not use.
inline std::string refillMonitorLog() {
    std::string out = "OK\n";
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < 150000; ++i)
        out += monitorLine(++n, { "SET", "key:" + std::to_string(100000 + i), std::string(1 + (i * 37) % 150, 'v') });
    for (std::uint32_t i = 0; i < 150000; i += 2)
        out += monitorLine(++n, { "DEL", "key:" + std::to_string(100000 + i) });
    for (std::uint32_t i = 0; i < 75000; ++i)
        out += monitorLine(++n, { "SET", "new:" + std::to_string(100000 + i), std::string(160 + (i * 53) % 400, 'w') });
    return out;
}

// 100,000 keys overwritten three times, each round's values 40 bytes longer than the last: every round
// leaves the previous classes' slabs to empty out as it goes.
inline std::string driftMonitorLog() {
    std::string out = "OK\n";
    std::uint64_t n = 0;
    for (std::uint32_t round = 0; round < 4; ++round)
        for (std::uint32_t i = 0; i < 100000; ++i)
            out += monitorLine(++n,
                { "SET", "key:" + std::to_string(100000 + (i * 7919) % 100000),
                    std::string(20 + round * 40 + (i * 13) % 40, 'v') });
    return out;
}

// 200,000 keys, every other one with a 2-second TTL, and a last request 30 s on: the replay expires half
// the keys on the trace's clock; a server does on its own once it has run that long (drive --expire-wait).
inline std::string expireMonitorLog() {
    std::string out = "OK\n";
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < 200000; ++i) {
        std::vector<std::string> args { "SET", "key:" + std::to_string(100000 + i),
            std::string(40 + (i * 37) % 120, 'v') };
        if (i % 2 == 0)
            args.insert(args.end(), { "EX", "2" });
        out += monitorLine(++n, args);
    }
    return out + "1700000030.000000 [0 127.0.0.1:50000] \"GET\" \"key:100001\"\n";
}

} // namespace layoutlab::test
