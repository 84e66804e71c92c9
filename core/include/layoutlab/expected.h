// SPDX-License-Identifier: MIT
#pragma once

// Errors travel as values. The core never prints and never throws across its boundary: every fallible
// function returns Expected<T>, and the caller (CLI, GUI, tests) decides how to show the Error.

#include <cassert>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace layoutlab {

enum class ErrorCode : std::uint8_t {
    Usage, // a bad argument: unknown name, malformed value, out of range (CLI exit code 2)
    Data, // bad input data: malformed or truncated file, impossible size (CLI exit code 1)
    Io, // the operating system refused: missing file, no space (CLI exit code 1)
    Cancelled, // the caller asked to stop
};

struct Error {
    ErrorCode code = ErrorCode::Data;
    std::string message;
    std::string file; // the file the error is about, if any
    std::uint64_t offset = 0; // byte offset (binary files) or line number (text), when hasOffset
    bool hasOffset = false;
    bool offsetIsLine = false; // text formats count lines, binary ones bytes
    // The request field the error is about, if any, in the core's words (field::k*), never a front end's:
    // the CLI shows its flag for it (--thresholds), the GUI its label. Layout files name their own fields.
    std::string field;
    // A stable name for a kind of error a front end may phrase a hint for (e.g. "layout-has-no-threshold").
    std::string tag;

    // One line: "FILE: offset N: field F: message" with the parts that are known.
    std::string describe() const;
};

// The fields of requests errors name (Error::field).
namespace field {
inline constexpr const char* kLayout = "layout";
inline constexpr const char* kThreshold = "threshold";
inline constexpr const char* kThresholds = "thresholds";
inline constexpr const char* kLimitSweep = "collection limit swept";
inline constexpr const char* kCacheGeometry = "cache geometry";
inline constexpr const char* kStartRegions = "start regions";
inline constexpr const char* kSlabs = "slab model";
inline constexpr const char* kTimeline = "timeline";
inline constexpr const char* kPageMoverWindow = "page mover window";
inline constexpr const char* kGetPipeline = "GET pipeline";
inline constexpr const char* kPrefetchBatch = "prefetch batch";
inline constexpr const char* kMaxmemory = "maxmemory";
inline constexpr const char* kMemoryLimit = "memory limit";
inline constexpr const char* kSampleRate = "sample rate";
inline constexpr const char* kEvictionPolicy = "eviction policy";
inline constexpr const char* kEvictionSamples = "maxmemory samples";
inline constexpr const char* kFillOnMiss = "fill on miss";
inline constexpr const char* kFormat = "format";
inline constexpr const char* kKeys = "keys";
inline constexpr const char* kOps = "ops";
inline constexpr const char* kKeySize = "key size";
inline constexpr const char* kOnError = "on error";
inline constexpr const char* kValueSize = "value size";
inline constexpr const char* kHashFields = "hash fields";
inline constexpr const char* kFieldSize = "field size";
inline constexpr const char* kSetMembers = "set members";
inline constexpr const char* kMemberSize = "member size";
inline constexpr const char* kZsetMembers = "sorted set members";
inline constexpr const char* kListElements = "list elements";
inline constexpr const char* kElementSize = "element size";
inline constexpr const char* kTtlFraction = "ttl fraction";
inline constexpr const char* kIntValues = "int values";
inline constexpr const char* kGetFraction = "get fraction";
inline constexpr const char* kDeleteFraction = "delete fraction";
inline constexpr const char* kPopularity = "popularity";
inline constexpr const char* kWeights = "weights";
inline constexpr const char* kMissLevel = "miss level";
inline constexpr const char* kAllocator = "allocator";
inline constexpr const char* kCounters = "counters";
inline constexpr const char* kKeysAt = "keys at";
// A drive's (layoutlab/jobs/drive_job.h).
inline constexpr const char* kEngine = "engine";
inline constexpr const char* kConnect = "connect";
inline constexpr const char* kFraming = "framing";
inline constexpr const char* kPipeline = "pipeline";
inline constexpr const char* kConnections = "connections";
inline constexpr const char* kRunPipeline = "run pipeline";
inline constexpr const char* kRunSeconds = "run seconds";
inline constexpr const char* kExpireWait = "expire wait";
// An engine sweep's (layoutlab/jobs/engine_sweep_job.h).
inline constexpr const char* kEngineSource = "engine source";
inline constexpr const char* kBuildThresholds = "build thresholds";
inline constexpr const char* kEngineBuilds = "engine builds";
inline constexpr const char* kServerSettings = "server settings";
} // namespace field

// Tags (Error::tag).
inline constexpr const char* kTagNoThreshold = "layout-has-no-threshold";
// A bad input line or record, which the import could have counted and skipped ("FORMAT input)" ends the
// message; the front end says how to skip in its own words).
inline constexpr const char* kTagSkippableInput = "skippable-input";
// A trace whose format its content does not tell ("name it (one of: ...)" ends the message; the front end
// says how to name it).
inline constexpr const char* kTagFormatUnknown = "format-unknown";
// A server to attach to that is not on this host, which must be allowed explicitly (the front end says how).
inline constexpr const char* kTagRemoteHost = "remote-host";

Error usageError(std::string message, std::string field = {});
Error dataError(std::string message, std::string file = {}, std::uint64_t offset = 0, bool hasOffset = false);
Error dataErrorAtLine(std::string message, std::string file, std::uint64_t line);
Error ioError(std::string message, std::string file = {});
// The caller asked to stop (a stop_token was signalled).
Error cancelledError();

template <class T> class [[nodiscard]] Expected {
public:
    Expected(T value)
        : m_state(std::move(value)) { }
    Expected(Error error)
        : m_state(std::move(error)) { }

    bool hasValue() const { return m_state.index() == 0; }
    explicit operator bool() const { return hasValue(); }

    T& value() & {
        assert(hasValue());
        return std::get<0>(m_state);
    }
    const T& value() const& {
        assert(hasValue());
        return std::get<0>(m_state);
    }
    T&& value() && {
        assert(hasValue());
        return std::get<0>(std::move(m_state));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const {
        assert(!hasValue());
        return std::get<1>(m_state);
    }

private:
    std::variant<T, Error> m_state;
};

// Expected<void>: success or an Error.
struct Ok { };
using Status = Expected<Ok>;

} // namespace layoutlab
