// SPDX-License-Identifier: MIT
#pragma once

// layoutlab's own binary trace format (docs/trace-format.md).
//
//   header  32 bytes: "LLTRACE\0", u32 version = 1, u32 flags = 0, 16 reserved bytes (zero)
//   records varint-coded, one per request:
//             u8 tag: op (bits 0-3) | value kind (bits 4-5) | has TTL (bit 6) | has time delta (bit 7)
//             zigzag varint key id minus the previous record's key id, varint key bytes,
//             varint value bytes,
//             [varint TTL seconds], [varint milliseconds since the previous record]
//   trailer 32 bytes: "LLTREND\0", u64 record count, u64 key-id limit, u64 record bytes
//
// All integers little-endian; varints are LEB128. The trailer lets a reader size its key array before
// the first record and detect a truncated file at open.

#include "layoutlab/trace/trace_reader.h"

#include <cstdio>
#include <memory>
#include <vector>

namespace layoutlab {

inline constexpr std::uint32_t kTraceFormatVersion = 1;

class TraceFileReader final : public TraceReader {
public:
    static Expected<std::unique_ptr<TraceFileReader>> open(const std::string& path);
    ~TraceFileReader() override;

    Expected<std::size_t> read(std::span<Request> out) override;
    std::uint64_t totalRequests() const override { return m_recordCount; }
    std::uint64_t keyIdLimit() const override { return m_keyIdLimit; }
    std::string name() const override { return m_path; }

private:
    TraceFileReader() = default;
    bool refill();

    std::string m_path;
    std::FILE* m_file = nullptr;
    std::uint64_t m_recordCount = 0;
    std::uint64_t m_keyIdLimit = 0;
    std::uint64_t m_recordBytes = 0;
    std::uint64_t m_consumedBytes = 0; // record bytes decoded so far
    std::uint64_t m_recordsRead = 0;
    std::uint64_t m_timeMs = 0;
    std::uint32_t m_lastKeyId = 0;
    std::vector<unsigned char> m_buffer;
    std::size_t m_pos = 0;
    std::size_t m_end = 0;
};

// Writes to PATH.partial and renames to PATH on finish(); abandoning it removes the partial file.
class TraceFileWriter {
public:
    static Expected<std::unique_ptr<TraceFileWriter>> create(const std::string& path);
    ~TraceFileWriter();

    Status write(std::span<const Request> requests);
    Status finish();
    std::uint64_t recordCount() const { return m_recordCount; }

private:
    TraceFileWriter() = default;
    Status flush();

    std::string m_path;
    std::string m_partialPath;
    std::FILE* m_file = nullptr;
    std::uint64_t m_recordCount = 0;
    std::uint64_t m_keyIdLimit = 0;
    std::uint64_t m_recordBytes = 0;
    std::uint64_t m_lastTimeMs = 0;
    std::uint32_t m_lastKeyId = 0;
    std::vector<unsigned char> m_buffer;
    bool m_finished = false;
};

// Copies a whole trace to a file (used by `gen`, and by imports later).
Status writeTrace(TraceReader& reader, const std::string& path);

} // namespace layoutlab
