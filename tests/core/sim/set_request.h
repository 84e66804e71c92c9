// SPDX-License-Identifier: MIT
#pragma once

// A SET request, as the replay tests build them.

#include "layoutlab/trace/request.h"

namespace layoutlab::test {

// SET of key `keyId` (`keyBytes` long) to `valueBytes`, with a TTL of `ttlSeconds` (0: none), at `timeMs`.
inline Request set(std::uint32_t keyId, std::uint32_t valueBytes, std::uint32_t ttlSeconds = 0,
    std::uint64_t timeMs = 0, std::uint32_t keyBytes = 16) {
    Request r;
    r.op = Op::Set;
    r.keyId = keyId;
    r.keyBytes = keyBytes;
    r.valueBytes = valueBytes;
    r.ttlSeconds = ttlSeconds;
    r.timeMs = timeMs;
    return r;
}

} // namespace layoutlab::test
