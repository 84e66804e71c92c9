// SPDX-License-Identifier: MIT
// Reading version 1 of layoutlab's binary trace: one varint-coded record per request
// (docs/trace-format.md, "Version 1"). Files written before version 2 stay readable.
#include "layoutlab/trace/trace_file.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace layoutlab {

namespace {
constexpr std::size_t kBufferBytes = 1 << 20;
constexpr std::size_t kMaxRecordBytes = 1 + 5 * 4 + 10; // tag, four u32 varints, one u64 varint

constexpr unsigned kTagOpMask = 0x0f;
constexpr unsigned kTagKindShift = 4;
constexpr unsigned kTagKindMask = 0x3;
constexpr unsigned kTagHasTtl = 0x40;
constexpr unsigned kTagHasTime = 0x80;

std::int64_t unzigzag(std::uint64_t v) {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}
} // namespace

bool TraceFileReader::refill() {
    if (m_buffer.empty())
        m_buffer.resize(kBufferBytes);
    // Keep the unconsumed tail, then top up from the file without reading into the trailer.
    const std::size_t tail = m_end - m_pos;
    std::memmove(m_buffer.data(), m_buffer.data() + m_pos, tail);
    m_pos = 0;
    m_end = tail;
    const std::uint64_t fileRemaining = m_recordBytes - (m_consumedBytes + tail);
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBufferBytes - tail, fileRemaining));
    if (want == 0)
        return tail > 0;
    const std::size_t got = std::fread(m_buffer.data() + tail, 1, want, m_file);
    m_end += got;
    return m_end > 0;
}

namespace {
// Decodes one record starting at p. Callers guarantee kMaxRecordBytes readable bytes, so the varints
// need no bounds checks, only a length limit. Returns nullptr on a malformed record.
inline const unsigned char* decodeRecord(
    const unsigned char* p, Request& r, std::uint32_t& lastKeyId, std::uint64_t& timeMs) {
    auto varint = [&p](int maxBytes, std::uint64_t& v) {
        std::uint64_t byte = *p++;
        v = byte;
        if (byte < 0x80) [[likely]]
            return true;
        v &= 0x7f;
        byte = *p++;
        v |= (byte & 0x7f) << 7;
        if (byte < 0x80) [[likely]]
            return true;
        for (int shift = 14, i = 2; i < maxBytes; ++i, shift += 7) {
            byte = *p++;
            v |= (byte & 0x7f) << shift;
            if (byte < 0x80)
                return true;
        }
        return false;
    };
    const unsigned tag = *p++;
    std::uint64_t keyDelta = 0, keyBytes = 0, valueBytes = 0, ttl = 0, delta = 0;
    bool ok = varint(5, keyDelta) && varint(5, keyBytes) && varint(5, valueBytes);
    if (ok && (tag & kTagHasTtl))
        ok = varint(5, ttl);
    if (ok && (tag & kTagHasTime))
        ok = varint(10, delta);
    const unsigned opCode = tag & kTagOpMask;
    const unsigned kind = (tag >> kTagKindShift) & kTagKindMask;
    const auto keyId = static_cast<std::uint64_t>(static_cast<std::int64_t>(lastKeyId) + unzigzag(keyDelta));
    // One test for every range: a negative key id wraps to a huge one; 32-bit fields must fit.
    const bool fieldsFit = ((keyId | keyBytes | valueBytes | ttl) >> 32) == 0;
    if (!ok || !fieldsFit || opCode >= static_cast<unsigned>(kOpCount) || kind > 2) [[unlikely]]
        return nullptr;
    timeMs += delta;
    r.timeMs = timeMs;
    r.keyId = static_cast<std::uint32_t>(keyId);
    r.keyBytes = static_cast<std::uint32_t>(keyBytes);
    r.valueBytes = static_cast<std::uint32_t>(valueBytes);
    r.ttlSeconds = static_cast<std::uint32_t>(ttl);
    r.op = static_cast<Op>(opCode);
    r.kind = static_cast<ValueKind>(kind);
    lastKeyId = r.keyId;
    return p;
}
} // namespace

Expected<std::size_t> TraceFileReader::readVarintRecords(std::span<Request> out) {
    std::size_t n = 0;
    while (n < out.size() && m_recordsRead < m_recordCount) {
        if (m_end - m_pos < kMaxRecordBytes && m_consumedBytes + (m_end - m_pos) < m_recordBytes) {
            refill();
            // The last records of the file may be shorter than kMaxRecordBytes: pad the buffer so the
            // unchecked decoder can run over them; a record running into the padding is damaged.
            std::fill(m_buffer.begin() + static_cast<std::ptrdiff_t>(m_end),
                m_buffer.begin() + static_cast<std::ptrdiff_t>(std::min(m_buffer.size(), m_end + kMaxRecordBytes)),
                0xff);
        }
        if (m_pos >= m_end)
            return dataError(fmt::format("truncated: record {} of {} is missing", m_recordsRead + 1, m_recordCount),
                m_path, 32 + m_consumedBytes, true);
        // Decode as many records as the buffered bytes safely allow, without per-byte bounds checks.
        // The running key id and time live in locals: as members they could alias the Request stores.
        const unsigned char* const base = m_buffer.data();
        const unsigned char* p = base + m_pos;
        const unsigned char* const end = base + m_end;
        const unsigned char* const safeEnd = end - std::min<std::ptrdiff_t>(end - p, kMaxRecordBytes);
        const std::uint64_t remaining = m_recordCount - m_recordsRead;
        Request* const first = out.data() + n;
        Request* const last = first + std::min<std::uint64_t>(out.size() - n, remaining);
        Request* r = first;
        std::uint32_t lastKeyId = m_lastKeyId;
        std::uint64_t timeMs = m_timeMs;
        do {
            const unsigned char* next = decodeRecord(p, *r, lastKeyId, timeMs);
            if (!next || next > end) [[unlikely]]
                return dataError(fmt::format("damaged record {} (tag 0x{:02x})", m_recordsRead + (r - first) + 1, *p),
                    m_path, 32 + m_consumedBytes + static_cast<std::uint64_t>(p - (base + m_pos)), true);
            p = next;
            ++r;
        } while (r < last && p < safeEnd);
        m_lastKeyId = lastKeyId;
        m_timeMs = timeMs;
        const auto decoded = static_cast<std::size_t>(r - first);
        const auto used = static_cast<std::size_t>(p - (base + m_pos));
        m_pos += used;
        m_consumedBytes += used;
        m_recordsRead += decoded;
        n += decoded;
    }
    return n;
}

} // namespace layoutlab
