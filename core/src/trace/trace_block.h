// SPDX-License-Identifier: MIT
#pragma once

// Version 2 of layoutlab's binary trace stores requests in blocks of up to kBlockRecords, each field in
// its own column of fixed-width little-endian integers, the width chosen per block and per column
// (docs/trace-format.md). A column decodes in a loop without branches per record, and every block
// carries the state it starts from, so any block can be decoded on its own. TTLs are sparse (most
// requests carry none): the op byte flags the requests that have one, and only theirs are stored.

#include "layoutlab/default_init_allocator.h"
#include "layoutlab/trace/request.h"
#include "layoutlab/trace/request_columns.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace layoutlab::trace_block {

inline constexpr std::size_t kBlockRecords = 4096; // written; readers accept up to kMaxBlockRecords
inline constexpr std::size_t kMaxBlockRecords = 65536;
inline constexpr std::size_t kHeaderBytes = 32;
inline constexpr std::size_t kPaddingBytes = 8; // readable bytes a decoder needs after a block's payload
// Version 3: header bytes [28, 32) hold a checksum of the header's first 28 bytes and the payload
// (checksumOf); versions 2 has zeros there.
inline constexpr std::size_t kChecksumAt = 28;
// Version 4: header bytes 25 and 26 hold the widths of the element columns (elementWidths), which follow the
// others for the block's Op::Element requests only: element bytes, prior bytes, and the packed ElementOp
// (2 bytes each). Earlier versions have zeros there and no element requests.
inline constexpr std::size_t kElementWidthsAt = 25;
inline constexpr std::size_t kElementOpBytes = 2;

// Columns after the op column, in file order.
enum Column : std::size_t { KeyId, KeyBytes, ValueBytes, TtlSeconds, TimeDelta, kColumns };

struct Header {
    std::uint32_t records = 0;
    std::uint32_t payloadBytes = 0; // the columns, after the header
    std::uint64_t baseTimeMs = 0; // the time of the request before the block's first
    std::uint32_t ttlCount = 0; // requests with a TTL: the TTL column holds this many values
    std::array<std::uint8_t, kColumns> widths {}; // bytes per value; 0 means every value is 0
    std::uint32_t checksum = 0; // version 3
    // Version 4: Op::Element requests (the element columns hold this many values each), and the widths of
    // the element-bytes and prior-bytes columns.
    std::uint32_t elementCount = 0;
    std::array<std::uint8_t, 2> elementWidths {};
};

// The low 32 bits of XXH3-64 over the header's first kChecksumAt bytes, then the payload.
std::uint32_t checksumOf(const unsigned char* header, const unsigned char* payload, std::size_t payloadBytes);

// Appends one block holding `requests` (1..kMaxBlockRecords) to `out`. baseTimeMs is the time of the
// request before the first; it is advanced to the time of the last. Times that go backwards are
// written as 0 ms steps, as version 1 did. The header carries the block's checksum (version 3). Returns
// the largest key id in the block.
std::uint32_t encode(std::span<const Request> requests, std::uint64_t& baseTimeMs, ByteBuffer& out);

// Parses and checks a block header of a trace of format `version` (2 to 4); returns nullptr or what is
// wrong with it. The checksum is checked against the payload once it is read (checksumOf).
const char* parseHeader(const unsigned char* bytes, Header& header, std::uint32_t version = 4);

struct DecodeFailure {
    const char* reason = nullptr; // nullptr: decoded
    std::size_t record = 0; // the first record at fault, within the block
};

// Decodes a block's payload (kPaddingBytes readable after it) into out[0, header.records).
DecodeFailure decode(const Header& header, const unsigned char* payload, std::uint64_t keyIdLimit, Request* out);

// Checks a block's payload (kPaddingBytes readable after it) as decode() does, failing on the same record
// with the same reason, and points `out` at its columns instead of decoding them. `lastTimeMs` is set to
// the time of the block's last request.
DecodeFailure columns(const Header& header, const unsigned char* payload, std::uint64_t keyIdLimit, RequestColumns& out,
    std::uint64_t& lastTimeMs);

} // namespace layoutlab::trace_block
