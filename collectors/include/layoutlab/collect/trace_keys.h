// SPDX-License-Identifier: MIT
#pragma once

// Keys and values for a real server, made from a trace's key ids and sizes: names of exactly the
// trace's key length, values of exactly its value length (integers as canonical decimals).

#include "layoutlab/trace/request.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

// A key name of exactly `bytes` bytes for key id `id`: "key:000000000042" while the digits fit, the id
// in base 94 (printable ASCII without space, which memcached's text protocol also accepts) below that.
// Distinct ids get distinct names whenever `bytes` can hold them; below that (e.g. 1-byte keys for more
// than 94 ids) names repeat, and the caller counts it.
std::string traceKeyName(std::uint32_t id, std::uint32_t bytes);
// Whether traceKeyName gives every id below `idLimit` its own name at `bytes`.
bool keyNamesDistinct(std::uint64_t idLimit, std::uint32_t bytes);
// Watches the key sizes a load meets: repeats() once some size cannot name every key of the trace apart.
class KeyNameCheck {
public:
    explicit KeyNameCheck(std::uint64_t idLimit)
        : m_idLimit(idLimit) { }
    void see(std::uint32_t keyBytes);
    bool repeats() const { return m_repeats; }

private:
    std::uint64_t m_idLimit; // 0: unknown, nothing is flagged
    std::vector<std::uint32_t> m_checked; // the sizes seen (a trace has few)
    bool m_repeats = false;
};

// A value of `bytes` bytes; integer kinds get canonical decimal digits (no leading zero), which Redis
// stores as integers.
std::string traceValue(std::uint32_t bytes, ValueKind kind, std::uint32_t seed);

// A key the run phase reads (or writes), with the value size the trace gives it.
struct RunKey {
    std::string key;
    std::uint32_t valueBytes = 0;
};

// One request of the run phase: a GET, or a SET of `valueBytes` bytes.
struct KeyRequest {
    std::string_view key;
    std::uint32_t valueBytes = 0;
    bool set = false;
    bool del = false; // a DEL instead (a look-aside cache drive's trace may hold them)
    std::uint32_t ttlSeconds = 0; // a SET's EX (0: none)
};

// What a request got: a GET its value or nil (a miss), a SET or DEL done or refused for memory (a server
// under its memory limit: Valkey's and Redis's OOM error, memcached's SERVER_ERROR out of memory).
enum class RequestOutcome : std::uint8_t { Nil, Done, OutOfMemory };

} // namespace layoutlab
