// SPDX-License-Identifier: MIT
#pragma once

#include "layoutlab/trace/value_kind.h"

#include <cstdint>
#include <string_view>

namespace layoutlab {

// Operations a trace can carry; importers map their formats' commands onto these.
enum class Op : std::uint8_t {
    Get = 0,
    Set = 1, // create or overwrite; a TTL of 0 clears any expiry
    Add = 2, // set only if absent
    Replace = 3, // set only if present
    Append = 4, // value grows by valueBytes (created if absent, as Redis APPEND does, with `kind`)
    Prepend = 5,
    // The value becomes the command's result, valueBytes long, of `kind` (an integer; a string for
    // INCRBYFLOAT); its TTL stays; created if absent (Redis) or left absent (memcached).
    Incr = 6,
    Decr = 7,
    Delete = 8,
    Expire = 9, // set the TTL of an existing key
    Persist = 10, // clear the TTL of an existing key
    Other = 11, // counted, no effect on the keyspace
    // Redis SETRANGE: valueBytes is offset + length of the written range (never 0); the value becomes a
    // RAW string at least that long, zero-filled (created if absent).
    SetRange = 12,
};
inline constexpr int kOpCount = 13;
std::string_view opName(Op op);

// A write's TTL of kKeepTtl keeps whatever TTL the key has (Redis SET ... KEEPTTL).
inline constexpr std::uint32_t kKeepTtl = 0xffffffffu;
// The longest key any command accepts (16 MiB - 1: the simulator's shape packs key lengths in 24 bits).
// Importers refuse longer keys as the simulator would, so that what imports also replays.
inline constexpr std::uint32_t kMaxKeyBytes = (1u << 24) - 1;

struct Request {
    std::uint64_t timeMs = 0; // since the start of the trace
    std::uint32_t keyId = 0; // dense key id given at import/generation
    std::uint32_t keyBytes = 0;
    std::uint32_t valueBytes = 0;
    std::uint32_t ttlSeconds = 0; // 0: no expiry; kKeepTtl on a write: keep the key's current TTL
    Op op = Op::Get;
    ValueKind kind = ValueKind::String;

    auto operator<=>(const Request&) const = default;
};

} // namespace layoutlab
