// SPDX-License-Identifier: MIT
#pragma once

// layoutlab's own binary trace format (docs/trace-format.md).
//
//   header  32 bytes: "LLTRACE\0", u32 version = 4, u32 flags = 0, 16 reserved bytes (zero)
//   blocks  of up to 4096 requests each, field by field: a 24-byte block header (record count, payload
//           bytes, the time before its first request, a byte width per column), then an op/kind byte
//           per request and one column of fixed-width integers per field: key id, key bytes, value
//           bytes, TTL seconds, milliseconds since the previous request; then, for the block's element
//           requests only (version 4), their element bytes, prior bytes and element operations
//   trailer 32 bytes: "LLTREND\0", u64 record count, u64 key-id limit, u64 record bytes
//
// All integers little-endian. The trailer lets a reader size its key array before the first record and
// detect a truncated file at open. Version 1 (one varint-coded record per request) is still read.

#include "layoutlab/default_init_allocator.h"
#include "layoutlab/output_file.h"
#include "layoutlab/trace/request_columns.h"
#include "layoutlab/trace/trace_reader.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

namespace layoutlab {

class BlockEncoder;
namespace trace_block {
struct Header;
struct DecodeFailure;
} // namespace trace_block

inline constexpr std::uint32_t kTraceFormatVersion = 4; // written; versions 1 to 3 are read too

class TraceFileReader final : public TraceReader {
public:
    static Expected<std::unique_ptr<TraceFileReader>> open(const std::string& path);
    ~TraceFileReader() override;

    Expected<std::size_t> read(std::span<Request> out) override;
    std::uint64_t totalRequests() const override { return m_recordCount; }
    std::uint64_t keyIdLimit() const override { return m_keyIdLimit; }
    std::string name() const override { return m_path; }

    // Version 2 only: the next block's columns, checked as read() checks requests (the same errors), for
    // consumers that need a few fields and not whole requests; nullopt at the end of the trace. The
    // block is read into `storage`, where the columns point. A reader is read either by blocks or by
    // requests, not both.
    Expected<std::optional<RequestColumns>> readColumns(std::vector<unsigned char>& storage);
    std::uint32_t version() const { return m_version; }

private:
    TraceFileReader() = default;
    bool refill();
    Expected<std::size_t> readVarintRecords(std::span<Request> out); // version 1
    Expected<std::size_t> readBlocks(std::span<Request> out); // version 2
    // Reads the next block and decodes it into `out` if it holds at most `room` requests (returning how
    // many), otherwise into m_staged (returning 0, as at the end of the trace).
    Expected<std::size_t> decodeNextBlock(Request* out, std::size_t room);
    // Reads and checks the next block's header and reads its payload into `payload`; false at the end.
    Expected<bool> readNextBlock(trace_block::Header& header, std::vector<unsigned char>& payload);
    // A record of the block just read failed its check.
    Error damagedRecord(const trace_block::DecodeFailure& failure) const;
    // Moves past the block just read, whose last request was at lastTimeMs.
    void consumeBlock(const trace_block::Header& header, std::uint64_t lastTimeMs);

    std::string m_path;
    std::FILE* m_file = nullptr;
    std::uint64_t m_recordCount = 0;
    std::uint64_t m_keyIdLimit = 0;
    std::uint64_t m_recordBytes = 0;
    std::uint32_t m_version = kTraceFormatVersion;
    std::uint64_t m_consumedBytes = 0; // record bytes decoded so far
    std::uint64_t m_recordsRead = 0;
    std::uint64_t m_timeMs = 0;
    std::uint32_t m_lastKeyId = 0;
    std::vector<unsigned char> m_buffer;
    std::size_t m_pos = 0;
    std::size_t m_end = 0;
    // Version 2: a block that did not fit the caller's span waits here.
    std::vector<Request> m_staged;
    std::size_t m_stagedPos = 0;
};

// Writes through an OutputFile (output_file.h): a temporary file renamed over PATH by finish(), or a
// device or pipe written through; abandoning it removes the temporary file. Blocks are encoded and written
// on a second thread, while the caller makes the next requests.
class TraceFileWriter {
public:
    static Expected<std::unique_ptr<TraceFileWriter>> create(const std::string& path);
    ~TraceFileWriter();

    Status write(std::span<const Request> requests);
    Status finish();
    std::uint64_t recordCount() const { return m_recordCount; }

private:
    TraceFileWriter();

    std::unique_ptr<OutputFile> m_output;
    std::FILE* m_file = nullptr; // m_output's stream
    std::uint64_t m_recordCount = 0;
    std::vector<Request> m_pending; // the block being filled
    // Encodes and writes the filled blocks on its own thread (block_encoder.h); destroyed before m_output.
    std::unique_ptr<BlockEncoder> m_encoder;
};

// Copies a whole trace to a file (used by `gen`, and by imports later).
Status writeTrace(TraceReader& reader, const std::string& path);

} // namespace layoutlab
