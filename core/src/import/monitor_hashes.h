// SPDX-License-Identifier: MIT
#pragma once

// The MONITOR importer's hash commands (t_hash.c): what each does to the importer's keyspace, as element
// requests (Op::Element) the replay applies in order, with the lengths of the values they replace or remove,
// which the capture does not show but the importer's keyspace knows.

#include "monitor_keyspace.h"

#include "layoutlab/trace/request.h"

#include <string>
#include <string_view>
#include <vector>

namespace layoutlab::monitor {

// Whether `name` (upper case) is a hash command the importer models (HSET, HMSET, HSETNX, HDEL, HINCRBY,
// HINCRBYFLOAT, and the reads of a field: HGET, HMGET, HEXISTS, HSTRLEN) or reads a hash whole (HGETALL,
// HKEYS, HVALS, HLEN, HSCAN, HRANDFIELD: no element changes, skipped).
bool isHashCommand(std::string_view name);
bool readsHashWhole(std::string_view name);

// A hash command's effect: its element requests for the key args[1] (time and key id are the caller's), or
// the error the server answers with (nothing changes).
struct HashCommandEffect {
    std::vector<Request> requests;
    std::string refusal; // the server's error, empty when applied
    std::string detail;
};

HashCommandEffect applyHashCommand(
    std::string_view name, const std::vector<std::string>& args, MonitorKeyspace& keys, std::uint64_t nowMs);

} // namespace layoutlab::monitor
